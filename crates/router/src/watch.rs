//! What wakes the control thread: routes-file events from inotify and signals, sent
//! into one crossbeam channel, so the control loop sleeps in `select!` instead of
//! polling and a saved edit is applied at once (a reload of a one-line edit of a full
//! view takes a few milliseconds; a poll period would add up to its length on top).
//!
//! The routes file's directory is watched, not the file: editors that save by rename
//! replace the file (its inode changes), and a watch on the old inode would see nothing.
//! When the path is a symlink to a file in another directory, that directory is watched
//! too. Only completed writes count: `IN_CLOSE_WRITE` (written in place, reported when
//! the writer closes it) and `IN_MOVED_TO` (renamed over), never `IN_MODIFY`: a file
//! that a writer still holds open must not be read. Deletion is reported too, so the
//! control plane can say the file is gone. [`WatchStatus`] tells the control plane which
//! directories are covered and whether the watch still runs; it falls back to its
//! periodic check of the file's inode, mtime and size where they are not.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Sender, TrySendError};
use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use signal_hook::iterator::{Handle, Signals};

/// An input of the control loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlInput {
    /// The routes file was written, replaced or removed.
    RoutesFile,
    /// A signal arrived (its flag in `SignalFlags` is already set).
    Signal(i32),
}

/// Sends `input`; a full channel already holds a wake-up that will be handled, so
/// nothing is lost by dropping this one. `false` once the receiver is gone.
fn offer(tx: &Sender<ControlInput>, input: ControlInput) -> bool {
    !matches!(tx.try_send(input), Err(TrySendError::Disconnected(_)))
}

/// What inotify covers, shared with the control plane.
#[derive(Clone, Debug)]
pub struct WatchStatus {
    /// The watched directories, canonical: a routes file whose real directory is one of
    /// these has its close and rename events reported.
    pub dirs: Vec<PathBuf>,
    /// False once the watch thread has stopped (read error, directory removed).
    alive: Arc<AtomicBool>,
}

impl WatchStatus {
    /// Whether the watch thread still runs.
    pub fn alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// Whether the events of a file whose canonical path is `real` are reported.
    pub fn covers(&self, real: &Path) -> bool {
        self.alive()
            && real
                .parent()
                .is_some_and(|d| self.dirs.iter().any(|w| w == d))
    }

    /// A status for tests: `dirs` are watched while `alive` holds.
    #[cfg(test)]
    pub fn new(dirs: Vec<PathBuf>, alive: Arc<AtomicBool>) -> WatchStatus {
        WatchStatus { dirs, alive }
    }
}

/// The directory and file name to watch for `path` (a relative path's directory is `.`).
fn dir_and_name(path: &Path) -> io::Result<(PathBuf, OsString)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => ".".into(),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?
        .to_owned();
    Ok((dir, name))
}

/// Watches the routes file's directory on a thread of its own; stopped on drop.
pub struct FileWatcher {
    watches: Watches,
    wds: Vec<WatchDescriptor>,
    stop: Arc<AtomicBool>,
    status: WatchStatus,
    /// When the last event of the file was read (after the write it reports): a reload
    /// that started later has seen that write. Kept here, not in the message, because
    /// wake-ups are dropped when the channel is full.
    last: Arc<Mutex<Option<Instant>>>,
    thread: Option<JoinHandle<()>>,
}

impl FileWatcher {
    pub fn start(path: &Path, tx: Sender<ControlInput>) -> io::Result<FileWatcher> {
        let mut targets = vec![dir_and_name(path)?];
        // A symlink to a file elsewhere: its writes happen in the target's directory.
        if let Ok(real) = std::fs::canonicalize(path) {
            let t = dir_and_name(&real)?;
            if std::fs::canonicalize(&targets[0].0).ok().as_ref() != Some(&t.0) {
                targets.push(t);
            }
        }
        let inotify = Inotify::init()?;
        let mut watches = inotify.watches();
        let mut names = Vec::new();
        let mut dirs = Vec::new();
        for (dir, name) in targets {
            let wd = watches.add(
                &dir,
                WatchMask::CLOSE_WRITE
                    | WatchMask::MOVED_TO
                    | WatchMask::DELETE
                    | WatchMask::MOVED_FROM
                    | WatchMask::DELETE_SELF,
            )?;
            dirs.push(std::fs::canonicalize(&dir)?);
            names.push((wd, name));
        }
        let alive = Arc::new(AtomicBool::new(true));
        let status = WatchStatus {
            dirs,
            alive: alive.clone(),
        };
        let wds = names.iter().map(|(wd, _)| wd.clone()).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let last = Arc::new(Mutex::new(None));
        let last_event = last.clone();
        let thread = std::thread::Builder::new()
            .name("routes-watch".into())
            .spawn(move || watch_events(inotify, names, alive, stopped, last_event, tx))?;
        Ok(FileWatcher {
            watches,
            wds,
            stop,
            status,
            last,
            thread: Some(thread),
        })
    }

    /// What this watch covers, for the control plane's periodic check.
    pub fn status(&self) -> WatchStatus {
        self.status.clone()
    }

    /// When the last event of the routes file was seen.
    pub fn last_event(&self) -> Option<Instant> {
        *self.last.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for FileWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Removing the watch queues IN_IGNORED, which wakes the blocked read. If it
        // fails, the watch is already gone and so is the thread.
        for wd in self.wds.drain(..) {
            let _ = self.watches.remove(wd);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Clears the flag when the watch thread ends, however it ends.
struct ClearOnDrop(Arc<AtomicBool>);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Forwards SIGHUP, SIGINT and SIGTERM into the control channel; stopped on drop.
pub struct SignalWaker {
    handle: Handle,
    thread: Option<JoinHandle<()>>,
}

impl SignalWaker {
    pub fn start(tx: Sender<ControlInput>) -> io::Result<SignalWaker> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = Signals::new([SIGHUP, SIGINT, SIGTERM])?;
        let handle = signals.handle();
        let thread = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for s in signals.forever() {
                    if !offer(&tx, ControlInput::Signal(s)) {
                        return;
                    }
                }
            })?;
        Ok(SignalWaker {
            handle,
            thread: Some(thread),
        })
    }
}

impl Drop for SignalWaker {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The watch thread: reads inotify events until stopped, told the directory is gone, or
/// the control loop's channel closes; wakes the control loop on a routes-file event.
fn watch_events(
    inotify: Inotify,
    names: Vec<(WatchDescriptor, OsString)>,
    alive: Arc<AtomicBool>,
    stopped: Arc<AtomicBool>,
    last_event: Arc<Mutex<Option<Instant>>>,
    tx: Sender<ControlInput>,
) {
    // Whatever ends the thread, the control plane learns that the file is
    // no longer watched and polls it.
    let _alive = ClearOnDrop(alive);
    let mut inotify = inotify;
    let mut buf = [0u8; 4096];
    loop {
        let events = match inotify.read_events_blocking(&mut buf) {
            Ok(ev) => ev,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("mplsrouter: routes file watch failed ({e}); polling it");
                return;
            }
        };
        let mut changed = false;
        let mut gone = false;
        for ev in events {
            changed |= ev.mask.contains(EventMask::Q_OVERFLOW)
                || names
                    .iter()
                    .any(|(wd, n)| ev.wd == *wd && ev.name == Some(n.as_os_str()));
            // The watch was removed: by `drop`, or the directory went away.
            gone |= ev.mask.contains(EventMask::IGNORED);
        }
        if stopped.load(Ordering::SeqCst) {
            return;
        }
        if changed {
            *last_event.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
            if !offer(&tx, ControlInput::RoutesFile) {
                return;
            }
        }
        if gone {
            eprintln!("mplsrouter: the routes file's directory is gone; polling for it");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A wake-up arrives, and the event time is after `before` (taken before the action).
    fn expect_event(
        rx: &crossbeam_channel::Receiver<ControlInput>,
        w: &FileWatcher,
        before: Instant,
        what: &str,
    ) {
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)),
            Ok(ControlInput::RoutesFile),
            "{what}"
        );
        assert!(w.last_event().is_some_and(|t| t >= before), "{what}");
        // Let the burst of events of one write arrive, then forget them.
        std::thread::sleep(Duration::from_millis(50));
        while rx.try_recv().is_ok() {}
    }

    #[test]
    fn writes_renames_and_removals_of_the_file_are_seen_and_others_are_not() {
        let dir = std::env::temp_dir().join(format!("watch-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("routes.yaml");
        std::fs::write(&path, "a\n").unwrap();
        let (tx, rx) = crossbeam_channel::bounded(16);
        let w = FileWatcher::start(&path, tx).unwrap();

        let t = Instant::now();
        std::fs::write(&path, "b\n").unwrap();
        expect_event(&rx, &w, t, "in-place write");
        let tmp = dir.join(".routes.yaml.swp");
        std::fs::write(&tmp, "c\n").unwrap();
        let t = Instant::now();
        std::fs::rename(&tmp, &path).unwrap();
        expect_event(&rx, &w, t, "rename over the file");
        let t = Instant::now();
        std::fs::remove_file(&path).unwrap();
        expect_event(&rx, &w, t, "removal");

        std::fs::write(dir.join("other.yaml"), "d\n").unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(200)),
            Err(crossbeam_channel::RecvTimeoutError::Timeout),
            "another file of the directory"
        );
        // Dropping stops the thread (the join in drop would hang otherwise).
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlinked_file_is_watched_in_its_own_directory_and_the_status_says_so() {
        let base = std::env::temp_dir().join(format!("watch-link-{}", std::process::id()));
        let (etc, srv) = (base.join("etc"), base.join("srv"));
        std::fs::create_dir_all(&etc).unwrap();
        std::fs::create_dir_all(&srv).unwrap();
        let target = srv.join("table.yaml");
        std::fs::write(&target, "a\n").unwrap();
        let path = etc.join("routes.yaml");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let (tx, rx) = crossbeam_channel::bounded(16);
        let w = FileWatcher::start(&path, tx).unwrap();
        let st = w.status();
        let real = std::fs::canonicalize(&path).unwrap();
        assert!(st.covers(&real), "{st:?}");
        assert!(!st.covers(&std::fs::canonicalize(&base).unwrap().join("x")));

        // An in-place write of the target, in a directory the path does not name.
        let t = Instant::now();
        std::fs::write(&target, "b\n").unwrap();
        expect_event(&rx, &w, t, "in-place write of the symlink's target");
        drop(w);
        assert!(!st.alive(), "a stopped watch covers nothing");
        assert!(!st.covers(&real));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
