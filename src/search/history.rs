//! Move-ordering memory of one search thread: killers per ply, a countermove
//! per (piece, square) of the previous move, and quiet history with gravity.
//! The controller keeps one per thread from move to move of a game
//! (`HistoryTables`): what the last search learnt orders the next one's
//! first iterations. A new game starts them afresh.

use super::MAX_PLY;
use shakmaty::{Color, Move, Piece};
use std::sync::{Mutex, MutexGuard};

const HISTORY_MAX: i32 = 16_384;

pub struct History {
    /// [colour][from][to]
    quiet: Box<[[[i32; 64]; 64]; 2]>,
    killers: Box<[[Option<Move>; 2]; MAX_PLY + 2]>,
    /// [piece index][to square] of the previous move.
    counter: Box<[[Option<Move>; 64]; 12]>,
}

impl Default for History {
    fn default() -> Self {
        History {
            quiet: Box::new([[[0; 64]; 64]; 2]),
            killers: Box::new([[None; 2]; MAX_PLY + 2]),
            counter: Box::new([[None; 64]; 12]),
        }
    }
}

fn piece_index(p: Piece) -> usize {
    (p.role as usize - 1) + 6 * usize::from(p.color == Color::Black)
}

/// from-square of a move; a drop (never in chess) counts as its target.
fn from_of(m: Move) -> usize {
    m.from().unwrap_or(m.to()).to_usize()
}

impl History {
    pub fn quiet(&self, side: Color, m: Move) -> i32 {
        self.quiet[usize::from(side == Color::Black)][from_of(m)][m.to().to_usize()]
    }

    /// Gravity: the bonus shrinks as the entry nears its bound, so old
    /// knowledge fades instead of saturating.
    fn apply(entry: &mut i32, bonus: i32) {
        let bonus = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
        *entry += bonus - *entry * bonus.abs() / HISTORY_MAX;
    }

    /// A quiet move caused a cutoff: reward it, punish the quiets tried before.
    pub fn update_quiets(&mut self, side: Color, best: Move, tried: &[Move], depth: i32) {
        let bonus = (depth * depth * 16).min(1600);
        let c = usize::from(side == Color::Black);
        Self::apply(
            &mut self.quiet[c][from_of(best)][best.to().to_usize()],
            bonus,
        );
        for &m in tried.iter().filter(|&&m| m != best) {
            Self::apply(&mut self.quiet[c][from_of(m)][m.to().to_usize()], -bonus);
        }
    }

    pub fn killers(&self, ply: usize) -> [Option<Move>; 2] {
        self.killers[ply.min(MAX_PLY + 1)]
    }

    pub fn add_killer(&mut self, ply: usize, m: Move) {
        let k = &mut self.killers[ply.min(MAX_PLY + 1)];
        if k[0] != Some(m) {
            k[1] = k[0];
            k[0] = Some(m);
        }
    }

    /// Killers are kept by distance from the root, which moved: a new
    /// search starts without them.
    pub fn clear_all_killers(&mut self) {
        self.killers.fill([None; 2]);
    }

    pub fn clear_killers(&mut self, ply: usize) {
        self.killers[ply.min(MAX_PLY + 1)] = [None; 2];
    }

    pub fn counter(&self, previous: Option<(Piece, Move)>) -> Option<Move> {
        previous.and_then(|(p, m)| self.counter[piece_index(p)][m.to().to_usize()])
    }

    pub fn set_counter(&mut self, previous: Option<(Piece, Move)>, reply: Move) {
        if let Some((p, m)) = previous {
            self.counter[piece_index(p)][m.to().to_usize()] = Some(reply);
        }
    }
}

/// The histories of a thread pool, one per thread. Each worker holds its own
/// lock for the whole of a search, so no lock is ever contended; the
/// controller never locks one: to start afresh it makes new tables, and a
/// search still running keeps the old ones.
pub struct HistoryTables(Vec<Mutex<History>>);

impl HistoryTables {
    pub fn new(threads: usize) -> HistoryTables {
        HistoryTables(
            (0..threads.max(1))
                .map(|_| Mutex::new(History::default()))
                .collect(),
        )
    }

    pub fn threads(&self) -> usize {
        self.0.len()
    }

    /// Thread `id`'s history. The search makes tables of its pool's size,
    /// so the modulo only keeps this total.
    pub fn lock(&self, id: usize) -> MutexGuard<'_, History> {
        self.0[id % self.0.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}
