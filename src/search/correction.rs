//! Correction history: how far the search's scores have come out from the
//! static evaluation in positions that share a feature with this one and
//! the side to move. The evaluation misjudges some structures the same way
//! again and again (a blocked centre, a far-advanced passer, a knight
//! against a bad bishop); the search finds that out, and the average of
//! what it found corrects the next static evaluation that shares the
//! feature, which pruning and reductions then trust.
//!
//! Four tables, each keyed by one feature of the position: the pawns; the
//! knights, bishops and kings of both sides; White's pieces (all but
//! pawns); Black's pieces. Each learns the whole error on its own; the
//! correction is their weighted sum (weights in the parameter table, out
//! of 1024), capped at `correction_limit`. A table of weight 0 is neither
//! read nor written.

use super::params;
use crate::score::MAX_EVAL;
use shakmaty::{Bitboard, Board, Chess, Color, Position, Role};

const ENTRIES: usize = 16_384;
/// Entries keep the average in 1/GRAIN of a centipawn.
const GRAIN: i32 = 256;
/// Weights are out of this much: a depth-d result moves the average by
/// min(d + 1, 16) / 256 of the way towards itself.
const WEIGHT_SCALE: i32 = 256;
/// The tables' weights in the sum are out of this much.
const TABLE_WEIGHT_SCALE: i64 = 1024;

const PAWNS: usize = 0;
const MINORS: usize = 1;
const WHITE_PIECES: usize = 2;
const BLACK_PIECES: usize = 3;
const TABLES: usize = 4;

/// Each table's weight in the correction, out of 1024.
type Weights = [i32; TABLES];

fn weights() -> Weights {
    let pieces = params::correction_pieces_weight();
    [
        params::correction_pawn_weight(),
        params::correction_minor_weight(),
        pieces,
        pieces,
    ]
}

pub struct Correction {
    /// [table][side to move][key slot], in 1/GRAIN centipawns (on the
    /// heap: 512 KB).
    tables: Box<[[[i32; ENTRIES]; 2]]>,
}

impl Default for Correction {
    fn default() -> Self {
        Correction {
            tables: vec![[[0; ENTRIES]; 2]; TABLES].into_boxed_slice(),
        }
    }
}

/// Where a position's corrections live.
#[derive(Clone, Copy)]
pub struct Slot {
    side: usize,
    index: [usize; TABLES],
}

impl Slot {
    pub fn of(pos: &Chess) -> Slot {
        Slot::with(pos, weights())
    }

    /// The slot of each table in use (weight not 0); the others are never
    /// read, and their keys are not computed.
    fn with(pos: &Chess, weights: Weights) -> Slot {
        let b = pos.board();
        let slot = |t: usize, key: &dyn Fn() -> u64| {
            if weights[t] != 0 {
                (key() as usize) & (ENTRIES - 1)
            } else {
                0
            }
        };
        Slot {
            side: usize::from(pos.turn() == Color::Black),
            index: [
                slot(PAWNS, &|| pawn_key(b)),
                slot(MINORS, &|| minor_key(b)),
                slot(WHITE_PIECES, &|| pieces_key(b, Color::White)),
                slot(BLACK_PIECES, &|| pieces_key(b, Color::Black)),
            ],
        }
    }
}

/// A key of the pawn structure: the two pawn bitboards, each mixed (the
/// finaliser of MurmurHash3) and then combined.
fn pawn_key(b: &Board) -> u64 {
    let white = u64::from(b.pawns() & b.by_color(Color::White));
    let black = u64::from(b.pawns() & b.by_color(Color::Black));
    mix(white) ^ mix(black ^ 0x9e37_79b9_7f4a_7c15).rotate_left(17)
}

/// A key of the knights, bishops and kings of both sides.
fn minor_key(b: &Board) -> u64 {
    [Color::White, Color::Black]
        .into_iter()
        .flat_map(|c| [Role::Knight, Role::Bishop, Role::King].map(|r| (c, r)))
        .fold(0, |key, (c, r)| key ^ board_key(b.by_piece(r.of(c)), c, r))
}

/// A key of one side's pieces other than pawns.
fn pieces_key(b: &Board, color: Color) -> u64 {
    [
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ]
    .into_iter()
    .fold(0, |key, r| {
        key ^ board_key(b.by_piece(r.of(color)), color, r)
    })
}

/// One piece kind's squares, mixed with a constant of its own so that a
/// knight and a bishop on the same square give different keys.
fn board_key(squares: Bitboard, color: Color, role: Role) -> u64 {
    let kind = role as u64 + 8 * u64::from(color == Color::Black);
    mix(u64::from(squares) ^ kind.wrapping_mul(0x9e37_79b9_7f4a_7c15)).rotate_left(kind as u32 * 5)
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
        self.apply_with(slot, raw, weights())
    }

    fn apply_with(&self, slot: Slot, raw: i32, weights: Weights) -> i32 {
        let sum: i64 = (0..TABLES)
            .filter(|&t| weights[t] != 0)
            .map(|t| i64::from(self.tables[t][slot.side][slot.index[t]]) * i64::from(weights[t]))
            .sum();
        // No correction exceeds the limit, however the tables add up.
        let limit = i64::from(params::correction_limit()) * i64::from(GRAIN);
        let correction = (sum / TABLE_WEIGHT_SCALE).clamp(-limit, limit) / i64::from(GRAIN);
        (raw + correction as i32).clamp(-MAX_EVAL, MAX_EVAL)
    }

    /// A search of `depth` found `score` where the evaluation said `raw`.
    pub fn update(&mut self, slot: Slot, depth: i32, raw: i32, score: i32) {
        self.update_with(slot, depth, raw, score, weights());
    }

    fn update_with(&mut self, slot: Slot, depth: i32, raw: i32, score: i32, weights: Weights) {
        // No entry exceeds the limit, whatever the search found.
        let limit = params::correction_limit();
        let target = (score - raw).clamp(-limit, limit) * GRAIN;
        let weight = (depth + 1).clamp(1, params::correction_max_weight());
        for t in (0..TABLES).filter(|&t| weights[t] != 0) {
            let entry = &mut self.tables[t][slot.side][slot.index[t]];
            *entry = (*entry * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
        }
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
    /// correction up to the cap (`correction_limit`), for that structure and side only.
    #[test]
    fn corrections_follow_searches_up_to_the_cap() {
        let mut c = Correction::default();
        let start = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let slot = Slot::of(&start);
        assert_eq!(c.apply(slot, 10), 10);
        // One depth-11 result (weight 12, under the weight cap) moves the
        // average 12/256 of the way.
        c.update(slot, 11, 0, 100);
        assert_eq!(c.apply(slot, 10), 10 + 100 * 12 / 256);
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

    const ALL_FOUR: Weights = [512, 256, 256, 256];

    /// With all four tables in use, each learns the whole error and the
    /// correction is their weighted sum: a piece moved changes the tables
    /// that key on it and keeps the others.
    #[test]
    fn the_tables_add_up_by_their_weights() {
        let mut c = Correction::default();
        let start = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let slot = Slot::with(&start, ALL_FOUR);
        // One depth-15 result: each entry 100 × 16/256 = 6.25 cp; the sum
        // (512 + 3 × 256)/1024 of that is 7.8 cp, rounded towards zero.
        c.update_with(slot, 15, 0, 100, ALL_FOUR);
        assert_eq!(c.apply_with(slot, 10, ALL_FOUR), 10 + 7);
        for _ in 0..500 {
            c.update_with(slot, 20, 0, 3000, ALL_FOUR);
        }
        // Each entry near the cap; their sum (1.25 of one) capped at it.
        let limit = params::correction_limit();
        let capped = c.apply_with(slot, 10, ALL_FOUR) - 10;
        assert_eq!(capped, limit);
        // A white knight out: the pawns (512) and Black's pieces (256) are
        // the same, the minor pieces and White's pieces are new: 3/4 of
        // the near-cap entry.
        let knight_out = pos("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 1");
        let partial = c.apply_with(Slot::with(&knight_out, ALL_FOUR), 10, ALL_FOUR) - 10;
        let three_quarters = limit * 3 / 4;
        assert!(
            (three_quarters - 1..=three_quarters).contains(&partial),
            "{partial}"
        );
        // Only a rook moved (a1-b1 after b1's knight left): the minor
        // pieces' table still matches, White's pieces not.
        let rook = pos("rnbqkbnr/pppppppp/8/8/8/2N5/PPPPPPPP/1RBQKBNR w Kkq - 0 1");
        let knight = pos("rnbqkbnr/pppppppp/8/8/8/2N5/PPPPPPPP/R1BQKBNR w KQkq - 0 1");
        let (r, k) = (Slot::with(&rook, ALL_FOUR), Slot::with(&knight, ALL_FOUR));
        assert_eq!(r.index[MINORS], k.index[MINORS]);
        assert_ne!(r.index[WHITE_PIECES], k.index[WHITE_PIECES]);
        assert_eq!(r.index[BLACK_PIECES], k.index[BLACK_PIECES]);
        assert_eq!(r.index[PAWNS], k.index[PAWNS]);
    }

    /// A knight and a bishop on the same square are different setups.
    #[test]
    fn a_knight_and_a_bishop_on_one_square_key_apart() {
        let knight = pos("4k3/8/8/8/3N4/8/8/4K3 w - - 0 1");
        let bishop = pos("4k3/8/8/8/3B4/8/8/4K3 w - - 0 1");
        let black = pos("4k3/8/8/8/3n4/8/8/4K3 w - - 0 1");
        let key = |p: &Chess| minor_key(p.board());
        assert_ne!(key(&knight), key(&bishop));
        assert_ne!(key(&knight), key(&black));
        let pieces = |p: &Chess| pieces_key(p.board(), Color::White);
        assert_ne!(pieces(&knight), pieces(&bishop));
    }

    /// The weights in the table: the pawn table alone, in full, is the
    /// correction as it was before the other tables (the search's tree is
    /// unchanged until a tuned setting says otherwise).
    #[test]
    fn the_pawn_table_alone_corrects_by_its_own_average() {
        let mut c = Correction::default();
        let start = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let pawns_only = [1024, 0, 0, 0];
        let slot = Slot::with(&start, pawns_only);
        c.update_with(slot, 11, 0, -100, pawns_only);
        // −4.69 cp (weight 12 of 256), rounded towards zero, as one
        // table's entry / GRAIN.
        assert_eq!(c.apply_with(slot, 10, pawns_only), 10 - 4);
        assert!(c.tables[MINORS].iter().flatten().all(|&e| e == 0));
    }
}
