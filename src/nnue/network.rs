//! The net: its weights as the file stores them (NNUE-SPEC.md, versions 1
//! to 3), the checked reading and the writing of that file, and the
//! integer forward pass from a pair of accumulators.

use super::simd;
use crate::rng::SplitMix64;
use shakmaty::{Board, Color};
use std::fmt;

pub use super::format::{
    HEADER_BYTES, HIDDEN_STEP, INPUTS, Kings, MAGIC, MAX_BUCKETS, MAX_FILE_LEN, MAX_HIDDEN,
    MAX_KING_BUCKETS, MAX_OUTPUT_WEIGHT, NetError, QA, QB, SCALE, Shape, VERSION_1, VERSION_2,
    VERSION_3, View, bucket, fnv1a64,
};

/// A (768·K→N)×2→B net with quantised weights, exactly as the file holds
/// them: one of its B outputs scores a position, chosen by the number of
/// pieces on the board (B = 1: a single output); each perspective reads
/// the 768 inputs of the king bucket its own king stands in (K = 1: one).
#[derive(Clone, PartialEq, Eq)]
pub struct Network {
    hidden: usize,
    buckets: usize,
    kings: Kings,
    /// Input-major: the row of feature `f` is `w1[f*hidden..(f+1)*hidden]`.
    w1: Box<[i16]>,
    b1: Box<[i16]>,
    /// Per output bucket, `2 * hidden` weights: the side to move's half,
    /// then the other side's.
    w2: Box<[i16]>,
    /// Per output bucket.
    b2: Box<[i32]>,
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Network({}x{}x2 -> {})",
            self.kings.inputs(),
            self.hidden,
            self.buckets
        )
    }
}

/// A cursor over the little-endian fields of a file whose length is known.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const K: usize>(&mut self) -> [u8; K] {
        let mut out = [0; K];
        if let Some(s) = self.bytes.get(self.at..self.at + K) {
            out.copy_from_slice(s);
        }
        self.at += K;
        out
    }
    fn i16s(&mut self, n: usize) -> Box<[i16]> {
        (0..n).map(|_| i16::from_le_bytes(self.take())).collect()
    }
}

impl Network {
    /// Reads a net file, checking every field the spec fixes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetError> {
        let shape = super::format::check(bytes)?;
        let (hidden, buckets, kings) = (shape.hidden, shape.buckets, shape.kings);
        let mut r = Reader {
            bytes,
            at: shape.header_len(),
        };
        let w1 = r.i16s(kings.inputs() * hidden);
        let b1 = r.i16s(hidden);
        let w2 = r.i16s(2 * hidden * buckets);
        let b2 = (0..buckets).map(|_| i32::from_le_bytes(r.take())).collect();
        Ok(Network {
            hidden,
            buckets,
            kings,
            w1,
            b1,
            w2,
            b2,
        })
    }

    /// Reads and checks the net file at `path`. Only a regular file is
    /// opened (a FIFO would block the caller for ever, a device never end),
    /// and only one no longer than the largest net is read.
    pub fn load(path: &std::path::Path) -> Result<Network, NetError> {
        let io = |e: std::io::Error| NetError::Io(format!("{}: {e}", path.display()));
        let len = crate::files::regular_file_len(path).map_err(io)?;
        if len > MAX_FILE_LEN as u64 {
            return Err(NetError::TooLarge { len });
        }
        let bytes = crate::files::read_regular(path, MAX_FILE_LEN as u64).map_err(io)?;
        Network::from_bytes(&bytes)
    }

    /// The file's bytes: `from_bytes(&net.to_bytes()) == Ok(net)`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let shape = self.shape();
        let mut out = Vec::with_capacity(shape.file_len());
        out.extend_from_slice(&MAGIC);
        for v in [
            shape.version(),
            self.kings.inputs() as u32,
            self.hidden as u32,
            QA as u32,
            QB as u32,
            SCALE as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        if shape.version() != VERSION_1 {
            out.extend_from_slice(&(self.buckets as u32).to_le_bytes());
        }
        if shape.version() == VERSION_3 {
            out.extend_from_slice(&(self.kings.count as u32).to_le_bytes());
            out.extend_from_slice(&u32::from(self.kings.mirror).to_le_bytes());
            out.extend_from_slice(&self.kings.map);
        }
        for w in self.w1.iter().chain(&self.b1[..]).chain(&self.w2[..]) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for b in &self.b2[..] {
            out.extend_from_slice(&b.to_le_bytes());
        }
        let sum = fnv1a64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// A net from its parts, its output buckets counted by `b2`; `None`
    /// unless the sizes fit `hidden` (a valid hidden size) and 1 to
    /// `MAX_BUCKETS` buckets, and every W2 is within ±`MAX_OUTPUT_WEIGHT`.
    pub fn from_parts(
        hidden: usize,
        w1: Vec<i16>,
        b1: Vec<i16>,
        w2: Vec<i16>,
        b2: Vec<i32>,
    ) -> Option<Network> {
        Network::from_parts_with_kings(Kings::NONE, hidden, w1, b1, w2, b2)
    }

    /// `from_parts` for a net whose inputs the kings choose: W1 holds
    /// `kings.inputs()` rows, and the layout must be one a file can hold.
    pub fn from_parts_with_kings(
        kings: Kings,
        hidden: usize,
        w1: Vec<i16>,
        b1: Vec<i16>,
        w2: Vec<i16>,
        b2: Vec<i32>,
    ) -> Option<Network> {
        let buckets = b2.len();
        let kings_ok = (1..=MAX_KING_BUCKETS).contains(&kings.count)
            && kings.count * hidden <= MAX_HIDDEN
            && kings.map.iter().all(|&b| usize::from(b) < kings.count);
        let sizes_ok = hidden > 0
            && hidden <= MAX_HIDDEN
            && hidden.is_multiple_of(HIDDEN_STEP)
            && (1..=MAX_BUCKETS).contains(&buckets)
            && kings_ok
            && w1.len() == kings.inputs() * hidden
            && b1.len() == hidden
            && w2.len() == 2 * hidden * buckets;
        let range_ok = w2
            .iter()
            .all(|w| w.unsigned_abs() <= MAX_OUTPUT_WEIGHT as u16);
        (sizes_ok && range_ok).then(|| Network {
            hidden,
            buckets,
            kings,
            w1: w1.into(),
            b1: b1.into(),
            w2: w2.into(),
            b2: b2.into(),
        })
    }

    /// A deterministic net of random weights, for tests and measurements:
    /// the same `seed` and `hidden` give the same net. `hidden` is rounded
    /// up to a valid size. The other side's output weights are the side to
    /// move's negated and B2 is 0, so that a position scores the opposite
    /// for the other side to move, as a trained net roughly does: searches
    /// with it behave like searches (a net with unrelated halves swings by
    /// hundreds of centipawns from ply to ply, and no pruning works).
    pub fn random(seed: u64, hidden: usize) -> Network {
        Network::random_bucketed(seed, hidden, 1)
    }

    /// `random` with `buckets` output buckets (clamped to 1..=`MAX_BUCKETS`),
    /// each with its own output weights; bucket 0's are `random`'s.
    pub fn random_bucketed(seed: u64, hidden: usize, buckets: usize) -> Network {
        Network::random_shaped(seed, hidden, buckets, Kings::NONE)
    }

    /// `random_bucketed` with the inputs `kings` choose (a layout a file
    /// can hold, else none); with `Kings::NONE`, `random_bucketed`'s net.
    pub fn random_shaped(seed: u64, hidden: usize, buckets: usize, kings: Kings) -> Network {
        let kings = if (1..=MAX_KING_BUCKETS).contains(&kings.count)
            && kings.map.iter().all(|&b| usize::from(b) < kings.count)
        {
            kings
        } else {
            Kings::NONE
        };
        let buckets = buckets.clamp(1, MAX_BUCKETS);
        let hidden = hidden
            .clamp(HIDDEN_STEP, MAX_HIDDEN)
            .next_multiple_of(HIDDEN_STEP);
        let mut rng = SplitMix64::new(seed ^ 0x5155_494c_494e_4e31);
        let mut uniform =
            |lo: i32, hi: i32| (lo + (rng.next_u64() % (hi - lo + 1) as u64) as i32) as i16;
        let w1 = (0..kings.inputs() * hidden)
            .map(|_| uniform(-24, 24))
            .collect();
        let b1 = (0..hidden).map(|_| uniform(-16, 96)).collect();
        let mut w2 = Vec::with_capacity(2 * hidden * buckets);
        for _ in 0..buckets {
            let us: Vec<i16> = (0..hidden).map(|_| uniform(-12, 12)).collect();
            w2.extend(us.iter().copied().chain(us.iter().map(|w| -w)));
        }
        Network {
            hidden,
            buckets,
            kings,
            w1,
            b1,
            w2: w2.into(),
            b2: vec![0; buckets].into(),
        }
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Output buckets.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// How the kings choose the inputs.
    pub fn kings(&self) -> &Kings {
        &self.kings
    }

    /// The file's shape.
    pub fn shape(&self) -> Shape {
        Shape {
            hidden: self.hidden,
            buckets: self.buckets,
            kings: self.kings,
        }
    }

    /// Whether a king move can change which inputs its side reads (king
    /// buckets or mirroring): then the accumulators of that side are
    /// rebuilt after such a move, not updated.
    pub fn kings_choose_inputs(&self) -> bool {
        self.kings != Kings::NONE
    }

    /// The view of `perspective` on `board`, chosen by its own king (on a
    /// board without one, as if it stood on its a1).
    #[inline]
    pub fn view(&self, board: &Board, perspective: Color) -> View {
        let king = board.king_of(perspective).map_or(0, |k| match perspective {
            Color::White => k as usize,
            Color::Black => k as usize ^ 56,
        });
        self.kings.view(king)
    }

    pub fn bias(&self) -> &[i16] {
        &self.b1
    }

    /// The first-layer weights of input `f` (`f < kings().inputs()`).
    #[inline]
    pub fn row(&self, f: usize) -> &[i16] {
        &self.w1[f * self.hidden..(f + 1) * self.hidden]
    }

    /// The output of the net in its integer units (before `SCALE`), from
    /// the side to move's accumulator and the other side's, for a position
    /// of `pieces` pieces (kings included).
    pub fn output(&self, us: &[i16], them: &[i16], pieces: usize) -> i64 {
        let n = self.hidden;
        let b = bucket(pieces, self.buckets);
        let w2 = &self.w2[2 * n * b..2 * n * (b + 1)];
        let sum = simd::screlu_dot(us, &w2[..n]).wrapping_add(simd::screlu_dot(them, &w2[n..]));
        i64::from(sum) / i64::from(QA) + i64::from(self.b2[b])
    }

    /// Centipawns from the side to move's view, unclamped, for a position
    /// of `pieces` pieces.
    pub fn evaluate(&self, white: &[i16], black: &[i16], turn: Color, pieces: usize) -> i32 {
        let out = match turn {
            Color::White => self.output(white, black, pieces),
            Color::Black => self.output(black, white, pieces),
        };
        (out * i64::from(SCALE) / i64::from(QA * QB)) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::Accumulator;

    /// The length of a version-1 file of `hidden` neurons.
    fn file_len(hidden: usize) -> usize {
        Shape {
            hidden,
            buckets: 1,
            kings: Kings::NONE,
        }
        .file_len()
    }
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

    #[test]
    fn fnv1a64_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn bytes_round_trip_and_have_the_spec_layout() {
        for hidden in [16, 48, 256] {
            let net = Network::random(7, hidden);
            let bytes = net.to_bytes();
            assert_eq!(bytes.len(), file_len(hidden));
            assert_eq!(
                bytes.len(),
                32 + 2 * 768 * hidden + 2 * hidden + 4 * hidden + 4 + 8
            );
            assert_eq!(&bytes[..8], b"QILINNN1");
            assert_eq!(bytes[8..12], 1u32.to_le_bytes());
            assert_eq!(bytes[16..20], (hidden as u32).to_le_bytes());
            assert_eq!(bytes[20..32], [255, 0, 0, 0, 64, 0, 0, 0, 144, 1, 0, 0]);
            // W1[1][0] sits right after W1[0][..hidden].
            let at = 32 + 2 * hidden;
            assert_eq!(
                i16::from_le_bytes([bytes[at], bytes[at + 1]]),
                net.row(1)[0]
            );
            assert_eq!(Network::from_bytes(&bytes).as_ref(), Ok(&net));
        }
        assert_ne!(Network::random(1, 64), Network::random(2, 64));
        assert_eq!(Network::random(1, 64), Network::random(1, 64));
    }

    /// `bytes` with `edit` applied and the checksum made right again, so
    /// that only the edited field is wrong.
    fn edited(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut b = bytes.to_vec();
        edit(&mut b);
        let body = b.len() - 8;
        let sum = fnv1a64(&b[..body]);
        b[body..].copy_from_slice(&sum.to_le_bytes());
        b
    }

    fn set_u32(b: &mut [u8], at: usize, v: u32) {
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    #[test]
    fn each_kind_of_damage_is_named() {
        let bytes = Network::random(3, 32).to_bytes();
        let check = |b: &[u8], expected: NetError| {
            let err = Network::from_bytes(b).expect_err("damaged");
            assert_eq!(err, expected);
            assert!(!err.to_string().is_empty());
        };
        check(&bytes[..10], NetError::TooShort { len: 10 });
        let bad_magic = edited(&bytes, |b| b[0] = b'X');
        check(
            &bad_magic,
            NetError::BadMagic {
                found: *b"XILINNN1",
            },
        );
        check(
            &edited(&bytes, |b| set_u32(b, 8, 4)),
            NetError::BadVersion { found: 4 },
        );
        check(
            &edited(&bytes, |b| set_u32(b, 12, 769)),
            NetError::BadInputs { found: 769 },
        );
        for hidden in [0, 17, 4112] {
            check(
                &edited(&bytes, |b| set_u32(b, 16, hidden)),
                NetError::BadHidden { found: hidden },
            );
        }
        // A valid hidden size that the length does not match.
        check(
            &edited(&bytes, |b| set_u32(b, 16, 48)),
            NetError::BadLength {
                found: file_len(32),
                expected: file_len(48),
            },
        );
        for (at, name, expected) in [(20, "QA", 255), (24, "QB", 64), (28, "SCALE", 400)] {
            check(
                &edited(&bytes, |b| set_u32(b, at, 256)),
                NetError::BadConstant {
                    name,
                    found: 256,
                    expected,
                },
            );
        }
        let truncated = &bytes[..bytes.len() - 1];
        check(
            truncated,
            NetError::BadLength {
                found: file_len(32) - 1,
                expected: file_len(32),
            },
        );
        assert!(
            Network::from_bytes(truncated)
                .expect_err("short")
                .to_string()
                .contains("truncated")
        );
        let mut long = bytes.clone();
        long.push(0);
        check(
            &long,
            NetError::BadLength {
                found: file_len(32) + 1,
                expected: file_len(32),
            },
        );
        // One weight bit flipped: only the checksum can tell.
        let mut flipped = bytes.clone();
        flipped[1000] ^= 4;
        let stored = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8"));
        check(
            &flipped,
            NetError::BadChecksum {
                found: stored,
                computed: fnv1a64(&flipped[..flipped.len() - 8]),
            },
        );
        // The stored checksum itself damaged.
        let mut sum_damaged = bytes.clone();
        let last = sum_damaged.len() - 1;
        sum_damaged[last] ^= 1;
        assert!(matches!(
            Network::from_bytes(&sum_damaged),
            Err(NetError::BadChecksum { .. })
        ));
        // W2[5] = 128: beyond what the SIMD dot product computes exactly.
        let w2_at = 32 + 2 * 768 * 32 + 2 * 32 + 2 * 5;
        let wide = edited(&bytes, |b| {
            b[w2_at..w2_at + 2].copy_from_slice(&128i16.to_le_bytes())
        });
        check(
            &wide,
            NetError::OutputWeightRange {
                index: 5,
                value: 128,
            },
        );
        assert!(Network::from_bytes(&bytes).is_ok());
    }

    /// A net of 16 neurons with a handful of nonzero weights, evaluated by
    /// hand from the spec's formulas.
    #[test]
    fn a_tiny_net_gives_the_hand_computed_integers() {
        let n = 16;
        let mut w1 = vec![0i16; INPUTS * n];
        // Own king on e1 (seen from either side): feature 5*64 + 4 = 324.
        w1[324 * n] = 100;
        // White pawn e2 from White: feature 12.
        w1[12 * n + 1] = 200;
        // The other side's king on e8 from either side: 384 + 320 + 60 = 764.
        w1[764 * n] = 30;
        let mut b1 = vec![0i16; n];
        b1[0] = 10;
        b1[1] = -5;
        b1[2] = 300;
        let mut w2 = vec![0i16; 2 * n];
        w2[0] = 3;
        w2[1] = -2;
        w2[2] = 1;
        w2[n] = 5;
        w2[n + 1] = 7;
        w2[n + 2] = -1;
        let net =
            Network::from_parts(n, w1.clone(), b1.clone(), w2.clone(), vec![1000]).expect("net");
        let pos = |fen: &str| -> Chess {
            fen.parse::<Fen>()
                .expect("fen")
                .into_position(CastlingMode::Standard)
                .expect("legal")
        };
        let white = pos("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
        let acc = Accumulator::new(&net, white.board());
        // White: 10 + 100 (K e1) + 30 (k e8) = 140; -5 + 200 = 195; 300.
        assert_eq!(&acc.white()[..4], &[140, 195, 300, 0]);
        // Black: 10 + 100 (k e8 as own e1) + 30 (K e1 as other e8) = 140;
        // the pawn is feature 436, which has no weight: -5; 300.
        assert_eq!(&acc.black()[..4], &[140, -5, 300, 0]);
        // White to move: 140²·3 − 195²·2 + 255²·1 + 140²·5 + 0·7 − 255²·1
        // = 80,750; out = 80,750 / 255 + 1000 = 316 + 1000 = 1316;
        // 1316 · 400 / 16,320 = 32.25 → 32.
        assert_eq!(net.output(acc.white(), acc.black(), 3), 1316);
        assert_eq!(acc.evaluate(&net, Color::White, 3), 32);
        // Black to move: 140²·3 + 0 + 255² + 140²·5 + 195²·7 − 255² = 422,975;
        // 422,975 / 255 = 1658; 2658 · 400 / 16,320 = 65.1 → 65.
        let black = pos("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1");
        assert_eq!(
            crate::nnue::Accumulator::new(&net, black.board()).evaluate(&net, Color::Black, 3),
            65
        );
        // Truncation toward zero: with W2[n+1] = −7 the sum is −109,375,
        // / 255 = −428 (not −429); 572 · 400 / 16,320 = 14.02 → 14.
        let mut w2_neg = w2.clone();
        w2_neg[n + 1] = -7;
        let neg = Network::from_parts(n, w1.clone(), b1.clone(), w2_neg, vec![1000]).expect("net");
        assert_eq!(
            Accumulator::new(&neg, black.board()).evaluate(&neg, Color::Black, 3),
            14
        );
        // And in the last step: B2 = −100,000 gives out = −99,684;
        // −99,684 · 400 / 16,320 = −2443.2 → −2443 (not −2444).
        let low = Network::from_parts(n, w1, b1, w2, vec![-100_000]).expect("net");
        assert_eq!(
            Accumulator::new(&low, white.board()).evaluate(&low, Color::White, 3),
            -2443
        );
        // The file of the tiny net reads back as the same net.
        assert_eq!(Network::from_bytes(&net.to_bytes()), Ok(net));
    }

    #[test]
    fn output_buckets_follow_the_piece_count() {
        // 8 buckets of 4 piece counts each: 2-5, 6-9, ..., 26-29, 30-32.
        let eight: Vec<usize> = (2..=32).map(|p| bucket(p, 8)).collect();
        let mut expected = Vec::new();
        for b in 0..8 {
            expected.extend(std::iter::repeat_n(b, if b < 7 { 4 } else { 3 }));
        }
        assert_eq!(eight, expected);
        // 3 buckets of 11: 2-12, 13-23, 24-32; one bucket: always 0.
        assert_eq!(
            [2, 12, 13, 23, 24, 32].map(|p| bucket(p, 3)),
            [0, 0, 1, 1, 2, 2]
        );
        assert!((2..=32).all(|p| bucket(p, 1) == 0));
        // No bucket past the last, whatever the count.
        assert_eq!(bucket(0, 8), 0);
        assert_eq!(bucket(64, 8), 7);

        // A net whose only non-zero weights are the biases of its 8
        // outputs, 4080·(b + 1): bucket b scores 4080·(b + 1)·400 / 16,320
        // = 100·(b + 1) cp.
        let n = 16;
        let b2 = (1..=8).map(|b| 4080 * b).collect();
        let net = Network::from_parts(n, vec![0; INPUTS * n], vec![0; n], vec![0; 2 * n * 8], b2)
            .expect("net");
        for (fen, cp) in [
            // 32 pieces: the last bucket.
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                800,
            ),
            // 5 pieces: the first; 6: the second; 17: the fourth.
            ("4k3/8/8/8/8/8/PPP5/4K3 w - - 0 1", 100),
            ("4k3/8/8/8/8/8/PPPP4/4K3 b - - 0 1", 200),
            ("rnbqkbnr/pppppppp/8/8/8/8/8/4K3 w kq - 0 1", 400),
        ] {
            let pos: Chess = fen
                .parse::<Fen>()
                .expect("fen")
                .into_position(CastlingMode::Standard)
                .expect("legal");
            let acc = Accumulator::new(&net, pos.board());
            let pieces = crate::nnue::accumulator::pieces(&pos);
            assert_eq!(acc.evaluate(&net, pos.turn(), pieces), cp, "{fen}");
        }
    }

    #[test]
    fn a_bucketed_net_is_a_version_2_file() {
        let (n, buckets) = (32, 3);
        let net = Network::random_bucketed(9, n, buckets);
        assert_eq!(net.buckets(), 3);
        let bytes = net.to_bytes();
        assert_eq!(
            bytes.len(),
            36 + 2 * 768 * n + 2 * n + 2 * 2 * n * buckets + 4 * buckets + 8
        );
        assert_eq!(bytes[8..12], 2u32.to_le_bytes());
        assert_eq!(bytes[32..36], 3u32.to_le_bytes());
        // Bucket 1's first output weight follows bucket 0's 2N.
        let w2 = 36 + 2 * 768 * n + 2 * n;
        let at = w2 + 2 * 2 * n;
        assert_eq!(
            i16::from_le_bytes([bytes[at], bytes[at + 1]]),
            net.w2[2 * n]
        );
        assert_eq!(Network::from_bytes(&bytes), Ok(net.clone()));
        // The buckets' output weights differ, and bucket 0's are those of
        // the single-output net of the same seed.
        assert_ne!(net.w2[..2 * n], net.w2[2 * n..4 * n]);
        assert_eq!(net.w2[..2 * n], Network::random(9, n).w2[..]);
        // A bucket count outside 2..=8 in a version-2 file.
        for found in [0u32, 1, 9] {
            let mut edited = bytes.clone();
            edited[32..36].copy_from_slice(&found.to_le_bytes());
            assert_eq!(
                Network::from_bytes(&edited),
                Err(NetError::BadBuckets { found })
            );
        }
        // A version-1 header on a bucketed file: the length tells.
        let mut v1 = bytes.clone();
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(
            Network::from_bytes(&v1),
            Err(NetError::BadLength {
                found: bytes.len(),
                expected: file_len(n)
            })
        );
    }

    #[test]
    fn a_king_bucketed_net_is_a_version_3_file() {
        let (n, buckets) = (32, 2);
        let kings = Kings::preset(4, true).expect("a preset");
        let net = Network::random_shaped(9, n, buckets, kings);
        assert!(net.kings_choose_inputs());
        let bytes = net.to_bytes();
        let inputs = 4 * 768;
        assert_eq!(
            bytes.len(),
            108 + 2 * inputs * n + 2 * n + 2 * 2 * n * buckets + 4 * buckets + 8
        );
        assert_eq!(bytes[8..12], 3u32.to_le_bytes());
        assert_eq!(bytes[12..16], (inputs as u32).to_le_bytes());
        assert_eq!(bytes[32..36], 2u32.to_le_bytes());
        assert_eq!(bytes[36..40], 4u32.to_le_bytes());
        assert_eq!(bytes[40..44], 1u32.to_le_bytes());
        // The preset: e1-f1 0, g1-h1 1, the second rank 2, the rest 3.
        assert_eq!(bytes[44..52], [1, 1, 0, 0, 0, 0, 1, 1]);
        assert_eq!(bytes[52..60], [2; 8]);
        assert!(bytes[60..108].iter().all(|&b| b == 3));
        assert_eq!(Network::from_bytes(&bytes), Ok(net.clone()));
        // Each field of the king buckets checked, before the length.
        let damaged = |at: usize, v: u32| edited(&bytes, |b| set_u32(b, at, v));
        for count in [0, 17] {
            assert!(matches!(
                Network::from_bytes(&damaged(36, count)),
                Err(NetError::BadKings { .. })
            ));
        }
        // Five buckets would need 5 · 768 inputs.
        assert_eq!(
            Network::from_bytes(&damaged(36, 5)),
            Err(NetError::BadInputs {
                found: inputs as u32
            })
        );
        let err = Network::from_bytes(&damaged(40, 2)).expect_err("flag");
        assert!(err.to_string().contains("flags 0x2"), "{err}");
        let beyond = edited(&bytes, |b| b[44 + 63] = 4);
        let err = Network::from_bytes(&beyond).expect_err("bucket");
        assert!(
            err.to_string().contains("square 63 in king bucket 4"),
            "{err}"
        );
        // 16 king buckets of 512 neurons: more than 4096 in all.
        assert!(matches!(
            Network::from_bytes(&edited(&damaged(36, 16), |b| set_u32(b, 16, 512))),
            Err(NetError::BadKings { .. })
        ));
    }

    /// With mirroring, each side sees its king on files e-h: the king's
    /// square picks the flip and the bucket.
    #[test]
    fn the_kings_choose_the_views() {
        let kings = Kings::preset(4, true).expect("a preset");
        let net = Network::random_shaped(3, 16, 1, kings);
        let board = |fen: &str| fen.parse::<Fen>().expect("fen").into_setup().board;
        // White king c1: flipped to f1, bucket 0; Black king g8: g1 from
        // its side, bucket 1, not flipped.
        let b = board("6k1/8/8/8/8/8/8/2K5 w - - 0 1");
        assert_eq!(net.view(&b, Color::White), View { flip: 7, offset: 0 });
        assert_eq!(
            net.view(&b, Color::Black),
            View {
                flip: 0,
                offset: 768
            }
        );
        // White king b2: flipped to g2, bucket 2; Black king a5: a4 from
        // its side, flipped to h4, bucket 3.
        let b = board("8/8/8/k7/8/8/1K6/8 w - - 0 1");
        assert_eq!(
            net.view(&b, Color::White),
            View {
                flip: 7,
                offset: 2 * 768
            }
        );
        assert_eq!(
            net.view(&b, Color::Black),
            View {
                flip: 7,
                offset: 3 * 768
            }
        );
        // The input of a feature: its bucket's block, its file flipped (an
        // own pawn on e2, 12, read as on d2, 11).
        assert_eq!(
            View {
                flip: 7,
                offset: 768
            }
            .input(12),
            768 + 11
        );
    }

    /// A position and its mirror image left to right read the same inputs
    /// in a mirrored net, so they score alike; without mirroring they do
    /// not.
    #[test]
    fn a_mirrored_net_scores_mirror_images_alike() {
        let mirrored = Network::random_shaped(4, 32, 1, Kings::preset(2, true).expect("preset"));
        let plain = Network::random_shaped(4, 32, 1, Kings::preset(2, false).expect("preset"));
        let mut differ = 0;
        for fen in [
            "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w - - 0 1",
            "8/5pk1/6p1/3P4/1p6/1P3K2/8/8 b - - 0 1",
            "2kr4/ppp5/8/8/8/8/5PPP/6K1 w - - 0 1",
        ] {
            let board = fen.parse::<Fen>().expect("fen").into_setup().board;
            let mut image = board.clone();
            image.flip_horizontal();
            let score = |net: &Network, b: &Board| {
                let pieces = b.occupied().count();
                Accumulator::new(net, b).evaluate(net, Color::White, pieces)
            };
            assert_eq!(score(&mirrored, &board), score(&mirrored, &image), "{fen}");
            differ += usize::from(score(&plain, &board) != score(&plain, &image));
        }
        assert_eq!(differ, 3);
    }

    #[test]
    fn from_parts_checks_sizes_and_the_output_range() {
        let n = 16;
        let ok = |w2: i16| {
            Network::from_parts(n, vec![0; INPUTS * n], vec![0; n], vec![w2; 2 * n], vec![0])
        };
        assert!(ok(127).is_some());
        assert!(ok(-127).is_some());
        assert!(ok(128).is_none());
        assert!(Network::from_parts(n, vec![0; 5], vec![0; n], vec![0; 2 * n], vec![0]).is_none());
        assert!(
            Network::from_parts(20, vec![0; INPUTS * 20], vec![0; 20], vec![0; 40], vec![0])
                .is_none()
        );
        // Buckets: the output weights must be 2N per bucket, 1 to 8 buckets.
        let parts = |w2: usize, b2: usize| {
            Network::from_parts(n, vec![0; INPUTS * n], vec![0; n], vec![0; w2], vec![0; b2])
        };
        assert_eq!(parts(2 * n * 8, 8).map(|net| net.buckets()), Some(8));
        assert!(parts(2 * n * 8, 7).is_none());
        assert!(parts(2 * n * 9, 9).is_none());
        assert!(parts(0, 0).is_none());
    }
}
