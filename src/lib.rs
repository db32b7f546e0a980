//! Qilin, a UCI chess engine. See docs/architecture.md for the architecture.

pub mod analyse;
pub mod annotate;
pub mod bench;
pub mod data;
pub mod datagen;
pub mod endgames;
pub mod files;
pub mod game;
pub mod genfens;
pub mod nnue;
pub mod perft;
pub mod play;
pub mod rng;
pub mod rules_explain;
pub mod score;
pub mod search;
pub mod threads;
pub mod train;
pub mod uci;

/// The name and version, with the commit built (`build.rs`) so that builds
/// can be told apart in a tournament table: `Qilin 0.2.0 (abc1234)`.
pub const NAME: &str = concat!(
    "Qilin ",
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("QILIN_COMMIT"),
    ")"
);
pub const AUTHOR: &str = "the Qilin developers";
