//! The sentences: `Display` for the typed reasons, one line each (the
//! answers to a check on a second), and the names they use for colours,
//! pieces and sides.

use super::castling::{CastlingProblem, on_side};
use super::{Illegality, Placed};
use crate::game::GameOver;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingSide, Color, Piece, Rank, Role, Square};
use std::fmt;

fn colour_name(color: Color) -> &'static str {
    color.fold_wb("white", "black")
}

fn player_name(color: Color) -> &'static str {
    color.fold_wb("White", "Black")
}

/// A piece's kind in words ("knight"): the one naming used wherever a
/// piece is told to a person (the rule teacher, `play`, `annotate`).
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

fn piece_name(piece: Piece) -> String {
    format!("{} {}", colour_name(piece.color), role_name(piece.role))
}

impl fmt::Display for Placed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the {} on {}", piece_name(self.piece), self.square)
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list<T: fmt::Display>(items: &[T]) -> String {
    let words: Vec<String> = items.iter().map(ToString::to_string).collect();
    match words.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

fn move_list(moves: &[UciMove]) -> String {
    if moves.is_empty() {
        return "none".to_string();
    }
    let words: Vec<String> = moves.iter().map(ToString::to_string).collect();
    words.join(", ")
}

/// "attacks" or "attack", as the number of attackers asks.
fn verb(attackers: &[Placed], one: &'static str, many: &'static str) -> &'static str {
    if attackers.len() == 1 { one } else { many }
}

fn side_name(side: CastlingSide) -> &'static str {
    on_side(side, "kingside", "queenside")
}

/// What a piece of this kind can do, for the "does not move that way" sentence.
fn how_it_moves(piece: Placed, to: Square) -> String {
    let color = piece.piece.color;
    match piece.piece.role {
        Role::King => {
            "A king moves one square at a time, in any direction (castling aside)".to_string()
        }
        Role::Queen => {
            "A queen moves in a straight line along a rank, a file or a diagonal".to_string()
        }
        Role::Rook => "A rook moves in a straight line along a rank or a file".to_string(),
        Role::Bishop => "A bishop moves only diagonally".to_string(),
        Role::Knight => {
            "A knight jumps in an L shape: two squares one way, then one square to the side"
                .to_string()
        }
        Role::Pawn => {
            let from = piece.square;
            let forward = i32::from(color.relative_rank(to.rank()))
                - i32::from(color.relative_rank(from.rank()));
            if forward <= 0 {
                "A pawn never moves backwards or sideways".to_string()
            } else if forward == 2 && from.file() == to.file() {
                format!(
                    "A pawn may move two squares only from its starting rank (rank {} for {})",
                    color.relative_rank(Rank::Second),
                    player_name(color)
                )
            } else {
                "A pawn moves straight ahead (one square, or two from its starting rank) and \
                 captures one square diagonally forward"
                    .to_string()
            }
        }
    }
}

impl fmt::Display for Illegality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Illegality::NullMove => f.write_str(
                "0000 means passing, and in chess a player may never pass: every turn must be a move.",
            ),
            Illegality::Drop { role, to } => write!(
                f,
                "{}@{to} puts a new piece on the board, which only Crazyhouse allows: in chess a \
                 piece is never dropped onto the board.",
                role.upper_char()
            ),
            Illegality::GameOver { end, ply } => match end {
                GameOver::Checkmate { winner } => write!(
                    f,
                    "The game is over: {} is checkmated (at ply {ply}) and {} has won, so no \
                     more moves can be played.",
                    player_name(!*winner),
                    player_name(*winner)
                ),
                _ => write!(
                    f,
                    "The game is over: it is stalemate (at ply {ply}), a draw, so no more moves \
                     can be played."
                ),
            },
            Illegality::NoPiece { from } => write!(f, "There is no piece on {from} to move."),
            Illegality::NotYourPiece { piece, turn } => write!(
                f,
                "The piece on {} is a {}, and it is {}'s turn: a player moves only their own pieces.",
                piece.square,
                piece_name(piece.piece),
                player_name(*turn)
            ),
            Illegality::NotThatWay { piece, to } if piece.square == *to => write!(
                f,
                "{} would stay where it is: a move must go to another square.",
                capitalised(&piece.to_string())
            ),
            Illegality::NotThatWay { piece, to } => write!(
                f,
                "{}, so {piece} cannot go to {to}.",
                how_it_moves(*piece, *to)
            ),
            Illegality::OwnPieceOnTarget { piece, target } => write!(
                f,
                "{} cannot go to {}: {} stands there, and a piece can never capture a piece of \
                 its own colour.",
                capitalised(&piece.to_string()),
                target.square,
                target
            ),
            Illegality::Blocked { piece, to, blocker } => {
                let rule = if piece.piece.role == Role::Pawn {
                    "a pawn cannot jump over pieces"
                } else {
                    "only a knight can jump over pieces"
                };
                write!(
                    f,
                    "{} cannot get to {to}: {blocker} is in the way, and {rule}.",
                    capitalised(&piece.to_string())
                )
            }
            Illegality::PawnCapturesOnlyDiagonally { pawn, target } => write!(
                f,
                "{} cannot move to {}: {} stands there, and a pawn captures only diagonally, \
                 never straight ahead.",
                capitalised(&pawn.to_string()),
                target.square,
                target
            ),
            Illegality::PawnDiagonalWithoutCapture { pawn, to } => write!(
                f,
                "{} cannot move to {to}: a pawn moves diagonally only when it captures, and {to} \
                 is empty.",
                capitalised(&pawn.to_string())
            ),
            Illegality::EnPassantNotNow {
                pawn,
                to,
                victim,
                double_step_ply,
            } => match double_step_ply {
                Some(ply) => write!(
                    f,
                    "{} cannot capture en passant on {to}: {victim} made its two-square move at \
                     ply {ply}, and en passant is allowed only on the very next move, so that \
                     chance has passed.",
                    capitalised(&pawn.to_string())
                ),
                None => write!(
                    f,
                    "{} cannot capture en passant on {to}: en passant is allowed only on the move \
                     right after {victim} arrived there with a two-square move, and it did not.",
                    capitalised(&pawn.to_string())
                ),
            },
            Illegality::PromotionMissing { pawn, to } => write!(
                f,
                "{} reaches the last rank on {to}, so it must be promoted: add the letter of the \
                 new piece, for example {}{to}q (q queen, r rook, b bishop, n knight).",
                capitalised(&pawn.to_string()),
                pawn.square
            ),
            Illegality::PromotionToKingOrPawn { pawn, to, role } => write!(
                f,
                "A pawn that reaches the last rank must become a queen, a rook, a bishop or a \
                 knight, {}: {}{to}{} is not allowed.",
                if *role == Role::King {
                    "never a king"
                } else {
                    "and it can never stay a pawn"
                },
                pawn.square,
                role.char()
            ),
            Illegality::PromotionNotAllowed { piece, to, role } => {
                if piece.piece.role == Role::Pawn {
                    write!(
                        f,
                        "A pawn is promoted only when it reaches the last rank, and {to} is not \
                         the last rank for {piece}: leave out the '{}' at the end.",
                        role.char()
                    )
                } else {
                    write!(
                        f,
                        "Only a pawn can be promoted, and {piece} is not a pawn: leave out the \
                         '{}' at the end.",
                        role.char()
                    )
                }
            }
            Illegality::KingIntoAttack {
                king,
                to,
                captured,
                attackers,
            } => match captured {
                Some(captured) => write!(
                    f,
                    "{} cannot capture {captured}: {} {} it, so the king would be in check on \
                     {to}, and a king may never move into check.",
                    capitalised(&king.to_string()),
                    and_list(attackers),
                    verb(attackers, "protects", "protect")
                ),
                None => write!(
                    f,
                    "{} cannot go to {to}: {} {} {to}, and a king may never move onto a square \
                     where it would be in check.",
                    capitalised(&king.to_string()),
                    and_list(attackers),
                    verb(attackers, "attacks", "attack")
                ),
            },
            Illegality::ExposesKing {
                piece,
                to,
                king,
                attackers,
                en_passant_victim: Some(victim),
            } => write!(
                f,
                "Capturing en passant on {to} moves {piece} and removes {victim}, which opens \
                 the line from {} to {king}: the king would be in check, and a player may never \
                 leave their own king in check.",
                and_list(attackers)
            ),
            Illegality::ExposesKing {
                piece,
                to,
                king,
                attackers,
                en_passant_victim: None,
            } => write!(
                f,
                "{} is pinned: it stands between {king} and {}, so moving it to {to} would leave \
                 the king in check, and a player may never leave their own king in check.",
                capitalised(&piece.to_string()),
                and_list(attackers)
            ),
            Illegality::DoesNotAnswerCheck {
                played,
                king,
                checkers,
                answers,
            } => {
                if checkers.len() > 1 {
                    write!(
                        f,
                        "{} is in double check from {}, and {played} does not get it out of \
                         check: against a double check only a king move helps.",
                        capitalised(&king.to_string()),
                        and_list(checkers)
                    )?;
                } else {
                    write!(
                        f,
                        "{} is in check from {}, and {played} does not get it out of check: a \
                         check must be answered at once.",
                        capitalised(&king.to_string()),
                        and_list(checkers)
                    )?;
                }
                write!(
                    f,
                    "\nThe moves that answer the check: king moves {}; blocks {}; captures {}.",
                    move_list(&answers.king_moves),
                    move_list(&answers.blocks),
                    move_list(&answers.captures)
                )
            }
            Illegality::Castling {
                color,
                side,
                problem,
            } => {
                let who = player_name(*color);
                let side = side_name(*side);
                let king = format!("the {} king", colour_name(*color));
                match problem {
                    CastlingProblem::NoRightAtStart => write!(
                        f,
                        "{who} cannot castle {side}: the position was set up without that \
                         castling right (the FEN's castling field does not give it)."
                    ),
                    CastlingProblem::KingMoved {
                        ply,
                        played,
                        castled: true,
                    } => write!(
                        f,
                        "{who} cannot castle {side}: {king} already castled at ply {ply} \
                         ({played}), and a player castles at most once."
                    ),
                    CastlingProblem::KingMoved { ply, played, .. } => write!(
                        f,
                        "{who} cannot castle {side}: {king} moved at ply {ply} ({played}), and a \
                         king that has moved may never castle, even after going back."
                    ),
                    CastlingProblem::RookMoved { ply, rook, played } => write!(
                        f,
                        "{who} cannot castle {side}: the rook from {rook} moved at ply {ply} \
                         ({played}), and a rook that has moved may never castle, even after \
                         going back."
                    ),
                    CastlingProblem::RookCaptured { ply, rook, played } => write!(
                        f,
                        "{who} cannot castle {side}: the {} rook on {rook} was captured at ply \
                         {ply} ({played}).",
                        colour_name(*color)
                    ),
                    CastlingProblem::Notation { rook, expected } => write!(
                        f,
                        "{who} can castle {side} only with the rook on {rook}, and that move is \
                         written {expected}."
                    ),
                    CastlingProblem::SquaresOccupied { pieces } => write!(
                        f,
                        "{who} cannot castle {side}: {} {} in the way, and every square the king \
                         and the rook pass over or land on must be empty.",
                        and_list(pieces),
                        if pieces.len() == 1 { "is" } else { "are" }
                    ),
                    CastlingProblem::InCheck { checkers } => write!(
                        f,
                        "{who} cannot castle while in check (from {}): castling is never a way \
                         out of check.",
                        and_list(checkers)
                    ),
                    CastlingProblem::PassesAttacked { square, attackers } => write!(
                        f,
                        "{who} cannot castle {side}: the king would pass over {square}, which {} \
                         {}, and a castling king may not cross an attacked square.",
                        and_list(attackers),
                        verb(attackers, "attacks", "attack")
                    ),
                    CastlingProblem::LandsAttacked { square, attackers } => write!(
                        f,
                        "{who} cannot castle {side}: the king would land on {square}, which {} \
                         {}, so it would be in check there.",
                        and_list(attackers),
                        verb(attackers, "attacks", "attack")
                    ),
                }
            }
            Illegality::Unexplained => f.write_str("The move is not legal in this position."),
        }
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
