//! `bench`: a fixed-depth search of every position in `bench-positions/`,
//! one thread, 16 MB, a fresh table per position. The node count is the
//! signature of the search: it changes when, and only when, the search or
//! the evaluation changes. The last line, `<nodes> nodes <nps> nps`, is what
//! OpenBench reads.

use crate::engine::thread_pool;
use crate::game::Game;
use crate::search::history::HistoryTables;
use crate::search::tt::TranspositionTable;
use crate::search::{self, SearchJob, Signals};
use crate::uci::options::Options;
use crate::uci::output::Output;
use crate::uci::parse::GoParams;
use shakmaty::CastlingMode;
use std::sync::Arc;
use std::time::Instant;

pub const POSITIONS: &str = include_str!("../bench-positions/bench.epd");
pub const DEFAULT_DEPTH: u32 = 14;

pub fn fens() -> impl Iterator<Item = &'static str> {
    POSITIONS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Runs the bench, printing a line per position and the total; returns
/// (nodes, nodes per second).
pub fn run(depth: Option<u32>, out: &Output) -> (u64, u64) {
    let depth = depth.unwrap_or(DEFAULT_DEPTH);
    let pool = thread_pool(1);
    let silent = Output::new(Box::new(std::io::sink()));
    let count = fens().count();
    // Search time only: allocating the tables is not the search's speed.
    let mut searching = std::time::Duration::ZERO;
    let mut total = 0;
    for (i, fen) in fens().enumerate() {
        let game = match Game::from_fen(fen, CastlingMode::Standard) {
            Ok(g) => g,
            Err(e) => {
                out.error(&e.to_string());
                continue;
            }
        };
        let Some(tt) = TranspositionTable::new(16, &pool) else {
            out.error("bench: cannot allocate 16 MB");
            return (total, 0);
        };
        let job = SearchJob {
            game: game.clone(),
            params: GoParams {
                depth: Some(u64::from(depth)),
                ..GoParams::default()
            },
            searchmoves: Vec::new(),
            options: Options::default(),
            pool: Arc::clone(&pool),
            tt: Arc::new(tt),
            histories: Arc::new(HistoryTables::new(1)),
            out: silent.clone(),
        };
        let started = Instant::now();
        let result = search::run(job, &Arc::new(Signals::default()));
        searching += started.elapsed();
        total += result.nodes;
        let best = result.best.map_or("(none)".to_string(), |m| game.to_uci(m));
        out.line(&format!(
            "position {}/{count} bestmove {best} searched {} fen {fen}",
            i + 1,
            result.nodes
        ));
    }
    let us = searching.as_micros().max(1) as u64;
    let nps = total * 1_000_000 / us;
    out.line(&format!("{total} nodes {nps} nps"));
    (total, nps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bench_position_is_legal() {
        let mut n = 0;
        for fen in fens() {
            assert!(Game::from_fen(fen, CastlingMode::Standard).is_ok(), "{fen}");
            n += 1;
        }
        assert!(n >= 50, "{n}");
    }
}
