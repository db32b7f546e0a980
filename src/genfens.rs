//! `genfens N seed S book <None|file>`: opening positions for a match, as
//! OpenBench's client asks an engine for them (`qilin "genfens …" "quit"`,
//! one `info string genfens <FEN>` line each).
//!
//! Each position is a few random legal plies from the start position (or
//! from a random position of the book), kept when a short search finds it
//! playable: the side to move has a legal move and the score is within
//! ±`MAX_SCORE` centipawns. The plies are drawn from a generator seeded by
//! `S` and the search counts nodes, not time, on one thread with a cleared
//! table, so the same seed gives the same positions (with the same net).

use crate::game::Game;
use crate::nnue::Network;
use crate::rng::SplitMix64;
use crate::search::report::Silent;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use shakmaty::{CastlingMode, Chess, Position};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Random plies from the start position: 8 or 9, so that either side may
/// be to move.
const START_PLIES: usize = 8;
/// Random plies after a book position: 2 or 3 (the book chose the opening).
const BOOK_PLIES: usize = 2;
/// Nodes of the search that judges a position.
pub const NODES: u64 = 5000;
/// The largest |score| of a kept position, in centipawns.
pub const MAX_SCORE: i32 = 300;
/// Rejected tries in a row after which generation gives up (a book of lost
/// positions): an error instead of a hang.
const MAX_TRIES: u32 = 1000;

/// What `genfens` was asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub count: u64,
    pub seed: u64,
    /// An EPD or FEN file, one position a line; `None` for the start position.
    pub book: Option<String>,
}

/// The largest book read: far beyond any EPD book of openings (the
/// 2,000-line book is 100 KB), short of what would strain memory.
const MAX_BOOK_BYTES: u64 = 256 << 20;

/// The start positions of the random plies: the book's, or the start
/// position. Each line is a FEN, or an EPD line whose first four fields are
/// the position (operations such as `hmvc 0;` after them are ignored);
/// lines that are neither are skipped.
pub fn load_book(path: Option<&str>) -> Result<Vec<Chess>, String> {
    let Some(path) = path else {
        return Ok(vec![Chess::default()]);
    };
    let text = crate::files::read_regular_text(std::path::Path::new(path), MAX_BOOK_BYTES)
        .map_err(|e| format!("{path}: {e}"))?;
    let positions: Vec<Chess> = text.lines().filter_map(book_position).collect();
    if positions.is_empty() {
        return Err(format!("{path}: no usable position"));
    }
    Ok(positions)
}

fn book_position(line: &str) -> Option<Chess> {
    let line = line.trim();
    let epd = || {
        line.split_whitespace()
            .take(4)
            .collect::<Vec<_>>()
            .join(" ")
    };
    Game::from_fen(line, CastlingMode::Standard)
        .or_else(|_| Game::from_fen(&epd(), CastlingMode::Standard))
        .ok()
        .map(|g| g.position().clone())
}

/// Writes `request.count` FENs to `out`, each as it is found; stops early
/// (with fewer) when `signals.stop` is set. An unreadable book, or a book
/// from which no playable position comes, is an error.
pub fn generate(
    request: &Request,
    net: Arc<Network>,
    signals: &Signals,
    out: &dyn Fn(&str),
) -> Result<(), String> {
    let book = load_book(request.book.as_deref())?;
    let plies = if request.book.is_some() {
        BOOK_PLIES
    } else {
        START_PLIES
    };
    let mut engine = Engine::new(1, 1)?;
    engine.set_net(net);
    crate::endgames::prepare();
    let mut rng = SplitMix64::new(request.seed);
    let limits = SearchLimits {
        nodes: Some(NODES),
        ..SearchLimits::default()
    };
    let quiet = Signals::default();
    for _ in 0..request.count {
        let mut tries = 0;
        let fen = loop {
            if signals.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            tries += 1;
            if tries > MAX_TRIES {
                return Err(format!(
                    "no playable position in {MAX_TRIES} tries (|score| <= {MAX_SCORE} cp after {NODES} nodes)"
                ));
            }
            let start = book[rng.below(book.len())].clone();
            let Some(game) = random_plies(start, plies + rng.below(2), &mut rng) else {
                continue;
            };
            // Each judgement from an empty table, as if searched alone:
            // the result does not depend on the positions before it.
            engine.clear();
            let found = engine.search(&SearchRequest::new(game.clone(), limits), &Silent, &quiet);
            let playable = found.best.is_some()
                && found.score.is_some_and(|s| s.abs() <= MAX_SCORE)
                && game.rule_status().ended.is_empty();
            if playable {
                break game.fen();
            }
        };
        out(&fen);
    }
    Ok(())
}

/// `start` after `plies` random legal moves, or `None` when the game ends
/// on the way.
fn random_plies(start: Chess, plies: usize, rng: &mut SplitMix64) -> Option<Game> {
    let mut game = Game::new(start, CastlingMode::Standard);
    for _ in 0..plies {
        let moves = game.position().legal_moves();
        if moves.is_empty() {
            return None;
        }
        game.play(moves[rng.below(moves.len())]);
    }
    Some(game)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fens(request: &Request) -> Vec<String> {
        let found = std::sync::Mutex::new(Vec::new());
        let result = generate(
            request,
            crate::nnue::embedded(),
            &Signals::default(),
            &|fen| found.lock().expect("not poisoned").push(fen.to_string()),
        );
        assert_eq!(result, Ok(()));
        found.into_inner().expect("not poisoned")
    }

    #[test]
    fn the_seed_fixes_the_positions() {
        let request = |seed| Request {
            count: 4,
            seed,
            book: None,
        };
        let first = fens(&request(7));
        assert_eq!(first.len(), 4);
        assert_eq!(fens(&request(7)), first);
        assert_ne!(fens(&request(8)), first);
        for fen in &first {
            let game = Game::from_fen(fen, CastlingMode::Standard).expect("a legal FEN");
            // 8 or 9 plies from the start: move 5 with White or Black to move.
            assert_eq!(game.position().fullmoves().get(), 5, "{fen}");
        }
    }

    #[test]
    fn book_lines_may_be_fen_or_epd() {
        let epd = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - hmvc 0; fmvn 1;";
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        assert_eq!(book_position(epd), book_position(fen));
        assert!(book_position(fen).is_some_and(|p| p.turn() == shakmaty::Color::Black));
        assert_eq!(book_position("# a comment"), None);
        assert_eq!(book_position(""), None);
    }

    #[test]
    fn a_missing_book_is_an_error() {
        let request = Request {
            count: 1,
            seed: 1,
            book: Some("/no/such/book.epd".into()),
        };
        let err = generate(
            &request,
            crate::nnue::embedded(),
            &Signals::default(),
            &|_| {},
        )
        .expect_err("no book");
        assert!(err.starts_with("/no/such/book.epd: "), "{err}");
    }
}
