//! What a search tells the world: typed progress records handed to a
//! [`Listener`], and the [`SearchResult`] it returns. No text is made here;
//! the UCI front and `analyse` each write these records their own way, and a
//! [`Silent`] listener makes the search skip building them at all.

pub use super::tablebase::ProbeFailure;
use crate::score::mate_in_moves;
use shakmaty::Move;
use std::time::Duration;

/// A score as a person reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// From the side to move's point of view.
    Centipawns(i32),
    /// Moves to mate: positive when the side to move mates, negative (or 0
    /// when mated on the board) when it is mated.
    Mate(i32),
}

impl Score {
    /// The search's internal score: mates are `MATE - plies`.
    pub fn from_search(score: i32) -> Score {
        mate_in_moves(score).map_or(Score::Centipawns(score), Score::Mate)
    }
}

/// Whether a reported score is exact or only a bound from a failed
/// aspiration window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreBound {
    Exact,
    /// The true score is at least this (a fail high).
    Lower,
    /// The true score is at most this (a fail low).
    Upper,
}

/// Win, draw and loss chances in per mille, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wdl {
    pub win: u32,
    pub draw: u32,
    pub loss: u32,
}

/// One principal variation of an iteration (or a bound on one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PvReport<'a> {
    pub depth: i32,
    pub seldepth: usize,
    /// 1 for the best line, 2 for the next…
    pub multipv: usize,
    pub score: Score,
    pub bound: ScoreBound,
    pub wdl: Wdl,
    /// Nodes of the whole search so far, every thread.
    pub nodes: u64,
    /// Tablebase probes that answered, so far.
    pub tbhits: u64,
    pub time: Duration,
    /// Per mille of the transposition table holding entries of this search.
    pub hashfull: u32,
    pub pv: &'a [Move],
}

impl PvReport<'_> {
    pub fn nps(&self) -> u64 {
        let ms = (self.time.as_millis() as u64).max(1);
        self.nodes.saturating_mul(1000) / ms
    }
}

/// Receives a search's progress, on a search thread. The methods are called
/// by the main worker only, one at a time.
pub trait Listener: Sync {
    /// False for a listener that ignores everything: the search then builds
    /// no report (no PV copy, no table scan).
    fn active(&self) -> bool {
        true
    }
    fn on_pv(&self, _line: &PvReport<'_>) {}
    /// The root move being searched, shown for long searches.
    fn on_current_move(&self, _depth: i32, _mv: Move, _number: usize) {}
    /// The root position has no legal move: mate or stalemate.
    fn on_no_legal_moves(&self, _in_check: bool) {}
    /// A tablebase file failed a probe (damaged past its header, or
    /// unreadable): told once per table while the tables are loaded; the
    /// search goes on without that table.
    fn on_tablebase_failure(&self, _failure: &ProbeFailure) {}
}

/// The listener of `bench` and `datagen`: nothing is reported.
pub struct Silent;

impl Listener for Silent {
    fn active(&self) -> bool {
        false
    }
}

/// What a search played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// `None` when the root has no legal move.
    pub best: Option<Move>,
    /// The reply the search expects, when it has one.
    pub ponder: Option<Move>,
    /// The score of the line played, from the side to move's point of view,
    /// in the search's internal units (mates are `MATE - plies`).
    pub score: Option<i32>,
    /// The deepest complete iteration behind `best`.
    pub depth: i32,
    pub nodes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::MATE;

    #[test]
    fn mate_scores_count_moves() {
        assert_eq!(Score::from_search(MATE - 1), Score::Mate(1));
        assert_eq!(Score::from_search(MATE - 3), Score::Mate(2));
        assert_eq!(Score::from_search(-(MATE - 2)), Score::Mate(-1));
        assert_eq!(Score::from_search(-(MATE - 4)), Score::Mate(-2));
        assert_eq!(Score::from_search(-MATE), Score::Mate(0));
        assert_eq!(Score::from_search(35), Score::Centipawns(35));
    }
}
