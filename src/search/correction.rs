//! Correction history: how far the search's scores have come out from the
//! static evaluation in positions with the same pawn structure and side to
//! move. The evaluation misjudges some structures the same way again and
//! again (a blocked centre, a far-advanced passer); the search finds that
//! out, and the average of what it found corrects the next static
//! evaluation with those pawns, which pruning and reductions then trust.

use crate::score::MAX_EVAL;
use shakmaty::{Chess, Color, Position};

const ENTRIES: usize = 16_384;
/// Entries keep the average in 1/GRAIN of a centipawn.
const GRAIN: i32 = 256;
/// Weights are out of this much: a depth-d result moves the average by
/// min(d + 1, 16) / 256 of the way towards itself.
const WEIGHT_SCALE: i32 = 256;

pub struct Correction {
    /// [side to move][pawn key slot], in 1/GRAIN centipawns.
    table: Box<[[i32; ENTRIES]; 2]>,
}

impl Default for Correction {
    fn default() -> Self {
        Correction {
            table: Box::new([[0; ENTRIES]; 2]),
        }
    }
}

/// Where a position's correction lives.
#[derive(Clone, Copy)]
pub struct Slot {
    side: usize,
    index: usize,
}

impl Slot {
    pub fn of(pos: &Chess) -> Slot {
        Slot {
            side: usize::from(pos.turn() == Color::Black),
            index: (pawn_key(pos) as usize) & (ENTRIES - 1),
        }
    }
}

/// A key of the pawn structure: the two pawn bitboards, each mixed (the
/// finaliser of MurmurHash3) and then combined.
fn pawn_key(pos: &Chess) -> u64 {
    let b = pos.board();
    let white = u64::from(b.pawns() & b.by_color(Color::White));
    let black = u64::from(b.pawns() & b.by_color(Color::Black));
    mix(white) ^ mix(black ^ 0x9e37_79b9_7f4a_7c15).rotate_left(17)
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl Correction {
    /// The static evaluation `raw` corrected by what searches found here;
    /// never past `MAX_EVAL`, so never into the tablebase or mate bands.
    pub fn apply(&self, slot: Slot, raw: i32) -> i32 {
        (raw + self.table[slot.side][slot.index] / GRAIN).clamp(-MAX_EVAL, MAX_EVAL)
    }

    /// A search of `depth` found `score` where the evaluation said `raw`.
    pub fn update(&mut self, slot: Slot, depth: i32, raw: i32, score: i32) {
        // No correction exceeds the limit, whatever the search found.
        let limit = super::params::correction_limit();
        let target = (score - raw).clamp(-limit, limit) * GRAIN;
        let weight = (depth + 1).clamp(1, super::params::correction_max_weight());
        let entry = &mut self.table[slot.side][slot.index];
        *entry = (*entry * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("valid FEN")
            .into_position(CastlingMode::Standard)
            .expect("legal position")
    }

    /// Searches that keep finding +300 over the evaluation pull the
    /// correction up to the 128 cp cap, for that structure and side only.
    #[test]
    fn corrections_follow_searches_up_to_the_cap() {
        let mut c = Correction::default();
        let start = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let slot = Slot::of(&start);
        assert_eq!(c.apply(slot, 10), 10);
        // One depth-15 result moves the average 16/256 of the way.
        c.update(slot, 15, 0, 100);
        assert_eq!(c.apply(slot, 10), 10 + 100 * 16 / 256);
        for _ in 0..500 {
            c.update(slot, 20, 0, 3000);
        }
        // The average converges on the cap from below (integer steps stop
        // within a centipawn of it) and never passes it.
        let capped = c.apply(slot, 10) - 10;
        let limit = super::super::params::correction_limit();
        assert!((limit - 1..=limit).contains(&capped), "{capped}");
        // Same pawns, other side to move: untouched.
        let black = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(c.apply(Slot::of(&black), 10), 10);
        // A piece moved, pawns the same: the same slot.
        let knight_out = pos("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 1");
        assert_eq!(c.apply(Slot::of(&knight_out), 10), 10 + capped);
        // An evaluation at the top of its range stays below the tablebase
        // band however the correction pushes it.
        assert_eq!(
            c.apply(slot, crate::score::MAX_EVAL),
            crate::score::MAX_EVAL
        );
    }
}
