//! Qilin, a UCI chess engine. See docs/architecture.md for the architecture.

pub mod analyse;
pub mod annotate;
pub mod bench;
pub mod data;
pub mod datagen;
pub mod eval;
pub mod files;
pub mod game;
pub mod nnue;
pub mod perft;
pub mod rules_explain;
pub mod search;
pub mod train;
pub mod uci;

pub const NAME: &str = concat!("Qilin ", env!("CARGO_PKG_VERSION"));
pub const AUTHOR: &str = "the Qilin developers";
