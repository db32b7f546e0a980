//! The property test: random games (standard, Chess960 and seed positions
//! with castling, en passant and promotions at hand), every well-formed
//! move text in them; each explanation is checked against facts computed
//! here, independently of the code under test.

use super::testing::game_in;
use super::*;
use crate::game::{Game, GameOver};
use proptest::prelude::*;
use shakmaty::uci::UciMove;
use shakmaty::{
    Bitboard, Board, CastlingMode, CastlingSide, Chess, EnPassantMode, Move, Piece, Position, Rank,
    Role, Setup, Square, attacks,
};

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
        return promotion.is_none() && attacks::attacks(from, piece, board.occupied()).contains(to);
    }
    let forward = i32::from(us.relative_rank(to.rank())) - i32::from(us.relative_rank(from.rank()));
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
                && (piece.piece.role != Role::Pawn || us.relative_rank(to.rank()) != Rank::Eighth)
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
                CastlingProblem::NoRightAtStart => game.start().castles().rook(us, *side).is_none(),
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
                        && castles
                            .rook(us, *side)
                            .is_some_and(|rook| !pos.is_legal(Move::Castle { king: from, rook }))
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
                agrees(game, &text, &why).map_err(|e| format!("{text} in {}: {e}", game.fen()))?;
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
