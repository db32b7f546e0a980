//! Whole self-play games: the start position once, then one byte for the
//! move and two for the score per ply. A 32-byte record per position stored
//! the board again and again; here a position costs 3 bytes (plus 35 per
//! game), and the positions a filter would have dropped at generation time
//! are kept, so what a trainer skips can change without new games.
//!
//! File: a header, then games one after another, each self-delimiting.
//!
//! | bytes              | field                                                      |
//! | ------------------ | ---------------------------------------------------------- |
//! | header 0..6        | magic `QGAMES`                                             |
//! | header 6..8        | format version, u16 little-endian: 1                       |
//! | game 0..2          | n, the number of plies, u16 little-endian                  |
//! | game 2             | result from White's view: 0 loss, 1 draw, 2 win            |
//! | game 3..31         | start position: bytes 0..28 of the legacy record (see     |
//! |                    | `record.rs`), castling rights as standard chess            |
//! | game 31..31+n      | per ply, the move played: its index in the legal moves    |
//! |                    | sorted canonically (below)                                 |
//! | game 31+n..31+2n   | per ply, the low byte of the score code (below)            |
//! | game 31+2n..31+3n  | per ply, its high byte                                     |
//! | game 31+3n..35+3n  | CRC-32 (IEEE) of game bytes 0..31+3n, u32 little-endian   |
//!
//! Canonical order: by from square, then to square (a1 = 0 … h8 = 63), then
//! promotion (none, knight, bishop, rook, queen); castling counts as the
//! king's two-square move (e1g1). The index does not depend on shakmaty's
//! move generation order, which may change between versions; at most 218
//! moves are legal, so a byte is enough.
//!
//! Score: the search score of the position before the move, i16 centipawns
//! from White's view (as in the legacy records), mate scores as the engine
//! gives them. Stored as its change from the previous ply's score (0 before
//! the first), wrapping in i16, zigzag-coded to u16 (0, -1, 1, -2, … →
//! 0, 1, 2, 3, …), low bytes then high bytes. From White's view a score
//! changes little from ply to ply, so most high bytes are 0: on 1000
//! self-play games (see `chunks.rs`) this layout took zstd -19 from 2.33 to
//! 1.85 bytes a position (xz -9e from 2.05 to 1.81) against plain i16
//! scores.
//!
//! The checksum makes damage an error rather than wrong positions; a game
//! cut short by the end of the file is reported as such (`UnexpectedEof`),
//! so a reader can keep the games before it.

use super::record::{POSITION_SIZE, decode_position, encode_position};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, MoveList, Position};
use std::io::{self, Read, Write};

pub(crate) const MAGIC: &[u8; 6] = b"QGAMES";
pub(crate) const VERSION: u16 = 1;
const HEADER_SIZE: usize = 8;
/// Ply count, result, start position.
const GAME_HEAD: usize = 3 + POSITION_SIZE;
const CRC_SIZE: usize = 4;

/// One move of a game and the search score of the position it was played in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ply {
    pub played: Move,
    /// Centipawns from White's view; mate scores as the engine gives them.
    pub score: i16,
}

/// A finished game. Equality compares positions as shakmaty does (without
/// move counters); the format keeps the counters too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// Any legal standard-chess position.
    pub start: Chess,
    /// At most 65,535.
    pub plies: Vec<Ply>,
    /// From White's view: 0 loss, 1 draw, 2 win.
    pub result: u8,
}

impl GameRecord {
    /// The positions of the game before each ply, with the ply.
    pub fn replay(&self) -> impl Iterator<Item = (Chess, &Ply)> + '_ {
        let mut position = self.start.clone();
        self.plies.iter().map(move |ply| {
            let before = position.clone();
            // The moves were checked legal when the game was decoded or
            // written; a hand-built illegal one only spoils later positions.
            position.play_unchecked(ply.played);
            (before, ply)
        })
    }
}

/// The legal moves of `position` in the canonical order of the format.
pub(crate) fn canonical_moves(position: &Chess) -> MoveList {
    let mut moves = position.legal_moves();
    moves.sort_unstable_by_key(|&m| canonical_key(m));
    moves
}

fn canonical_key(m: Move) -> u32 {
    match m.to_uci(CastlingMode::Standard) {
        UciMove::Normal {
            from,
            to,
            promotion,
        } => (u32::from(from) << 9) | (u32::from(to) << 3) | promotion.map_or(0, |r| r as u32),
        // Not produced by standard chess.
        UciMove::Put { .. } | UciMove::Null => u32::MAX,
    }
}

fn invalid_input(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn invalid_data(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// The bytes of one game, checksum included.
pub(crate) fn encode_game(game: &GameRecord) -> io::Result<Vec<u8>> {
    let n = u16::try_from(game.plies.len())
        .map_err(|_| invalid_input(format!("{} plies: at most 65,535", game.plies.len())))?;
    if game.result > 2 {
        return Err(invalid_input(format!("result {}: 0, 1 or 2", game.result)));
    }
    let start = encode_position(&game.start);
    // What a reader will get back must be the same position, counters and
    // all (a half-move clock past 255 or a Chess960 castling right would not
    // survive).
    let back = decode_position(&start, CastlingMode::Standard);
    if back.map(|p| p.to_setup(EnPassantMode::Legal))
        != Some(game.start.to_setup(EnPassantMode::Legal))
    {
        return Err(invalid_input(
            "start position not representable (counters or castling rights)".into(),
        ));
    }
    let plies = game.plies.len();
    let mut out = Vec::with_capacity(GAME_HEAD + 3 * plies + CRC_SIZE);
    out.extend_from_slice(&n.to_le_bytes());
    out.push(game.result);
    out.extend_from_slice(&start);
    let mut position = game.start.clone();
    for (i, ply) in game.plies.iter().enumerate() {
        let moves = canonical_moves(&position);
        let index = moves
            .iter()
            .position(|&m| m == ply.played)
            .and_then(|index| u8::try_from(index).ok())
            .ok_or_else(|| invalid_input(format!("ply {i}: illegal move {:?}", ply.played)))?;
        out.push(index);
        position.play_unchecked(ply.played);
    }
    let codes: Vec<[u8; 2]> = score_codes(game.plies.iter().map(|p| p.score)).collect();
    out.extend(codes.iter().map(|&[low, _]| low));
    out.extend(codes.iter().map(|&[_, high]| high));
    out.extend_from_slice(&crc32(&out).to_le_bytes());
    Ok(out)
}

/// Reads the game whose bytes are `body` (checksum excluded, already checked).
fn decode_game(body: &[u8]) -> Result<GameRecord, String> {
    let (head, rest) = body
        .split_first_chunk::<GAME_HEAD>()
        .ok_or("shorter than a game")?;
    let (&[n0, n1, result], start) = head.split_first_chunk::<3>().ok_or("shorter than a game")?;
    let n = usize::from(u16::from_le_bytes([n0, n1]));
    let start: &[u8; POSITION_SIZE] = start.try_into().map_err(|_| "shorter than a game")?;
    if result > 2 {
        return Err(format!("result {result}"));
    }
    let start = decode_position(start, CastlingMode::Standard)
        .ok_or("the start position is not a legal position")?;
    if rest.len() != 3 * n {
        return Err(format!("{} bytes for {n} plies", rest.len()));
    }
    let (indices, codes) = rest.split_at_checked(n).ok_or("short")?;
    let (low, high) = codes.split_at_checked(n).ok_or("short")?;
    let scores = scores(low.iter().zip(high).map(|(&l, &h)| [l, h]));
    let mut plies = Vec::with_capacity(n);
    let mut position = start.clone();
    for (i, (&index, score)) in indices.iter().zip(scores).enumerate() {
        let moves = canonical_moves(&position);
        let &played = moves.get(usize::from(index)).ok_or_else(|| {
            format!(
                "ply {i}: move index {index} but {} legal moves",
                moves.len()
            )
        })?;
        plies.push(Ply { played, score });
        position.play_unchecked(played);
    }
    Ok(GameRecord {
        start,
        plies,
        result,
    })
}

/// The stored form of each score: zigzag-coded change from the previous
/// one, little-endian.
fn score_codes(scores: impl Iterator<Item = i16>) -> impl Iterator<Item = [u8; 2]> {
    let mut previous = 0i16;
    scores.map(move |score| {
        let change = score.wrapping_sub(previous);
        previous = score;
        (((change << 1) ^ (change >> 15)) as u16).to_le_bytes()
    })
}

/// The inverse of `score_codes`; every code is some score.
fn scores(codes: impl Iterator<Item = [u8; 2]>) -> impl Iterator<Item = i16> {
    let mut previous = 0i16;
    codes.map(move |code| {
        let code = u16::from_le_bytes(code);
        let change = ((code >> 1) as i16) ^ -((code & 1) as i16);
        previous = previous.wrapping_add(change);
        previous
    })
}

/// Appends finished games to `W` (a file, a compressor, a buffer).
pub struct GameWriter<W: Write> {
    inner: W,
    games: u64,
    positions: u64,
}

impl<W: Write> GameWriter<W> {
    /// Writes the file header.
    pub fn new(mut inner: W) -> io::Result<GameWriter<W>> {
        inner.write_all(MAGIC)?;
        inner.write_all(&VERSION.to_le_bytes())?;
        Ok(GameWriter {
            inner,
            games: 0,
            positions: 0,
        })
    }

    /// `InvalidInput`, with nothing written, for a game the format cannot
    /// hold: an illegal move, more than 65,535 plies, a start position with
    /// counters past the format's (half-move clock 255, move 65,535).
    pub fn write_game(&mut self, game: &GameRecord) -> io::Result<()> {
        let bytes = encode_game(game)?;
        self.inner.write_all(&bytes)?;
        self.games += 1;
        self.positions += game.plies.len() as u64;
        Ok(())
    }

    /// Games written so far.
    pub fn games(&self) -> u64 {
        self.games
    }

    /// Positions (plies) written so far.
    pub fn positions(&self) -> u64 {
        self.positions
    }

    /// Flushes and gives back the writer (a compressor still needs finishing).
    pub fn into_inner(mut self) -> io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

/// Games from `R`, in order. An error ends the iteration: after a damaged
/// length nothing further can be trusted. `UnexpectedEof` means the file
/// ends inside a game (a run cut short): the games before it are good.
pub struct GameReader<R: Read> {
    inner: R,
    games: u64,
    done: bool,
}

impl<R: Read> GameReader<R> {
    /// Reads and checks the file header.
    pub fn new(mut inner: R) -> io::Result<GameReader<R>> {
        let mut header = [0u8; HEADER_SIZE];
        let got = read_up_to(&mut inner, &mut header)?;
        let (magic, version) = header
            .split_first_chunk::<6>()
            .ok_or_else(|| invalid_data("header".into()))?;
        if got < HEADER_SIZE || magic != MAGIC {
            return Err(invalid_data("not a game file (no QGAMES header)".into()));
        }
        let version = match *version {
            [a, b] => u16::from_le_bytes([a, b]),
            _ => 0,
        };
        if version != VERSION {
            return Err(invalid_data(format!(
                "game file version {version}; this build reads {VERSION}"
            )));
        }
        Ok(GameReader {
            inner,
            games: 0,
            done: false,
        })
    }

    /// Games read so far (good ones).
    pub fn games(&self) -> u64 {
        self.games
    }

    fn next_game(&mut self) -> io::Result<Option<GameRecord>> {
        let game = self.games + 1;
        let truncated = || {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("game {game}: the data ends inside it"),
            )
        };
        let mut head = [0u8; GAME_HEAD];
        match read_up_to(&mut self.inner, &mut head)? {
            0 => return Ok(None),
            GAME_HEAD => {}
            _ => return Err(truncated()),
        }
        let n = match head {
            [a, b, ..] => usize::from(u16::from_le_bytes([a, b])),
        };
        let mut bytes = head.to_vec();
        bytes.resize(GAME_HEAD + 3 * n + CRC_SIZE, 0);
        let tail = bytes.get_mut(GAME_HEAD..).unwrap_or_default();
        if read_up_to(&mut self.inner, tail)? < tail.len() {
            return Err(truncated());
        }
        let (body, crc) = bytes.split_last_chunk::<CRC_SIZE>().ok_or_else(truncated)?;
        if crc32(body) != u32::from_le_bytes(*crc) {
            return Err(invalid_data(format!("game {game}: checksum mismatch")));
        }
        decode_game(body)
            .map(Some)
            .map_err(|e| invalid_data(format!("game {game}: {e}")))
    }
}

impl<R: Read> Iterator for GameReader<R> {
    type Item = io::Result<GameRecord>;

    fn next(&mut self) -> Option<io::Result<GameRecord>> {
        if self.done {
            return None;
        }
        match self.next_game() {
            Ok(Some(game)) => {
                self.games += 1;
                Some(Ok(game))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Fills `buf` as far as the data goes; the number of bytes read.
pub(crate) fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..) {
        if rest.is_empty() {
            break;
        }
        match reader.read(rest) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// CRC-32 as in zip, gzip and PNG (reflected polynomial 0xedb88320).
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |c, &b| {
        CRC_TABLE[usize::from((c as u8) ^ b)] ^ (c >> 8)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::testutil::{FENS, many_games, position, random_game};
    use crate::rng::XorShift64Star;
    use proptest::prelude::*;
    use shakmaty::Role;
    use shakmaty::fen::Fen;

    fn write_all(games: &[GameRecord]) -> Vec<u8> {
        let mut writer = GameWriter::new(Vec::new()).expect("header");
        for game in games {
            writer.write_game(game).expect("write");
        }
        writer.into_inner().expect("flush")
    }

    fn read_all(bytes: &[u8]) -> (Vec<GameRecord>, Option<io::Error>) {
        let mut games = Vec::new();
        let reader = match GameReader::new(bytes) {
            Ok(r) => r,
            Err(e) => return (games, Some(e)),
        };
        for game in reader {
            match game {
                Ok(g) => games.push(g),
                Err(e) => return (games, Some(e)),
            }
        }
        (games, None)
    }

    fn fen(p: &Chess) -> String {
        Fen::from_position(p, EnPassantMode::Legal).to_string()
    }

    #[test]
    fn random_games_round_trip_exactly() {
        let games = many_games(120, 7);
        assert!(games.len() > 100);
        let bytes = write_all(&games);
        let plies: usize = games.iter().map(|g| g.plies.len()).sum();
        assert_eq!(bytes.len(), 8 + 35 * games.len() + 3 * plies);
        let (back, error) = read_all(&bytes);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(back, games);
        for (a, b) in games.iter().zip(&back) {
            assert_eq!(fen(&a.start), fen(&b.start));
            // Every position along the way, counters included.
            for ((pa, _), (pb, _)) in a.replay().zip(b.replay()) {
                assert_eq!(fen(&pa), fen(&pb));
            }
        }
        // The test games do contain what they are meant to.
        let all: Vec<Move> = games
            .iter()
            .flat_map(|g| g.plies.iter().map(|p| p.played))
            .collect();
        assert!(all.iter().any(|m| m.is_castle()));
        assert!(all.iter().any(|m| m.is_en_passant()));
        for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
            assert!(all.iter().any(|m| m.promotion() == Some(role)), "{role:?}");
        }
    }

    #[test]
    fn an_empty_file_and_an_empty_game() {
        let (back, error) = read_all(&write_all(&[]));
        assert!(back.is_empty() && error.is_none());
        let mated = GameRecord {
            start: position("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"),
            plies: Vec::new(),
            result: 2,
        };
        let bytes = write_all(std::slice::from_ref(&mated));
        assert_eq!(bytes.len(), 8 + 35);
        assert_eq!(read_all(&bytes).0, vec![mated]);
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let start = Chess::default();
        let e4 = canonical_moves(&start)
            .into_iter()
            .find(|m| m.to_uci(CastlingMode::Standard).to_string() == "e2e4")
            .expect("e2e4");
        let game = GameRecord {
            start: start.clone(),
            plies: vec![Ply {
                played: e4,
                score: -300,
            }],
            result: 1,
        };
        let bytes = write_all(&[game]);
        assert_eq!(&bytes[0..8], b"QGAMES\x01\x00");
        assert_eq!(&bytes[8..11], &[1, 0, 1]);
        assert_eq!(&bytes[11..39], &encode_position(&start));
        // b1a3 b1c3 g1f3 g1h3 a2a3 a2a4 … e2e3 e2e4: index 13.
        assert_eq!(bytes[39], 13);
        // -300 from 0: zigzag 599 = 0x0257, low byte then high byte.
        assert_eq!(&bytes[40..42], &[0x57, 0x02]);
        assert_eq!(&bytes[42..46], &crc32(&bytes[8..42]).to_le_bytes());
        assert_eq!(bytes.len(), 46);
        // The check value of CRC-32 (IEEE).
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn castling_is_indexed_as_the_kings_two_square_move() {
        let p = position(FENS[4]);
        let keys: Vec<String> = canonical_moves(&p)
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_by_key(|u| {
            let b = u.as_bytes();
            let sq = |f: u8, r: u8| (r - b'1') * 8 + (f - b'a');
            let promo = b.get(4).map_or(0, |c| match c {
                b'n' => 1,
                b'b' => 2,
                b'r' => 3,
                _ => 4,
            });
            (sq(b[0], b[1]), sq(b[2], b[3]), promo)
        });
        assert_eq!(keys, sorted);
        assert!(keys.contains(&"e8g8".to_string()) && keys.contains(&"e8c8".to_string()));
    }

    #[test]
    fn a_truncated_last_game_is_reported_after_the_good_ones() {
        let games = many_games(30, 3)[..5].to_vec();
        let bytes = write_all(&games);
        let ends: Vec<usize> = {
            let mut at = 8;
            games
                .iter()
                .map(|g| {
                    at += 35 + 3 * g.plies.len();
                    at
                })
                .collect()
        };
        for cut in 8..bytes.len() {
            let (back, error) = read_all(&bytes[..cut]);
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(back, games[..whole], "cut at {cut}");
            if cut == 8 || ends.contains(&cut) {
                assert!(error.is_none(), "cut at {cut}");
            } else {
                let e = error.expect("an error");
                assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}: {e}");
            }
        }
        // A header cut short is not a game file.
        assert!(GameReader::new(&bytes[..5]).is_err());
    }

    #[test]
    fn damage_is_an_error() {
        let games = many_games(30, 5)[..3].to_vec();
        let bytes = write_all(&games);
        let second = 8 + 35 + 3 * games[0].plies.len();
        // A flipped score bit: the checksum.
        let mut damaged = bytes.clone();
        damaged[second + 35 + games[1].plies.len()] ^= 4;
        let (back, error) = read_all(&damaged);
        assert_eq!(back, games[..1]);
        let e = error.expect("an error");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("game 2: checksum"), "{e}");
        // A move index past the legal moves, checksum made good: the index.
        let mut damaged = bytes.clone();
        let end = second + 35 + 3 * games[1].plies.len();
        damaged[second + 31] = 250;
        let crc = crc32(&damaged[second..end - 4]);
        damaged[end - 4..end].copy_from_slice(&crc.to_le_bytes());
        let e = read_all(&damaged).1.expect("an error");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("ply 0: move index 250"), "{e}");
        // Another format, another version.
        assert!(GameReader::new(&b"QGAMES\x02\x00"[..]).is_err());
        assert!(GameReader::new(&[0u8; 64][..]).is_err());
    }

    #[test]
    fn the_writer_refuses_what_the_format_cannot_hold() {
        let mut writer = GameWriter::new(Vec::new()).expect("header");
        let start = Chess::default();
        let mut rng = XorShift64Star::new(11);
        let mut game = random_game(&start, None, 3, &mut rng);
        game.plies[1].played = game.plies[0].played;
        assert_eq!(
            writer.write_game(&game).map_err(|e| e.kind()),
            Err(io::ErrorKind::InvalidInput)
        );
        let counters = GameRecord {
            start: position("4k3/8/8/8/8/8/8/4K3 w - - 300 1"),
            plies: Vec::new(),
            result: 1,
        };
        assert!(writer.write_game(&counters).is_err());
        let result = GameRecord {
            result: 3,
            ..random_game(&start, None, 3, &mut rng)
        };
        assert!(writer.write_game(&result).is_err());
        assert_eq!(writer.games(), 0);
        assert_eq!(writer.into_inner().expect("flush").len(), 8);
    }

    #[test]
    fn score_codes_are_small_for_small_changes() {
        let codes: Vec<[u8; 2]> = score_codes([0, -1, 1, 31, -32_000].into_iter()).collect();
        assert_eq!(codes, [[0, 0], [1, 0], [4, 0], [60, 0], [0x3d, 0xfa]]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn any_scores_come_back(values in prop::collection::vec(any::<i16>(), 0..50)) {
            let back: Vec<i16> = scores(score_codes(values.iter().copied())).collect();
            prop_assert_eq!(back, values);
        }

        /// Any damage: an error or games, never a panic; with the checksum
        /// made good again, the decoder itself sees the damage.
        #[test]
        fn flipped_bytes_never_panic(
            seed in 1u64..1000,
            flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..6),
            fix_checksum in any::<bool>(),
        ) {
            let mut rng = XorShift64Star::new(seed);
            let games: Vec<GameRecord> = (0..3)
                .map(|i| random_game(&position(FENS[i % FENS.len()]), None, 40, &mut rng))
                .collect();
            let mut bytes = write_all(&games);
            for (at, mask) in &flips {
                let i = at.index(bytes.len());
                bytes[i] ^= mask;
            }
            if fix_checksum {
                let mut at = 8;
                for g in &games {
                    let end = at + 35 + 3 * g.plies.len();
                    if end > bytes.len() {
                        break;
                    }
                    let crc = crc32(&bytes[at..end - 4]);
                    bytes[end - 4..end].copy_from_slice(&crc.to_le_bytes());
                    at = end;
                }
            }
            let (back, error) = read_all(&bytes);
            if !fix_checksum {
                // A checksum misses such damage once in 2^32.
                prop_assert!(error.is_some());
                prop_assert!(back.len() < games.len() && back == games[..back.len()]);
            }
        }
    }
}
