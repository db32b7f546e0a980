//! What a run of self-play data holds: games, positions, the share the
//! quiet filter keeps, bytes a position, and how varied its openings are
//! (distinct start positions, and the share of distinct positions among the
//! games that reach a given ply after their start). A game's record starts
//! after its opening (book line and random plies), so ply 0 is the first
//! position the engine searched.
//! `qilin data-stats` prints it; datagen settings are compared by it.

use super::{Filter, GameRecord, read_chunk, training_files};
use crate::game::position_key;
use shakmaty::Position;
use std::collections::HashSet;
use std::io;
use std::path::Path;

/// The figures of one run folder (or one game file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    pub files: usize,
    pub bytes: u64,
    pub games: u64,
    /// Every ply of every game.
    pub positions: u64,
    /// The positions `Filter::quiet` keeps.
    pub quiet: u64,
    /// Distinct start positions: the openings the engine was handed.
    pub distinct_starts: u64,
    /// The ply after the start at which games are compared.
    pub ply: usize,
    /// Games at least `ply` plies long (the position after `ply` plies exists).
    pub reached: u64,
    /// Distinct positions (by key, with the side to move) among them at `ply`.
    pub distinct: u64,
}

impl RunStats {
    /// Distinct positions at `ply` as a share of the games that reach it.
    pub fn distinct_share(&self) -> f64 {
        self.distinct as f64 / self.reached.max(1) as f64
    }

    /// Compressed bytes of the files per position stored.
    pub fn bytes_per_position(&self) -> f64 {
        self.bytes as f64 / self.positions.max(1) as f64
    }
}

/// Adds up `games`, comparing openings at `ply` (plies from each game's
/// start position: datagen's book line and random plies come before it).
#[cfg(test)]
pub fn game_stats<'a>(
    games: impl IntoIterator<Item = &'a GameRecord>,
    ply: usize,
    quiet: &Filter,
) -> RunStats {
    let mut stats = RunStats {
        ply,
        ..RunStats::default()
    };
    let mut seen = Seen::default();
    for game in games {
        add_game(&mut stats, &mut seen, game, quiet);
    }
    seen.count_into(&mut stats);
    stats
}

/// Keys of the start positions and of the positions at the compared ply.
#[derive(Default)]
struct Seen {
    starts: HashSet<u64>,
    at_ply: HashSet<u64>,
}

impl Seen {
    fn count_into(&self, stats: &mut RunStats) {
        stats.distinct_starts = self.starts.len() as u64;
        stats.distinct = self.at_ply.len() as u64;
    }
}

fn add_game(stats: &mut RunStats, seen: &mut Seen, game: &GameRecord, quiet: &Filter) {
    seen.starts.insert(position_key(&game.start));
    stats.games += 1;
    stats.positions += game.plies.len() as u64;
    stats.quiet += game.positions().filter(|p| quiet.keeps(p)).count() as u64;
    if let Some(opening) = game.plies.get(..stats.ply) {
        let mut position = game.start.clone();
        for ply in opening {
            // Moves were checked legal when the game was decoded.
            position.play_unchecked(ply.played);
        }
        stats.reached += 1;
        seen.at_ply.insert(position_key(&position));
    }
}

/// The figures of the chunk files under `path` (or of the one file).
pub fn run_stats(path: &Path, ply: usize, quiet: &Filter) -> io::Result<RunStats> {
    let files = training_files(path)?;
    let mut stats = RunStats {
        ply,
        files: files.len(),
        ..RunStats::default()
    };
    let mut seen = Seen::default();
    for file in &files {
        stats.bytes += std::fs::metadata(file)?.len();
        for game in read_chunk(file)? {
            add_game(&mut stats, &mut seen, &game?, quiet);
        }
    }
    seen.count_into(&mut stats);
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Ply;
    use crate::score::MATE_BOUND;
    use shakmaty::{Chess, uci::UciMove};

    fn game(moves: &[&str]) -> GameRecord {
        let start = Chess::default();
        let mut pos = start.clone();
        let mut plies = Vec::new();
        for m in moves {
            let m = m
                .parse::<UciMove>()
                .expect("uci")
                .to_move(&pos)
                .expect("legal");
            plies.push(Ply {
                played: m,
                score: 0,
            });
            pos.play_unchecked(m);
        }
        GameRecord {
            start,
            plies,
            result: 1,
        }
    }

    #[test]
    fn transpositions_count_once_and_short_games_not_at_all() {
        let games = [
            game(&["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]),
            // The same position after two plies by another order.
            game(&["g1f3", "b8c6", "e2e4", "e7e5", "f1b5"]),
            game(&["d2d4", "d7d5", "c2c4", "e7e6"]),
            game(&["c2c4", "e7e5"]),
        ];
        let quiet = Filter::quiet(MATE_BOUND);
        let s = game_stats(&games, 4, &quiet);
        assert_eq!((s.games, s.positions), (4, 16));
        // Three games reach ply 4; the first two stand on the same position there.
        assert_eq!((s.reached, s.distinct), (3, 2));
        assert_eq!(s.distinct_starts, 1);
        assert!((s.distinct_share() - 2.0 / 3.0).abs() < 1e-12);
    }
}
