//! A plugin file opened once, without following a final symlink, and recognised by its first
//! bytes before anything in it runs: a WebAssembly component, or a native library that must
//! also be as trusted as the daemon itself before `dlopen` runs its constructors.

use std::ffi::CString;
use std::fs::{File, Metadata};
use std::io::{Read, Seek};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::LoadError;

/// Largest component file read; the bundle's are a few MB, and a bigger file is refused before
/// it is read into memory.
pub const MAX_COMPONENT_BYTES: u64 = 64 << 20;

/// Bytes read to recognise a file: a 64-bit ELF header, more than a component's preamble.
const HEADER_BYTES: u64 = 64;

const WASM_MAGIC: &[u8] = b"\0asm";
const ELF_MAGIC: &[u8] = b"\x7fELF";
/// `e_type` of a shared object.
const ET_DYN: u16 = 3;

/// What a plugin file is, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginFormat {
    /// Starts with `\0asm`: a WebAssembly component (wasmtime judges the rest).
    Component,
    /// An ELF shared library for this host's class, byte order and machine.
    Native,
}

/// An open plugin file whose format is known and whose bytes cannot change under the loader:
/// everything after [`PluginFile::open`] reads the descriptor, never the path again.
#[derive(Debug)]
pub struct PluginFile {
    path: PathBuf,
    file: File,
    metadata: Metadata,
    dir: PathBuf,
    dir_metadata: Metadata,
    format: PluginFormat,
}

impl PluginFile {
    /// Opens `path` (its final component must not be a symlink, and it must be a regular file)
    /// inside the directory opened first, and reads at most its first 64 bytes to tell a
    /// component from a native library. A FIFO or device is refused without blocking.
    pub fn open(path: &Path) -> Result<Self, LoadError> {
        let refused = |reason: String| LoadError::Refused {
            path: path.into(),
            reason,
        };
        let read_error = |source| LoadError::Read {
            path: path.into(),
            source,
        };
        let name = path
            .file_name()
            .ok_or_else(|| refused("does not name a file".into()))?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir_file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(&dir)
            .map_err(read_error)?;
        let dir_metadata = dir_file.metadata().map_err(read_error)?;
        let file = open_in(&dir_file, name).map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused(
                "is a symbolic link; name the file it points to, so what is checked is what is loaded"
                    .into(),
            ),
            _ => read_error(e),
        })?;
        let metadata = file.metadata().map_err(read_error)?;
        if !metadata.file_type().is_file() {
            return Err(refused("is not a regular file".into()));
        }
        let mut header = Vec::with_capacity(HEADER_BYTES as usize);
        (&file)
            .take(HEADER_BYTES)
            .read_to_end(&mut header)
            .map_err(read_error)?;
        let format = recognise(&header).map_err(|reason| LoadError::Format {
            path: path.into(),
            reason,
        })?;
        Ok(Self {
            path: path.into(),
            file,
            metadata,
            dir,
            dir_metadata,
            format,
        })
    }

    /// The format its first bytes say.
    pub fn format(&self) -> PluginFormat {
        self.format
    }

    /// The path it was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole component, at most [`MAX_COMPONENT_BYTES`] of it.
    pub fn read_component(&self) -> Result<Vec<u8>, LoadError> {
        let too_big = |size: u64| LoadError::Refused {
            path: self.path.clone(),
            reason: format!(
                "is {size} bytes, more than the {MAX_COMPONENT_BYTES} a component may have"
            ),
        };
        if self.metadata.len() > MAX_COMPONENT_BYTES {
            return Err(too_big(self.metadata.len()));
        }
        let mut bytes = Vec::with_capacity(self.metadata.len() as usize);
        // From the start again through the same descriptor; `take` caps a file that grows.
        let mut file = &self.file;
        file.rewind()
            .and_then(|()| file.take(MAX_COMPONENT_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|source| LoadError::Read {
                path: self.path.clone(),
                source,
            })?;
        if bytes.len() as u64 > MAX_COMPONENT_BYTES {
            return Err(too_big(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// Checks that the library may run code in this process: the file and the directory it
    /// was opened in are owned by root or by this process's user, and neither is writable by
    /// group or others (so nobody else could have put or changed what is loaded).
    pub fn check_trusted(&self) -> Result<(), LoadError> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        let refused = |reason: String| LoadError::Refused {
            path: self.path.clone(),
            reason,
        };
        for (what, metadata) in [
            ("the library".to_string(), &self.metadata),
            (
                format!("its directory {}", self.dir.display()),
                &self.dir_metadata,
            ),
        ] {
            let owner = metadata.uid();
            if owner != 0 && owner != euid {
                return Err(refused(format!(
                    "{what} is owned by uid {owner}, not by root or the daemon's user (uid {euid}); a native library runs as the daemon"
                )));
            }
            let mode = metadata.mode() & 0o7777;
            if mode & 0o022 != 0 {
                return Err(refused(format!(
                    "{what} is writable by group or others (mode {mode:04o}); `chmod go-w` it"
                )));
            }
        }
        Ok(())
    }

    /// A path naming exactly the checked file, whatever happens to the original path since:
    /// its descriptor under `/proc/self/fd`. Valid while `self` lives.
    pub fn descriptor_path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
    }

    /// Leaves the descriptor open for the rest of the process. The dynamic loader knows a
    /// library loaded through [`PluginFile::descriptor_path`] by that name and answers a later
    /// `dlopen` of the same name with it, so the number must never come to name another file.
    /// Libraries are never unloaded, so this costs one descriptor per load.
    pub fn keep_open(self) {
        let _ = self.file.into_raw_fd();
    }
}

/// `openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)`.
fn open_in(dir: &File, name: &std::ffi::OsStr) -> std::io::Result<File> {
    let name = CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let flags =
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: a valid directory descriptor and a NUL-terminated name; the result is checked.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Tells the format from the first bytes, or says why the file is neither.
fn recognise(header: &[u8]) -> Result<PluginFormat, String> {
    if header.starts_with(WASM_MAGIC) {
        return Ok(PluginFormat::Component);
    }
    if header.starts_with(ELF_MAGIC) {
        return check_elf(header).map(|()| PluginFormat::Native);
    }
    let shown: String = header
        .iter()
        .take(8)
        .map(|b| std::ascii::escape_default(*b).to_string())
        .collect();
    Err(format!(
        "it starts with `{shown}`, expected `\\0asm` (a WebAssembly component) or `\\x7fELF` (a native library)"
    ))
}

/// Checks an ELF header's class, byte order, type and machine against this host.
fn check_elf(header: &[u8]) -> Result<(), String> {
    if header.len() < 20 {
        return Err("a truncated ELF header".into());
    }
    let (class, bits) = if cfg!(target_pointer_width = "64") {
        (2, 64)
    } else {
        (1, 32)
    };
    if header[4] != class {
        return Err(format!(
            "an ELF file of another class, this host loads {bits}-bit libraries"
        ));
    }
    let little = header[5] == 1;
    if little != cfg!(target_endian = "little") {
        return Err("an ELF file of the other byte order".into());
    }
    let half = |at: usize| {
        let bytes = [header[at], header[at + 1]];
        if little {
            u16::from_le_bytes(bytes)
        } else {
            u16::from_be_bytes(bytes)
        }
    };
    let e_type = half(16);
    if e_type != ET_DYN {
        return Err(format!(
            "an ELF file of type {e_type}, not a shared library (type {ET_DYN})"
        ));
    }
    let machine = half(18);
    match host_machine() {
        Some(ours) if machine != ours => Err(format!(
            "an ELF library for machine {machine}, this host is {} (machine {ours})",
            std::env::consts::ARCH
        )),
        _ => Ok(()),
    }
}

/// This host's ELF `e_machine`, for the architectures sluice is built on.
fn host_machine() -> Option<u16> {
    Some(match std::env::consts::ARCH {
        "x86" => 3,
        "arm" => 40,
        "x86_64" => 62,
        "aarch64" => 183,
        "riscv64" => 243,
        "powerpc64" => 21,
        "s390x" => 22,
        "loongarch64" => 258,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bytes_tell_the_format() {
        assert_eq!(recognise(b"\0asm\x0d\0\x01\0"), Ok(PluginFormat::Component));
        let err = recognise(b"GIF89a and more").unwrap_err();
        assert!(err.contains("starts with `GIF89a a`"), "{err}");
        // This test binary's own header is an ELF executable, not a library.
        let own = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let mut header = own[..64].to_vec();
        let executable = check_elf(&header);
        header[16] = ET_DYN as u8;
        header[17] = 0;
        assert_eq!(check_elf(&header), Ok(()));
        header[18] = header[18].wrapping_add(1);
        assert!(check_elf(&header).unwrap_err().contains("for machine"));
        header[4] = 3 - header[4];
        assert!(check_elf(&header).unwrap_err().contains("another class"));
        // A position-independent executable is type 3 too; anything else is refused.
        if own[16] != ET_DYN as u8 {
            assert!(executable.unwrap_err().contains("not a shared library"));
        }
    }
}
