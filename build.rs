//! Names the git commit the binary is built from, for `jaus-ocu --version`
//! (`JAUS_OCU_GIT_COMMIT`): the short hash, `-dirty` when tracked files differed from it, or
//! `unknown` outside a git checkout of this crate (a crates.io tarball, say). A packager
//! building from a tarball can set `JAUS_OCU_GIT_COMMIT` in the environment instead.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=JAUS_OCU_GIT_COMMIT");
    let commit = std::env::var("JAUS_OCU_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| from_git().unwrap_or_else(|| "unknown".to_owned()));
    println!("cargo:rustc-env=JAUS_OCU_GIT_COMMIT={commit}");
}

fn from_git() -> Option<String> {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    // Only this crate's own checkout: a tarball unpacked inside some other repository must
    // not report that repository's commit.
    let top = PathBuf::from(git(&manifest, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != manifest.canonicalize().ok()? {
        return None;
    }
    // Rebuild when HEAD moves: HEAD itself (a checkout), the branch's ref file (a commit) and
    // packed-refs. Worktrees keep HEAD in their own git dir and refs in the common one. The
    // index is not watched: `git status` rewrites it, which would rebuild everything; so
    // `-dirty` describes the tree as it was when HEAD last moved (CI builds a clean clone).
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { manifest.join(p) }
    };
    let git_dir = abs(git(&manifest, &["rev-parse", "--git-dir"])?);
    let common = abs(git(&manifest, &["rev-parse", "--git-common-dir"])?);
    // Only files that exist: cargo reruns a build script at every build while a file it
    // watches is missing (packed-refs may not exist; a ref may live only in packed-refs).
    let mut watched = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(head_ref) = git(&manifest, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common.join(head_ref));
    }
    for path in watched.iter().filter(|p| p.is_file()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let hash = git(&manifest, &["rev-parse", "--short=12", "HEAD"])?;
    let dirty = git(
        &manifest,
        &["status", "--porcelain", "--untracked-files=no"],
    )
    .is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{hash}-dirty") } else { hash })
}
