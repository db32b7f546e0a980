//! How the pieces move: whether a piece could go from its square to the
//! target at all, whether an own piece stands on the target, and whether a
//! piece stands in the way. Pawns' captures and promotion have files of
//! their own.

use super::{Illegality, Placed, placed};
use shakmaty::{Bitboard, Chess, Color, Piece, Position, Rank, Role, Square, attacks};

/// Squares a pawn of `color` on `from` could ever reach in one move: one
/// step ahead, two from its start rank, one diagonally ahead.
fn pawn_reach(color: Color, from: Square) -> Bitboard {
    let ahead = color.fold_wb(8, -8);
    let mut reach = attacks::pawn_attacks(color, from);
    if let Some(one) = from.offset(ahead) {
        reach = reach.with(one);
        if from.rank() == color.relative_rank(Rank::Second)
            && let Some(two) = one.offset(ahead)
        {
            reach = reach.with(two);
        }
    }
    reach
}

/// Whether a `piece` on `from` could reach `to` in one move on an empty board.
fn reaches_on_empty_board(piece: Piece, from: Square, to: Square) -> bool {
    match piece.role {
        Role::Pawn => pawn_reach(piece.color, from).contains(to),
        _ => attacks::attacks(from, piece, Bitboard::EMPTY).contains(to),
    }
}

/// Why the `mover` (of the side to move) cannot go to `to` by the way it
/// moves: not that way at all, onto an own piece, or past a piece in the
/// way. `None` when the path is clear.
pub(super) fn path_problem(pos: &Chess, mover: Placed, to: Square) -> Option<Illegality> {
    let from = mover.square;
    if from == to || !reaches_on_empty_board(mover.piece, from, to) {
        return Some(Illegality::NotThatWay { piece: mover, to });
    }
    if let Some(target) = placed(pos, to)
        && target.piece.color == pos.turn()
    {
        return Some(Illegality::OwnPieceOnTarget {
            piece: mover,
            target,
        });
    }
    // Knights and kings jump or step: nothing lies between. A pawn's double
    // step crosses one square.
    let in_between = attacks::between(from, to) & pos.board().occupied();
    in_between
        .into_iter()
        .min_by_key(|sq| from.distance(*sq))
        .and_then(|sq| placed(pos, sq))
        .map(|blocker| Illegality::Blocked {
            piece: mover,
            to,
            blocker,
        })
}

#[cfg(test)]
mod tests {
    use crate::rules_explain::testing::*;
    use crate::rules_explain::*;

    #[test]
    fn a_piece_that_does_not_move_that_way() {
        assert_eq!(
            said("startpos", "", "g1g3"),
            "A knight jumps in an L shape: two squares one way, then one square to the side, so \
             the white knight on g1 cannot go to g3."
        );
        assert_eq!(
            said("startpos", "e2e4 e7e5", "e4e3"),
            "A pawn never moves backwards or sideways, so the white pawn on e4 cannot go to e3."
        );
        assert_eq!(
            said("startpos", "e2e3 e7e6", "e3e5"),
            "A pawn may move two squares only from its starting rank (rank 2 for White), so the \
             white pawn on e3 cannot go to e5."
        );
        assert_eq!(
            said("startpos", "e2e4 d7d5", "e4c6"),
            "A pawn moves straight ahead (one square, or two from its starting rank) and captures \
             one square diagonally forward, so the white pawn on e4 cannot go to c6."
        );
        assert_eq!(
            said("startpos", "e2e4 e7e5", "f1f3"),
            "A bishop moves only diagonally, so the white bishop on f1 cannot go to f3."
        );
        assert_eq!(
            said("startpos", "e2e4 e7e5", "e1e3"),
            "A king moves one square at a time, in any direction (castling aside), so the white \
             king on e1 cannot go to e3."
        );
        assert_eq!(
            said("startpos", "", "g1g1"),
            "The white knight on g1 would stay where it is: a move must go to another square."
        );
    }

    #[test]
    fn a_blocked_path_names_the_blocker() {
        assert_eq!(
            why("startpos", "", "c1g5"),
            Illegality::Blocked {
                piece: at(W.bishop(), Square::C1),
                to: Square::G5,
                blocker: at(W.pawn(), Square::D2)
            }
        );
        assert_eq!(
            said("startpos", "", "c1g5"),
            "The white bishop on c1 cannot get to g5: the white pawn on d2 is in the way, and \
             only a knight can jump over pieces."
        );
        assert_eq!(
            said("startpos", "g1f3 a7a6", "f2f4"),
            "The white pawn on f2 cannot get to f4: the white knight on f3 is in the way, and a \
             pawn cannot jump over pieces."
        );
        // The nearest blocker of several.
        assert_eq!(
            said("startpos", "", "a1a8"),
            "The white rook on a1 cannot get to a8: the white pawn on a2 is in the way, and only \
             a knight can jump over pieces."
        );
    }

    #[test]
    fn the_target_holds_an_own_piece() {
        assert_eq!(
            said("startpos", "", "a1a2"),
            "The white rook on a1 cannot go to a2: the white pawn on a2 stands there, and a \
             piece can never capture a piece of its own colour."
        );
    }
}
