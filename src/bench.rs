//! `bench`: a fixed-depth search of every position in `bench-positions/`,
//! one thread, 16 MB, a fresh table per position. The node count is the
//! signature of the search: it changes when, and only when, the search or
//! the evaluation changes. The last line, `<nodes> nodes <nps> nps`, is what
//! OpenBench reads.

use crate::game::Game;
use crate::nnue::Network;
use crate::search::report::Silent;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use shakmaty::CastlingMode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub const POSITIONS: &str = include_str!("../bench-positions/bench.epd");
pub const DEFAULT_DEPTH: u32 = 14;

pub fn fens() -> impl Iterator<Item = &'static str> {
    POSITIONS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// What a bench run counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchTotals {
    pub nodes: u64,
    pub nps: u64,
    /// False when `stop` cut the run short.
    pub complete: bool,
}

/// Runs the bench with `net`, writing a line per position and the total to
/// `out`. `signals.stop` ends it within one search's stop latency; a bench
/// so cut short says after how many positions, and writes no total.
pub fn run(
    depth: Option<u32>,
    net: Arc<Network>,
    signals: &Signals,
    out: &dyn Fn(&str),
) -> BenchTotals {
    let depth = depth.unwrap_or(DEFAULT_DEPTH);
    let mut engine = match Engine::new(1, 16) {
        Ok(engine) => engine,
        Err(e) => {
            out(&format!("info string error: bench: {e}"));
            return BenchTotals {
                nodes: 0,
                nps: 0,
                complete: false,
            };
        }
    };
    engine.set_net(net);
    crate::endgames::prepare();
    let count = fens().count();
    // Search time only: clearing the tables is not the search's speed.
    let mut searching = Duration::ZERO;
    let mut total = 0;
    let mut complete = true;
    for (i, fen) in fens().enumerate() {
        let game = match Game::from_fen(fen, CastlingMode::Standard) {
            Ok(g) => g,
            Err(e) => {
                out(&format!("bench: {e}"));
                continue;
            }
        };
        // Each position from empty tables, as if searched alone.
        engine.clear();
        engine.wait_for_table(&signals.stop);
        let limits = SearchLimits {
            depth: Some(depth),
            ..SearchLimits::default()
        };
        let request = SearchRequest::new(game.clone(), limits);
        let started = Instant::now();
        let result = engine.search(&request, &Silent, signals);
        searching += started.elapsed();
        total += result.nodes;
        if signals.stop.load(Ordering::Relaxed) {
            // No total: OpenBench would take a cut-short run for a bench.
            out(&format!(
                "info string bench stopped after {i} of {count} positions"
            ));
            complete = false;
            break;
        }
        let best = result.best.map_or("(none)".to_string(), |m| game.to_uci(m));
        out(&format!(
            "position {}/{count} bestmove {best} searched {} fen {fen}",
            i + 1,
            result.nodes
        ));
    }
    let us = searching.as_micros().max(1) as u64;
    let nps = total * 1_000_000 / us;
    if complete {
        out(&format!("{total} nodes {nps} nps"));
    }
    BenchTotals {
        nodes: total,
        nps,
        complete,
    }
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
