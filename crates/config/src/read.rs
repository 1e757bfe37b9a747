//! Reading a startup config or routes file that may be misplaced or hostile: only a
//! regular file is read, never past a size limit, and opening it never blocks.
//!
//! Why: `open(2)` of a FIFO waits for a writer forever (only SIGKILL stopped a router
//! loading one), and a path symlinked to `/dev/zero` never ends (memory grew ~1 GB/s).
//! So the file is opened with `O_NONBLOCK` (a FIFO then opens at once), the opened
//! descriptor is checked with `fstat` (no window for a swap between check and read), and
//! it is read through `take(limit + 1)`. Invalid UTF-8 is reported at its line and
//! column. This module never maps a file (see `reload::source` for why) and never reads
//! more than the limit plus one byte.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::diag::{ConfigError, Diagnostic, Diagnostics};

/// Default of the startup config's `max_routes_file_bytes`: about nine times a full
/// view (~28 MB).
pub const DEFAULT_MAX_ROUTES_FILE_BYTES: u64 = 256 << 20;
/// Largest startup config read (a real one is a few KiB).
pub const MAX_STARTUP_FILE_BYTES: u64 = 16 << 20;

/// How much of a file may be read, and the setting that says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// The startup config key that raises it, if any.
    pub setting: Option<&'static str>,
}

impl Limit {
    pub const STARTUP: Limit = Limit {
        bytes: MAX_STARTUP_FILE_BYTES,
        setting: None,
    };

    /// A routes file's limit (`max_routes_file_bytes`).
    pub fn routes(bytes: u64) -> Limit {
        Limit {
            bytes,
            setting: Some("max_routes_file_bytes"),
        }
    }
}

/// Why a file was not read at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("it is larger than the limit of {} bytes", .0.bytes)]
    TooLarge(Limit),
}

impl Refusal {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            Refusal::NotRegular(_) => "name a regular file (write a new version beside it \
                                       and rename it into place)"
                .into(),
            Refusal::TooLarge(Limit {
                setting: Some(s), ..
            }) => format!("raise `{s}` in the startup config if a table this big is meant"),
            Refusal::TooLarge(_) => "a startup config is a few KiB; is this the right file?".into(),
        }
    }
}

fn refused(path: &Path, why: Refusal) -> ConfigError {
    ConfigError::Refused {
        path: path.to_path_buf(),
        why,
    }
}

fn kind_name(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a plain file"
    }
}

/// Opens `path` for reading: a regular file no longer than `limit` now. Returns it with
/// its metadata (from the descriptor, after the open).
pub(crate) fn open(path: &Path, limit: Limit) -> Result<(File, Metadata), ConfigError> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match std::fs::metadata(path) {
            // open(2) of a socket fails with ENXIO: say what it is.
            Ok(m) if !m.is_file() => refused(path, Refusal::NotRegular(kind_name(&m))),
            _ => ConfigError::io(path, e),
        })?;
    let m = f.metadata().map_err(|e| ConfigError::io(path, e))?;
    if !m.is_file() {
        return Err(refused(path, Refusal::NotRegular(kind_name(&m))));
    }
    if m.len() > limit.bytes {
        return Err(refused(path, Refusal::TooLarge(limit)));
    }
    Ok((f, m))
}

/// Reads the rest of `f` (opened by [`open`]), refusing more than `limit` bytes in all:
/// the file may grow while it is read.
pub(crate) fn read_rest(
    path: &Path,
    f: &File,
    size_hint: u64,
    limit: Limit,
) -> Result<String, ConfigError> {
    let mut buf = Vec::with_capacity(size_hint.min(limit.bytes) as usize + 1);
    f.take(limit.bytes.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| ConfigError::io(path, e))?;
    if buf.len() as u64 > limit.bytes {
        return Err(refused(path, Refusal::TooLarge(limit)));
    }
    utf8(path, buf)
}

/// Reads a whole file under `limit`.
pub(crate) fn read_file(path: &Path, limit: Limit) -> Result<String, ConfigError> {
    let (f, m) = open(path, limit)?;
    read_rest(path, &f, m.len(), limit)
}

/// The text, or a diagnostic at the line and column of the first invalid byte.
pub(crate) fn utf8(path: &Path, buf: Vec<u8>) -> Result<String, ConfigError> {
    String::from_utf8(buf).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = good.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
        // The prefix is valid UTF-8, so this counts characters.
        let col = std::str::from_utf8(&good[line_start..]).map_or(1, |s| s.chars().count() + 1);
        let line = good.iter().filter(|&&c| c == b'\n').count() + 1;
        ConfigError::Invalid(Diagnostics(vec![Diagnostic {
            file: path.to_path_buf(),
            line: line as u32,
            col: col as u32,
            path: String::new(),
            message: format!(
                "not valid UTF-8 (byte 0x{:02x})",
                e.as_bytes()[e.utf8_error().valid_up_to()]
            ),
            hint: Some("save the file as UTF-8".into()),
        }]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("config-read-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_regular_files_under_the_limit_are_read() {
        let d = dir("kinds");
        let p = d.join("f.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        assert_eq!(read_file(&p, Limit::routes(5)).unwrap(), "a: 1\n");
        let e = read_file(&p, Limit::routes(4)).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Refused { why: Refusal::TooLarge(l), .. } if l.bytes == 4),
            "{e}"
        );
        assert!(
            e.to_string().contains("raise `max_routes_file_bytes`"),
            "{e}"
        );
        let e = read_file(&d, Limit::STARTUP).unwrap_err();
        assert!(
            e.to_string().contains("a directory, not a regular file"),
            "{e}"
        );
        // /dev/zero never ends: refused by its kind, nothing read.
        let e = read_file(Path::new("/dev/zero"), Limit::STARTUP).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = dir("fifo");
        let p = d.join("fifo.yaml");
        let st = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(st.success());
        // Without O_NONBLOCK this open would wait for a writer forever.
        let e = read_file(&p, Limit::routes(1 << 20)).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn invalid_utf8_is_reported_at_its_line_and_column() {
        let e = utf8(Path::new("r.yaml"), b"a: 1\nb: \xc3\xa9\xff\n".to_vec()).unwrap_err();
        let d = &e.diagnostics().unwrap().0[0];
        assert_eq!((d.line, d.col), (2, 5), "{e}");
        assert!(d.message.contains("0xff"), "{e}");
    }
}
