//! Scores as every part of the engine counts them: centipawns from the side
//! to move's view; evaluations within ±`MAX_EVAL`; tablebase wins and losses
//! down from `TB_WIN`, mates down from `MATE`, both counting plies from the
//! root. The search, the net, the trainer and the training data all read
//! these bands, so they live here, at the bottom, and this module imports
//! nothing of the engine: no part has to reach into the search's table to
//! know what a mate score is.

/// The deepest ply the search reaches. Mate and tablebase scores count
/// plies from the root up to it, so the bands below are sized by it.
pub const MAX_PLY: usize = 128;

/// Mate at the root: a mate `ply` plies away scores `MATE - ply`.
pub const MATE: i32 = 32_000;
/// Scores beyond this are mates (in at most MAX_PLY plies).
pub const MATE_BOUND: i32 = MATE - 512;
/// Above every score: the search's window before anything is known.
pub const INFINITY: i32 = MATE + 1;

/// A tablebase win `ply` plies from the root scores `TB_WIN - ply`: below
/// every mate, above every evaluation.
pub const TB_WIN: i32 = 20_000;
/// Scores at or beyond this are tablebase wins (or mates): they are
/// stored in the transposition table relative to the node, as mates are.
pub const TB_WIN_BOUND: i32 = TB_WIN - MAX_PLY as i32;

/// The largest evaluation (the net's, a known endgame's, either corrected by
/// the search): below the tablebase band, so that no evaluation is ever
/// stored or reported as a tablebase win, and within the TT's 16-bit eval.
pub const MAX_EVAL: i32 = TB_WIN_BOUND - 1;

const _: () = assert!(MAX_PLY < (MATE - MATE_BOUND) as usize);
const _: () = assert!(MAX_EVAL < TB_WIN_BOUND && TB_WIN < MATE_BOUND);
const _: () = assert!(MAX_EVAL <= i16::MAX as i32);

/// Moves to mate for a mate score (`MATE - plies`, or its negation): positive
/// when the side to move mates, negative when it is mated (0 when mated on
/// the board); `None` for any other score. A mate in n moves is 2n − 1 plies
/// away, being mated in n moves is 2n plies away.
pub fn mate_in_moves(score: i32) -> Option<i32> {
    if score >= MATE_BOUND {
        Some((MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        Some(-(MATE + score) / 2)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_count_moves() {
        assert_eq!(mate_in_moves(MATE - 1), Some(1));
        assert_eq!(mate_in_moves(MATE - 3), Some(2));
        assert_eq!(mate_in_moves(-(MATE - 2)), Some(-1));
        assert_eq!(mate_in_moves(-(MATE - 4)), Some(-2));
        assert_eq!(mate_in_moves(-MATE), Some(0));
        assert_eq!(mate_in_moves(TB_WIN - 3), None);
        assert_eq!(mate_in_moves(-MAX_EVAL), None);
    }
}
