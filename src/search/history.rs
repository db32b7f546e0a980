//! Move-ordering memory of one search thread: killers per ply, a countermove
//! per (piece, square) of the previous move, quiet history with gravity, and
//! continuation history: how well a quiet move did as the reply to a given
//! move one ply earlier (and as the follow-up to our own move two plies
//! earlier), by (piece, target square) of both.
//! Beside them, the thread's correction history (`correction.rs`), which
//! lives and is reset with them.
//! The controller keeps one per thread from move to move of a game
//! (`HistoryTables`): what the last search learnt orders the next one's
//! first iterations. A new game starts them afresh.

use super::MAX_PLY;
use super::correction::Correction;
use shakmaty::{Color, Move, Piece};
use std::sync::{Mutex, MutexGuard};

const HISTORY_MAX: i32 = 16_384;

pub struct History {
    /// [colour][from][to]
    quiet: Box<[[[i32; 64]; 64]; 2]>,
    killers: Box<[[Option<Move>; 2]; MAX_PLY + 2]>,
    /// [piece index][to square] of the previous move.
    counter: Box<[[Option<Move>; 64]; 12]>,
    /// [earlier piece][earlier to][piece][to], flattened; i16 keeps it
    /// at 1.2 MB (entries stay within ±HISTORY_MAX).
    continuation: Box<[i16]>,
    pub correction: Correction,
}

/// The moves one and two plies before a node, by moving piece: what
/// continuation history is indexed by. `None` at the root's first plies
/// and after a null move.
pub type Context = [Option<(Piece, Move)>; 2];

const PIECE_SQUARES: usize = 12 * 64;

fn piece_square(p: Piece, m: Move) -> usize {
    piece_index(p) * 64 + m.to().to_usize()
}

/// `piece_square` of a move `side` is about to make.
fn our_piece_square(side: Color, m: Move) -> usize {
    piece_square(
        Piece {
            color: side,
            role: m.role(),
        },
        m,
    )
}

impl Default for History {
    fn default() -> Self {
        History {
            quiet: Box::new([[[0; 64]; 64]; 2]),
            killers: Box::new([[None; 2]; MAX_PLY + 2]),
            counter: Box::new([[None; 64]; 12]),
            continuation: vec![0; PIECE_SQUARES * PIECE_SQUARES].into_boxed_slice(),
            correction: Correction::default(),
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
    #[cfg(test)]
    pub fn quiet(&self, side: Color, m: Move) -> i32 {
        self.quiet[usize::from(side == Color::Black)][from_of(m)][m.to().to_usize()]
    }

    /// Quiet history plus both continuation histories: the order of quiet
    /// moves and their reductions.
    pub fn quiet_score(&self, side: Color, m: Move, context: &Context) -> i32 {
        self.quiet_scorer(side, context).score(m)
    }

    /// `quiet_score` for many moves of one node: the table rows the node's
    /// side and context select are looked up once, not once per move.
    pub fn quiet_scorer(&self, side: Color, context: &Context) -> QuietScorer<'_> {
        let row = |entry: &Option<(Piece, Move)>| {
            entry.map(|(p, before)| {
                let start = piece_square(p, before) * PIECE_SQUARES;
                &self.continuation[start..start + PIECE_SQUARES]
            })
        };
        QuietScorer {
            side,
            quiet: &self.quiet[usize::from(side == Color::Black)],
            continuation: [row(&context[0]), row(&context[1])],
        }
    }

    /// Gravity: the bonus shrinks as the entry nears its bound, so old
    /// knowledge fades instead of saturating.
    fn apply(entry: &mut i32, bonus: i32) {
        let bonus = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
        *entry += bonus - *entry * bonus.abs() / HISTORY_MAX;
    }

    /// A quiet move caused a cutoff: reward it, punish the quiets tried before.
    pub fn update_quiets(
        &mut self,
        side: Color,
        best: Move,
        tried: &[Move],
        depth: i32,
        context: &Context,
    ) {
        let bonus = (depth * depth * super::params::history_bonus())
            .min(super::params::history_bonus_max());
        self.reward(side, best, bonus, context);
        for &m in tried.iter().filter(|&&m| m != best) {
            self.reward(side, m, -bonus, context);
        }
    }

    fn reward(&mut self, side: Color, m: Move, bonus: i32, context: &Context) {
        let c = usize::from(side == Color::Black);
        Self::apply(&mut self.quiet[c][from_of(m)][m.to().to_usize()], bonus);
        let here = our_piece_square(side, m);
        for &(p, before) in context.iter().flatten() {
            let entry = &mut self.continuation[piece_square(p, before) * PIECE_SQUARES + here];
            let mut wide = i32::from(*entry);
            Self::apply(&mut wide, bonus);
            // apply keeps |wide| <= HISTORY_MAX, which fits.
            *entry = i16::try_from(wide).unwrap_or(if wide < 0 { i16::MIN } else { i16::MAX });
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

/// The quiet-move score of one node's moves (`History::quiet_scorer`).
pub struct QuietScorer<'a> {
    side: Color,
    quiet: &'a [[i32; 64]; 64],
    /// The continuation rows of the moves one and two plies before.
    continuation: [Option<&'a [i16]>; 2],
}

impl QuietScorer<'_> {
    pub fn score(&self, m: Move) -> i32 {
        let here = our_piece_square(self.side, m);
        let earlier: i32 = self
            .continuation
            .iter()
            .flatten()
            .map(|row| row.get(here).map_or(0, |&v| i32::from(v)))
            .sum();
        earlier + self.quiet[from_of(m)][m.to().to_usize()]
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

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Role, Square};

    fn pawn_push(from: Square, to: Square) -> Move {
        Move::Normal {
            role: Role::Pawn,
            from,
            capture: None,
            to,
            promotion: None,
        }
    }

    /// A reply that cut off after 1. e4 scores higher after e4 than after
    /// d4, and higher than the same move with no earlier move known.
    #[test]
    fn a_reply_is_remembered_after_the_move_it_answered() {
        let white_pawn = Piece {
            color: Color::White,
            role: Role::Pawn,
        };
        let e4 = pawn_push(Square::E2, Square::E4);
        let d4 = pawn_push(Square::D2, Square::D4);
        let e5 = pawn_push(Square::E7, Square::E5);
        let c5 = pawn_push(Square::C7, Square::C5);
        let mut h = History::default();
        h.update_quiets(
            Color::Black,
            e5,
            &[c5, e5],
            6,
            &[Some((white_pawn, e4)), None],
        );
        let after = |m| [Some((white_pawn, m)), None];
        let (e5_after_e4, e5_after_d4) = (
            h.quiet_score(Color::Black, e5, &after(e4)),
            h.quiet_score(Color::Black, e5, &after(d4)),
        );
        assert!(e5_after_e4 > e5_after_d4, "{e5_after_e4} {e5_after_d4}");
        assert_eq!(e5_after_d4, h.quiet(Color::Black, e5));
        assert!(h.quiet_score(Color::Black, c5, &after(e4)) < h.quiet(Color::Black, c5));
    }
}
