//! The net file's format (NNUE-SPEC.md, versions 1 and 2): its constants,
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
/// Feature inputs: 2 sides × 6 roles × 64 squares.
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
/// Bytes before the weights in version 1; version 2 adds the bucket count.
pub const HEADER_BYTES: usize = 32;

/// What a net file holds: its version, hidden neurons and output buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub hidden: usize,
    pub buckets: usize,
}

impl Shape {
    /// The version a net of this shape is written in: 1 for a single
    /// output (so that version-1 nets read and write back byte for byte),
    /// else 2.
    pub const fn version(self) -> u32 {
        if self.buckets == 1 {
            VERSION_1
        } else {
            VERSION_2
        }
    }

    /// Bytes before the weights.
    pub const fn header_len(self) -> usize {
        if self.buckets == 1 {
            HEADER_BYTES
        } else {
            HEADER_BYTES + 4
        }
    }

    /// The length of the file.
    pub const fn file_len(self) -> usize {
        let (n, b) = (self.hidden, self.buckets);
        self.header_len() + 2 * INPUTS * n + 2 * n + 2 * 2 * n * b + 4 * b + 8
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

/// The longest net file: `MAX_HIDDEN` neurons and `MAX_BUCKETS` outputs
/// (about 6.4 MB). A longer file is refused unread.
pub const MAX_FILE_LEN: usize = Shape {
    hidden: MAX_HIDDEN,
    buckets: MAX_BUCKETS,
}
.file_len();

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
    /// A version-2 net's output bucket count outside 2..=`MAX_BUCKETS`.
    BadBuckets {
        found: u32,
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
                    "net version {found} is not supported (expected {VERSION_1} or {VERSION_2})"
                )
            }
            NetError::BadInputs { found } => {
                write!(f, "net has {found} inputs (expected {INPUTS})")
            }
            NetError::BadHidden { found } => write!(
                f,
                "net hidden size {found} is not a multiple of {HIDDEN_STEP} in 16..={MAX_HIDDEN}"
            ),
            NetError::BadBuckets { found } => write!(
                f,
                "net has {found} output buckets (a version-2 net has 2 to {MAX_BUCKETS})"
            ),
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
    let u32_at = |at: usize| {
        let mut b = [0; 4];
        if let Some(s) = bytes.get(at..at + 4) {
            b.copy_from_slice(s);
        }
        u32::from_le_bytes(b)
    };
    if bytes.len() < HEADER_BYTES {
        return Err(NetError::TooShort { len: bytes.len() });
    }
    let mut magic = [0; 8];
    magic.copy_from_slice(bytes.get(..8).unwrap_or(&[0; 8]));
    if magic != MAGIC {
        return Err(NetError::BadMagic { found: magic });
    }
    let version = u32_at(8);
    if version != VERSION_1 && version != VERSION_2 {
        return Err(NetError::BadVersion { found: version });
    }
    let inputs = u32_at(12);
    if inputs as usize != INPUTS {
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
        if !(2..=MAX_BUCKETS as u32).contains(&found) {
            return Err(NetError::BadBuckets { found });
        }
        found as usize
    };
    let shape = Shape { hidden, buckets };
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
    let w2_at = shape.header_len() + 2 * INPUTS * hidden + 2 * hidden;
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
