//! The submodules a repository's index lists: the entries with git's gitlink mode
//! (160000), whose directories git enters (`git status` runs `git status` in each one
//! checked out, which reads that submodule's own configuration). Index versions 2, 3
//! and 4 (prefix-compressed names); a split index is not read.

/// The mode of a gitlink entry.
const GITLINK: u32 = 0o160000;
/// The part of an entry before its object id: ctime, mtime, dev, ino, mode, uid, gid, size.
const STAT_BYTES: usize = 40;

/// The paths of the gitlinks in an index file's bytes; `oid_len` is 20 (SHA-1) or 32
/// (SHA-256). `Err`: the index is not one execgate can read whole.
pub(super) fn gitlinks(data: &[u8], oid_len: usize) -> Result<Vec<String>, String> {
    if data.len() < 12 || &data[..4] != b"DIRC" {
        return Err("the index does not start with `DIRC`".into());
    }
    let version = be32(data, 4)?;
    if !(2..=4).contains(&version) {
        return Err(format!(
            "the index is version {version}, which execgate does not read"
        ));
    }
    let count = be32(data, 8)? as usize;
    let mut at = 12;
    let mut links = Vec::new();
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let mode = be32(data, at + 24)?;
        let flags_at = at + STAT_BYTES + oid_len;
        let flags = u16::from_be_bytes(
            data.get(flags_at..flags_at + 2)
                .ok_or("the index ends inside an entry")?
                .try_into()
                .expect("two bytes"),
        );
        let extended = flags & 0x4000 != 0;
        if extended && version < 3 {
            return Err("an extended entry in a version 2 index".into());
        }
        let name_at = flags_at + 2 + if extended { 2 } else { 0 };
        let name: Vec<u8>;
        if version == 4 {
            // The name is: how many bytes to drop from the end of the previous name, as
            // git's offset varint, then the rest, NUL-terminated.
            let (strip, used) = varint(data, name_at)?;
            let strip = usize::try_from(strip).map_err(|_| "an index name's prefix is too long")?;
            if strip > previous.len() {
                return Err("an index name drops more than the previous name has".into());
            }
            let suffix_at = name_at + used;
            let end = nul(data, suffix_at)?;
            let mut full = previous[..previous.len() - strip].to_vec();
            full.extend_from_slice(&data[suffix_at..end]);
            name = full;
            at = end + 1;
        } else {
            let end = nul(data, name_at)?;
            name = data[name_at..end].to_vec();
            // Entries are padded with NULs to a multiple of eight bytes.
            let len = (name_at - at + name.len() + 8) & !7;
            at += len;
        }
        if mode & 0o170000 == GITLINK {
            let path = String::from_utf8(name.clone())
                .map_err(|_| "a submodule path in the index is not UTF-8")?;
            if !links.contains(&path) {
                links.push(path);
            }
        }
        previous = name;
    }
    // Extensions follow, up to the trailing checksum. A split index keeps most entries
    // in another file: not read whole here.
    let end = data.len().saturating_sub(oid_len);
    while at + 8 <= end {
        let signature = &data[at..at + 4];
        let size = be32(data, at + 4)? as usize;
        if signature == b"link" {
            return Err(
                "the index is split (core.splitIndex), which execgate does not read".into(),
            );
        }
        at = at
            .checked_add(8 + size)
            .ok_or("an index extension is too large")?;
    }
    Ok(links)
}

fn be32(data: &[u8], at: usize) -> Result<u32, String> {
    data.get(at..at + 4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("four bytes")))
        .ok_or_else(|| "the index ends inside an entry".to_string())
}

/// Where the NUL ending the name that starts at `at` is.
fn nul(data: &[u8], at: usize) -> Result<usize, String> {
    data.get(at..)
        .and_then(|rest| rest.iter().position(|b| *b == 0))
        .map(|i| at + i)
        .ok_or_else(|| "an index name is not terminated".to_string())
}

/// git's offset varint: seven bits a byte, high bit set on all but the last, each
/// continuation adding one before the shift. Returns the value and the bytes it took.
fn varint(data: &[u8], at: usize) -> Result<(u64, usize), String> {
    let mut i = at;
    let mut byte = *data.get(i).ok_or("the index ends inside a name")?;
    let mut value = u64::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        i += 1;
        value = value
            .checked_add(1)
            .and_then(|v| v.checked_mul(128))
            .ok_or("an index varint overflows")?;
        byte = *data.get(i).ok_or("the index ends inside a name")?;
        value += u64::from(byte & 0x7f);
    }
    Ok((value, i + 1 - at))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of `entries` (path, mode), as git writes version 2 (or 4).
    fn index(version: u32, entries: &[(&str, u32)]) -> Vec<u8> {
        let mut out = b"DIRC".to_vec();
        out.extend(version.to_be_bytes());
        out.extend((entries.len() as u32).to_be_bytes());
        let mut previous = "";
        for (path, mode) in entries {
            let start = out.len();
            out.extend([0u8; 24]);
            out.extend(mode.to_be_bytes());
            out.extend([0u8; 12]);
            out.extend([0xabu8; 20]);
            out.extend((path.len().min(0xfff) as u16).to_be_bytes());
            if version == 4 {
                let common = previous
                    .bytes()
                    .zip(path.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                let strip = previous.len() - common;
                assert!(strip < 128, "one varint byte in these tests");
                out.push(strip as u8);
                out.extend(&path.as_bytes()[common..]);
                out.push(0);
            } else {
                out.extend(path.as_bytes());
                let len = (out.len() - start + 8) & !7;
                out.resize(start + len, 0);
            }
            previous = path;
        }
        out.extend([0u8; 20]);
        out
    }

    #[test]
    fn finds_gitlinks_in_every_version() {
        let entries = [
            ("a.txt", 0o100644),
            ("lib/sub", 0o160000),
            ("lib/subway.rs", 0o100644),
            ("vendor/x", 0o160000),
        ];
        for version in [2, 3, 4] {
            assert_eq!(
                gitlinks(&index(version, &entries), 20).unwrap(),
                ["lib/sub", "vendor/x"],
                "version {version}"
            );
        }
        assert!(gitlinks(b"DIRX", 20).is_err());
        let mut cut = index(2, &entries);
        cut.truncate(60);
        assert!(gitlinks(&cut, 20).is_err());
    }

    #[test]
    fn a_split_index_is_refused() {
        let mut data = index(2, &[("a", 0o100644)]);
        let sum = data.split_off(data.len() - 20);
        data.extend(b"link");
        data.extend(20u32.to_be_bytes());
        data.extend([0u8; 20]);
        data.extend(sum);
        assert!(gitlinks(&data, 20).unwrap_err().contains("split"));
    }

    #[test]
    fn varints_as_git_writes_them() {
        assert_eq!(varint(&[0x05], 0).unwrap(), (5, 1));
        // 128 is written 0x80 0x00.
        assert_eq!(varint(&[0x80, 0x00], 0).unwrap(), (128, 2));
        assert_eq!(varint(&[0x81, 0x7f], 0).unwrap(), (383, 2));
    }
}
