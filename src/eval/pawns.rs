//! Pawn structure: passed, isolated, doubled, backward, connected and
//! phalanx pawns. It depends on the pawns alone, so each thread caches it by
//! a key of the two pawn bitboards.

use super::Sink;
use super::params::*;
use shakmaty::{Chess, Color, Position, Square};

pub const FILE_A: u64 = 0x0101_0101_0101_0101;
pub const FILE_H: u64 = FILE_A << 7;

pub fn file_mask(file: u32) -> u64 {
    FILE_A << file
}

pub fn adjacent_files(file: u32) -> u64 {
    ((file_mask(file) << 1) & !FILE_A) | ((file_mask(file) >> 1) & !FILE_H)
}

/// Ranks strictly ahead of `rank` (0..=7, board rank) for `color`.
pub fn ranks_ahead(color: Color, rank: u32) -> u64 {
    match color {
        Color::White if rank < 7 => !0u64 << (8 * (rank + 1)),
        Color::Black => (1u64 << (8 * rank)) - 1,
        _ => 0,
    }
}

/// Squares attacked by pawns of `color`.
pub fn pawn_attacks(color: Color, pawns: u64) -> u64 {
    match color {
        Color::White => ((pawns << 7) & !FILE_H) | ((pawns << 9) & !FILE_A),
        Color::Black => ((pawns >> 9) & !FILE_H) | ((pawns >> 7) & !FILE_A),
    }
}

pub fn relative_rank(color: Color, square: u32) -> usize {
    match color {
        Color::White => (square / 8) as usize,
        Color::Black => 7 - (square / 8) as usize,
    }
}

/// The passed pawns of each side, White first.
#[derive(Clone, Copy, Default)]
pub struct PawnInfo {
    pub passed: [u64; 2],
}

/// Adds the pawn-structure terms to `sink` and returns the passed pawns.
pub fn evaluate<S: Sink>(pos: &Chess, sink: &mut S) -> PawnInfo {
    let board = pos.board();
    let mut info = PawnInfo::default();
    for (ci, us) in [Color::White, Color::Black].into_iter().enumerate() {
        let ours = u64::from(board.pawns() & board.by_color(us));
        let theirs = u64::from(board.pawns() & board.by_color(!us));
        let our_attacks = pawn_attacks(us, ours);
        let their_attacks = pawn_attacks(!us, theirs);
        let mut rest = ours;
        while rest != 0 {
            let sq = rest.trailing_zeros();
            rest &= rest - 1;
            let (file, rank) = (sq % 8, sq / 8);
            let bit = 1u64 << sq;
            let rr = relative_rank(us, sq);
            sink.add_piece(us, 0, super::relative_square(us, Square::new(sq)));
            let ahead = ranks_ahead(us, rank);
            let same_rank = 0xffu64 << (8 * rank);
            let adjacent = adjacent_files(file);
            let doubled = ours & file_mask(file) & ahead != 0;
            if theirs & (file_mask(file) | adjacent) & ahead == 0 && !doubled {
                info.passed[ci] |= bit;
                sink.add(us, PASSED + rr, 1);
            }
            if doubled {
                sink.add(us, DOUBLED, 1);
            }
            if ours & adjacent == 0 {
                sink.add(us, ISOLATED, 1);
            } else {
                let behind_or_level = !ahead;
                let stop = match us {
                    Color::White => bit << 8,
                    Color::Black => bit >> 8,
                };
                if ours & adjacent & behind_or_level == 0 && stop & their_attacks != 0 {
                    sink.add(us, BACKWARD, 1);
                }
            }
            if our_attacks & bit != 0 {
                sink.add(us, CONNECTED + rr, 1);
            }
            if ours & adjacent & same_rank != 0 {
                sink.add(us, PHALANX + rr, 1);
            }
        }
    }
    info
}

/// Pawn key: a mix of the two pawn bitboards.
pub fn key(pos: &Chess) -> u64 {
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

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    mg: i32,
    eg: i32,
    info: PawnInfo,
}

/// A per-thread cache of pawn-structure scores.
pub struct PawnCache {
    entries: Vec<Entry>,
}

const CACHE_ENTRIES: usize = 1 << 13;

impl Default for PawnCache {
    fn default() -> Self {
        PawnCache {
            entries: vec![Entry::default(); CACHE_ENTRIES],
        }
    }
}

impl PawnCache {
    /// The pawn terms (White's middlegame and endgame) and the passed pawns.
    pub fn probe(&mut self, pos: &Chess) -> (i32, i32, PawnInfo) {
        let key = key(pos);
        let slot = &mut self.entries[(key as usize) & (CACHE_ENTRIES - 1)];
        if slot.key != key || key == 0 {
            let mut score = super::ScoreSink::default();
            let info = evaluate(pos, &mut score);
            *slot = Entry {
                key,
                mg: score.mg,
                eg: score.eg,
                info,
            };
        }
        (slot.mg, slot.eg, slot.info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Trace;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    /// Per section, the White-minus-Black count of the pawn terms.
    fn counts(fen: &str) -> Vec<(&'static str, i32)> {
        let fen: Fen = fen.parse().expect("fen");
        let pos: Chess = fen.into_position(CastlingMode::Standard).expect("legal");
        let mut t = Trace { coeffs: [0; COUNT] };
        evaluate(&pos, &mut t);
        SECTIONS
            .iter()
            .map(|&(name, at, len)| {
                (
                    name,
                    t.coeffs[at..at + len].iter().map(|&c| i32::from(c)).sum(),
                )
            })
            .filter(|&(name, n)| n != 0 && name != "MATERIAL" && name != "PST")
            .collect()
    }

    #[test]
    fn pawn_structure_terms() {
        // c2 is doubled behind c3; c3, e3 and d5 are passed; nothing is isolated.
        assert_eq!(
            counts("4k3/8/8/3P4/8/2P1P3/2P5/4K3 w - - 0 1"),
            vec![("PASSED", 3), ("DOUBLED", 1)]
        );
        // a7 is passed and isolated, for Black.
        assert_eq!(
            counts("4k3/p7/8/8/8/8/8/4K3 w - - 0 1"),
            vec![("PASSED", -1), ("ISOLATED", -1)]
        );
        // d5 and e5 stand side by side (a phalanx, counted for each) and
        // neither is passed past d6; Black's d6 is isolated and not passed.
        assert_eq!(
            counts("4k3/8/3p4/3PP3/8/8/8/4K3 w - - 0 1"),
            vec![("ISOLATED", -1), ("PHALANX", 2)]
        );
        // e4 supports d5: d5 is connected (both passed).
        assert_eq!(
            counts("4k3/8/8/3P4/4P3/8/8/4K3 w - - 0 1"),
            vec![("PASSED", 2), ("CONNECTED", 1)]
        );
        // White e3 is backward: d4 has advanced, and e4 is attacked by f5.
        let backward = counts("4k3/8/8/5p2/3P4/4P3/8/4K3 w - - 0 1");
        assert!(backward.contains(&("BACKWARD", 1)), "{backward:?}");
    }
}
