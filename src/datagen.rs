//! `qilin datagen`: self-play games at a fixed node budget per move, several
//! games at once (one per thread), written as `data::Record`s.
//!
//! Each game starts from a random book position (or the start position) and
//! a few random legal plies. A position is kept when the side to move is not
//! in check, the last move was not a capture, the move chosen is neither a
//! capture nor a promotion, and the score is not a mate score: quiet
//! positions, whose static evaluation should match the search. The result
//! is the rules' verdict (mate, stalemate, repetition, fifty moves, dead
//! position); to save time a game is also adjudicated when the score stays
//! beyond ±`WIN_SCORE` for `WIN_PLIES` plies (the leader wins) or, after
//! move 40, within ±`DRAW_SCORE` for `DRAW_PLIES` plies (a draw).

use crate::data::Record;
use crate::game::{Game, GameOver};
use crate::search::report::Silent;
use crate::search::tt::MATE_BOUND;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use shakmaty::{CastlingMode, Chess, Color, Move, Position};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const WIN_SCORE: i32 = 1000;
const WIN_PLIES: usize = 6;
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: usize = 12;
const DRAW_AFTER_MOVE: u32 = 40;

/// `qilin datagen`: self-play games for training data.
#[derive(Clone, Debug, clap::Args)]
pub struct Settings {
    /// File to write the positions to (32-byte records, see src/data.rs)
    #[arg(long, value_name = "FILE")]
    pub out: String,
    /// Games to play
    #[arg(long, default_value_t = 1000)]
    pub games: u64,
    /// Nodes searched for each move
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Games played at once, one per thread
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// EPD or FEN file of start positions, one per line (default: the start position)
    #[arg(long, value_name = "EPD")]
    pub book: Option<String>,
    /// Random legal plies played after the book position
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(0..=40))]
    pub random_plies: u8,
    /// Seed of the openings: the same seed plays the same games
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// A small deterministic generator (xorshift64*): openings must be
/// reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as usize % n.max(1)
    }
}

struct Totals {
    games: AtomicU64,
    positions: AtomicU64,
    white: AtomicU64,
    draws: AtomicU64,
    black: AtomicU64,
}

/// Runs the games; returns the number of positions written.
pub fn run(settings: &Settings) -> Result<u64, String> {
    let book: Vec<Chess> = match &settings.book {
        None => vec![Chess::default()],
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let positions: Vec<Chess> = text
                .lines()
                .filter_map(|l| Game::from_fen(l.trim(), CastlingMode::Standard).ok())
                .map(|g| g.position().clone())
                .collect();
            if positions.is_empty() {
                return Err(format!("{path}: no usable position"));
            }
            positions
        }
    };
    let file =
        std::fs::File::create(&settings.out).map_err(|e| format!("{}: {e}", settings.out))?;
    let writer = Mutex::new(std::io::BufWriter::new(file));
    let totals = Totals {
        games: AtomicU64::new(0),
        positions: AtomicU64::new(0),
        white: AtomicU64::new(0),
        draws: AtomicU64::new(0),
        black: AtomicU64::new(0),
    };
    let next_game = AtomicU64::new(0);
    let started = Instant::now();
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..settings.threads {
            scope.spawn(|| {
                let Some(mut engine) = Engine::new(1, 16) else {
                    *failure.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some("cannot allocate 16 MB".into());
                    return;
                };
                loop {
                    let index = next_game.fetch_add(1, Ordering::SeqCst);
                    if index >= settings.games {
                        return;
                    }
                    let mut rng = Rng::new(settings.seed ^ index.wrapping_mul(0x1000_0001));
                    // Each game from empty tables.
                    engine.clear();
                    let Some((records, result)) = play_game(settings, &book, &mut rng, &engine)
                    else {
                        continue;
                    };
                    let mut buffer = Vec::with_capacity(records.len() * crate::data::RECORD_SIZE);
                    for (position, score) in records {
                        buffer.extend_from_slice(
                            &Record {
                                position,
                                score,
                                result,
                            }
                            .encode(),
                        );
                    }
                    let n = (buffer.len() / crate::data::RECORD_SIZE) as u64;
                    if let Err(e) = writer
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .write_all(&buffer)
                    {
                        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
                        return;
                    }
                    let counter =
                        [&totals.black, &totals.draws, &totals.white][usize::from(result)];
                    counter.fetch_add(1, Ordering::SeqCst);
                    let positions = totals.positions.fetch_add(n, Ordering::SeqCst) + n;
                    let games = totals.games.fetch_add(1, Ordering::SeqCst) + 1;
                    if games.is_multiple_of(100) || games == settings.games {
                        report(
                            &totals,
                            positions,
                            games,
                            started,
                            usize::from(settings.threads),
                        );
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    writer
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .flush()
        .map_err(|e| e.to_string())?;
    let positions = totals.positions.load(Ordering::SeqCst);
    report(
        &totals,
        positions,
        totals.games.load(Ordering::SeqCst),
        started,
        usize::from(settings.threads),
    );
    Ok(positions)
}

fn report(totals: &Totals, positions: u64, games: u64, started: Instant, threads: usize) {
    let secs = started.elapsed().as_secs_f64().max(1e-3);
    eprintln!(
        "games {games} (+{} ={} -{}) positions {positions} in {secs:.0} s: {:.0} positions/s, {:.0} per thread",
        totals.white.load(Ordering::Relaxed),
        totals.draws.load(Ordering::Relaxed),
        totals.black.load(Ordering::Relaxed),
        positions as f64 / secs,
        positions as f64 / secs / threads as f64,
    );
}

/// Plays one game; returns the kept positions with their White-relative
/// scores, and the result (0 Black wins, 1 draw, 2 White wins). `None` when
/// the opening left no game to play.
fn play_game(
    settings: &Settings,
    book: &[Chess],
    rng: &mut Rng,
    engine: &Engine,
) -> Option<(Vec<(Chess, i16)>, u8)> {
    let mut game = Game::new(book[rng.below(book.len())].clone(), CastlingMode::Standard);
    for _ in 0..settings.random_plies {
        let moves = game.position().legal_moves();
        if moves.is_empty() {
            return None;
        }
        game.play(moves[rng.below(moves.len())]);
    }
    let limits = SearchLimits {
        nodes: Some(settings.nodes),
        ..SearchLimits::default()
    };
    let signals = Signals::default();
    let mut kept = Vec::new();
    let (mut win_run, mut draw_run) = (0usize, 0usize);
    let mut last: Option<Move> = None;
    let mut ply = 0;
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
        if ply == 0 && white.abs() > WIN_SCORE {
            return None;
        }
        let quiet = !pos.is_check()
            && !best.is_capture()
            && !best.is_promotion()
            && !last.is_some_and(|m| m.is_capture())
            && score.abs() < MATE_BOUND;
        if quiet {
            kept.push((
                pos.clone(),
                white.clamp(-i32::from(i16::MAX), i32::from(i16::MAX)) as i16,
            ));
        }
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
        last = Some(best);
        ply += 1;
    };
    Some((kept, result))
}
