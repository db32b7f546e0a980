//! Qilin, a UCI chess engine. See README.md for the architecture.

pub mod analyse;
pub mod bench;
pub mod data;
pub mod datagen;
pub mod eval;
pub mod game;
pub mod nnue;
pub mod perft;
pub mod play;
pub mod rules_explain;
pub mod search;
pub mod train;
pub mod uci;

pub const NAME: &str = concat!("Qilin ", env!("CARGO_PKG_VERSION"));
pub const AUTHOR: &str = "the Qilin developers";
