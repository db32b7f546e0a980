//! How pawns capture: diagonally only, never straight ahead, and en
//! passant only on the move right after the enemy pawn's double step.

use super::{Illegality, Placed, placed};
use crate::game::Game;
use shakmaty::{Chess, EnPassantMode, Position, Rank, Role, Square};

/// Why the pawn `mover` cannot capture (or move) that way to `to`; `None`
/// when its way of moving allows it (a straight step to an empty square, a
/// diagonal capture, an en passant capture now).
pub(super) fn capture_problem(game: &Game, mover: Placed, to: Square) -> Option<Illegality> {
    let pos = game.position();
    let us = pos.turn();
    let from = mover.square;
    match placed(pos, to) {
        Some(target) if from.file() == to.file() => Some(Illegality::PawnCapturesOnlyDiagonally {
            pawn: mover,
            target,
        }),
        None if from.file() != to.file() => {
            let victim = placed(pos, Square::from_coords(to.file(), from.rank()));
            let is_enemy_pawn = |v: &Placed| v.piece == (!us).pawn();
            if pos.ep_square(EnPassantMode::Always) == Some(to) {
                None
            } else if from.rank() == us.relative_rank(Rank::Fifth)
                && let Some(victim) = victim.filter(is_enemy_pawn)
            {
                Some(Illegality::EnPassantNotNow {
                    pawn: mover,
                    to,
                    victim,
                    double_step_ply: double_step_ply(game, victim.square),
                })
            } else {
                Some(Illegality::PawnDiagonalWithoutCapture { pawn: mover, to })
            }
        }
        _ => None,
    }
}

/// The pawn an en passant capture of the pawn `mover` to `to` would take,
/// when the move is one (whatever it then does to the own king).
pub(super) fn en_passant_victim(pos: &Chess, mover: Placed, to: Square) -> Option<Placed> {
    let from = mover.square;
    let diagonal_to_empty = from.file() != to.file() && placed(pos, to).is_none();
    if diagonal_to_empty && pos.ep_square(EnPassantMode::Always) == Some(to) {
        placed(pos, Square::from_coords(to.file(), from.rank()))
    } else {
        None
    }
}

/// The ply (counted from 1) of the game at which the pawn now on `square`
/// made a two-square move to it, if the last move onto that square was one.
fn double_step_ply(game: &Game, square: Square) -> Option<usize> {
    let (i, m) = game
        .moves()
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.to() == square && !m.is_castle())?;
    let double = m.role() == Role::Pawn && m.from().is_some_and(|f| f.distance(square) == 2);
    double.then_some(i + 1)
}

#[cfg(test)]
mod tests {
    use crate::rules_explain::testing::*;
    use crate::rules_explain::*;
    use shakmaty::CastlingMode;

    #[test]
    fn pawns_capture_only_diagonally() {
        assert_eq!(
            said("startpos", "e2e4 e7e5", "e4e5"),
            "The white pawn on e4 cannot move to e5: the black pawn on e5 stands there, and a \
             pawn captures only diagonally, never straight ahead."
        );
        assert_eq!(
            said("startpos", "e2e4 e7e6", "e4d5"),
            "The white pawn on e4 cannot move to d5: a pawn moves diagonally only when it \
             captures, and d5 is empty."
        );
    }

    #[test]
    fn en_passant_only_on_the_next_move() {
        let moves = "e2e4 a7a6 e4e5 d7d5 h2h3 h7h6";
        assert_eq!(
            why("startpos", moves, "e5d6"),
            Illegality::EnPassantNotNow {
                pawn: at(W.pawn(), Square::E5),
                to: Square::D6,
                victim: at(B.pawn(), Square::D5),
                double_step_ply: Some(4)
            }
        );
        assert_eq!(
            said("startpos", moves, "e5d6"),
            "The white pawn on e5 cannot capture en passant on d6: the black pawn on d5 made its \
             two-square move at ply 4, and en passant is allowed only on the very next move, so \
             that chance has passed."
        );
        // The same capture right after the double step is legal.
        let g = game_in(CastlingMode::Standard, "startpos", "e2e4 a7a6 e4e5 d7d5");
        assert_eq!(explain_illegal(&g, "e5d6"), None);
        // A pawn that came one square at a time never gave the chance.
        assert_eq!(
            said("startpos", "e2e4 d7d6 e4e5 d6d5", "e5d6"),
            "The white pawn on e5 cannot capture en passant on d6: en passant is allowed only on \
             the move right after the black pawn on d5 arrived there with a two-square move, and \
             it did not."
        );
    }
}
