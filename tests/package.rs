//! What the Debian package is built from, as far as plain Rust can check it: `--version` names
//! the commit, `jaus-ocu generate` writes the man pages and completions from the clap
//! definitions, `jaus-ocu FILE` (the desktop entry's Exec) opens a file, and the MIME type the
//! package installs matches what `record` writes. The package itself is proven by .ci/deb.sh.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_jaus-ocu"));
    c.env("JAUS_OCU_CONFIG_DIR", env!("CARGO_TARGET_TMPDIR"));
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("jaus-ocu runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

const SUBCOMMANDS: [&str; 11] = [
    "demo",
    "decode",
    "inspect",
    "replay",
    "sim",
    "probe",
    "control",
    "record",
    "serve",
    "export",
    "screenshot",
];

#[test]
fn version_names_the_version_and_the_commit_it_was_built_from() {
    let out = run(&["--version"]);
    assert!(out.status.success());
    let line = text(&out.stdout);
    let version = env!("CARGO_PKG_VERSION");
    let prefix = format!("jaus-ocu {version} (commit ");
    assert!(line.starts_with(&prefix), "{line}");
    let commit = line[prefix.len()..].trim_end().trim_end_matches(')');
    let hash = commit.trim_end_matches("-dirty");
    assert!(
        commit == "unknown" || (hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit())),
        "{line}"
    );
    // In a git checkout the hash is HEAD's (build.rs reruns when HEAD moves), unless the
    // environment named a commit at build time.
    let head = Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output();
    if let Ok(head) = head
        && head.status.success()
        && std::env::var_os("JAUS_OCU_GIT_COMMIT").is_none()
    {
        let head = text(&head.stdout);
        assert!(head.starts_with(hash), "--version {commit}, HEAD {head}");
    }
}

#[test]
fn generate_man_writes_the_main_page_and_one_per_subcommand() {
    let dir = scratch("generate-man");
    let out = run(&["generate", "man", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let main = std::fs::read_to_string(dir.join("jaus-ocu.1")).unwrap();
    assert!(main.starts_with(".ie"), "a roff page: {}", &main[..40]);
    assert!(main.contains(".TH jaus-ocu 1"), "{main}");
    for sub in SUBCOMMANDS {
        assert!(main.contains(sub), "jaus-ocu.1 names {sub}");
        let page = dir.join(format!("jaus-ocu-{sub}.1"));
        assert!(page.is_file(), "{} written", page.display());
        assert!(text(&out.stdout).contains(&format!("jaus-ocu-{sub}.1")));
    }
    // The packaging subcommand is hidden: no page, not in the main page.
    assert!(!dir.join("jaus-ocu-generate.1").exists());
    assert!(!main.contains("generate"));
}

#[test]
fn generate_completions_writes_bash_zsh_and_fish_naming_the_subcommands() {
    let dir = scratch("generate-completions");
    let out = run(&["generate", "completions", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in ["jaus-ocu.bash", "_jaus-ocu", "jaus-ocu.fish"] {
        let script = std::fs::read_to_string(dir.join(file)).unwrap();
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{file} names {sub}");
        }
        // fish spells a long option `-l memory-limit`.
        assert!(script.contains("memory-limit"), "{file} has the options");
    }
    let bash = std::fs::read_to_string(dir.join("jaus-ocu.bash")).unwrap();
    assert!(
        bash.lines()
            .any(|l| l.trim_start().starts_with("complete -F") && l.ends_with(" jaus-ocu")),
        "bash registers it for jaus-ocu"
    );

    // One shell only: only its file.
    let one = scratch("generate-completions-fish");
    let out = run(&[
        "generate",
        "completions",
        "fish",
        "--out",
        one.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(one.join("jaus-ocu.fish").is_file());
    assert!(!one.join("jaus-ocu.bash").exists());
}

#[test]
fn a_shell_that_is_not_offered_is_a_usage_error_naming_the_ones_that_are() {
    let dir = scratch("generate-tcsh");
    let out = run(&[
        "generate",
        "completions",
        "tcsh",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
    assert!(err.contains("bash, zsh, fish"), "{err}");
    assert!(!dir.exists(), "nothing written");
}

#[test]
fn an_output_directory_that_cannot_be_made_is_an_error_saying_so() {
    let out = run(&["generate", "man", "--out", "/proc/jaus-ocu-man"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot create the output directory /proc/jaus-ocu-man"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_file_without_subcommand_is_replayed_and_a_missing_one_named() {
    // The desktop entry runs `jaus-ocu %f`: the file goes to replay, which opens it before
    // any window, so a missing file fails here without a display.
    let out = run(&["/nonexistent/session.mcap"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("/nonexistent/session.mcap"), "{err}");

    let out = run(&["demoo"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("'demoo' is neither a file nor a subcommand"),
        "{err}"
    );
    assert!(err.contains("demo, decode"), "{err}");

    let out = run(&["session.mcap", "--connect", "10.0.0.5"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("not both"), "{err}");
}

#[test]
fn the_packaged_mime_type_matches_the_files_record_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let xml = std::fs::read_to_string(root.join("assets/deb/jaus-ocu-mime.xml")).unwrap();
    let desktop = std::fs::read_to_string(root.join("assets/deb/jaus-ocu.desktop")).unwrap();
    // The magic as shared-mime-info reads it: \x89 and \r\n escaped.
    let magic: String = mcap::MAGIC
        .iter()
        .map(|&b| match b {
            b'\r' => "\\r".to_owned(),
            b'\n' => "\\n".to_owned(),
            b if b.is_ascii_graphic() => (b as char).to_string(),
            b => format!("\\x{b:02x}"),
        })
        .collect();
    assert!(
        xml.contains(&format!("value=\"{magic}\"")),
        "{magic} in the XML"
    );
    assert!(xml.contains("<glob pattern=\"*.mcap\"/>"));
    let mime_line = desktop
        .lines()
        .find(|l| l.starts_with("MimeType="))
        .unwrap();
    for ty in [
        "application/vnd.mcap",
        "application/x-pcapng",
        "application/vnd.tcpdump.pcap",
    ] {
        assert!(mime_line.contains(&format!("{ty};")), "{mime_line}");
    }
    assert!(desktop.contains("\nExec=jaus-ocu %f\n"));
}
