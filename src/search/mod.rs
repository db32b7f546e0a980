//! The search. Until the alpha-beta search lands, `go` answers at once with a
//! legal move chosen by a trivial rule, and honours `infinite` and `ponder` by
//! holding its `bestmove` until `stop` or `ponderhit`.

use crate::game::Game;
use crate::uci::options::Options;
use crate::uci::output::Output;
use crate::uci::parse::GoParams;
use shakmaty::{Move, Position};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Flags the controller raises for a running job.
#[derive(Debug, Default)]
pub struct Signals {
    pub stop: AtomicBool,
    pub ponderhit: AtomicBool,
}

/// Everything a search needs, copied out of the controller.
pub struct SearchJob {
    pub game: Game,
    pub params: GoParams,
    /// The legal moves of `go searchmoves`; empty means all moves.
    pub searchmoves: Vec<Move>,
    pub options: Options,
    pub pool: Arc<rayon::ThreadPool>,
    pub out: Output,
}

pub fn run(job: SearchJob, signals: &Signals) {
    let pos = job.game.position();
    let moves = if job.searchmoves.is_empty() {
        pos.legal_moves().into_iter().collect()
    } else {
        job.searchmoves.clone()
    };
    let best = pick(pos, &moves);
    if best.is_none() {
        let score = if pos.is_check() { "mate 0" } else { "cp 0" };
        job.out.line(&format!("info depth 0 score {score}"));
    }
    // In ponder and infinite mode the GUI waits for our move only after
    // `stop` (or `ponderhit`, when pondering without `infinite`).
    let held = job.params.infinite || job.params.ponder;
    let released = || {
        signals.stop.load(Ordering::SeqCst)
            || (!job.params.infinite && signals.ponderhit.load(Ordering::SeqCst))
    };
    while held && !released() {
        std::thread::sleep(Duration::from_millis(1));
    }
    match best {
        Some(m) => {
            for claim in job.game.claims_after(m) {
                job.out.line(&format!(
                    "info string draw claim: {claim} after {}",
                    job.game.to_uci(m)
                ));
            }
            job.out.line(&format!("bestmove {}", job.game.to_uci(m)));
        }
        None => job.out.line("bestmove (none)"),
    }
}

/// The trivial rule: the capture of the most valuable piece, else the first move.
fn pick(pos: &shakmaty::Chess, moves: &[Move]) -> Option<Move> {
    moves
        .iter()
        .copied()
        .max_by_key(|m| m.capture().map_or(0, |r| r as u8 + 1))
        .or_else(|| moves.first().copied())
        .filter(|_| !pos.legal_moves().is_empty())
}
