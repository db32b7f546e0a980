//! The first evaluation's weights: round material values and piece-square
//! tables built from a few simple shapes (centralisation, advancement, king
//! shelter). Hand-written for Qilin; the evaluation issue replaces them with
//! weights fitted to Qilin's own games.

/// Middlegame and endgame value of pawn, knight, bishop, rook, queen, king.
pub const MATERIAL: [(i32, i32); 6] = [
    (100, 120),
    (320, 300),
    (330, 320),
    (480, 520),
    (950, 980),
    (0, 0),
];

/// Phase weight of each role; 24 is a full middlegame.
pub const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
pub const PHASE_MAX: i32 = 24;

pub const BISHOP_PAIR: (i32, i32) = (30, 50);
pub const TEMPO: i32 = 15;

/// Distance from the centre of a file or rank index (0..=7): 0 for d/e and
/// 4/5, up to 3 at the edge.
const fn edge(i: usize) -> i32 {
    if i < 4 { 3 - i as i32 } else { i as i32 - 4 }
}

/// The piece-square bonus for a white piece of role index `role` on the
/// square with file `f`, rank `r` (rank 0 is White's first rank).
const fn square_bonus(role: usize, f: usize, r: usize) -> (i32, i32) {
    let centre = 6 - edge(f) - edge(r); // 0 at a corner, 6 in the middle
    match role {
        // Pawns: advance, above all in the centre in the middlegame; any
        // advance counts in the endgame.
        0 => {
            let adv = r as i32 - 1;
            let central = if f == 3 || f == 4 { 8 } else { 0 };
            (adv * 4 + if r >= 2 { central } else { 0 }, adv * adv * 3)
        }
        1 => (centre * 8 - 20, centre * 5 - 15),
        2 => (centre * 4 - 8, centre * 3 - 9),
        // Rooks: the seventh rank, and a slight central preference.
        3 => (if r == 6 { 15 } else { 0 } + (3 - edge(f)) * 2, 0),
        4 => (centre * 2 - 6, centre * 4 - 12),
        // King: stay home and to a side in the middlegame, centralise later.
        _ => {
            let home = if r == 0 {
                20
            } else if r == 1 {
                0
            } else {
                -15 * r as i32
            };
            let side = if f <= 2 || f >= 5 { 10 } else { -10 };
            (home + side, centre * 8 - 24)
        }
    }
}

/// Piece-square tables for White, indexed [role][square], square 0 = a1.
pub const PST: [[(i32, i32); 64]; 6] = {
    let mut t = [[(0, 0); 64]; 6];
    let mut role = 0;
    while role < 6 {
        let mut sq = 0;
        while sq < 64 {
            t[role][sq] = square_bonus(role, sq % 8, sq / 8);
            sq += 1;
        }
        role += 1;
    }
    t
};
