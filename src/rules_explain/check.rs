//! The own king's safety, checked last: a king may not step onto an
//! attacked square, a pinned piece may not uncover its king, and a king in
//! check must be got out of it (the sentence lists every legal answer).

use super::{Illegality, Placed, all_placed, placed};
use crate::game::Game;
use shakmaty::uci::UciMove;
use shakmaty::{Bitboard, Move, Position, Role, Square};

/// The legal answers to a check, by kind, as UCI moves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckAnswers {
    pub king_moves: Vec<UciMove>,
    pub blocks: Vec<UciMove>,
    pub captures: Vec<UciMove>,
}

/// A move that a piece can make here (pseudo-legal): what it does to the own king.
pub(super) fn king_safety(
    game: &Game,
    uci: UciMove,
    mover: Placed,
    to: Square,
    en_passant_victim: Option<Placed>,
) -> Illegality {
    let pos = game.position();
    let board = pos.board();
    let us = pos.turn();
    let from = mover.square;
    let Some(king_square) = board.king_of(us) else {
        return Illegality::Unexplained;
    };
    let occupied = board.occupied();
    if mover.piece.role == Role::King {
        let attackers = board.attacks_to(to, !us, occupied.without(from));
        if attackers.is_empty() {
            return Illegality::Unexplained;
        }
        return Illegality::KingIntoAttack {
            king: mover,
            to,
            captured: placed(pos, to),
            attackers: all_placed(pos, attackers),
        };
    }
    let taken = en_passant_victim.map_or(Bitboard::from(to), |v| Bitboard::from(v.square));
    let after = occupied.without(from).with(to).without(taken.without(to));
    let attackers = board.attacks_to(king_square, !us, after).without(taken);
    if attackers.is_empty() {
        return Illegality::Unexplained;
    }
    let king = Placed {
        piece: us.king(),
        square: king_square,
    };
    let checkers = pos.checkers();
    if (attackers & checkers).any() {
        return Illegality::DoesNotAnswerCheck {
            played: uci,
            king,
            checkers: all_placed(pos, checkers),
            answers: check_answers(game, checkers),
        };
    }
    Illegality::ExposesKing {
        piece: mover,
        to,
        king,
        attackers: all_placed(pos, attackers),
        en_passant_victim,
    }
}

/// The legal moves of a position in check, sorted into king moves, blocks
/// and captures of the checker, each list in alphabetical order.
fn check_answers(game: &Game, checkers: Bitboard) -> CheckAnswers {
    let pos = game.position();
    let mut answers = CheckAnswers::default();
    for m in pos.legal_moves() {
        let captured = match m {
            Move::EnPassant { from, to } => Square::from_coords(to.file(), from.rank()),
            _ => m.to(),
        };
        let list = if m.role() == Role::King {
            &mut answers.king_moves
        } else if m.is_capture() && checkers.contains(captured) {
            &mut answers.captures
        } else {
            &mut answers.blocks
        };
        list.push(m.to_uci(game.castling_mode()));
    }
    for list in [
        &mut answers.king_moves,
        &mut answers.blocks,
        &mut answers.captures,
    ] {
        list.sort_by_key(ToString::to_string);
    }
    answers
}

#[cfg(test)]
mod tests {
    use crate::rules_explain::testing::*;
    use crate::rules_explain::*;

    #[test]
    fn the_king_may_not_step_into_check() {
        let fen = "4k3/8/8/8/1b6/8/3r4/4K3 w - - 0 1";
        assert_eq!(
            why(fen, "", "e1f2"),
            Illegality::KingIntoAttack {
                king: at(W.king(), Square::E1),
                to: Square::F2,
                captured: None,
                attackers: vec![at(B.rook(), Square::D2)]
            }
        );
        assert_eq!(
            said(fen, "", "e1f2"),
            "The white king on e1 cannot go to f2: the black rook on d2 attacks f2, and a king \
             may never move onto a square where it would be in check."
        );
        assert_eq!(
            said(fen, "", "e1d2"),
            "The white king on e1 cannot capture the black rook on d2: the black bishop on b4 \
             protects it, so the king would be in check on d2, and a king may never move into \
             check."
        );
    }

    #[test]
    fn a_pinned_piece_names_its_pinner() {
        let fen = "4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1";
        assert_eq!(
            said(fen, "", "d2f3"),
            "The white knight on d2 is pinned: it stands between the white king on e1 and the \
             black bishop on b4, so moving it to f3 would leave the king in check, and a player \
             may never leave their own king in check."
        );
        // In check, the pinned knight may not take the checker either.
        let fen = "4k3/8/8/8/1b6/5n2/3N4/4K3 w - - 0 1";
        assert_eq!(
            why(fen, "", "d2f3"),
            Illegality::ExposesKing {
                piece: at(W.knight(), Square::D2),
                to: Square::F3,
                king: at(W.king(), Square::E1),
                attackers: vec![at(B.bishop(), Square::B4)],
                en_passant_victim: None
            }
        );
        // The horizontal pin of en passant: both pawns leave rank 5.
        let fen = "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1";
        assert_eq!(
            said(fen, "", "e5d6"),
            "Capturing en passant on d6 moves the white pawn on e5 and removes the black pawn on \
             d5, which opens the line from the black rook on h5 to the white king on a5: the king \
             would be in check, and a player may never leave their own king in check."
        );
    }

    #[test]
    fn a_move_that_does_not_answer_the_check_lists_the_answers() {
        let fen = "4k3/8/8/8/4B3/1N6/3PP3/r3K3 w - - 0 1";
        assert_eq!(
            why(fen, "", "d2d3"),
            Illegality::DoesNotAnswerCheck {
                played: UciMove::from_ascii(b"d2d3").expect("uci"),
                king: at(W.king(), Square::E1),
                checkers: vec![at(B.rook(), Square::A1)],
                answers: CheckAnswers {
                    king_moves: vec![UciMove::from_ascii(b"e1f2").expect("uci")],
                    blocks: vec![
                        UciMove::from_ascii(b"b3c1").expect("uci"),
                        UciMove::from_ascii(b"e4b1").expect("uci")
                    ],
                    captures: vec![UciMove::from_ascii(b"b3a1").expect("uci")],
                }
            }
        );
        assert_eq!(
            said(fen, "", "d2d3"),
            "The white king on e1 is in check from the black rook on a1, and d2d3 does not get \
             it out of check: a check must be answered at once.\nThe moves that answer the \
             check: king moves e1f2; blocks b3c1, e4b1; captures b3a1."
        );
        let fen = "4k3/8/8/8/8/5n2/7P/r3K3 w - - 0 1";
        assert_eq!(
            said(fen, "", "h2h3"),
            "The white king on e1 is in double check from the black rook on a1 and the black \
             knight on f3, and h2h3 does not get it out of check: against a double check only a \
             king move helps.\nThe moves that answer the check: king moves e1e2, e1f2; blocks \
             none; captures none."
        );
    }
}
