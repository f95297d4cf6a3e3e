//! Where the `execgate` binary is. Cargo tells only the execgate package's own tests and
//! benches (`env!("CARGO_BIN_EXE_execgate")`, at compile time), not this crate, so it is
//! found at run time instead: cargo puts a test or bench executable in
//! `target/<profile>/deps/` and the package's binaries one level up, in
//! `target/<profile>/`, and builds those binaries before it runs the package's
//! integration tests and benches.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `execgate` binary cargo built for the running test or bench. Panics, saying where
/// it looked, when there is none.
pub fn execgate_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("the running test knows its own path");
        let binary = beside(&exe);
        assert!(
            binary.is_file(),
            "no execgate binary at {} (the test executable is {}): run the execgate \
             package's tests and benches with cargo, which builds the binary first",
            binary.display(),
            exe.display()
        );
        binary
    })
}

/// Where cargo puts the binary for the test or bench executable `exe`:
/// `target/<profile>/execgate` for `target/<profile>/deps/<test>`; beside `exe` when it
/// is not in a `deps` directory.
fn beside(exe: &Path) -> PathBuf {
    let name = format!("execgate{}", std::env::consts::EXE_SUFFIX);
    let dir = exe.parent().unwrap_or(Path::new("."));
    match dir.parent() {
        Some(profile) if dir.file_name().is_some_and(|d| d == "deps") => profile.join(name),
        _ => dir.join(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_in_deps_finds_the_binary_of_its_profile() {
        assert_eq!(
            beside(Path::new("/w/target/debug/deps/telegram-0123abcd")),
            Path::new("/w/target/debug/execgate")
        );
        assert_eq!(
            beside(Path::new(
                "/w/target/x86_64-unknown-linux-gnu/release/deps/daemon-1"
            )),
            Path::new("/w/target/x86_64-unknown-linux-gnu/release/execgate")
        );
    }

    #[test]
    fn elsewhere_it_looks_beside_the_executable() {
        assert_eq!(
            beside(Path::new("/opt/tests/run")),
            Path::new("/opt/tests/execgate")
        );
    }
}
