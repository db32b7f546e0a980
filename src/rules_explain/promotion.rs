//! Promotion: a pawn reaching the last rank must name the piece it becomes
//! (a queen, a rook, a bishop or a knight), and no other move may name one.

use super::{Illegality, Placed};
use shakmaty::{Color, Rank, Role, Square};

/// The rank a pawn of `color` promotes on.
fn last_rank(color: Color) -> Rank {
    color.fold_wb(Rank::Eighth, Rank::First)
}

/// A promotion letter on a move of the side to move's `mover` that is no
/// pawn reaching the last rank: checked before anything else of the move.
pub(super) fn letter_out_of_place(
    mover: Placed,
    to: Square,
    promotion: Option<Role>,
) -> Option<Illegality> {
    let piece = mover.piece;
    let role = promotion?;
    (piece.role != Role::Pawn || to.rank() != last_rank(piece.color)).then_some(
        Illegality::PromotionNotAllowed {
            piece: mover,
            to,
            role,
        },
    )
}

/// A pawn `mover` reaching the last rank without a promotion letter, or
/// with one of a piece it may not become.
pub(super) fn piece_problem(
    mover: Placed,
    to: Square,
    promotion: Option<Role>,
) -> Option<Illegality> {
    if to.rank() != last_rank(mover.piece.color) {
        return None;
    }
    match promotion {
        None => Some(Illegality::PromotionMissing { pawn: mover, to }),
        Some(role @ (Role::King | Role::Pawn)) => Some(Illegality::PromotionToKingOrPawn {
            pawn: mover,
            to,
            role,
        }),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::rules_explain::testing::*;

    #[test]
    fn promotion_letters() {
        let fen = "8/P7/8/8/8/8/8/k6K w - - 0 1";
        assert_eq!(
            said(fen, "", "a7a8"),
            "The white pawn on a7 reaches the last rank on a8, so it must be promoted: add the \
             letter of the new piece, for example a7a8q (q queen, r rook, b bishop, n knight)."
        );
        assert_eq!(
            said(fen, "", "a7a8k"),
            "A pawn that reaches the last rank must become a queen, a rook, a bishop or a knight, \
             never a king: a7a8k is not allowed."
        );
        assert_eq!(
            said(fen, "", "a7a8p"),
            "A pawn that reaches the last rank must become a queen, a rook, a bishop or a knight, \
             and it can never stay a pawn: a7a8p is not allowed."
        );
        assert_eq!(
            said("startpos", "", "e2e4q"),
            "A pawn is promoted only when it reaches the last rank, and e4 is not the last rank \
             for the white pawn on e2: leave out the 'q' at the end."
        );
        assert_eq!(
            said("startpos", "", "g1f3n"),
            "Only a pawn can be promoted, and the white knight on g1 is not a pawn: leave out \
             the 'n' at the end."
        );
    }
}
