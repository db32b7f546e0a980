//! Numbered chunk files of games for a data-generation run, safe to stop.
//!
//! A run writes into its own folder: `chunk-0001.qgames.zst`,
//! `chunk-0002.qgames.zst`, … each a game file (`games.rs`) compressed with
//! zstd, covering a fixed number of consecutive game indices, and beside
//! each a `chunk-0001.meta` text file (below). A chunk is written under a
//! `.tmp` name, synced and renamed only when complete, its metadata first:
//! a chunk file that exists is whole, so a run cut short loses at most the
//! chunk in progress. Games are numbered from a seed, so a restarted run
//! skips `games_done()` indices and carries on with the next chunk number.
//!
//! Games arrive in the order threads finish them; the writer puts them back
//! in index order (holding the early finishers in memory), so that "the
//! first k indices are done" stays true. An index whose game was thrown
//! away is handed in as `None` and counts as done.
//!
//! Compression: measured on 1000 games of this engine's self-play (5000
//! nodes a move, the start position and 8 random plies, adjudicated as
//! datagen does; 105,558 positions, 106 plies a game) in one chunk, in bytes
//! a position: raw 3.33, zstd -19 1.85, xz -9e 1.81, gzip -9 1.91 (chunks of
//! 100 games: zstd 1.89). The same positions as legacy records: 32 raw, 7.7
//! with xz -9e. zstd was taken: 2% more bytes than xz, but it decompresses
//! several times faster (a trainer reads every chunk each epoch), and the
//! crate builds its own copy of the C library with cc. On random playouts
//! (`measure_random_playouts`): raw 3.13, zstd -19 1.86, xz -9e 1.75.
//!
//! `chunk-NNNN.meta`, one `key value` per line: `format qgames 1`, `chunk`,
//! `file`, `first_game`, `game_indices`, `games`, `positions`, `bytes` (of
//! the compressed file), `commit`, `command` (line breaks made spaces).

use super::games::{GameRecord, GameWriter, VERSION};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

pub(crate) const XZ_MAGIC: &[u8; 6] = b"\xfd7zXZ\x00";
const ZSTD_MAGIC: &[u8; 4] = b"\x28\xb5\x2f\xfd";
const LEVEL: i32 = 19;
const EXTENSION: &str = "qgames.zst";

type Compressed = GameWriter<zstd::Encoder<'static, BufWriter<File>>>;

struct Chunk {
    number: u32,
    first_game: u64,
    writer: Compressed,
}

/// Writes a run's games into numbered chunk files; see the module doc.
pub struct ChunkWriter {
    dir: PathBuf,
    games_per_chunk: u64,
    commit: String,
    command: String,
    next_chunk: u32,
    /// The next game index to write; all before it are written or skipped.
    next_game: u64,
    /// Game indices in complete chunks.
    done: u64,
    current: Option<Chunk>,
    early: BTreeMap<u64, Option<GameRecord>>,
}

impl ChunkWriter {
    /// Opens the run folder `dir` (creating it), finds the complete chunks
    /// already there and removes the leftovers of a chunk in progress.
    /// `commit` and `command` go into each chunk's metadata.
    pub fn open(
        dir: &Path,
        games_per_chunk: u64,
        commit: &str,
        command: &str,
    ) -> io::Result<ChunkWriter> {
        if games_per_chunk == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a chunk holds at least one game",
            ));
        }
        fs::create_dir_all(dir)?;
        let mut chunks = Vec::new();
        for entry in fs::read_dir(dir)? {
            let name = entry?.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(number) = chunk_number(name, EXTENSION) {
                chunks.push(number);
            } else if name.ends_with(".tmp") && name.starts_with("chunk-") {
                fs::remove_file(dir.join(name))?;
            }
        }
        chunks.sort_unstable();
        let mut done = 0;
        for (i, &number) in chunks.iter().enumerate() {
            let damaged = |what: String| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: chunk {number}: {what}", dir.display()),
                )
            };
            if u32::try_from(i + 1).ok() != Some(number) {
                return Err(damaged(format!("chunk {} is missing", i + 1)));
            }
            let meta = fs::read_to_string(dir.join(meta_name(number)))
                .map_err(|e| damaged(format!("metadata: {e}")))?;
            let field = |key: &str| {
                meta.lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse::<u64>().ok())
                    .ok_or_else(|| damaged(format!("metadata without {key}")))
            };
            if field("first_game")? != done {
                return Err(damaged(format!("does not start at game {done}")));
            }
            done += field("game_indices")?;
        }
        Ok(ChunkWriter {
            dir: dir.to_path_buf(),
            games_per_chunk,
            commit: one_line(commit),
            command: one_line(command),
            next_chunk: u32::try_from(chunks.len() + 1).unwrap_or(u32::MAX),
            next_game: done,
            done,
            current: None,
            early: BTreeMap::new(),
        })
    }

    /// Game indices in complete chunks (including indices that gave no
    /// game): a resumed run starts at this index.
    pub fn games_done(&self) -> u64 {
        self.done
    }

    /// Hands in the game of `index`, or `None` when that index gave none.
    /// Each index from `games_done()` on must come exactly once, in any
    /// order; a chunk is completed as soon as its indices are all in.
    pub fn add(&mut self, index: u64, game: Option<&GameRecord>) -> io::Result<()> {
        if index < self.next_game || self.early.contains_key(&index) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("game {index} was already handed in"),
            ));
        }
        self.early.insert(index, game.cloned());
        while let Some(game) = self.early.remove(&self.next_game) {
            if let Some(game) = game {
                self.chunk()?.writer.write_game(&game)?;
            } else {
                self.chunk()?;
            }
            self.next_game += 1;
            if self.next_game - self.done == self.games_per_chunk {
                self.complete()?;
            }
        }
        Ok(())
    }

    /// Completes the chunk in progress, shorter than the others. An error if
    /// games are still waiting for an earlier index (those are not written).
    pub fn finish(mut self) -> io::Result<()> {
        if self.current.is_some() {
            self.complete()?;
        }
        match self.early.keys().next() {
            None => Ok(()),
            Some(index) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "game {} never came; games from {index} on not written",
                    self.next_game
                ),
            )),
        }
    }

    fn chunk(&mut self) -> io::Result<&mut Chunk> {
        if self.current.is_none() {
            let number = self.next_chunk;
            let file = File::create(self.dir.join(tmp_name(&chunk_name(number))))?;
            let encoder = zstd::Encoder::new(BufWriter::new(file), LEVEL)?;
            self.current = Some(Chunk {
                number,
                first_game: self.next_game,
                writer: GameWriter::new(encoder)?,
            });
        }
        self.current
            .as_mut()
            .ok_or_else(|| io::Error::other("no chunk"))
    }

    fn complete(&mut self) -> io::Result<()> {
        let Some(chunk) = self.current.take() else {
            return Ok(());
        };
        let (games, positions) = (chunk.writer.games(), chunk.writer.positions());
        let file = chunk
            .writer
            .into_inner()?
            .finish()?
            .into_inner()
            .map_err(|e| e.into_error())?;
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        drop(file);
        let name = chunk_name(chunk.number);
        let meta = format!(
            "format qgames {VERSION}\nchunk {}\nfile {name}\nfirst_game {}\ngame_indices {}\n\
             games {games}\npositions {positions}\nbytes {bytes}\ncommit {}\ncommand {}\n",
            chunk.number,
            chunk.first_game,
            self.next_game - chunk.first_game,
            self.commit,
            self.command,
        );
        let meta_path = self.dir.join(meta_name(chunk.number));
        let meta_tmp = self.dir.join(tmp_name(&meta_name(chunk.number)));
        let mut file = File::create(&meta_tmp)?;
        file.write_all(meta.as_bytes())?;
        file.sync_all()?;
        fs::rename(&meta_tmp, &meta_path)?;
        fs::rename(self.dir.join(tmp_name(&name)), self.dir.join(&name))?;
        // The renames themselves must reach the disk (where a folder can be
        // opened as a file: not on Windows).
        if let Ok(dir) = File::open(&self.dir) {
            dir.sync_all()?;
        }
        self.done = self.next_game;
        self.next_chunk = self.next_chunk.saturating_add(1);
        Ok(())
    }
}

fn chunk_name(number: u32) -> String {
    format!("chunk-{number:04}.{EXTENSION}")
}

fn meta_name(number: u32) -> String {
    format!("chunk-{number:04}.meta")
}

fn tmp_name(name: &str) -> String {
    format!("{name}.tmp")
}

/// `Some(n)` for `chunk-n.<extension>`.
/// The data files a path names: a run folder's complete chunks in order, or
/// the one file itself.
pub fn training_files(path: &Path) -> io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut chunks = Vec::new();
    for entry in fs::read_dir(path)? {
        let name = entry?.file_name();
        if let Some(number) = name.to_str().and_then(|n| chunk_number(n, EXTENSION)) {
            chunks.push(number);
        }
    }
    chunks.sort_unstable();
    Ok(chunks
        .into_iter()
        .map(|n| path.join(chunk_name(n)))
        .collect())
}

fn chunk_number(name: &str, extension: &str) -> Option<u32> {
    let digits = name
        .strip_prefix("chunk-")?
        .strip_suffix(extension)?
        .strip_suffix('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// `reader`, decompressed when it starts as a zstd stream does.
pub(crate) fn decompressed<R: BufRead + Send + 'static>(
    mut reader: R,
) -> io::Result<Box<dyn Read + Send>> {
    if reader.fill_buf()?.starts_with(ZSTD_MAGIC) {
        Ok(Box::new(zstd::Decoder::with_buffer(reader)?))
    } else {
        Ok(Box::new(reader))
    }
}

/// The games of a chunk file (or of any game file, compressed or not).
pub fn read_chunk(path: &Path) -> io::Result<super::GameReader<Box<dyn Read + Send>>> {
    let file = BufReader::new(File::open(path)?);
    super::GameReader::new(decompressed(file)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::testutil::{position, random_game};
    use crate::rng::XorShift64Star;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("qilin-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// Games by index; every seventh index gives none.
    fn games(n: usize) -> Vec<Option<GameRecord>> {
        let mut rng = XorShift64Star::new(99);
        let start = position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        (0..n)
            .map(|i| (i % 7 != 3).then(|| random_game(&start, None, 20 + i % 13, &mut rng)))
            .collect()
    }

    fn read_run(dir: &Path) -> Vec<GameRecord> {
        let mut all = Vec::new();
        for number in 1.. {
            let path = dir.join(chunk_name(number));
            if !path.exists() {
                break;
            }
            for game in read_chunk(&path).expect("open") {
                all.push(game.expect("a good game"));
            }
        }
        all
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("dir")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn games_come_back_in_index_order_whatever_order_they_came_in() {
        let dir = TempDir::new("chunks-order");
        let games = games(25);
        let mut writer =
            ChunkWriter::open(&dir.0, 10, "abc1234", "qilin datagen\n--x").expect("open");
        assert_eq!(writer.games_done(), 0);
        // Two threads' worth of disorder.
        let mut order: Vec<usize> = (0..25).collect();
        for pair in order.chunks_mut(2) {
            pair.reverse();
        }
        for i in order {
            writer.add(i as u64, games[i].as_ref()).expect("add");
        }
        assert_eq!(writer.games_done(), 20);
        writer.finish().expect("finish");
        let expected: Vec<GameRecord> = games.iter().flatten().cloned().collect();
        assert_eq!(read_run(&dir.0), expected);
        assert_eq!(
            names(&dir.0),
            [
                "chunk-0001.meta",
                "chunk-0001.qgames.zst",
                "chunk-0002.meta",
                "chunk-0002.qgames.zst",
                "chunk-0003.meta",
                "chunk-0003.qgames.zst",
            ]
        );
        let meta = fs::read_to_string(dir.0.join("chunk-0002.meta")).expect("meta");
        let in_chunk = games[10..20].iter().flatten();
        let positions: usize = in_chunk.clone().map(|g| g.plies.len()).sum();
        for line in [
            "format qgames 1".to_string(),
            "chunk 2".into(),
            "first_game 10".into(),
            "game_indices 10".into(),
            format!("games {}", in_chunk.count()),
            format!("positions {positions}"),
            "commit abc1234".into(),
            "command qilin datagen --x".into(),
        ] {
            assert!(meta.lines().any(|l| l == line), "{line} in\n{meta}");
        }
        assert!(
            ChunkWriter::open(&dir.0, 10, "", "")
                .expect("reopen")
                .games_done()
                == 25
        );
    }

    #[test]
    fn a_run_cut_short_resumes_after_its_last_whole_chunk() {
        let dir = TempDir::new("chunks-resume");
        let games = games(30);
        let mut writer = ChunkWriter::open(&dir.0, 10, "c", "first").expect("open");
        for (i, g) in games.iter().enumerate().take(16) {
            writer.add(i as u64, g.as_ref()).expect("add");
        }
        // Cut short: chunk 2 is still a temporary file.
        drop(writer);
        assert!(names(&dir.0).contains(&"chunk-0002.qgames.zst.tmp".to_string()));
        let mut writer = ChunkWriter::open(&dir.0, 10, "c", "second").expect("reopen");
        assert_eq!(writer.games_done(), 10);
        assert!(!names(&dir.0).iter().any(|n| n.ends_with(".tmp")));
        assert!(writer.add(9, games[9].as_ref()).is_err());
        for (i, g) in games.iter().enumerate().skip(10) {
            writer.add(i as u64, g.as_ref()).expect("add");
        }
        assert!(writer.add(12, games[12].as_ref()).is_err());
        writer.finish().expect("finish");
        let expected: Vec<GameRecord> = games.iter().flatten().cloned().collect();
        assert_eq!(read_run(&dir.0), expected);
        // A chunk cut short (copied in part, say): an error when opening
        // it or after its first games.
        let whole = fs::read(dir.0.join(chunk_name(3))).expect("read");
        let cut = dir.0.join("cut.qgames.zst");
        for at in [whole.len() / 2, whole.len() - 1] {
            fs::write(&cut, &whole[..at]).expect("write");
            if let Ok(reader) = read_chunk(&cut) {
                let items: Vec<io::Result<GameRecord>> = reader.collect();
                assert!(items.last().is_some_and(Result::is_err), "cut at {at}");
                assert!(items.iter().rev().skip(1).all(Result::is_ok));
            }
        }
        fs::remove_file(&cut).expect("remove");
        // A missing chunk is not papered over.
        fs::remove_file(dir.0.join(chunk_name(2))).expect("remove");
        assert!(ChunkWriter::open(&dir.0, 10, "c", "third").is_err());
    }

    #[test]
    fn finishing_with_a_game_missing_is_an_error() {
        let dir = TempDir::new("chunks-gap");
        let games = games(5);
        let mut writer = ChunkWriter::open(&dir.0, 10, "c", "c").expect("open");
        for i in [0, 1, 3, 4] {
            writer.add(i as u64, games[i].as_ref()).expect("add");
        }
        assert!(writer.finish().is_err());
        // The games before the gap are kept.
        assert_eq!(read_run(&dir.0).len(), 2);
        assert!(ChunkWriter::open(&dir.0, 0, "c", "c").is_err());
    }

    #[test]
    fn chunk_names() {
        assert_eq!(chunk_name(7), "chunk-0007.qgames.zst");
        assert_eq!(chunk_number("chunk-0007.qgames.zst", EXTENSION), Some(7));
        assert_eq!(
            chunk_number("chunk-12345.qgames.zst", EXTENSION),
            Some(12345)
        );
        assert_eq!(chunk_number("chunk-0007.qgames.zst.tmp", EXTENSION), None);
        assert_eq!(chunk_number("chunk-.qgames.zst", EXTENSION), None);
        assert_eq!(chunk_number("chunk-+7.qgames.zst", EXTENSION), None);
    }
}

/// Sizes on random playouts (not self-play: moves uniformly random, scores
/// material ± 20): `cargo test --release --lib measure_random -- --ignored
/// --nocapture`. Leaves the raw file in the temporary folder for other
/// compressors.
#[cfg(test)]
#[test]
#[ignore]
fn measure_random_playouts() {
    use crate::data::testutil::random_game;
    use crate::rng::XorShift64Star;
    use shakmaty::{Chess, Position};
    let mut rng = XorShift64Star::new(2024);
    let mut writer = GameWriter::new(Vec::new()).expect("header");
    for _ in 0..2000 {
        let mut start = Chess::default();
        for _ in 0..8 {
            let moves = start.legal_moves();
            start.play_unchecked(moves[rng.below(moves.len())]);
        }
        let game = random_game(&start, None, 300, &mut rng);
        writer.write_game(&game).expect("write");
    }
    let positions = writer.positions() as f64;
    let games = writer.games();
    let raw = writer.into_inner().expect("flush");
    let path = std::env::temp_dir().join("qilin-random-playouts.qgames");
    fs::write(&path, &raw).expect("write");
    let per = |bytes: usize| bytes as f64 / positions;
    println!(
        "{games} games, {positions} positions, raw {:.3} bytes a position ({})",
        per(raw.len()),
        path.display()
    );
    for level in [3, 9, 19] {
        let packed = zstd::encode_all(&raw[..], level).expect("zstd");
        println!("zstd -{level}: {:.3} bytes a position", per(packed.len()));
    }
}
