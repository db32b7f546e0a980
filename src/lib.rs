//! Qilin, a UCI chess engine. See README.md for the architecture.

pub mod analyse;
pub mod bench;
pub mod data;
pub mod datagen;
pub mod engine;
pub mod eval;
pub mod game;
pub mod perft;
pub mod search;
pub mod tune;
pub mod uci;
