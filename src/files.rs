//! Files a user names (`EvalFile` and `--net`, a datagen book, training
//! data, Syzygy tables): checked by their metadata before they are opened.
//! Opening a FIFO blocks in open(2) until a writer comes, and reading a
//! device such as `/dev/zero` never ends, so only a regular file is opened,
//! and one that must be read whole is read only up to the size its format
//! allows.

use std::io::{self, Read};
use std::path::Path;

/// The size of the regular file at `path` (symbolic links followed); an
/// error naming what else it is otherwise. Looks at the metadata only:
/// nothing is opened.
pub fn regular_file_len(path: &Path) -> io::Result<u64> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        Ok(meta.len())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file but {}", kind_name(&meta.file_type())),
        ))
    }
}

/// The whole regular file at `path`, refused unheard if it is not a
/// regular file or is larger than `max_bytes`; at most `max_bytes` are read
/// even if the file grows meanwhile.
pub fn read_regular(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    let len = regular_file_len(path)?;
    if len > max_bytes {
        return Err(too_large(len, max_bytes));
    }
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(len as usize)
        .map_err(io::Error::other)?;
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    let read = bytes.len() as u64;
    if read > max_bytes {
        return Err(too_large(read, max_bytes));
    }
    Ok(bytes)
}

/// A text file read whole, as [`read_regular`] does.
pub fn read_regular_text(path: &Path, max_bytes: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, max_bytes)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

fn too_large(len: u64, max_bytes: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("too large: {len} bytes, at most {max_bytes} expected"),
    )
}

/// What a file that is not a regular one is, in words.
fn kind_name(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("qilin-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir
    }

    #[test]
    fn a_regular_file_is_read_up_to_its_limit() {
        let dir = scratch("regular");
        let path = dir.join("f.txt");
        std::fs::write(&path, b"12345").expect("write");
        assert_eq!(read_regular(&path, 5).expect("read"), b"12345");
        let err = read_regular(&path, 4).expect_err("too large");
        assert_eq!(err.to_string(), "too large: 5 bytes, at most 4 expected");
        assert_eq!(read_regular_text(&path, 5).expect("text"), "12345");
        let err = read_regular(&dir, 100).expect_err("a folder");
        assert_eq!(err.to_string(), "not a regular file but a folder");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `/dev/zero` would be read until memory runs out: refused at once.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_device_is_refused_without_reading() {
        let err = read_regular(Path::new("/dev/zero"), 1 << 20).expect_err("a device");
        assert_eq!(err.to_string(), "not a regular file but a character device");
    }

    /// A FIFO with no writer: opening it would block for ever.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_refused_without_opening_it() {
        let dir = scratch("fifo");
        let fifo = dir.join("net.nnue");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let err = read_regular(&fifo, 1 << 20).expect_err("a FIFO");
        assert_eq!(err.to_string(), "not a regular file but a FIFO");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
