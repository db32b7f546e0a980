//! Why a well-formed move cannot be played: the rule it breaks, with the
//! pieces, squares and plies that show it, in words a child learning chess
//! can follow.
//!
//! `explain_illegal` reads the move text exactly as `game::parse_uci_move`
//! does (shakmaty's `UciMove::to_move`, which takes castling both as `e1g1`
//! and as king-takes-own-rook in either castling mode), then walks the rules
//! in the order a player would check them: whose piece it is, how the piece
//! moves, what stands in the way, promotion, and last the safety of the own
//! king. The result is typed data; `Display` gives the sentences, one line
//! each. Nothing here knows UCI output lines: `src/uci/` and `analyse`
//! decide how the sentences are shown.
//!
//! One file per kind of rule, each with its known-answer tests:
//! `movement` (how the pieces move, what stands in the way), `pawns`
//! (diagonal captures, en passant), `promotion`, `castling` and `check`
//! (the own king's safety, checked last); `words` holds the sentences, and
//! `property_tests` checks every explanation of random games against facts
//! computed independently.

mod castling;
mod check;
mod movement;
mod pawns;
mod promotion;
#[cfg(test)]
mod property_tests;
mod words;
pub use words::role_name;

pub use castling::CastlingProblem;
pub use check::CheckAnswers;

use crate::game::{Game, GameOver, MoveError, SetupError};
use shakmaty::uci::UciMove;
use shakmaty::{Bitboard, CastlingSide, Chess, Color, Piece, Position, Role, Square};

/// A piece and the square it stands on: what the sentences name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub piece: Piece,
    pub square: Square,
}

/// The rule a well-formed but illegal move breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Illegality {
    /// `0000`: passing, which chess does not allow.
    NullMove,
    /// `N@e4`: a drop, a move of Crazyhouse, not of chess.
    Drop { role: Role, to: Square },
    /// The game has ended at `ply` (the number of moves played): no move is legal.
    GameOver { end: GameOver, ply: usize },
    /// The from-square is empty.
    NoPiece { from: Square },
    /// The piece on the from-square belongs to the side not to move.
    NotYourPiece { piece: Placed, turn: Color },
    /// No piece of this kind could ever go from its square to `to`, even on
    /// an empty board.
    NotThatWay { piece: Placed, to: Square },
    /// `to` holds a piece of the mover's own colour.
    OwnPieceOnTarget { piece: Placed, target: Placed },
    /// A piece stands between the from-square and `to`.
    Blocked {
        piece: Placed,
        to: Square,
        blocker: Placed,
    },
    /// A pawn moving straight ahead onto an enemy piece.
    PawnCapturesOnlyDiagonally { pawn: Placed, target: Placed },
    /// A pawn moving diagonally onto an empty square, with no en passant
    /// capture in sight.
    PawnDiagonalWithoutCapture { pawn: Placed, to: Square },
    /// An en passant capture of `victim` when its double step was not the
    /// last move: `double_step_ply` is the ply it was made at, if it was.
    EnPassantNotNow {
        pawn: Placed,
        to: Square,
        victim: Placed,
        double_step_ply: Option<usize>,
    },
    /// A pawn reaching the last rank without a promotion piece.
    PromotionMissing { pawn: Placed, to: Square },
    /// A promotion to a king or a pawn.
    PromotionToKingOrPawn {
        pawn: Placed,
        to: Square,
        role: Role,
    },
    /// A promotion letter on a move that is not a pawn reaching the last rank.
    PromotionNotAllowed {
        piece: Placed,
        to: Square,
        role: Role,
    },
    /// The king would stand on an attacked square.
    KingIntoAttack {
        king: Placed,
        to: Square,
        captured: Option<Placed>,
        attackers: Vec<Placed>,
    },
    /// The move would uncover an attack on the own king (a pin, or the two
    /// pawns of an en passant capture leaving their rank at once).
    ExposesKing {
        piece: Placed,
        to: Square,
        king: Placed,
        attackers: Vec<Placed>,
        /// The pawn an en passant capture would take.
        en_passant_victim: Option<Placed>,
    },
    /// The king is in check and the move leaves it so.
    DoesNotAnswerCheck {
        played: UciMove,
        king: Placed,
        checkers: Vec<Placed>,
        answers: CheckAnswers,
    },
    /// A castling move that breaks a castling condition.
    Castling {
        color: Color,
        side: CastlingSide,
        problem: CastlingProblem,
    },
    /// shakmaty refuses the move and no rule above says why. A bug of this
    /// module if ever seen; the tests look for it.
    Unexplained,
}

/// Why a move of a `position … moves` list could not be played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadMove {
    /// The text is not a move at all (`xyz`, `e9e1`).
    Unparsable,
    /// A move in form, against the rules here (boxed: errors stay small).
    Illegal(Box<Illegality>),
}

impl BadMove {
    /// The word the error line starts with.
    pub fn word(&self) -> &'static str {
        match self {
            BadMove::Unparsable => "unparsable",
            BadMove::Illegal(_) => "illegal",
        }
    }
}

/// The rule `text` breaks in the current position of `game`; `None` when
/// the text is no move at all (`UciMove` cannot read it) or the move is legal.
pub fn explain_illegal(game: &Game, text: &str) -> Option<Illegality> {
    let uci = UciMove::from_ascii(text.as_bytes()).ok()?;
    if uci.to_move(game.position()).is_ok() {
        return None;
    }
    Some(explain(game, uci))
}

/// Why `text` cannot be played: unparsable, or the rule it breaks. For a
/// text that is a legal move it says `Illegality::Unexplained`; callers ask
/// only after `parse_uci_move` refused the text.
pub fn bad_move(game: &Game, text: &str) -> BadMove {
    match UciMove::from_ascii(text.as_bytes()) {
        Err(_) => BadMove::Unparsable,
        Ok(_) => BadMove::Illegal(Box::new(
            explain_illegal(game, text).unwrap_or(Illegality::Unexplained),
        )),
    }
}

/// The rule the bad move of a `position … moves` list breaks; none for a
/// bad FEN or a text that is no move. `game` is the game the error left:
/// it holds the moves before the bad one, the position the move was tried in.
pub fn setup_illegality(game: &Game, error: &SetupError) -> Option<Illegality> {
    match error {
        SetupError::Move {
            text,
            problem: MoveError::Illegal,
            ..
        } => Some(explain_illegal(game, text).unwrap_or(Illegality::Unexplained)),
        _ => None,
    }
}

fn explain(game: &Game, uci: UciMove) -> Illegality {
    let pos = game.position();
    if pos.legal_moves().is_empty() {
        let end = if pos.is_check() {
            GameOver::Checkmate {
                winner: !pos.turn(),
            }
        } else {
            GameOver::Stalemate
        };
        return Illegality::GameOver {
            end,
            ply: game.moves().len(),
        };
    }
    match uci {
        UciMove::Null => Illegality::NullMove,
        UciMove::Put { role, to } => Illegality::Drop { role, to },
        UciMove::Normal {
            from,
            to,
            promotion,
        } => explain_normal(game, uci, from, to, promotion),
    }
}

fn placed(pos: &Chess, square: Square) -> Option<Placed> {
    pos.board()
        .piece_at(square)
        .map(|piece| Placed { piece, square })
}

fn all_placed(pos: &Chess, squares: Bitboard) -> Vec<Placed> {
    squares
        .into_iter()
        .filter_map(|sq| placed(pos, sq))
        .collect()
}

/// A from-to move, walked through the rules in the order a player checks
/// them: whose piece it is, a promotion letter out of place, castling, how
/// the piece moves and what stands in the way, the pawns' rules, and last
/// the own king's safety.
fn explain_normal(
    game: &Game,
    uci: UciMove,
    from: Square,
    to: Square,
    promotion: Option<Role>,
) -> Illegality {
    let pos = game.position();
    let us = pos.turn();
    let Some(mover) = placed(pos, from) else {
        return Illegality::NoPiece { from };
    };
    let piece = mover.piece;
    if piece.color != us {
        return Illegality::NotYourPiece {
            piece: mover,
            turn: us,
        };
    }
    if let Some(why) = promotion::letter_out_of_place(mover, to, promotion) {
        return why;
    }
    if piece.role == Role::King
        && let Some(side) = castling::castling_side_asked(pos, from, to)
    {
        return castling::explain(game, from, to, side);
    }
    if let Some(why) = movement::path_problem(pos, mover, to) {
        return why;
    }
    let mut en_passant_victim = None;
    if piece.role == Role::Pawn {
        if let Some(why) = pawns::capture_problem(game, mover, to) {
            return why;
        }
        if let Some(why) = promotion::piece_problem(mover, to, promotion) {
            return why;
        }
        en_passant_victim = pawns::en_passant_victim(pos, mover, to);
    }
    check::king_safety(game, uci, mover, to, en_passant_victim)
}

/// What the tests of every kind of rule share: a game from a FEN (or
/// `startpos`) and moves, and the explanation of a move text in it.
#[cfg(test)]
mod testing {
    use super::*;
    use shakmaty::CastlingMode;

    pub(super) fn game_in(mode: CastlingMode, fen: &str, moves: &str) -> Game {
        let mut g = if fen == "startpos" {
            Game::new(Chess::default(), mode)
        } else {
            Game::from_fen(fen, mode).expect("test FEN")
        };
        let moves: Vec<&str> = moves.split_whitespace().collect();
        g.play_uci_moves(&moves).expect("test moves");
        g
    }

    /// The explanation of `text` after `moves` from `fen` (or `startpos`).
    pub(super) fn why(fen: &str, moves: &str, text: &str) -> Illegality {
        let g = game_in(CastlingMode::Standard, fen, moves);
        explain_illegal(&g, text).expect("an illegal, well-formed move")
    }

    pub(super) fn said(fen: &str, moves: &str, text: &str) -> String {
        why(fen, moves, text).to_string()
    }

    pub(super) fn at(piece: Piece, square: Square) -> Placed {
        Placed { piece, square }
    }

    pub(super) const W: Color = Color::White;
    pub(super) const B: Color = Color::Black;
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use shakmaty::CastlingMode;

    #[test]
    fn legal_and_malformed_texts_have_no_explanation() {
        let g = Game::default();
        assert_eq!(explain_illegal(&g, "e2e4"), None);
        assert_eq!(explain_illegal(&g, "xyz"), None);
        assert_eq!(explain_illegal(&g, "e9e1"), None);
        assert_eq!(bad_move(&g, "xyz"), BadMove::Unparsable);
        assert_eq!(
            bad_move(&g, "e3e4"),
            BadMove::Illegal(Box::new(Illegality::NoPiece { from: Square::E3 }))
        );
    }

    /// The game record says only that a move of the list is illegal; the
    /// rule comes from here, in the game the error left.
    #[test]
    fn a_bad_move_of_a_list_is_explained_in_the_game_it_left() {
        let mut g = Game::default();
        let err = g
            .play_uci_moves(&["e2e4", "e7e5", "e4e5"])
            .expect_err("e4e5 is illegal");
        assert_eq!(
            setup_illegality(&g, &err),
            Some(Illegality::PawnCapturesOnlyDiagonally {
                pawn: at(W.pawn(), Square::E4),
                target: at(B.pawn(), Square::E5),
            })
        );
        let err = g.play_uci_moves(&["xyz"]).expect_err("no move");
        assert_eq!(setup_illegality(&g, &err), None);
        let err =
            Game::from_fen("8/8/8/8 w - - 0 1", CastlingMode::Standard).expect_err("a bad FEN");
        assert_eq!(setup_illegality(&g, &err), None);
    }

    #[test]
    fn null_move_and_drop() {
        assert_eq!(why("startpos", "", "0000"), Illegality::NullMove);
        assert_eq!(
            said("startpos", "", "0000"),
            "0000 means passing, and in chess a player may never pass: every turn must be a move."
        );
        assert_eq!(
            said("startpos", "", "Q@e4"),
            "Q@e4 puts a new piece on the board, which only Crazyhouse allows: in chess a piece \
             is never dropped onto the board."
        );
    }

    #[test]
    fn no_piece_and_the_opponents_piece() {
        assert_eq!(
            said("startpos", "", "e3e4"),
            "There is no piece on e3 to move."
        );
        assert_eq!(
            why("startpos", "", "e7e5"),
            Illegality::NotYourPiece {
                piece: at(B.pawn(), Square::E7),
                turn: W
            }
        );
        assert_eq!(
            said("startpos", "", "e7e5"),
            "The piece on e7 is a black pawn, and it is White's turn: a player moves only their \
             own pieces."
        );
    }

    #[test]
    fn no_move_when_the_game_is_over() {
        assert_eq!(
            said("startpos", "f2f3 e7e5 g2g4 d8h4", "e2e4"),
            "The game is over: White is checkmated (at ply 4) and Black has won, so no more \
             moves can be played."
        );
        assert_eq!(
            why("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "", "h8g8"),
            Illegality::GameOver {
                end: GameOver::Stalemate,
                ply: 0
            }
        );
        assert_eq!(
            said("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "", "h8g8"),
            "The game is over: it is stalemate (at ply 0), a draw, so no more moves can be played."
        );
    }
}
