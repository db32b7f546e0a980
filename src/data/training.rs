//! Positions for a trainer, out of game files or legacy record files alike.
//!
//! A game file keeps every position of a game, so the choice of training
//! positions (quiet ones, no mate scores, not the opening) is made here, at
//! reading time, by a `Filter`. Legacy records are single positions already
//! filtered by the old datagen: they cannot be turned into games (the moves
//! between them are lost), so they are read as they are, through the same
//! item type, with the ply and the moves unknown; a filter passes what it
//! cannot judge.

use super::games::{GameReader, GameRecord, MAGIC, read_up_to};
use super::record::{RECORD_SIZE, Record};
use shakmaty::{Chess, Move, Position};
use std::collections::VecDeque;
use std::io::{self, Read};
use std::path::Path;

/// A position with its search score and its game's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainingPosition {
    pub position: Chess,
    /// Centipawns from White's view.
    pub score: i16,
    /// From White's view: 0 loss, 1 draw, 2 win.
    pub result: u8,
    /// Plies since the game's recorded start (after its book and random
    /// plies); `None` for a legacy record.
    pub ply: Option<u16>,
    /// The move played from this position; `None` for a legacy record.
    pub played: Option<Move>,
    /// The move that led here; `None` at a game's start or for a legacy
    /// record.
    pub previous: Option<Move>,
}

/// Which positions a trainer skips. A test that needs a move a legacy record
/// does not have passes it: those were filtered when they were made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The side to move is in check.
    pub skip_in_check: bool,
    /// The move played is a capture or a promotion.
    pub skip_noisy_move: bool,
    /// The move that led here was a capture.
    pub skip_after_capture: bool,
    /// Skip |score| ≥ this (mate scores); `None` keeps every score. The
    /// engine's bound is `score::MATE_BOUND`.
    pub mate_bound: Option<i32>,
    /// Skip plies below this (see `TrainingPosition::ply`).
    pub min_ply: u16,
}

impl Filter {
    /// Keeps everything.
    #[cfg(test)]
    pub const NONE: Filter = Filter {
        skip_in_check: false,
        skip_noisy_move: false,
        skip_after_capture: false,
        mate_bound: None,
        min_ply: 0,
    };

    /// What the old datagen kept: not in check, a quiet move played, no
    /// capture just before, no mate score.
    pub fn quiet(mate_bound: i32) -> Filter {
        Filter {
            skip_in_check: true,
            skip_noisy_move: true,
            skip_after_capture: true,
            mate_bound: Some(mate_bound),
            min_ply: 0,
        }
    }

    pub fn keeps(&self, p: &TrainingPosition) -> bool {
        let noisy = |m: Move| m.is_capture() || m.is_promotion();
        !(self.skip_in_check && p.position.is_check()
            || self.skip_noisy_move && p.played.is_some_and(noisy)
            || self.skip_after_capture && p.previous.is_some_and(|m| m.is_capture())
            || self
                .mate_bound
                .is_some_and(|bound| i32::from(p.score).abs() >= bound)
            || p.ply.is_some_and(|ply| ply < self.min_ply))
    }
}

impl GameRecord {
    /// Every position of the game before a move, unfiltered.
    pub fn positions(&self) -> impl Iterator<Item = TrainingPosition> + '_ {
        let mut previous = None;
        self.replay().enumerate().map(move |(i, (position, ply))| {
            let p = TrainingPosition {
                position,
                score: ply.score,
                result: self.result,
                ply: u16::try_from(i).ok(),
                played: Some(ply.played),
                previous,
            };
            previous = Some(ply.played);
            p
        })
    }
}

/// Legacy 32-byte records from `R`. A record that does not decode is an
/// `InvalidData` error and the next record follows; a partial record at the
/// end is an `UnexpectedEof` error and the end.
pub struct LegacyReader<R: Read> {
    inner: R,
    records: u64,
    done: bool,
}

impl<R: Read> LegacyReader<R> {
    pub fn new(inner: R) -> LegacyReader<R> {
        LegacyReader {
            inner,
            records: 0,
            done: false,
        }
    }
}

impl<R: Read> Iterator for LegacyReader<R> {
    type Item = io::Result<TrainingPosition>;

    fn next(&mut self) -> Option<io::Result<TrainingPosition>> {
        if self.done {
            return None;
        }
        let mut bytes = [0u8; RECORD_SIZE];
        let got = match read_up_to(&mut self.inner, &mut bytes) {
            Ok(got) => got,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        self.records += 1;
        let n = self.records;
        if got < RECORD_SIZE {
            self.done = true;
            return (got > 0).then(|| {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("record {n}: {got} of {RECORD_SIZE} bytes"),
                ))
            });
        }
        Some(
            Record::decode(&bytes)
                .map(|r| TrainingPosition {
                    position: r.position,
                    score: r.score,
                    result: r.result,
                    ply: None,
                    played: None,
                    previous: None,
                })
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("record {n}: not a legal position"),
                    )
                }),
        )
    }
}

enum Source<R: Read> {
    Games(GameReader<R>, VecDeque<TrainingPosition>),
    Legacy(LegacyReader<R>),
}

/// The positions of a game file or a legacy file that pass a filter.
/// Errors are passed on (see `GameReader` and `LegacyReader` for which ones
/// end the iteration).
pub struct TrainingReader<R: Read> {
    source: Source<R>,
    filter: Filter,
}

impl<R: Read> TrainingReader<R> {
    pub fn games(reader: GameReader<R>, filter: Filter) -> TrainingReader<R> {
        TrainingReader {
            source: Source::Games(reader, VecDeque::new()),
            filter,
        }
    }

    pub fn legacy(reader: LegacyReader<R>, filter: Filter) -> TrainingReader<R> {
        TrainingReader {
            source: Source::Legacy(reader),
            filter,
        }
    }
}

impl<R: Read> Iterator for TrainingReader<R> {
    type Item = io::Result<TrainingPosition>;

    fn next(&mut self) -> Option<io::Result<TrainingPosition>> {
        loop {
            let item = match &mut self.source {
                Source::Legacy(records) => records.next()?,
                Source::Games(games, pending) => match pending.pop_front() {
                    Some(p) => Ok(p),
                    None => {
                        match games.next()? {
                            Ok(game) => pending.extend(game.positions()),
                            Err(e) => return Some(Err(e)),
                        }
                        continue;
                    }
                },
            };
            match item {
                Ok(p) if !self.filter.keeps(&p) => continue,
                other => return Some(other),
            }
        }
    }
}

/// Opens a training file: games (raw or compressed as chunk files are) or
/// legacy records (raw; an xz-packed one must be unpacked first, `xz -dk`),
/// told apart by their first bytes.
pub fn open_training(
    path: &Path,
    filter: Filter,
) -> io::Result<TrainingReader<Box<dyn Read + Send>>> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    // Only a regular file: opening a FIFO would block for ever.
    crate::files::regular_file_len(path).map_err(named)?;
    let file = io::BufReader::new(std::fs::File::open(path).map_err(named)?);
    let mut reader = super::chunks::decompressed(file).map_err(named)?;
    let mut start = [0u8; 6];
    let got = read_up_to(&mut reader, &mut start).map_err(named)?;
    let prefix = start.get(..got).unwrap_or_default();
    if prefix == super::chunks::XZ_MAGIC {
        return Err(named(io::Error::new(
            io::ErrorKind::InvalidData,
            "xz-packed: unpack it first (xz -dk)",
        )));
    }
    let whole: Box<dyn Read + Send> = Box::new(io::Cursor::new(prefix.to_vec()).chain(reader));
    if prefix == MAGIC {
        Ok(TrainingReader::games(
            GameReader::new(whole).map_err(named)?,
            filter,
        ))
    } else {
        Ok(TrainingReader::legacy(LegacyReader::new(whole), filter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::games::{GameWriter, Ply};
    use crate::data::testutil::{many_games, position};
    use crate::score::MATE_BOUND;
    use shakmaty::uci::UciMove;

    /// capture, after a capture, promotion, quiet, quiet giving check, in
    /// check with a mate score, quiet giving check, in check.
    fn hand_made() -> GameRecord {
        let start = position("4k3/1P6/8/3p4/4P3/8/8/R3K3 w Q - 0 1");
        let mut p = start.clone();
        let mut plies = Vec::new();
        for (uci, score) in [
            ("e4d5", 50),
            ("e8d7", 60),
            ("b7b8q", 900),
            ("d7e7", 880),
            ("a1a7", 870),
            ("e7f6", 31_500),
            ("b8f8", 200),
            ("f6g5", 300),
        ] {
            let played = uci
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&p).ok())
                .unwrap_or_else(|| panic!("{uci}"));
            plies.push(Ply { played, score });
            p.play_unchecked(played);
        }
        GameRecord {
            start,
            plies,
            result: 2,
        }
    }

    fn kept(filter: Filter) -> Vec<u16> {
        hand_made()
            .positions()
            .filter(|p| filter.keeps(p))
            .filter_map(|p| p.ply)
            .collect()
    }

    #[test]
    fn the_filter_drops_exactly_what_it_should() {
        let game = hand_made();
        let checks: Vec<bool> = game.positions().map(|p| p.position.is_check()).collect();
        assert_eq!(
            checks,
            [false, false, false, false, false, true, false, true]
        );
        assert_eq!(kept(Filter::NONE), [0, 1, 2, 3, 4, 5, 6, 7]);
        let only = |f: fn(&mut Filter)| {
            let mut filter = Filter::NONE;
            f(&mut filter);
            kept(filter)
        };
        assert_eq!(only(|f| f.skip_in_check = true), [0, 1, 2, 3, 4, 6]);
        assert_eq!(only(|f| f.skip_noisy_move = true), [1, 3, 4, 5, 6, 7]);
        assert_eq!(only(|f| f.skip_after_capture = true), [0, 2, 3, 4, 5, 6, 7]);
        assert_eq!(
            only(|f| f.mate_bound = Some(MATE_BOUND)),
            [0, 1, 2, 3, 4, 6, 7]
        );
        // The bound itself is a mate score: 880 goes, 870 stays.
        assert_eq!(only(|f| f.mate_bound = Some(880)), [0, 1, 4, 6, 7]);
        assert_eq!(only(|f| f.min_ply = 3), [3, 4, 5, 6, 7]);
        assert_eq!(kept(Filter::quiet(MATE_BOUND)), [3, 4, 6]);
    }

    #[test]
    fn positions_carry_the_game() {
        let game = hand_made();
        let positions: Vec<TrainingPosition> = game.positions().collect();
        assert_eq!(positions.len(), 8);
        assert_eq!(positions[0].position, game.start);
        assert_eq!(positions[0].previous, None);
        for (i, p) in positions.iter().enumerate() {
            assert_eq!(p.score, game.plies[i].score);
            assert_eq!(p.played, Some(game.plies[i].played));
            assert_eq!(p.result, 2);
            if i > 0 {
                assert_eq!(p.previous, Some(game.plies[i - 1].played));
                let mut after = positions[i - 1].position.clone();
                after.play_unchecked(game.plies[i - 1].played);
                assert_eq!(p.position, after);
            }
        }
    }

    #[test]
    fn the_training_reader_filters_game_files() {
        let games = many_games(60, 9);
        let mut writer = GameWriter::new(Vec::new()).expect("header");
        for g in &games {
            writer.write_game(g).expect("write");
        }
        let bytes = writer.into_inner().expect("flush");
        let filter = Filter::quiet(MATE_BOUND);
        let expected: Vec<TrainingPosition> = games
            .iter()
            .flat_map(|g| {
                g.positions()
                    .filter(|p| filter.keeps(p))
                    .collect::<Vec<_>>()
            })
            .collect();
        let reader = GameReader::new(&bytes[..]).expect("header");
        let got: Vec<TrainingPosition> = TrainingReader::games(reader, filter)
            .collect::<io::Result<_>>()
            .expect("read");
        assert!(got.len() > 1000);
        assert_eq!(got, expected);
        // A cut file: the positions of the whole games, then the error.
        let reader = GameReader::new(&bytes[..bytes.len() - 1]).expect("header");
        let items: Vec<io::Result<TrainingPosition>> =
            TrainingReader::games(reader, Filter::NONE).collect();
        let last = games.last().map_or(0, |g| g.plies.len());
        let total: usize = games.iter().map(|g| g.plies.len()).sum();
        assert_eq!(items.len(), total - last + 1);
        assert!(items[..items.len() - 1].iter().all(Result::is_ok));
        assert!(items.last().is_some_and(|e| {
            e.as_ref()
                .is_err_and(|e| e.kind() == io::ErrorKind::UnexpectedEof)
        }));
    }

    fn legacy_fixture() -> (Vec<Record>, Vec<u8>) {
        let records: Vec<Record> = hand_made()
            .positions()
            .map(|p| Record {
                position: p.position,
                score: p.score,
                result: 1,
            })
            .collect();
        let bytes = records.iter().flat_map(|r| r.encode()).collect();
        (records, bytes)
    }

    #[test]
    fn legacy_records_read_through_the_same_interface() {
        let (records, bytes) = legacy_fixture();
        let got: Vec<TrainingPosition> =
            TrainingReader::legacy(LegacyReader::new(&bytes[..]), Filter::NONE)
                .collect::<io::Result<_>>()
                .expect("read");
        assert_eq!(got.len(), records.len());
        for (p, r) in got.iter().zip(&records) {
            assert_eq!(
                (&p.position, p.score, p.result),
                (&r.position, r.score, r.result)
            );
            assert_eq!((p.ply, p.played, p.previous), (None, None, None));
        }
        // What needs the moves passes; the rest still applies.
        let quiet =
            TrainingReader::legacy(LegacyReader::new(&bytes[..]), Filter::quiet(MATE_BOUND))
                .filter(Result::is_ok)
                .count();
        assert_eq!(quiet, records.len() - 2);
        // A damaged record is an error and reading goes on; a partial one
        // at the end is the last error.
        let mut damaged = bytes.clone();
        damaged[32..40].fill(0xff);
        damaged.truncate(damaged.len() - 5);
        let items: Vec<io::Result<TrainingPosition>> = LegacyReader::new(&damaged[..]).collect();
        let kinds: Vec<Option<io::ErrorKind>> = items
            .iter()
            .map(|i| i.as_ref().err().map(io::Error::kind))
            .collect();
        let mut expected = vec![None; records.len()];
        expected[1] = Some(io::ErrorKind::InvalidData);
        expected[records.len() - 1] = Some(io::ErrorKind::UnexpectedEof);
        assert_eq!(kinds, expected);
    }

    #[test]
    fn open_training_tells_the_formats_apart() {
        let dir = std::env::temp_dir().join(format!("qilin-open-training-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let (records, legacy) = legacy_fixture();
        let game = hand_made();
        let mut writer = GameWriter::new(Vec::new()).expect("header");
        writer.write_game(&game).expect("write");
        let raw = writer.into_inner().expect("flush");
        let packed = zstd::encode_all(&raw[..], 3).expect("zstd");
        for (name, bytes, n) in [
            ("legacy.bin", &legacy, records.len()),
            ("games.qgames", &raw, 8),
            ("games.qgames.zst", &packed, 8),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, bytes).expect("write");
            let items: Vec<TrainingPosition> = open_training(&path, Filter::NONE)
                .expect("open")
                .collect::<io::Result<_>>()
                .expect("read");
            assert_eq!(items.len(), n, "{name}");
        }
        let path = dir.join("legacy.bin.xz");
        std::fs::write(&path, b"\xfd7zXZ\x00\x00\x04").expect("write");
        assert!(open_training(&path, Filter::NONE).is_err());
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    /// The self-play records of commit 85c0906 kept in the repository
    /// (`data/legacy`, zstd-packed): read through `open_training` as
    /// `qilin train` reads them, and what datagen kept at 85c0906.
    #[test]
    fn legacy_records_in_the_repository_read() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/legacy/selfplay-85c0906-s9101.bin.zst");
        let mut n = 0;
        for item in open_training(&path, Filter::NONE)
            .expect("open")
            .take(10_000)
        {
            let p = item.expect("a good record");
            assert!(!p.position.is_check());
            assert!(i32::from(p.score).abs() < MATE_BOUND);
            assert!(p.result <= 2);
            n += 1;
        }
        assert_eq!(n, 10_000);
    }
}
