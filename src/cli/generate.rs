//! `jaus-ocu generate man|completions --out DIR`: the man pages (`clap_mangen`) and the bash, zsh
//! and fish completions (`clap_complete`) rendered from the clap definitions in `cli::app`, for
//! the Debian package (assets/deb/build.sh runs it before `cargo deb --no-build`).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};

/// Arguments of `jaus-ocu generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What to write.
    #[command(subcommand)]
    pub what: GenerateWhat,
}

/// What `jaus-ocu generate` writes.
#[derive(Debug, Subcommand)]
pub enum GenerateWhat {
    /// The man pages: jaus-ocu.1 and one jaus-ocu-SUBCOMMAND.1 per subcommand.
    Man {
        /// The directory to write into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Shell completions: jaus-ocu.bash, _jaus-ocu (zsh), jaus-ocu.fish.
    Completions {
        /// The directory to write into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The shells to write for (default: all three).
        #[arg(value_enum)]
        shells: Vec<Shell>,
    },
}

/// A shell the package installs completions for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// bash (bash-completion's `/usr/share/bash-completion/completions/`).
    Bash,
    /// zsh (`/usr/share/zsh/vendor-completions/`).
    Zsh,
    /// fish (`/usr/share/fish/vendor_completions.d/`).
    Fish,
}

impl Shell {
    /// The file name the completion is written under.
    pub fn file_name(self) -> &'static str {
        match self {
            Shell::Bash => "jaus-ocu.bash",
            Shell::Zsh => "_jaus-ocu",
            Shell::Fish => "jaus-ocu.fish",
        }
    }
}

/// Runs `jaus-ocu generate` for `cmd`, the clap command `main` parses
/// (`cli::app::command()`); prints each file written.
pub fn run(args: &GenerateArgs, cmd: &clap::Command) -> Result<i32> {
    let written = match &args.what {
        GenerateWhat::Man { out } => man_pages(out, cmd)?,
        GenerateWhat::Completions { out, shells } => {
            let shells = if shells.is_empty() {
                vec![Shell::Bash, Shell::Zsh, Shell::Fish]
            } else {
                shells.clone()
            };
            completions(out, &shells, cmd)?
        }
    };
    for path in written {
        println!("{}", path.display());
    }
    Ok(0)
}

fn create_dir(out: &Path) -> Result<()> {
    fs::create_dir_all(out).with_context(|| {
        format!(
            "cannot create the output directory {} (give --out a directory you can write)",
            out.display()
        )
    })
}

/// Writes jaus-ocu.1 and a page per visible subcommand of `cmd` into `out`; returns the files
/// written.
pub fn man_pages(out: &Path, cmd: &clap::Command) -> Result<Vec<PathBuf>> {
    create_dir(out)?;
    let cmd = cmd.clone();
    let mut names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| format!("jaus-ocu-{}.1", s.get_name()))
        .collect();
    names.push("jaus-ocu.1".to_owned());
    clap_mangen::generate_to(cmd, out)
        .with_context(|| format!("cannot write the man pages into {}", out.display()))?;
    Ok(names.into_iter().map(|n| out.join(n)).collect())
}

/// Writes one completion file of `cmd` per shell into `out`; returns the files written.
pub fn completions(out: &Path, shells: &[Shell], cmd: &clap::Command) -> Result<Vec<PathBuf>> {
    create_dir(out)?;
    let mut written = Vec::with_capacity(shells.len());
    for &shell in shells {
        let path = out.join(shell.file_name());
        let mut buf = Vec::new();
        let mut cmd = cmd.clone();
        let generator = match shell {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
        };
        clap_complete::generate(generator, &mut cmd, "jaus-ocu", &mut buf);
        fs::File::create(&path)
            .and_then(|mut f| f.write_all(&buf))
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
