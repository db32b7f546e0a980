//! `qilin datagen`: self-play games at a fixed node budget per move, several
//! games at once (one per thread), written whole (start position, and a move
//! and a score per ply, then the result) into numbered chunk files of a run
//! folder (`crate::data`: a run cut short loses at most the chunk in
//! progress, and the same command resumes it).
//!
//! Each game starts from a random book position (or the start position) and
//! a few random legal plies (a search that finds the start lopsided
//! rejects it). The result is the rules' verdict (mate,
//! stalemate, repetition, fifty moves, dead position); to save time a game is
//! also adjudicated when the score stays beyond ±`WIN_SCORE` for `WIN_PLIES`
//! plies (the leader wins) or, after move 40, within ±`DRAW_SCORE` for
//! `DRAW_PLIES` plies (a draw). Which positions train what is decided when
//! the data is read (`data::Filter`), not here.

use crate::data::{ChunkWriter, Filter, GameRecord, Ply};
use crate::game::{Game, GameOver};
use crate::nnue::Network;
use crate::rng::XorShift64Star;
use crate::score::MATE_BOUND;
use crate::search::report::Silent;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use shakmaty::{CastlingMode, Chess, Color, Position};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

const WIN_SCORE: i32 = 1000;
const WIN_PLIES: usize = 6;
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: usize = 12;
const DRAW_AFTER_MOVE: u32 = 40;

/// `qilin datagen`: self-play games for training data.
#[derive(Clone, Debug, clap::Args)]
pub struct Settings {
    /// Run folder for the chunk files (created; a run found there is resumed)
    #[arg(long, value_name = "DIR")]
    pub out: String,
    /// Games to play in all (a resumed run counts the games already written)
    #[arg(long, default_value_t = 1000)]
    pub games: u64,
    /// Games in each chunk file: a run cut short loses at most one chunk
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk_games: u64,
    /// Nodes searched for each move (with --soft-nodes: the hard cap)
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// A soft node limit: each search finishes the iteration in which it
    /// passes this many nodes (--nodes stays the hard cap)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub soft_nodes: Option<u64>,
    /// Games played at once, one per thread
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// EPD or FEN file of start positions, one per line (default: the start position)
    #[arg(long, value_name = "EPD")]
    pub book: Option<String>,
    /// Random legal plies played after the book position
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(0..=40))]
    pub random_plies: u8,
    /// Up to this many more random plies, the number drawn per game (so
    /// that openings differ in length and side to move)
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=40))]
    pub random_plies_spread: u8,
    /// A game whose first search scores the start beyond this many
    /// centipawns for either side is not played
    #[arg(long, default_value_t = WIN_SCORE, value_parser = clap::value_parser!(i32).range(1..=30000))]
    pub opening_max_score: i32,
    /// Seed of the openings: the same seed plays the same games
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The commit the binary was built from, recorded in each chunk's metadata
    #[arg(long, default_value = "unknown")]
    pub commit: String,
}

/// The generator of game `index`'s opening: reproducible from the seed, so
/// that a resumed run plays the same games.
fn game_rng(seed: u64, index: u64) -> XorShift64Star {
    let seed = seed ^ index.wrapping_mul(0x1000_0001);
    XorShift64Star::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
}

#[derive(Default)]
struct Totals {
    games: AtomicU64,
    /// Positions stored: every ply of every game.
    positions: AtomicU64,
    /// Positions the quiet filter keeps (what trainers have used so far).
    quiet: AtomicU64,
    white: AtomicU64,
    draws: AtomicU64,
    black: AtomicU64,
}

impl Totals {
    fn count(&self, game: &GameRecord) {
        let quiet = Filter::quiet(MATE_BOUND);
        let kept = game.positions().filter(|p| quiet.keeps(p)).count() as u64;
        self.quiet.fetch_add(kept, Ordering::Relaxed);
        self.positions
            .fetch_add(game.plies.len() as u64, Ordering::Relaxed);
        let counter = [&self.black, &self.draws, &self.white][usize::from(game.result.min(2))];
        counter.fetch_add(1, Ordering::Relaxed);
        self.games.fetch_add(1, Ordering::Relaxed);
    }

    fn report(&self, started: Instant, threads: usize) {
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        let positions = self.positions.load(Ordering::Relaxed);
        let quiet = self.quiet.load(Ordering::Relaxed);
        eprintln!(
            "games {} (+{} ={} -{}) positions {positions} ({quiet} quiet) in {secs:.0} s: {:.0} positions/s ({:.0} quiet), {:.0} per thread",
            self.games.load(Ordering::Relaxed),
            self.white.load(Ordering::Relaxed),
            self.draws.load(Ordering::Relaxed),
            self.black.load(Ordering::Relaxed),
            positions as f64 / secs,
            quiet as f64 / secs,
            positions as f64 / secs / threads as f64,
        );
    }
}

/// Runs the games into the run folder, resuming after its complete chunks,
/// searching with `net`; returns the positions of the games played now.
pub fn run(settings: &Settings, net: Arc<Network>) -> Result<u64, String> {
    let book = crate::genfens::load_book(settings.book.as_deref())?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let chunks = ChunkWriter::open(
        Path::new(&settings.out),
        settings.chunk_games,
        &settings.commit,
        &command,
    )
    .map_err(|e| format!("{}: {e}", settings.out))?;
    let first = chunks.games_done();
    if first > 0 {
        eprintln!("{}: resuming after game {first}", settings.out);
    }
    let chunks = Mutex::new(chunks);
    let totals = Totals::default();
    let next_game = AtomicU64::new(first);
    let started = Instant::now();
    let failure: Mutex<Option<String>> = Mutex::new(None);
    let threads = usize::from(settings.threads);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let fail = |e: String| *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                let mut engine = match Engine::new(1, 16) {
                    Ok(engine) => engine,
                    Err(e) => return fail(e),
                };
                engine.set_net(net.clone());
                loop {
                    let index = next_game.fetch_add(1, Ordering::SeqCst);
                    if index >= settings.games
                        || failure.lock().unwrap_or_else(|e| e.into_inner()).is_some()
                    {
                        return;
                    }
                    let mut rng = game_rng(settings.seed, index);
                    // Each game from empty tables.
                    engine.clear();
                    let game = play_game(settings, &book, &mut rng, &engine);
                    if let Some(game) = &game {
                        totals.count(game);
                    }
                    let added = chunks
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .add(index, game.as_ref());
                    if let Err(e) = added {
                        return fail(format!("{}: {e}", settings.out));
                    }
                    let games = totals.games.load(Ordering::Relaxed);
                    if game.is_some() && games.is_multiple_of(100) {
                        totals.report(started, threads);
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    chunks
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .finish()
        .map_err(|e| format!("{}: {e}", settings.out))?;
    totals.report(started, threads);
    Ok(totals.positions.load(Ordering::SeqCst))
}

/// Plays one game from a random opening: every ply with its White-relative
/// score, and the result. `None` when the opening left no game to play.
fn play_game(
    settings: &Settings,
    book: &[Chess],
    rng: &mut XorShift64Star,
    engine: &Engine,
) -> Option<GameRecord> {
    let mut game = Game::new(book[rng.below(book.len())].clone(), CastlingMode::Standard);
    // No draw for the spread when there is none: runs made before it
    // existed resume with the same games.
    let spread = match settings.random_plies_spread {
        0 => 0,
        s => rng.below(usize::from(s) + 1),
    };
    for _ in 0..usize::from(settings.random_plies) + spread {
        let moves = game.position().legal_moves();
        if moves.is_empty() {
            return None;
        }
        game.play(moves[rng.below(moves.len())]);
    }
    let limits = SearchLimits {
        nodes: Some(settings.nodes),
        soft_nodes: settings.soft_nodes,
        ..SearchLimits::default()
    };
    let signals = Signals::default();
    let start = game.position().clone();
    let mut plies = Vec::new();
    let (mut win_run, mut draw_run) = (0usize, 0usize);
    let result = loop {
        let status = game.rule_status();
        if let Some(end) = status.ended.first() {
            break match end {
                GameOver::Checkmate {
                    winner: Color::White,
                } => 2,
                GameOver::Checkmate {
                    winner: Color::Black,
                } => 0,
                _ => 1,
            };
        }
        if !status.claims.is_empty() {
            break 1;
        }
        let found = engine.search(&SearchRequest::new(game.clone(), limits), &Silent, &signals);
        let (Some(best), Some(score)) = (found.best, found.score) else {
            return None;
        };
        let pos = game.position();
        let white = if pos.turn() == Color::White {
            score
        } else {
            -score
        };
        // An opening the random plies spoiled teaches nothing.
        if plies.is_empty() && white.abs() > settings.opening_max_score {
            return None;
        }
        // The last ply before an adjudication is kept too: its move was
        // chosen and scored, only not played.
        plies.push(Ply {
            played: best,
            score: white.clamp(-i32::from(i16::MAX), i32::from(i16::MAX)) as i16,
        });
        win_run = if white.abs() >= WIN_SCORE {
            win_run + 1
        } else {
            0
        };
        if win_run >= WIN_PLIES {
            break if white > 0 { 2 } else { 0 };
        }
        draw_run = if white.abs() <= DRAW_SCORE {
            draw_run + 1
        } else {
            0
        };
        if game.position().fullmoves().get() >= DRAW_AFTER_MOVE && draw_run >= DRAW_PLIES {
            break 1;
        }
        game.play(best);
    };
    Some(GameRecord {
        start,
        plies,
        result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draws of a game's opening, as datagen made them before the
    /// generators had a module of their own: a resumed run replays them.
    #[test]
    fn openings_replay_the_same_draws() {
        let mut rng = game_rng(7, 3);
        let draws: Vec<usize> = (0..6).map(|_| rng.below(1000)).collect();
        assert_eq!(draws, [629, 605, 507, 819, 827, 912]);
    }
}
