//! The net file's format (NNUE-SPEC.md, versions 1 to 3): its constants,
//! its checksum and the check of every field the spec fixes. Plain `std`, no
//! crate paths: `build.rs` includes this file too (`#[path]`), so a net
//! given to the build (`EVALFILE`) is checked by the very function that
//! checks a net loaded at run time, and a wrong one fails the build.

use std::fmt;

pub const MAGIC: [u8; 8] = *b"QILINNN1";
/// Version 1: one output. Version 2: `buckets` outputs, chosen by the
/// number of pieces on the board.
pub const VERSION_1: u32 = 1;
pub const VERSION_2: u32 = 2;
/// Version 3: output buckets as version 2, and inputs chosen by the
/// perspective's own king (king buckets, horizontal mirroring).
pub const VERSION_3: u32 = 3;
/// Feature inputs of one king bucket: 2 sides × 6 roles × 64 squares.
pub const INPUTS: usize = 768;
pub const QA: i32 = 255;
pub const QB: i32 = 64;
pub const SCALE: i32 = 400;
pub const MAX_HIDDEN: usize = 4096;
/// `hidden` must be a multiple of this (the SIMD lanes rely on it).
pub const HIDDEN_STEP: usize = 16;
/// The largest |W2| the engine accepts: the SIMD dot product computes
/// `clamp(x) * w` in 16 bits, exact only while |w| ≤ 128 (the trainer keeps
/// |W2| ≤ 127).
pub const MAX_OUTPUT_WEIGHT: i16 = 127;
/// The most output buckets a version-2 net may have.
pub const MAX_BUCKETS: usize = 8;
/// The most king buckets a version-3 net may have.
pub const MAX_KING_BUCKETS: usize = 16;
/// Bytes before the weights in version 1; version 2 adds the bucket count.
pub const HEADER_BYTES: usize = 32;
/// Bytes before the weights in version 3: output buckets, king buckets,
/// flags and the 64 squares' king buckets.
pub const HEADER_BYTES_V3: usize = HEADER_BYTES + 12 + 64;

/// How a perspective's own king chooses the inputs it reads (version 3):
/// with `mirror`, a perspective whose king stands on files a–d sees the
/// board flipped a↔h (so its king is always on files e–h); the king's
/// square, so flipped, picks one of `count` king buckets of 768 inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kings {
    pub mirror: bool,
    /// The king bucket of each square of the perspective's own king (the
    /// perspective's view: a1 = 0 is its own corner), after the flip.
    pub map: [u8; 64],
    pub count: usize,
}

/// What one perspective's king makes of a feature: the flip of its file
/// (0 or 7, XORed into the index) and the first input of its king bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    pub flip: usize,
    pub offset: usize,
}

impl View {
    /// The input of feature `f` (`f < INPUTS`) in this view.
    #[inline]
    pub const fn input(self, f: usize) -> usize {
        self.offset + (f ^ self.flip)
    }

    /// The king bucket this view reads (0-based).
    pub const fn bucket(self) -> usize {
        self.offset / INPUTS
    }

    /// Whether this view flips the board a-h.
    pub const fn flipped(self) -> bool {
        self.flip != 0
    }
}

impl Kings {
    /// Versions 1 and 2: one bucket, no flip; every input is its feature.
    pub const NONE: Kings = Kings {
        mirror: false,
        map: [0; 64],
        count: 1,
    };

    /// The view of a perspective whose own king stands on `king` (its
    /// own view's square, 0..64).
    #[inline]
    pub const fn view(&self, king: usize) -> View {
        let flip = if self.mirror && king & 7 < 4 { 7 } else { 0 };
        View {
            flip,
            offset: self.map[(king ^ flip) & 63] as usize * INPUTS,
        }
    }

    /// Inputs per perspective.
    pub const fn inputs(&self) -> usize {
        INPUTS * self.count
    }

    /// The view of a perspective whose features are `features` (as
    /// `nnue::features` indexes them, each below 768): its own king is the
    /// feature of side 0, role 5; without one (not a chess position), a1.
    pub fn view_of(&self, features: &[u16]) -> View {
        let own_king = 5 * 64..6 * 64;
        let king = features
            .iter()
            .map(|&f| f as usize)
            .find(|f| own_king.contains(f))
            .map_or(0, |f| f - 5 * 64);
        self.view(king)
    }

    /// A layout the trainer offers: `buckets` of 1, 2, 4 or 8, over the
    /// squares of files e–h (the others take their mirror square's bucket):
    /// 2 = the first rank, the rest; 4 = e1–f1, g1–h1, the second rank,
    /// the rest; 8 = e1–f1, g1–h1, e2–f2, g2–h2, then ranks 3, 4, 5–6, 7–8.
    pub fn preset(buckets: usize, mirror: bool) -> Option<Kings> {
        let bucket = |sq: usize| -> u8 {
            let (file, rank) = (sq & 7, sq >> 3);
            let wing = u8::from(file >= 6 || file <= 1);
            match (buckets, rank) {
                (1, _) => 0,
                (2, 0) => 0,
                (2, _) => 1,
                (4, 0) => wing,
                (4, 1) => 2,
                (4, _) => 3,
                (8, 0) => wing,
                (8, 1) => 2 + wing,
                (8, 2) => 4,
                (8, 3) => 5,
                (8, 4 | 5) => 6,
                _ => 7,
            }
        };
        if ![1, 2, 4, 8].contains(&buckets) {
            return None;
        }
        let mut map = [0; 64];
        for (sq, m) in map.iter_mut().enumerate() {
            *m = bucket(sq);
        }
        Some(Kings {
            mirror,
            map,
            count: buckets,
        })
    }
}

/// What a net file holds: hidden neurons, output buckets and how the
/// kings choose the inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub hidden: usize,
    pub buckets: usize,
    pub kings: Kings,
}

impl Shape {
    /// The version a net of this shape is written in: the lowest that
    /// holds it (so that version-1 and -2 nets read and write back byte for
    /// byte): 3 with king buckets or mirroring, else 1 for a single output,
    /// else 2.
    pub const fn version(self) -> u32 {
        if self.kings.mirror || self.kings.count != 1 {
            VERSION_3
        } else if self.buckets == 1 {
            VERSION_1
        } else {
            VERSION_2
        }
    }

    /// Bytes before the weights.
    pub const fn header_len(self) -> usize {
        match self.version() {
            VERSION_1 => HEADER_BYTES,
            VERSION_2 => HEADER_BYTES + 4,
            _ => HEADER_BYTES_V3,
        }
    }

    /// The length of the file.
    pub const fn file_len(self) -> usize {
        let (n, b) = (self.hidden, self.buckets);
        self.header_len() + 2 * self.kings.inputs() * n + 2 * n + 2 * 2 * n * b + 4 * b + 8
    }
}

impl fmt::Display for Shape {
    /// "128 hidden", then the output buckets, king buckets and mirroring
    /// where the net has them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} hidden", self.hidden)?;
        if self.buckets > 1 {
            write!(f, ", {} output buckets", self.buckets)?;
        }
        if self.kings.count > 1 {
            write!(f, ", {} king buckets", self.kings.count)?;
        }
        if self.kings.mirror {
            write!(f, ", mirrored")?;
        }
        Ok(())
    }
}

/// The output bucket of a position with `pieces` pieces on the board
/// (kings included) in a net of `buckets` outputs: the pieces from 2 to 32
/// cut into `buckets` equal ranges of ceil(32 / buckets) counts each, the
/// last range taking the rest.
pub const fn bucket(pieces: usize, buckets: usize) -> usize {
    let per = 32_usize.div_ceil(if buckets == 0 { 1 } else { buckets });
    let b = pieces.saturating_sub(2) / per;
    if b + 1 < buckets {
        b
    } else {
        buckets.saturating_sub(1)
    }
}

/// The longest net file: `MAX_HIDDEN` neurons and `MAX_BUCKETS` outputs,
/// one king bucket (king buckets × hidden may not exceed `MAX_HIDDEN`), in
/// version 3's header (about 6.4 MB). A longer file is refused unread.
pub const MAX_FILE_LEN: usize = HEADER_BYTES_V3
    + Shape {
        hidden: MAX_HIDDEN,
        buckets: MAX_BUCKETS,
        kings: Kings::NONE,
    }
    .file_len()
    - HEADER_BYTES
    - 4;

/// FNV-1a, 64 bits: the file's checksum.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Why bytes are not a net; each names what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetError {
    /// The file could not be read.
    Io(String),
    /// Longer than the longest net ([`MAX_FILE_LEN`]): refused unread.
    TooLarge {
        len: u64,
    },
    /// Shorter than the header.
    TooShort {
        len: usize,
    },
    BadMagic {
        found: [u8; 8],
    },
    BadVersion {
        found: u32,
    },
    BadInputs {
        found: u32,
    },
    BadHidden {
        found: u32,
    },
    /// A version-2 net's output bucket count outside 2..=`MAX_BUCKETS`
    /// (a version-3 net's outside 1..=`MAX_BUCKETS`).
    BadBuckets {
        found: u32,
    },
    /// A version-3 net's king buckets: their count outside
    /// 1..=`MAX_KING_BUCKETS` or with more than `MAX_HIDDEN` neurons in
    /// all, a flag that does not exist, or a square's bucket beyond the
    /// count.
    BadKings {
        what: String,
    },
    BadConstant {
        name: &'static str,
        found: u32,
        expected: u32,
    },
    /// The length does not match the hidden size of the header.
    BadLength {
        found: usize,
        expected: usize,
    },
    BadChecksum {
        found: u64,
        computed: u64,
    },
    /// A W2 weight beyond ±`MAX_OUTPUT_WEIGHT`.
    OutputWeightRange {
        index: usize,
        value: i16,
    },
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetError::Io(e) => write!(f, "cannot read the net: {e}"),
            NetError::TooLarge { len } => write!(
                f,
                "not a Qilin net: {len} bytes, longer than the largest net ({MAX_FILE_LEN} bytes, {MAX_HIDDEN} hidden)"
            ),
            NetError::TooShort { len } => write!(
                f,
                "not a Qilin net: {len} bytes, shorter than the {HEADER_BYTES}-byte header"
            ),
            NetError::BadMagic { found } => write!(
                f,
                "not a Qilin net: the file starts with {:?}, not \"QILINNN1\"",
                String::from_utf8_lossy(found)
            ),
            NetError::BadVersion { found } => {
                write!(
                    f,
                    "net version {found} is not supported (expected {VERSION_1}, {VERSION_2} or {VERSION_3})"
                )
            }
            NetError::BadInputs { found } => {
                write!(
                    f,
                    "net has {found} inputs (expected {INPUTS} per king bucket)"
                )
            }
            NetError::BadHidden { found } => write!(
                f,
                "net hidden size {found} is not a multiple of {HIDDEN_STEP} in 16..={MAX_HIDDEN}"
            ),
            NetError::BadBuckets { found } => write!(
                f,
                "net has {found} output buckets (a version-2 net has 2 to {MAX_BUCKETS}, a version-3 net 1 to {MAX_BUCKETS})"
            ),
            NetError::BadKings { what } => write!(f, "net king buckets: {what}"),
            NetError::BadConstant {
                name,
                found,
                expected,
            } => write!(f, "net constant {name} is {found} (expected {expected})"),
            NetError::BadLength { found, expected } if found < expected => write!(
                f,
                "net file truncated: {found} bytes, the header's shape needs {expected}"
            ),
            NetError::BadLength { found, expected } => write!(
                f,
                "net file too long: {found} bytes, the header's shape needs {expected}"
            ),
            NetError::BadChecksum { found, computed } => write!(
                f,
                "net file damaged: checksum {found:016x} stored, {computed:016x} computed"
            ),
            NetError::OutputWeightRange { index, value } => write!(
                f,
                "net output weight W2[{index}] = {value} is outside ±{MAX_OUTPUT_WEIGHT}"
            ),
        }
    }
}

impl std::error::Error for NetError {}

/// The shape of a valid net file, or what is wrong with it: magic,
/// version, inputs, hidden size, constants, output buckets, length,
/// checksum and the range of the output weights, in that order.
pub fn check(bytes: &[u8]) -> Result<Shape, NetError> {
    let u32_at = |at: usize| u32_at(bytes, at);
    if bytes.len() < HEADER_BYTES {
        return Err(NetError::TooShort { len: bytes.len() });
    }
    let mut magic = [0; 8];
    magic.copy_from_slice(bytes.get(..8).unwrap_or(&[0; 8]));
    if magic != MAGIC {
        return Err(NetError::BadMagic { found: magic });
    }
    let version = u32_at(8);
    if ![VERSION_1, VERSION_2, VERSION_3].contains(&version) {
        return Err(NetError::BadVersion { found: version });
    }
    let inputs = u32_at(12);
    if inputs == 0 || !(inputs as usize).is_multiple_of(INPUTS) {
        return Err(NetError::BadInputs { found: inputs });
    }
    let hidden_field = u32_at(16);
    let hidden = hidden_field as usize;
    if hidden == 0 || hidden > MAX_HIDDEN || !hidden.is_multiple_of(HIDDEN_STEP) {
        return Err(NetError::BadHidden {
            found: hidden_field,
        });
    }
    for (at, name, expected) in [(20, "QA", QA), (24, "QB", QB), (28, "SCALE", SCALE)] {
        let found = u32_at(at);
        if found != expected as u32 {
            return Err(NetError::BadConstant {
                name,
                found,
                expected: expected as u32,
            });
        }
    }
    let buckets = if version == VERSION_1 {
        1
    } else {
        let found = u32_at(HEADER_BYTES);
        let least = if version == VERSION_2 { 2 } else { 1 };
        if !(least..=MAX_BUCKETS as u32).contains(&found) {
            return Err(NetError::BadBuckets { found });
        }
        found as usize
    };
    let kings = if version == VERSION_3 {
        kings_of(bytes, hidden)?
    } else {
        Kings::NONE
    };
    if inputs as usize != kings.inputs() {
        return Err(NetError::BadInputs { found: inputs });
    }
    let shape = Shape {
        hidden,
        buckets,
        kings,
    };
    let expected = shape.file_len();
    if bytes.len() != expected {
        return Err(NetError::BadLength {
            found: bytes.len(),
            expected,
        });
    }
    let body = expected - 8;
    let mut sum = [0; 8];
    sum.copy_from_slice(bytes.get(body..).unwrap_or(&[0; 8]));
    let stored = u64::from_le_bytes(sum);
    let computed = fnv1a64(bytes.get(..body).unwrap_or_default());
    if stored != computed {
        return Err(NetError::BadChecksum {
            found: stored,
            computed,
        });
    }
    let w2_at = shape.header_len() + 2 * kings.inputs() * hidden + 2 * hidden;
    let w2 = bytes
        .get(w2_at..w2_at + 4 * hidden * buckets)
        .unwrap_or_default();
    if let Some((index, value)) = w2
        .as_chunks::<2>()
        .0
        .iter()
        .map(|&b| i16::from_le_bytes(b))
        .enumerate()
        .find(|(_, w)| w.unsigned_abs() > MAX_OUTPUT_WEIGHT as u16)
    {
        return Err(NetError::OutputWeightRange { index, value });
    }
    Ok(shape)
}

/// A version-3 header's king buckets (after the output buckets): their
/// count, the flags (bit 0: mirroring; no other bit exists) and the bucket
/// of each of the 64 squares.
fn kings_of(bytes: &[u8], hidden: usize) -> Result<Kings, NetError> {
    let u32_at = |at: usize| u32_at(bytes, at);
    let bad = |what: String| Err(NetError::BadKings { what });
    let count = u32_at(HEADER_BYTES + 4) as usize;
    if !(1..=MAX_KING_BUCKETS).contains(&count) || count * hidden > MAX_HIDDEN {
        return bad(format!(
            "{count} king buckets of {hidden} neurons (1 to {MAX_KING_BUCKETS}, and at most {MAX_HIDDEN} neurons in all)"
        ));
    }
    let flags = u32_at(HEADER_BYTES + 8);
    if flags > 1 {
        return bad(format!("flags {flags:#x} (only bit 0, mirroring, exists)"));
    }
    let mut map = [0; 64];
    let at = HEADER_BYTES + 12;
    if let Some(stored) = bytes.get(at..at + 64) {
        map.copy_from_slice(stored);
    }
    if let Some((square, &b)) = map
        .iter()
        .enumerate()
        .find(|&(_, &b)| usize::from(b) >= count)
    {
        return bad(format!(
            "square {square} in king bucket {b}, beyond the {count} buckets"
        ));
    }
    Ok(Kings {
        mirror: flags == 1,
        map,
        count,
    })
}

/// The little-endian u32 at `at`, 0 where `bytes` ends before it (the
/// length check that follows names the fault).
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0; 4];
    if let Some(s) = bytes.get(at..at + 4) {
        b.copy_from_slice(s);
    }
    u32::from_le_bytes(b)
}
