//! Which JAUS ID this process uses on the network. Every OCU process needs its own: the arm
//! grants control to an ID, so two processes sharing one are one client to it (issue 18:
//! a terminal script took the GUI's control while the GUI still said "control held").
//!
//! The scheme, without the operator thinking of it:
//! - **Subsystem and node** come from this installation's identity file
//!   (`$JAUS_OCU_CONFIG_DIR/identity.toml`, else `$XDG_CONFIG_HOME/jaus-ocu/identity.toml`,
//!   else `~/.config/jaus-ocu/identity.toml`). It is written on first use with subsystem 200
//!   and a random node (2..=254), so two laptops on one network differ with a probability of
//!   252 in 253; a site that assigns IDs edits the file once per laptop.
//! - **Component**: each process takes the first free number, the GUI from 1 (so the GUI of an
//!   installation is `S.N.1` whenever it runs alone), command-line tools from 2. "Free" is a
//!   lock file (`S.N.C.lock` in `$XDG_RUNTIME_DIR/jaus-ocu/`, else the temporary directory)
//!   held with an exclusive advisory lock for the process's life; the system drops it when the
//!   process ends, however it ends.
//! - `--jaus-id S.N.C` overrides all of it (no file, no lock).
//!
//! What cannot be prevented here (another machine with the same subsystem and node) is
//! detected on the wire: the client refuses commands while it sees another user of its ID
//! (`net::client`, `NetFact::Identity`).

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::jaus::JausId;
use crate::net::rng::Rng;

/// The subsystem of a new installation (the one OCUs used before IDs were per process).
pub const DEFAULT_SUBSYSTEM: u16 = 200;

/// Who is asking: the GUI takes component numbers from 1, the command-line tools from 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The window (`gui`, `demo`).
    Gui,
    /// A command-line tool (`probe`, `control`, `record`).
    Tool,
}

/// Where an ID came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--jaus-id` on the command line.
    CommandLine,
    /// Subsystem and node from this identity file, the component a free one.
    Allocated {
        /// The identity file.
        file: PathBuf,
    },
}

/// This process's JAUS ID, with the lock that keeps its component number ours.
#[derive(Debug)]
pub struct Identity {
    /// The ID.
    pub id: JausId,
    /// Where it came from.
    pub source: Source,
    /// Held (locked) for the process's life; `None` for an ID given on the command line.
    _lock: Option<File>,
}

impl Identity {
    /// One line for logs: "JAUS ID 200.37.2 (identity file …, component 2 free)".
    pub fn describe(&self) -> String {
        match &self.source {
            Source::CommandLine => format!("JAUS ID {} (--jaus-id)", self.id),
            Source::Allocated { file } => format!(
                "JAUS ID {} (subsystem and node from {}, component {} free)",
                self.id,
                file.display(),
                self.id.component
            ),
        }
    }
}

/// The identity file's directory.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("JAUS_OCU_CONFIG_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("jaus-ocu"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config").join("jaus-ocu"))
}

/// Where the per-process lock files live.
fn lock_dir() -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(std::env::temp_dir, PathBuf::from);
    // One directory per user where the runtime directory is shared (the temporary one).
    let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
    base.join(format!("jaus-ocu-{user}"))
}

/// This process's ID: `explicit` when given, else allocated as the module doc says.
pub fn choose(explicit: Option<JausId>, role: Role) -> Result<Identity> {
    if let Some(id) = explicit {
        return Ok(Identity {
            id,
            source: Source::CommandLine,
            _lock: None,
        });
    }
    let dir = config_dir().context(
        "no place for the identity file: set HOME, XDG_CONFIG_HOME or JAUS_OCU_CONFIG_DIR, \
         or give the OCU's ID with --jaus-id S.N.C",
    )?;
    choose_in(&dir, &lock_dir(), role)
}

/// An ID allocated from the identity file in `config_dir` with locks in `locks` (what
/// [`choose`] does with the default places; tests use their own).
pub fn choose_in(config_dir: &Path, locks: &Path, role: Role) -> Result<Identity> {
    let file = config_dir.join("identity.toml");
    let (subsystem, node) = read_or_create(&file)?;
    allocate(subsystem, node, role, locks, file)
}

/// The subsystem and node of `file`, written first (with a random node) if it is missing.
fn read_or_create(file: &Path) -> Result<(u16, u8)> {
    match fs::read_to_string(file) {
        Ok(text) => parse(&text).with_context(|| {
            format!(
                "{}: fix it (subsystem = 1..65534, node = 1..254) or delete it to get a new \
                 one",
                file.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let node = 2 + (Rng::from_entropy().next_u64() % 253) as u8;
            let text = format!(
                "# This installation's JAUS identity (jaus-ocu). Each OCU process uses\n\
                 # subsystem.node.component with the first free component: the GUI from 1,\n\
                 # command-line tools from 2. Give every laptop on one network its own node\n\
                 # (or subsystem); `--jaus-id S.N.C` overrides this file.\n\
                 subsystem = {DEFAULT_SUBSYSTEM}\n\
                 node = {node}\n"
            );
            if let Some(dir) = file.parent() {
                fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            // Two processes starting at once: the first writer wins, the other reads it.
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(file)
            {
                Ok(mut f) => {
                    f.write_all(text.as_bytes())
                        .with_context(|| format!("writing {}", file.display()))?;
                    Ok((DEFAULT_SUBSYSTEM, node))
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = fs::read_to_string(file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    parse(&text)
                }
                Err(e) => Err(e).with_context(|| format!("writing {}", file.display())),
            }
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// `subsystem = N` and `node = N` from an identity file.
fn parse(text: &str) -> Result<(u16, u8)> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        subsystem: u16,
        node: u8,
    }
    let f: File = toml::from_str(text)?;
    if f.subsystem == 0 || f.subsystem == u16::MAX {
        bail!("subsystem {} is reserved", f.subsystem);
    }
    if f.node == 0 || f.node == u8::MAX {
        bail!("node {} is reserved", f.node);
    }
    Ok((f.subsystem, f.node))
}

/// The first component number (from the role's start) whose lock this process can take.
fn allocate(subsystem: u16, node: u8, role: Role, locks: &Path, file: PathBuf) -> Result<Identity> {
    fs::create_dir_all(locks).with_context(|| format!("creating {}", locks.display()))?;
    let first = match role {
        Role::Gui => 1,
        Role::Tool => 2,
    };
    for component in (first..=254u8).chain(1..first) {
        let path = locks.join(format!("{subsystem}.{node}.{component}.lock"));
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        if f.try_lock().is_ok() {
            return Ok(Identity {
                id: JausId::new(subsystem, node, component),
                source: Source::Allocated { file },
                _lock: Some(f),
            });
        }
    }
    bail!(
        "every component number of {subsystem}.{node} is taken by a running jaus-ocu process \
         (locks in {}); give this one an ID with --jaus-id S.N.C",
        locks.display()
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test reports a failure by panicking")]

    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("jaus-ocu-id-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn processes_alive_at_once_take_distinct_components_and_a_freed_one_is_taken_again() {
        let locks = temp("locks");
        let f = PathBuf::from("identity.toml");
        let gui = allocate(200, 7, Role::Gui, &locks, f.clone()).unwrap();
        let a = allocate(200, 7, Role::Tool, &locks, f.clone()).unwrap();
        let b = allocate(200, 7, Role::Tool, &locks, f.clone()).unwrap();
        assert_eq!(gui.id, JausId::new(200, 7, 1));
        assert_eq!(a.id, JausId::new(200, 7, 2));
        assert_eq!(b.id, JausId::new(200, 7, 3));
        // A second GUI while the first runs: the next free number, never the first's.
        let gui2 = allocate(200, 7, Role::Gui, &locks, f.clone()).unwrap();
        assert_eq!(gui2.id, JausId::new(200, 7, 4));
        drop(a);
        let c = allocate(200, 7, Role::Tool, &locks, f).unwrap();
        assert_eq!(c.id, JausId::new(200, 7, 2));
        let _ = fs::remove_dir_all(&locks);
    }

    #[test]
    fn the_identity_file_is_written_once_with_a_random_node_and_read_back() {
        let dir = temp("file");
        let file = dir.join("identity.toml");
        let (s, n) = read_or_create(&file).unwrap();
        assert_eq!(s, DEFAULT_SUBSYSTEM);
        assert!((2..=254).contains(&n));
        assert_eq!(read_or_create(&file).unwrap(), (s, n));
        fs::write(&file, "subsystem = 42\nnode = 9\n").unwrap();
        assert_eq!(read_or_create(&file).unwrap(), (42, 9));
        fs::write(&file, "subsystem = 42\nnode = 255\n").unwrap();
        let e = format!("{:#}", read_or_create(&file).unwrap_err());
        assert!(
            e.contains("node 255 is reserved") && e.contains("delete it"),
            "{e}"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
