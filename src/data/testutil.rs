//! Games for the tests: random legal playouts.

use super::games::{GameRecord, Ply};
use crate::rng::XorShift64Star;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position, Role};

/// Castling both ways, en passant, every promotion (with and without a
/// capture), a side in check, counters not at their start.
pub const FENS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 3 17",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 99 250",
    "4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 40",
];

pub fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position(CastlingMode::Standard).ok())
        .unwrap_or_else(|| panic!("bad test FEN {fen}"))
}

/// Material from White's view, in centipawns: a score that moves like a
/// search score (it is not one).
fn material(position: &Chess) -> i16 {
    let board = position.board();
    let mut total = 0i32;
    for (role, value) in [
        (Role::Pawn, 100),
        (Role::Knight, 300),
        (Role::Bishop, 300),
        (Role::Rook, 500),
        (Role::Queen, 900),
    ] {
        let pieces = board.by_role(role);
        total += value
            * (i32::try_from((pieces & board.white()).count()).unwrap_or(0)
                - i32::try_from((pieces & board.black()).count()).unwrap_or(0));
    }
    total as i16
}

/// A random legal game from `start`: `first` (an index into the legal moves)
/// then random moves until the game ends or `max_plies`; scores are the
/// material plus noise, with a mate score now and then.
pub fn random_game(
    start: &Chess,
    first: Option<usize>,
    max_plies: usize,
    rng: &mut XorShift64Star,
) -> GameRecord {
    let mut position = start.clone();
    let mut plies = Vec::new();
    while plies.len() < max_plies {
        let moves = position.legal_moves();
        if moves.is_empty() || position.is_insufficient_material() {
            break;
        }
        let pick = match first {
            Some(i) if plies.is_empty() => i % moves.len(),
            _ => rng.below(moves.len()),
        };
        let played = moves[pick];
        let score = match rng.below(50) {
            0 => 31_990,
            1 => -31_995,
            _ => material(&position).saturating_add(rng.below(41) as i16 - 20),
        };
        plies.push(Ply { played, score });
        position.play_unchecked(played);
    }
    GameRecord {
        start: start.clone(),
        plies,
        result: rng.below(3) as u8,
    }
}

/// Games from every test FEN, one per first move, then random plies.
pub fn many_games(max_plies: usize, seed: u64) -> Vec<GameRecord> {
    let mut rng = XorShift64Star::new(seed | 1);
    let mut games = Vec::new();
    for fen in FENS {
        let start = position(fen);
        for first in 0..start.legal_moves().len() {
            games.push(random_game(&start, Some(first), max_plies, &mut rng));
        }
    }
    games
}
