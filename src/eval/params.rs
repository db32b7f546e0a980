//! The layout of the evaluation's weights: every term the evaluation adds
//! is one entry (a middlegame and an endgame value) of one flat table, so
//! that the tuner can fit them all the same way. `SECTIONS` names each
//! block, for the generated weights file and for `eval`.

/// (name, first index, length)
pub type Section = (&'static str, usize, usize);

macro_rules! layout {
    ($( $name:ident = $len:expr ),* $(,)?) => {
        layout!(@at 0usize; $( $name = $len ),*);
        pub const SECTIONS: &[Section] = &[ $( (stringify!($name), $name, $len) ),* ];
    };
    (@at $at:expr; $name:ident = $len:expr $(, $rest:ident = $rlen:expr )*) => {
        pub const $name: usize = $at;
        layout!(@at $at + $len; $( $rest = $rlen ),*);
    };
    (@at $at:expr;) => {
        pub const COUNT: usize = $at;
    };
}

layout! {
    // Pawn, knight, bishop, rook, queen.
    MATERIAL = 5,
    // [role][square], from the owner's side (a1 is the owner's queen's rook square).
    PST = 6 * 64,
    // By the number of safe squares a piece attacks.
    MOBILITY_KNIGHT = 9,
    MOBILITY_BISHOP = 14,
    MOBILITY_ROOK = 15,
    MOBILITY_QUEEN = 28,
    // Passed pawns by relative rank; the free-path and king-distance terms
    // count per passed pawn, the distances in squares to the square ahead.
    PASSED = 8,
    PASSED_FREE = 8,
    PASSED_OWN_KING = 8,
    PASSED_THEIR_KING = 8,
    ISOLATED = 1,
    DOUBLED = 1,
    BACKWARD = 1,
    CONNECTED = 8,
    PHALANX = 8,
    // King safety: zone squares attacked, by attacker role (knight..queen);
    // the number of pieces attacking the zone (0..=7); safe checks by role.
    KING_ZONE_ATTACKS = 4,
    KING_ATTACKERS = 8,
    SAFE_CHECK = 4,
    // The attack on the king as a whole: its units squared (see `king_danger`),
    // so that several attackers and checks together count for more than apart.
    KING_DANGER = 1,
    // Own pawns in front of the king's three files, by relative rank of the
    // nearest one (0 = none); enemy pawns storming them, likewise.
    PAWN_SHIELD = 8,
    PAWN_STORM = 8,
    KING_OPEN_FILE = 1,
    KING_SEMI_OPEN_FILE = 1,
    BISHOP_PAIR = 1,
    ROOK_OPEN_FILE = 1,
    ROOK_SEMI_OPEN_FILE = 1,
    ROOK_SEVENTH = 1,
    KNIGHT_OUTPOST = 1,
    BISHOP_OUTPOST = 1,
    // Enemy pieces (knight..queen) attacked by a pawn, by a minor piece, by a rook.
    THREAT_BY_PAWN = 4,
    THREAT_BY_MINOR = 4,
    THREAT_BY_ROOK = 4,
    // Enemy pieces attacked and not defended.
    HANGING = 1,
    TEMPO = 1,
}

/// The starting point of a tuning run from scratch: round material values,
/// every other term zero.
pub fn initial() -> [(i32, i32); COUNT] {
    let mut w = [(0, 0); COUNT];
    for (i, v) in [100, 300, 300, 500, 900].into_iter().enumerate() {
        w[MATERIAL + i] = (v, v);
    }
    w
}
