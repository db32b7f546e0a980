//! Build-time inputs: the net compiled in and the commit built.
//!
//! - `EVALFILE` (environment, or a `make EVALFILE=…` variable, as OpenBench
//!   passes it) names the net to embed, a path relative to this folder or
//!   absolute; without it the built-in `nets/qilin-net-3.nnue`. The file is
//!   checked here by `src/nnue/format.rs`, the same check the engine makes
//!   of a net loaded at run time, so a net of the wrong shape or version
//!   fails the build with the reason instead of the engine at start-up.
//! - `QILIN_COMMIT`: `git rev-parse --short HEAD` of this repository; in a
//!   `git archive` of it (no `.git`), the hash `git archive` wrote into
//!   `.git-archive-commit` (`export-subst` in `.gitattributes`); else
//!   "unknown".

#[allow(dead_code)]
#[path = "src/nnue/format.rs"]
mod format;

use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_NET: &str = "nets/qilin-net-3.nnue";

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    embed_net(&root);
    record_commit(&root);
}

fn embed_net(root: &Path) {
    println!("cargo:rerun-if-env-changed=EVALFILE");
    let named = std::env::var("EVALFILE")
        .ok()
        .filter(|p| !p.trim().is_empty());
    let path = root.join(named.as_deref().unwrap_or(DEFAULT_NET).trim());
    println!("cargo:rerun-if-changed={}", path.display());
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => fail(&format!("EVALFILE {}: cannot read it: {e}", path.display())),
    };
    match format::check(&bytes) {
        Ok(shape) => {
            // Shown by `cargo build -vv`: which net a build has.
            eprintln!(
                "embedding {} ({} bytes, {shape})",
                path.display(),
                bytes.len()
            );
        }
        Err(e) => fail(&format!(
            "EVALFILE {} is not a net this engine can use: {e} (NNUE-SPEC.md gives the format)",
            path.display()
        )),
    }
    let Some(text) = path.to_str() else {
        fail(&format!(
            "EVALFILE {}: the path is not valid UTF-8",
            path.display()
        ))
    };
    println!("cargo:rustc-env=QILIN_EVALFILE={text}");
}

/// Ends the build script with `message` (cargo shows a failed script's
/// standard error).
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

fn record_commit(root: &Path) {
    let commit = git_commit(root)
        .or_else(|| archive_commit(root))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=QILIN_COMMIT={commit}");
}

/// The output of `git args…` run in `root`, trimmed; `None` when git is
/// missing or fails.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The short hash of HEAD when `root` is the top of a git work tree (not a
/// folder unpacked inside some other repository). The build reruns when HEAD
/// moves: a commit, a checkout, a reset.
fn git_commit(root: &Path) -> Option<String> {
    let top = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != root.canonicalize().ok()? {
        return None;
    }
    let git_dir = root.join(git(root, &["rev-parse", "--git-dir"])?);
    let common_dir = root.join(git(root, &["rev-parse", "--git-common-dir"])?);
    let mut watched = vec![git_dir.join("HEAD"), common_dir.join("packed-refs")];
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common_dir.join(branch));
    }
    // A path that does not exist would make cargo rerun this script on
    // every build.
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    git(root, &["rev-parse", "--short", "HEAD"])
}

/// The hash `git archive` substituted into `.git-archive-commit`, if it did.
fn archive_commit(root: &Path) -> Option<String> {
    let path = root.join(".git-archive-commit");
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).ok()?;
    let hash = text.trim();
    let is_hash = !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_hexdigit());
    is_hash.then(|| hash.to_string())
}
