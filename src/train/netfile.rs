//! The net file of NNUE-SPEC (versions 1 and 2): header, W1, B1, W2, B2, then the
//! FNV-1a 64 checksum of every byte before it, all little-endian.

use super::model::Quantised;

pub use crate::nnue::network::fnv1a64;

/// The file's bytes, written by the engine's own `Network::to_bytes` (one
/// writer of the format); `None` when the weights break the spec (a hidden
/// size that is not a multiple of 16, |W2| > 127).
pub fn encode(net: &Quantised) -> Option<Vec<u8>> {
    net.network().map(|n| n.to_bytes())
}

/// Writes a file whole or not at all: a temporary file beside it, then a
/// rename.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::model::{Layout, Net};

    /// The checksum written out by the test itself, not `fnv1a64`.
    fn independent_fnv(bytes: &[u8]) -> u64 {
        let mut h: u64 = 14_695_981_039_346_656_037;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(1_099_511_628_211);
        }
        h
    }

    #[test]
    fn fnv_of_known_strings() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_file_has_exactly_the_spec_layout() {
        let n = 32;
        let layout = Layout {
            hidden: n,
            buckets: 1,
            kings: crate::nnue::format::Kings::NONE,
        };
        let mut net = Net {
            layout,
            params: vec![0.0; layout.size()],
        };
        net.params[5 * n + 7] = 0.5; // W1[5][7] = 128 (127.5 rounded away from 0)
        net.params[767 * n + 31] = -1.0; // W1[767][31] = −255
        net.params[layout.b1() + 3] = 0.2; // B1[3] = 51
        net.params[layout.w2() + 1] = -1.98; // W2[1] = −127
        net.params[layout.w2() + n + 2] = 0.25; // W2[N+2] = 16
        net.params[layout.b2()] = -0.5; // B2 = −8160
        let bytes = encode(&net.quantise()).expect("a net within the spec");
        assert_eq!(bytes.len(), 32 + 2 * 768 * n + 2 * n + 4 * n + 4 + 8);
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let i16_at = |at: usize| i16::from_le_bytes(bytes[at..at + 2].try_into().expect("2"));
        assert_eq!(&bytes[..8], b"QILINNN1");
        assert_eq!(
            [
                u32_at(8),
                u32_at(12),
                u32_at(16),
                u32_at(20),
                u32_at(24),
                u32_at(28)
            ],
            [1, 768, 32, 255, 64, 400]
        );
        let w1 = 32;
        let b1 = w1 + 2 * 768 * n;
        let w2 = b1 + 2 * n;
        let b2 = w2 + 4 * n;
        assert_eq!(i16_at(w1 + 2 * (5 * n + 7)), 128);
        assert_eq!(i16_at(w1 + 2 * (767 * n + 31)), -255);
        assert_eq!(i16_at(b1 + 2 * 3), 51);
        assert_eq!(i16_at(w2 + 2), -127);
        assert_eq!(i16_at(w2 + 2 * (n + 2)), 16);
        assert_eq!(u32_at(b2) as i32, -8160);
        let nonzero = (w1..b2).step_by(2).filter(|&at| i16_at(at) != 0).count();
        assert_eq!(nonzero, 5);
        let sum = u64::from_le_bytes(bytes[b2 + 4..].try_into().expect("8"));
        assert_eq!(sum, independent_fnv(&bytes[..b2 + 4]));
    }
}
