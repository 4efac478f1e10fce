//! The local launcher's plumbing for tasks' streams: output copied a whole line at a time
//! (with `--label`'s prefix) to srun's own or to a file the tasks share, srun's standard
//! input copied to every task that reads it, and the files opened as srun's options say.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::sync::{Arc, Mutex};

/// Where forwarded lines are written, shared by the tasks that write there.
pub type Shared = Arc<Mutex<dyn Write + Send>>;

/// Copies `from` to `to` a whole line at a time (so tasks' lines never interleave), with the
/// label in front when there is one; a last line without a newline is passed on as it is.
pub fn forward<R>(from: R, prefix: Option<String>, to: Shared) -> std::thread::JoinHandle<()>
where
    R: Read + Send + 'static,
{
    std::thread::spawn(move || {
        let mut reader = BufReader::new(from);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    let Ok(mut w) = to.lock() else { return };
                    if let Some(p) = &prefix {
                        let _ = w.write_all(p.as_bytes());
                    }
                    let _ = w.write_all(&line);
                    let _ = w.flush();
                }
            }
        }
    })
}

/// The output files of a step, each opened once however many tasks write to it: truncated,
/// or appended to with `--open-mode=append`; a missing directory is made, as srun makes it.
pub struct OutputFiles {
    append: bool,
    open: BTreeMap<PathBuf, Shared>,
}

impl OutputFiles {
    /// No file open yet.
    pub fn new(append: bool) -> Self {
        Self {
            append,
            open: BTreeMap::new(),
        }
    }

    /// The writer of `path`, opened the first time it is asked for.
    pub fn get(&mut self, path: &Path) -> std::io::Result<Shared> {
        if let Some(w) = self.open.get(path) {
            return Ok(w.clone());
        }
        let mut options = OpenOptions::new();
        options.create(true);
        if self.append {
            options.append(true);
        } else {
            options.write(true).truncate(true);
        }
        let file = match options.open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                options.open(path)?
            }
            other => other?,
        };
        let w: Shared = Arc::new(Mutex::new(file));
        self.open.insert(path.to_path_buf(), w.clone());
        Ok(w)
    }
}

/// Copies srun's standard input to every task in `to` until it ends, then closes their
/// inputs; a task that stops reading (its pipe closed) is dropped from the copy.
pub fn broadcast<R>(mut from: R, mut to: Vec<ChildStdin>)
where
    R: Read + Send + 'static,
{
    if to.is_empty() {
        return;
    }
    std::thread::spawn(move || {
        // SIGPIPE is left at its default in sluice; blocked here, a write to a task that has
        // gone fails with EPIPE instead of ending srun.
        // SAFETY: changes this thread's signal mask only; `set` is initialised before use.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let mut buf = [0u8; 8192];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            to.retain_mut(|pipe| pipe.write_all(&buf[..n]).is_ok());
            if to.is_empty() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_lines_carry_the_label() {
        let sink = Arc::new(Mutex::new(Vec::<u8>::new()));
        forward(&b"one\ntwo\nlast"[..], Some("3: ".into()), sink.clone())
            .join()
            .unwrap();
        assert_eq!(
            String::from_utf8(sink.lock().unwrap().clone()).unwrap(),
            "3: one\n3: two\n3: last"
        );
    }

    #[test]
    fn a_file_is_opened_once_truncated_or_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/out.txt");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(&path, "old\n").unwrap();
        let mut files = OutputFiles::new(false);
        let a = files.get(&path).unwrap();
        let b = files.get(&path).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        a.lock().unwrap().write_all(b"new\n").unwrap();
        drop((a, b, files));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        let mut files = OutputFiles::new(true);
        files
            .get(&path)
            .unwrap()
            .lock()
            .unwrap()
            .write_all(b"more\n")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\nmore\n");
        // A directory that is not there is made.
        let deep = dir.path().join("a/b/c.txt");
        OutputFiles::new(false).get(&deep).unwrap();
        assert!(deep.exists());
    }
}
