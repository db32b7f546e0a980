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

use crate::game::{Game, GameOver, MoveError, SetupError};
use shakmaty::uci::UciMove;
use shakmaty::{
    Bitboard, CastlingSide, Chess, Color, EnPassantMode, Move, Piece, Position, Rank, Role, Square,
    attacks,
};
use std::fmt;

/// A piece and the square it stands on: what the sentences name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub piece: Piece,
    pub square: Square,
}

/// How the castling right of one side was lost, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CastlingProblem {
    /// The game's start position (its FEN) does not give this right.
    NoRightAtStart,
    /// The king moved (or castled) at `ply`; `played` is that move.
    KingMoved {
        ply: usize,
        played: UciMove,
        castled: bool,
    },
    /// The castling rook left `rook` at `ply`.
    RookMoved {
        ply: usize,
        rook: Square,
        played: UciMove,
    },
    /// The castling rook was captured on `rook` at `ply`.
    RookCaptured {
        ply: usize,
        rook: Square,
        played: UciMove,
    },
    /// The right exists, with the rook on `rook`, and the text names
    /// another rook or square: `expected` is how the castling is written.
    Notation { rook: Square, expected: UciMove },
    /// Squares the king or the rook must cross or land on are taken.
    SquaresOccupied { pieces: Vec<Placed> },
    /// The king is in check now.
    InCheck { checkers: Vec<Placed> },
    /// The king would cross `square`, which the opponent attacks.
    PassesAttacked {
        square: Square,
        attackers: Vec<Placed>,
    },
    /// The king would land on `square`, which the opponent attacks.
    LandsAttacked {
        square: Square,
        attackers: Vec<Placed>,
    },
}

/// The legal answers to a check, by kind, as UCI moves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckAnswers {
    pub king_moves: Vec<UciMove>,
    pub blocks: Vec<UciMove>,
    pub captures: Vec<UciMove>,
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

/// The rank a pawn of `color` promotes on.
fn last_rank(color: Color) -> Rank {
    color.fold_wb(Rank::Eighth, Rank::First)
}

/// Squares a pawn of `color` on `from` could ever reach in one move: one
/// step ahead, two from its start rank, one diagonally ahead.
pub(crate) fn pawn_reach(color: Color, from: Square) -> Bitboard {
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

/// The castling side a king move `from`-`to` asks for, read as shakmaty
/// reads it (the king takes a rook that has the right; `e1g1`/`e1c1` from
/// e1/e8), and also when the king takes any own rook on its back rank or
/// goes to its castled square along that rank (castling written the
/// standard way in Chess960): castling is what such a text means.
fn castling_side_asked(pos: &Chess, from: Square, to: Square) -> Option<CastlingSide> {
    let us = pos.turn();
    let side = CastlingSide::from_king_side(to.file() > from.file());
    if (pos.castles().castling_rights() & pos.us()).contains(to) {
        return Some(side);
    }
    let back = us.backrank();
    if from.rank() != back || to.rank() != back || from == to {
        return None;
    }
    let standard_form = from == us.fold_wb(Square::E1, Square::E8) && from.distance(to) == 2;
    let takes_own_rook = pos.board().by_piece(us.rook()).contains(to);
    let to_castled_square =
        from.distance(to) >= 2 && pos.castles().rook(us, side).is_some() && to == side.king_to(us);
    (standard_form || takes_own_rook || to_castled_square).then_some(side)
}

fn explain_normal(
    game: &Game,
    uci: UciMove,
    from: Square,
    to: Square,
    promotion: Option<Role>,
) -> Illegality {
    let pos = game.position();
    let board = pos.board();
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
    if let Some(role) = promotion
        && (piece.role != Role::Pawn || to.rank() != last_rank(us))
    {
        return Illegality::PromotionNotAllowed {
            piece: mover,
            to,
            role,
        };
    }
    if piece.role == Role::King
        && let Some(side) = castling_side_asked(pos, from, to)
    {
        return Illegality::Castling {
            color: us,
            side,
            problem: match castling_problem(game, from, to, side) {
                Some(problem) => problem,
                None => return Illegality::Unexplained,
            },
        };
    }
    if from == to || !reaches_on_empty_board(piece, from, to) {
        return Illegality::NotThatWay { piece: mover, to };
    }
    let target = placed(pos, to);
    if let Some(target) = target
        && target.piece.color == us
    {
        return Illegality::OwnPieceOnTarget {
            piece: mover,
            target,
        };
    }
    // Knights and kings jump or step: nothing lies between. A pawn's double
    // step crosses one square.
    let in_between = attacks::between(from, to) & board.occupied();
    if let Some(blocker) = in_between
        .into_iter()
        .min_by_key(|sq| from.distance(*sq))
        .and_then(|sq| placed(pos, sq))
    {
        return Illegality::Blocked {
            piece: mover,
            to,
            blocker,
        };
    }
    let mut en_passant_victim = None;
    if piece.role == Role::Pawn {
        match target {
            Some(target) if from.file() == to.file() => {
                return Illegality::PawnCapturesOnlyDiagonally {
                    pawn: mover,
                    target,
                };
            }
            None if from.file() != to.file() => {
                let victim = placed(pos, Square::from_coords(to.file(), from.rank()));
                let is_enemy_pawn = |v: &Placed| v.piece == (!us).pawn();
                if pos.ep_square(EnPassantMode::Always) == Some(to) {
                    en_passant_victim = victim;
                } else if from.rank() == us.relative_rank(Rank::Fifth)
                    && let Some(victim) = victim.filter(is_enemy_pawn)
                {
                    return Illegality::EnPassantNotNow {
                        pawn: mover,
                        to,
                        victim,
                        double_step_ply: double_step_ply(game, victim.square),
                    };
                } else {
                    return Illegality::PawnDiagonalWithoutCapture { pawn: mover, to };
                }
            }
            _ => {}
        }
        if to.rank() == last_rank(us) {
            match promotion {
                None => return Illegality::PromotionMissing { pawn: mover, to },
                Some(role @ (Role::King | Role::Pawn)) => {
                    return Illegality::PromotionToKingOrPawn {
                        pawn: mover,
                        to,
                        role,
                    };
                }
                Some(_) => {}
            }
        }
    }
    king_safety(game, uci, mover, to, en_passant_victim)
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

/// A move that a piece can make here (pseudo-legal): what it does to the own king.
fn king_safety(
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

/// Which castling condition fails for the king on `from` castling to `side`
/// (the text asked `from`-`to`): RULES.md §2, in its order.
fn castling_problem(
    game: &Game,
    from: Square,
    to: Square,
    side: CastlingSide,
) -> Option<CastlingProblem> {
    let pos = game.position();
    let board = pos.board();
    let us = pos.turn();
    let castles = pos.castles();
    let Some(rook) = castles.rook(us, side) else {
        return lost_right(game, us, side);
    };
    // The rook the text names: the one it takes, or for `e1g1`/`e1c1` the
    // one on the h- or a-file, as shakmaty reads it.
    let named_rook = if board.by_piece(us.rook()).contains(to) {
        Some(to)
    } else if from == us.fold_wb(Square::E1, Square::E8) && from.distance(to) == 2 {
        let file = on_side(side, shakmaty::File::H, shakmaty::File::A);
        Some(Square::from_coords(file, us.backrank()))
    } else {
        None
    };
    if named_rook != Some(rook) {
        return Some(CastlingProblem::Notation {
            rook,
            expected: Move::Castle { king: from, rook }.to_uci(game.castling_mode()),
        });
    }
    let occupied = board.occupied();
    let in_path = castles.path(us, side) & occupied;
    if in_path.any() {
        return Some(CastlingProblem::SquaresOccupied {
            pieces: all_placed(pos, in_path),
        });
    }
    if pos.is_check() {
        return Some(CastlingProblem::InCheck {
            checkers: all_placed(pos, pos.checkers()),
        });
    }
    let king_to = side.king_to(us);
    for square in attacks::between(from, king_to) {
        let attackers = board.attacks_to(square, !us, occupied.without(from));
        if attackers.any() {
            return Some(CastlingProblem::PassesAttacked {
                square,
                attackers: all_placed(pos, attackers),
            });
        }
    }
    let landed = occupied
        .toggled(from)
        .toggled(rook)
        .toggled(side.rook_to(us));
    let attackers = board.attacks_to(king_to, !us, landed);
    // None: legal after all, though shakmaty refused it.
    attackers.any().then(|| CastlingProblem::LandsAttacked {
        square: king_to,
        attackers: all_placed(pos, attackers),
    })
}

/// How `color` lost the right to castle to `side`: replays the game from
/// its start to find the move after which the right was gone.
fn lost_right(game: &Game, color: Color, side: CastlingSide) -> Option<CastlingProblem> {
    let mut pos = game.start().clone();
    if pos.castles().rook(color, side).is_none() {
        return Some(CastlingProblem::NoRightAtStart);
    }
    let mode = game.castling_mode();
    for (i, &m) in game.moves().iter().enumerate() {
        let rook = pos.castles().rook(color, side);
        let king = pos.board().king_of(color);
        pos.play_unchecked(m);
        let Some(rook) = rook else { continue };
        if pos.castles().rook(color, side).is_some() {
            continue;
        }
        let ply = i + 1;
        let played = m.to_uci(mode);
        return Some(if m.from().is_some() && m.from() == king {
            CastlingProblem::KingMoved {
                ply,
                played,
                castled: m.is_castle(),
            }
        } else if m.from() == Some(rook) {
            CastlingProblem::RookMoved { ply, rook, played }
        } else {
            CastlingProblem::RookCaptured { ply, rook, played }
        });
    }
    None
}

fn on_side<T>(side: CastlingSide, king_side: T, queen_side: T) -> T {
    match side {
        CastlingSide::KingSide => king_side,
        CastlingSide::QueenSide => queen_side,
    }
}

fn colour_name(color: Color) -> &'static str {
    color.fold_wb("white", "black")
}

fn player_name(color: Color) -> &'static str {
    color.fold_wb("White", "Black")
}

fn role_name(role: Role) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;

    fn game_in(mode: CastlingMode, fen: &str, moves: &str) -> Game {
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
    fn why(fen: &str, moves: &str, text: &str) -> Illegality {
        let g = game_in(CastlingMode::Standard, fen, moves);
        explain_illegal(&g, text).expect("an illegal, well-formed move")
    }

    fn said(fen: &str, moves: &str, text: &str) -> String {
        why(fen, moves, text).to_string()
    }

    fn at(piece: Piece, square: Square) -> Placed {
        Placed { piece, square }
    }

    const W: Color = Color::White;
    const B: Color = Color::Black;

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

    #[test]
    fn castling_rights_lost_say_when() {
        assert_eq!(
            said("4k3/8/8/8/8/8/8/4K2R w - - 0 1", "", "e1g1"),
            "White cannot castle kingside: the position was set up without that castling right \
             (the FEN's castling field does not give it)."
        );
        let king_walk = "e2e4 e7e5 e1e2 e8e7 e2e1 e7e8 g1f3 g8f6 f1e2 f8e7";
        assert_eq!(
            said("startpos", king_walk, "e1g1"),
            "White cannot castle kingside: the white king moved at ply 3 (e1e2), and a king that \
             has moved may never castle, even after going back."
        );
        let rook_walk = "g1f3 g8f6 h1g1 h8g8 g1h1 g8h8 e2e4 e7e5 f1c4 f8c5";
        assert_eq!(
            said("startpos", rook_walk, "e1g1"),
            "White cannot castle kingside: the rook from h1 moved at ply 3 (h1g1), and a rook \
             that has moved may never castle, even after going back."
        );
        assert_eq!(
            said("4k3/8/8/8/8/8/6b1/R3K2R b KQ - 0 1", "g2h1", "e1g1"),
            "White cannot castle kingside: the white rook on h1 was captured at ply 1 (g2h1)."
        );
        // King takes own rook, after castling the other way.
        let castled = "e2e4 e7e5 g1f3 g8f6 f1c4 f8c5 e1g1 b8c6";
        assert_eq!(
            said("startpos", castled, "g1a1"),
            "White cannot castle queenside: the white king already castled at ply 7 (e1g1), and \
             a player castles at most once."
        );
    }

    #[test]
    fn castling_conditions_name_squares_and_attackers() {
        assert_eq!(
            said("startpos", "", "e1g1"),
            "White cannot castle kingside: the white bishop on f1 and the white knight on g1 are \
             in the way, and every square the king and the rook pass over or land on must be \
             empty."
        );
        assert_eq!(
            said("4k3/8/8/8/1b6/8/8/R3K2R w KQ - 0 1", "", "e1g1"),
            "White cannot castle while in check (from the black bishop on b4): castling is never \
             a way out of check."
        );
        assert_eq!(
            said("4k3/8/8/8/2b5/8/8/R3K2R w KQ - 0 1", "", "e1g1"),
            "White cannot castle kingside: the king would pass over f1, which the black bishop \
             on c4 attacks, and a castling king may not cross an attacked square."
        );
        assert_eq!(
            said("4k3/8/8/8/8/7n/8/R3K2R w KQ - 0 1", "", "e1g1"),
            "White cannot castle kingside: the king would land on g1, which the black knight on \
             h3 attacks, so it would be in check there."
        );
        // b1 attacked does not stop the long castle (RULES.md §2).
        let g = game_in(
            CastlingMode::Standard,
            "1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
            "",
        );
        assert_eq!(explain_illegal(&g, "e1c1"), None);
        // King-takes-rook is read as castling in standard mode too.
        assert_eq!(
            why("4k3/8/8/8/8/7n/8/R3K2R w KQ - 0 1", "", "e1h1"),
            why("4k3/8/8/8/8/7n/8/R3K2R w KQ - 0 1", "", "e1g1")
        );
    }

    #[test]
    fn chess960_castling() {
        let fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
        let g = game_in(CastlingMode::Chess960, fen, "");
        assert_eq!(
            explain_illegal(&g, "g1h1")
                .map(|i| i.to_string())
                .as_deref(),
            Some(
                "White cannot castle kingside: the white rook on f1 is in the way, and every \
                 square the king and the rook pass over or land on must be empty."
            )
        );
        assert_eq!(
            explain_illegal(&g, "g1f1")
                .map(|i| i.to_string())
                .as_deref(),
            Some(
                "White cannot castle queenside: the white bishop on d1 and the white knight on \
                 e1 are in the way, and every square the king and the rook pass over or land on \
                 must be empty."
            )
        );
        // Standard notation for a Chess960 castling whose rook is not on h1.
        let g = game_in(
            CastlingMode::Chess960,
            "4k3/8/8/8/8/8/8/1R2KR2 w FB - 0 1",
            "",
        );
        assert_eq!(explain_illegal(&g, "e1f1"), None);
        assert_eq!(
            explain_illegal(&g, "e1g1")
                .map(|i| i.to_string())
                .as_deref(),
            Some(
                "White can castle kingside only with the rook on f1, and that move is written e1f1."
            )
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

    // ---- The property test: random games, every well-formed move text. ----

    use proptest::prelude::*;
    use shakmaty::{Board, Setup};

    /// Start positions with castling, en passant (and its pins) and
    /// promotions close at hand.
    const SEEDS: [&str; 10] = [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        // In check, with a pinned knight that could take the checker.
        "4k3/8/8/8/1b6/5n2/3N4/4K3 w - - 0 1",
        // En passant that would answer a check, and one that would not.
        "8/8/8/2k5/3Pp3/8/8/4K2B b - d3 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        // Castling through an attacked f1, onto an attacked c1.
        "2r1k2r/8/b7/8/8/8/8/R3K2R w KQk - 0 1",
        // No kingside right from the start; in check for the queenside.
        "4k3/8/8/8/1b6/8/8/R3K2R w Q - 0 1",
        // The h1 rook about to be taken.
        "4k3/8/8/8/8/8/6b1/R3K2R b KQ - 0 1",
    ];

    /// A game from `start` (0: the start position, 1..=960: Chess960
    /// position `start - 1`, above: a seed FEN), then random legal moves;
    /// `choices` pick them, preferring castling, en passant and promotions
    /// when the choice is small.
    fn random_game(start: u32, choices: &[u16]) -> Game {
        let mut game = if start == 0 {
            Game::default()
        } else if start <= 960 {
            let board = Board::chess960(start - 1);
            let setup = Setup {
                castling_rights: board.rooks(),
                board,
                ..Setup::initial()
            };
            let pos: Chess = setup
                .position(CastlingMode::Chess960)
                .expect("a Chess960 start");
            Game::new(pos, CastlingMode::Chess960)
        } else {
            let fen = SEEDS[(start as usize - 961) % SEEDS.len()];
            Game::from_fen(fen, CastlingMode::Standard).expect("seed FEN")
        };
        for &choice in choices {
            let moves = game.position().legal_moves();
            if moves.is_empty() {
                break;
            }
            let special: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|m| m.is_en_passant() || m.is_promotion() || m.is_castle())
                .collect();
            let m = if choice % 4 == 0 && !special.is_empty() {
                special[usize::from(choice / 4) % special.len()]
            } else {
                moves[usize::from(choice) % moves.len()]
            };
            game.play(m);
        }
        game
    }

    /// The texts tried in a position: every from-to pair, the pairs of the
    /// side to move's pawns with every promotion letter, a few others with
    /// one, and a null move and a drop.
    fn texts(pos: &Chess) -> Vec<String> {
        let mut out = vec!["0000".to_string(), "N@e4".to_string()];
        for from in Square::ALL {
            let pawn = pos.board().piece_at(from) == Some(pos.turn().pawn());
            for to in Square::ALL {
                out.push(format!("{from}{to}"));
                if pawn || (from.to_u32() + to.to_u32()) % 61 == 0 {
                    for letter in ['q', 'r', 'b', 'n', 'k', 'p'] {
                        out.push(format!("{from}{to}{letter}"));
                    }
                }
            }
        }
        out
    }

    /// The board after a normal move or en passant, made by hand (not by
    /// the code under test).
    fn board_after(pos: &Chess, from: Square, to: Square, promotion: Option<Role>) -> Board {
        let mut board = pos.board().clone();
        let Some(piece) = board.remove_piece_at(from) else {
            return board;
        };
        if piece.role == Role::Pawn && from.file() != to.file() && board.piece_at(to).is_none() {
            board.discard_piece_at(Square::from_coords(to.file(), from.rank()));
        }
        let role = promotion.unwrap_or(piece.role);
        board.set_piece_at(to, role.of(piece.color));
        board
    }

    /// Whether the move is one the piece can make here if the own king's
    /// safety is left aside: an independent small generator.
    fn pseudo_legal(pos: &Chess, from: Square, to: Square, promotion: Option<Role>) -> bool {
        let board = pos.board();
        let us = pos.turn();
        let Some(piece) = board.piece_at(from) else {
            return false;
        };
        if piece.color != us || board.by_color(us).contains(to) {
            return false;
        }
        if piece.role != Role::Pawn {
            return promotion.is_none()
                && attacks::attacks(from, piece, board.occupied()).contains(to);
        }
        let forward =
            i32::from(us.relative_rank(to.rank())) - i32::from(us.relative_rank(from.rank()));
        let sideways = from.file().distance(to.file());
        let shape = if sideways == 0 {
            let middle = Square::from_coords(
                from.file(),
                Rank::new((from.rank().to_u32() + to.rank().to_u32()) / 2),
            );
            board.piece_at(to).is_none()
                && (forward == 1
                    || (forward == 2
                        && us.relative_rank(from.rank()) == Rank::Second
                        && board.piece_at(middle).is_none()))
        } else {
            sideways == 1
                && forward == 1
                && (board.by_color(!us).contains(to)
                    || pos.ep_square(EnPassantMode::Always) == Some(to))
        };
        let last = us.relative_rank(to.rank()) == Rank::Eighth;
        let promotion_ok = match promotion {
            None => !last,
            Some(r) => last && !matches!(r, Role::King | Role::Pawn),
        };
        shape && promotion_ok
    }

    /// Attackers of the own king after a pseudo-legal normal move.
    fn king_attackers_after(
        pos: &Chess,
        from: Square,
        to: Square,
        promotion: Option<Role>,
    ) -> Bitboard {
        let after = board_after(pos, from, to, promotion);
        match after.king_of(pos.turn()) {
            Some(k) => after.attacks_to(k, !pos.turn(), after.occupied()),
            None => Bitboard::EMPTY,
        }
    }

    fn on_empty_board(piece: Piece, from: Square, to: Square) -> bool {
        if piece.role != Role::Pawn {
            return attacks::attacks(from, piece, Bitboard::EMPTY).contains(to);
        }
        let forward = i32::from(piece.color.relative_rank(to.rank()))
            - i32::from(piece.color.relative_rank(from.rank()));
        let sideways = from.file().distance(to.file());
        (sideways == 0
            && (forward == 1
                || (forward == 2 && piece.color.relative_rank(from.rank()) == Rank::Second)))
            || (sideways == 1 && forward == 1)
    }

    /// Checks the explanation against facts computed here; `Err` says what
    /// disagrees.
    fn agrees(game: &Game, text: &str, why: &Illegality) -> Result<(), String> {
        let pos = game.position();
        let board = pos.board();
        let us = pos.turn();
        let fail = |what: &str| Err(format!("{what}: {why:?}"));
        let uci = UciMove::from_ascii(text.as_bytes()).map_err(|_| "unparsable".to_string())?;
        if let Illegality::GameOver { end, ply } = why {
            let over = pos.legal_moves().is_empty()
                && *ply == game.moves().len()
                && (*end == GameOver::Stalemate) != pos.is_check();
            return if over { Ok(()) } else { fail("not over") };
        }
        if pos.legal_moves().is_empty() {
            return fail("the game is over, yet another reason");
        }
        let (from, to, promotion) = match uci {
            UciMove::Null => {
                return if *why == Illegality::NullMove {
                    Ok(())
                } else {
                    fail("0000")
                };
            }
            UciMove::Put { .. } => {
                return if matches!(why, Illegality::Drop { .. }) {
                    Ok(())
                } else {
                    fail("drop")
                };
            }
            UciMove::Normal {
                from,
                to,
                promotion,
            } => (from, to, promotion),
        };
        let mover = board.piece_at(from);
        let target = board.piece_at(to);
        let is_king = mover == Some(us.king());
        let castling_shaped = is_king
            && from.rank() == us.backrank()
            && to.rank() == us.backrank()
            && from != to
            && ((pos.castles().castling_rights() & pos.us()).contains(to)
                || target == Some(us.rook())
                || (from == us.fold_wb(Square::E1, Square::E8) && from.distance(to) == 2)
                || (from.distance(to) >= 2
                    && [CastlingSide::KingSide, CastlingSide::QueenSide]
                        .iter()
                        .any(|&s| pos.castles().rook(us, s).is_some() && to == s.king_to(us))));
        let ok = match why {
            Illegality::NullMove | Illegality::Drop { .. } | Illegality::GameOver { .. } => false,
            Illegality::NoPiece { from: f } => *f == from && mover.is_none(),
            Illegality::NotYourPiece { piece, turn } => {
                Some(piece.piece) == mover && piece.piece.color != us && *turn == us
            }
            Illegality::PromotionNotAllowed { piece, role, .. } => {
                Some(piece.piece) == mover
                    && promotion == Some(*role)
                    && (piece.piece.role != Role::Pawn
                        || us.relative_rank(to.rank()) != Rank::Eighth)
            }
            Illegality::NotThatWay { piece, .. } => {
                Some(piece.piece) == mover
                    && !castling_shaped
                    && (from == to || !on_empty_board(piece.piece, from, to))
            }
            Illegality::OwnPieceOnTarget { piece, target: t } => {
                Some(piece.piece) == mover
                    && on_empty_board(piece.piece, from, to)
                    && !castling_shaped
                    && Some(t.piece) == target
                    && t.piece.color == us
            }
            Illegality::Blocked { piece, blocker, .. } => {
                let between = attacks::between(from, to);
                Some(piece.piece) == mover
                    && on_empty_board(piece.piece, from, to)
                    && between.contains(blocker.square)
                    && board.piece_at(blocker.square) == Some(blocker.piece)
                    && (between & board.occupied())
                        .into_iter()
                        .all(|sq| from.distance(sq) >= from.distance(blocker.square))
            }
            Illegality::PawnCapturesOnlyDiagonally { pawn, target: t } => {
                Some(pawn.piece) == mover
                    && pawn.piece.role == Role::Pawn
                    && from.file() == to.file()
                    && Some(t.piece) == target
                    && t.piece.color != us
            }
            Illegality::PawnDiagonalWithoutCapture { pawn, .. } => {
                Some(pawn.piece) == mover
                    && pawn.piece.role == Role::Pawn
                    && from.file() != to.file()
                    && target.is_none()
                    && pos.ep_square(EnPassantMode::Always) != Some(to)
            }
            Illegality::EnPassantNotNow {
                pawn,
                victim,
                double_step_ply,
                ..
            } => {
                let beside = Square::from_coords(to.file(), from.rank());
                let step_ok = match double_step_ply {
                    None => true,
                    Some(ply) => {
                        *ply < game.moves().len()
                            && game.moves().get(ply - 1).is_some_and(|m| {
                                m.role() == Role::Pawn
                                    && m.to() == beside
                                    && m.from().is_some_and(|f| f.distance(beside) == 2)
                            })
                    }
                };
                Some(pawn.piece) == mover
                    && target.is_none()
                    && pos.ep_square(EnPassantMode::Always) != Some(to)
                    && victim.square == beside
                    && board.piece_at(beside) == Some((!us).pawn())
                    && step_ok
            }
            Illegality::PromotionMissing { pawn, .. } => {
                Some(pawn.piece) == mover
                    && promotion.is_none()
                    && pseudo_legal(pos, from, to, Some(Role::Queen))
            }
            Illegality::PromotionToKingOrPawn { pawn, role, .. } => {
                Some(pawn.piece) == mover
                    && promotion == Some(*role)
                    && pseudo_legal(pos, from, to, Some(Role::Queen))
            }
            Illegality::KingIntoAttack { attackers, .. } => {
                let attacked = board.attacks_to(to, !us, board.occupied().without(from));
                is_king
                    && !castling_shaped
                    && pseudo_legal(pos, from, to, promotion)
                    && attacked.any()
                    && attackers.iter().map(|a| a.square).collect::<Bitboard>() == attacked
            }
            Illegality::ExposesKing { attackers, .. } => {
                let after = king_attackers_after(pos, from, to, promotion);
                !is_king
                    && pseudo_legal(pos, from, to, promotion)
                    && after.any()
                    && (after & pos.checkers()).is_empty()
                    && attackers.iter().map(|a| a.square).collect::<Bitboard>() == after
            }
            Illegality::DoesNotAnswerCheck {
                checkers, answers, ..
            } => {
                let after = king_attackers_after(pos, from, to, promotion);
                let listed: Vec<String> = answers
                    .king_moves
                    .iter()
                    .chain(&answers.blocks)
                    .chain(&answers.captures)
                    .map(ToString::to_string)
                    .collect();
                let mut legal: Vec<String> =
                    pos.legal_moves().iter().map(|m| game.to_uci(*m)).collect();
                let mut listed_sorted = listed.clone();
                listed_sorted.sort();
                legal.sort();
                let kings_ok = answers
                    .king_moves
                    .iter()
                    .all(|m| m.from() == board.king_of(us));
                let captures_ok = answers.captures.iter().all(|m| {
                    m.to().is_some_and(|t| {
                        pos.checkers().contains(t) || board.piece_at(t).is_none() // en passant
                    })
                });
                !is_king
                    && pos.is_check()
                    && pseudo_legal(pos, from, to, promotion)
                    && (after & pos.checkers()).any()
                    && checkers.iter().map(|a| a.square).collect::<Bitboard>() == pos.checkers()
                    && listed_sorted == legal
                    && kings_ok
                    && captures_ok
            }
            Illegality::Castling {
                color,
                side,
                problem,
            } => {
                let castles = pos.castles();
                let problem_ok = match problem {
                    CastlingProblem::NoRightAtStart => {
                        game.start().castles().rook(us, *side).is_none()
                    }
                    CastlingProblem::KingMoved { ply, .. }
                    | CastlingProblem::RookMoved { ply, .. }
                    | CastlingProblem::RookCaptured { ply, .. } => {
                        // The right held before that ply and was gone after it.
                        let mut p = game.start().clone();
                        let mut held_before = false;
                        for (i, m) in game.moves().iter().enumerate() {
                            if i + 1 == *ply {
                                held_before = p.castles().rook(us, *side).is_some();
                            }
                            p.play_unchecked(*m);
                            if i + 1 == *ply {
                                break;
                            }
                        }
                        let m = game.moves().get(ply - 1).copied();
                        let kind_ok = match problem {
                            CastlingProblem::KingMoved { .. } => {
                                m.is_some_and(|m| m.role() == Role::King)
                            }
                            CastlingProblem::RookMoved { rook, .. } => {
                                m.is_some_and(|m| m.from() == Some(*rook))
                            }
                            _ => m.is_some_and(|m| m.is_capture()),
                        };
                        held_before && p.castles().rook(us, *side).is_none() && kind_ok
                    }
                    CastlingProblem::Notation { rook, expected } => {
                        castles.rook(us, *side) == Some(*rook)
                            && expected.to_string() != text
                            && expected.to_move(pos).map_or(true, |m| {
                                m == Move::Castle {
                                    king: from,
                                    rook: *rook,
                                }
                            })
                    }
                    CastlingProblem::SquaresOccupied { pieces } => {
                        pieces.iter().map(|a| a.square).collect::<Bitboard>()
                            == castles.path(us, *side) & board.occupied()
                    }
                    CastlingProblem::InCheck { .. } => pos.is_check(),
                    CastlingProblem::PassesAttacked { square, .. } => {
                        attacks::between(from, side.king_to(us)).contains(*square)
                            && board
                                .attacks_to(*square, !us, board.occupied().without(from))
                                .any()
                    }
                    CastlingProblem::LandsAttacked { square, .. } => {
                        *square == side.king_to(us)
                            && castles.rook(us, *side).is_some_and(|rook| {
                                !pos.is_legal(Move::Castle { king: from, rook })
                            })
                    }
                };
                castling_shaped && *color == us && problem_ok
            }
            Illegality::Unexplained => false,
        };
        if ok { Ok(()) } else { fail("disagrees") }
    }

    /// One random game: every text is either legal (and unexplained) or
    /// explained, and the explanation agrees with the facts.
    fn check_game(game: &Game) -> Result<usize, String> {
        let pos = game.position();
        let mut illegal = 0;
        for text in texts(pos) {
            let legal = crate::game::parse_uci_move(pos, &text).is_ok();
            match (legal, explain_illegal(game, &text)) {
                (true, None) => {}
                (true, Some(why)) => return Err(format!("{text} is legal, yet {why:?}")),
                (false, None) => return Err(format!("{text}: illegal without a reason")),
                (false, Some(why)) => {
                    illegal += 1;
                    let _ = why.to_string();
                    agrees(game, &text, &why)
                        .map_err(|e| format!("{text} in {}: {e}", game.fen()))?;
                }
            }
        }
        Ok(illegal)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn every_illegal_move_gets_a_reason_that_agrees(
            start in prop_oneof![Just(0u32), 1u32..=960, 961u32..=970],
            choices in prop::collection::vec(any::<u16>(), 0..90),
        ) {
            let game = random_game(start, &choices);
            let result = check_game(&game);
            prop_assert!(result.is_ok(), "{:?}", result);
        }
    }

    /// Every seed position itself, and after a few random moves.
    #[test]
    fn seed_positions_agree() {
        for i in 0..SEEDS.len() as u32 {
            for choices in [&[][..], &[1, 2, 3], &[7, 0, 4, 9, 12]] {
                let game = random_game(961 + i, choices);
                let result = check_game(&game);
                assert!(result.is_ok(), "{result:?}");
            }
        }
    }

    /// Each kind of reason turns up in the random games: the property test
    /// above is not vacuous. Runs the same games with a fixed seed.
    #[test]
    fn random_games_reach_every_kind() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let strategy = (
            prop_oneof![Just(0u32), 1u32..=960, 961u32..=970],
            prop::collection::vec(any::<u16>(), 0..90),
        );
        let mut seen = std::collections::BTreeSet::new();
        let seeds = (0..SEEDS.len() as u32).map(|i| (961 + i, Vec::new()));
        let random = (0..60).map(|_| strategy.new_tree(&mut runner).expect("value").current());
        let captured_rook = game_in(CastlingMode::Standard, SEEDS[9], "g2h1");
        let games = seeds
            .chain(random)
            .map(|(start, choices)| random_game(start, &choices))
            .chain([captured_rook]);
        for game in games {
            check_game(&game).expect("agrees");
            for text in texts(game.position()) {
                if let Some(why) = explain_illegal(&game, &text) {
                    let kind = format!("{why:?}");
                    let kind = kind
                        .split([' ', '{', '('])
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    let kind = match &why {
                        Illegality::Castling { problem, .. } => {
                            let p = format!("{problem:?}");
                            format!(
                                "Castling/{}",
                                p.split([' ', '{']).next().unwrap_or_default()
                            )
                        }
                        _ => kind,
                    };
                    seen.insert(kind);
                }
            }
        }
        eprintln!("{seen:?}");
        for kind in [
            "NullMove",
            "Drop",
            "NoPiece",
            "NotYourPiece",
            "NotThatWay",
            "OwnPieceOnTarget",
            "Blocked",
            "PawnCapturesOnlyDiagonally",
            "PawnDiagonalWithoutCapture",
            "EnPassantNotNow",
            "PromotionMissing",
            "PromotionToKingOrPawn",
            "PromotionNotAllowed",
            "KingIntoAttack",
            "ExposesKing",
            "DoesNotAnswerCheck",
            "GameOver",
            "Castling/SquaresOccupied",
            "Castling/KingMoved",
            "Castling/RookMoved",
            "Castling/RookCaptured",
            "Castling/NoRightAtStart",
            "Castling/InCheck",
            "Castling/PassesAttacked",
            "Castling/LandsAttacked",
            "Castling/Notation",
        ] {
            assert!(seen.contains(kind), "{kind} never seen: {seen:?}");
        }
    }
}
