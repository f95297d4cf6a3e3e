//! Commands that are as costly to analyse as execgate allows, for floods (tests and the
//! daemon bench's section F).

/// About 55 KB of `bash -c '…'`, each script different (the same script twice is read
/// once) and each sending tree-sitter's error recovery into its slowest path.
pub fn heavy_command(seed: usize) -> String {
    let body = "`>}".repeat(330);
    let mut command = String::new();
    let mut i = 0;
    while command.len() < 55_000 {
        command.push_str(&format!("bash -c 'v{seed}x{i}; {body}'; "));
        i += 1;
    }
    command
}
