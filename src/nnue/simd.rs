//! The two hot loops of the net, in i16 lanes: the accumulator update
//! (`out = input + Σ adds − Σ subs`, wrapping) and the output dot product
//! (`Σ clamp(x, 0, QA)² · w`, wrapping in i32). Each has a plain scalar
//! version and AVX2 and AVX-512BW versions chosen at run time; all give the
//! same integers (wrapping arithmetic is exact in any order), which the
//! tests hold them to.
//!
//! The dot product computes `clamp(x) * w` in 16 bits and multiplies by
//! `clamp(x)` again with `madd` into 32 bits: exact while |w| ≤ 128, which
//! `Network` guarantees (|W2| ≤ `MAX_OUTPUT_WEIGHT`).

use super::format::QA;

/// An instruction set the loops can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Scalar,
    Avx2,
    Avx512,
}

impl Level {
    #[cfg(test)]
    pub const ALL: [Level; 3] = [Level::Scalar, Level::Avx2, Level::Avx512];

    /// Whether this CPU can run the level's code.
    pub fn available(self) -> bool {
        match self {
            Level::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => {
                is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512f")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The fastest level this CPU has (the detection is cached by std).
    #[inline]
    pub fn best() -> Level {
        if Level::Avx512.available() {
            Level::Avx512
        } else if Level::Avx2.available() {
            Level::Avx2
        } else {
            Level::Scalar
        }
    }
}

/// Lanes every vector path handles at once at least (one AVX2 register).
const LANES: usize = 16;

/// `out = input + Σ adds − Σ subs`, lane by lane, wrapping. The numbers of
/// rows are constants, so that each kind of move gets a loop of its own
/// with every row in registers (quiet 1+1, capture 1+2, castling 2+2).
#[inline]
pub fn update<const A: usize, const S: usize>(
    out: &mut [i16],
    input: &[i16],
    adds: [&[i16]; A],
    subs: [&[i16]; S],
) {
    update_at(Level::best(), out, input, adds, subs);
}

/// `acc += Σ adds − Σ subs`, lane by lane, wrapping.
#[inline]
pub fn update_in_place<const A: usize, const S: usize>(
    acc: &mut [i16],
    adds: [&[i16]; A],
    subs: [&[i16]; S],
) {
    update_in_place_at(Level::best(), acc, adds, subs);
}

/// `Σ clamp(acc[j], 0, QA)² · w[j]`, wrapping in i32.
#[inline]
pub fn screlu_dot(acc: &[i16], w: &[i16]) -> i32 {
    screlu_dot_at(Level::best(), acc, w)
}

/// Whether the vector loops may run on these slices: every slice as long
/// as `len`, a whole number of vectors.
fn shapes_fit(len: usize, inputs: &[&[i16]]) -> bool {
    len.is_multiple_of(LANES) && inputs.iter().all(|s| s.len() == len)
}

/// `update` with a given level; a level this CPU lacks, or slices of
/// different lengths, take the scalar code.
#[inline]
pub fn update_at<const A: usize, const S: usize>(
    level: Level,
    out: &mut [i16],
    input: &[i16],
    adds: [&[i16]; A],
    subs: [&[i16]; S],
) {
    let fits = input.len() == out.len()
        && shapes_fit(out.len(), &adds)
        && shapes_fit(out.len(), &subs)
        && level.available();
    #[cfg(target_arch = "x86_64")]
    if fits {
        let (dst, src, len) = (out.as_mut_ptr(), input.as_ptr(), out.len());
        let (a, s) = (adds.map(<[i16]>::as_ptr), subs.map(<[i16]>::as_ptr));
        match level {
            // SAFETY: the CPU has the level's features (`available`); `out`
            // and `input` hold `len` lanes, as every row does (`shapes_fit`),
            // and `len` is a multiple of 16; `out` is a distinct `&mut`.
            Level::Avx512 => return unsafe { x86::update_avx512(dst, src, len, a, s) },
            // SAFETY: as above.
            Level::Avx2 => return unsafe { x86::update_avx2(dst, src, len, a, s) },
            Level::Scalar => {}
        }
    }
    let _ = fits;
    update_scalar(out, input, adds, subs);
}

/// `update_in_place` with a given level (see `update_at`).
#[inline]
pub fn update_in_place_at<const A: usize, const S: usize>(
    level: Level,
    acc: &mut [i16],
    adds: [&[i16]; A],
    subs: [&[i16]; S],
) {
    let fits = shapes_fit(acc.len(), &adds) && shapes_fit(acc.len(), &subs) && level.available();
    #[cfg(target_arch = "x86_64")]
    if fits {
        let (ptr, len) = (acc.as_mut_ptr(), acc.len());
        let (a, s) = (adds.map(<[i16]>::as_ptr), subs.map(<[i16]>::as_ptr));
        match level {
            // SAFETY: as in `update_at`; input and output are the same
            // lanes, and each vector is read before it is written.
            Level::Avx512 => return unsafe { x86::update_avx512(ptr, ptr, len, a, s) },
            // SAFETY: as above.
            Level::Avx2 => return unsafe { x86::update_avx2(ptr, ptr, len, a, s) },
            Level::Scalar => {}
        }
    }
    let _ = fits;
    for a in adds {
        acc.iter_mut()
            .zip(a)
            .for_each(|(v, &x)| *v = v.wrapping_add(x));
    }
    for s in subs {
        acc.iter_mut()
            .zip(s)
            .for_each(|(v, &x)| *v = v.wrapping_sub(x));
    }
}

/// `screlu_dot` with a given level (see `update_at`). Exact for |w| ≤ 128.
pub fn screlu_dot_at(level: Level, acc: &[i16], w: &[i16]) -> i32 {
    let fits = shapes_fit(acc.len(), &[w]) && level.available();
    #[cfg(target_arch = "x86_64")]
    if fits {
        let (a, b, len) = (acc.as_ptr(), w.as_ptr(), acc.len());
        match level {
            // SAFETY: the CPU has the level's features; both slices hold
            // `len` lanes, a multiple of 16.
            Level::Avx512 => return unsafe { x86::dot_avx512(a, b, len) },
            // SAFETY: as above.
            Level::Avx2 => return unsafe { x86::dot_avx2(a, b, len) },
            Level::Scalar => {}
        }
    }
    let _ = fits;
    screlu_dot_scalar(acc, w)
}

/// The reference: what the spec's formulas say, lane by lane.
pub fn update_scalar<const A: usize, const S: usize>(
    out: &mut [i16],
    input: &[i16],
    adds: [&[i16]; A],
    subs: [&[i16]; S],
) {
    out.iter_mut().zip(input).for_each(|(o, &x)| *o = x);
    for a in adds {
        out.iter_mut()
            .zip(a)
            .for_each(|(v, &x)| *v = v.wrapping_add(x));
    }
    for s in subs {
        out.iter_mut()
            .zip(s)
            .for_each(|(v, &x)| *v = v.wrapping_sub(x));
    }
}

/// The reference dot product.
pub fn screlu_dot_scalar(acc: &[i16], w: &[i16]) -> i32 {
    acc.iter().zip(w).fold(0i32, |sum, (&x, &w)| {
        let c = i32::from(x).clamp(0, QA);
        sum.wrapping_add((c * c).wrapping_mul(i32::from(w)))
    })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::QA;
    use std::arch::x86_64::*;

    /// `out = input + Σ adds − Σ subs` for `len` lanes, 32 at a time, the
    /// last 16 (when `len` is an odd multiple of 16) with AVX2.
    ///
    /// # Safety
    /// The CPU has AVX-512F, AVX-512BW and AVX2; `out` and `input` point to
    /// `len` lanes (they may be the same lanes), every row has `len` lanes,
    /// and `len` is a multiple of 16.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub unsafe fn update_avx512<const A: usize, const S: usize>(
        out: *mut i16,
        input: *const i16,
        len: usize,
        adds: [*const i16; A],
        subs: [*const i16; S],
    ) {
        let mut i = 0;
        while i + 32 <= len {
            // SAFETY: lanes i..i+32 are within `len` of every pointer.
            unsafe {
                let mut v = _mm512_loadu_si512(input.add(i).cast());
                for a in adds {
                    v = _mm512_add_epi16(v, _mm512_loadu_si512(a.add(i).cast()));
                }
                for s in subs {
                    v = _mm512_sub_epi16(v, _mm512_loadu_si512(s.add(i).cast()));
                }
                _mm512_storeu_si512(out.add(i).cast(), v);
            }
            i += 32;
        }
        if i < len {
            // The last 16 lanes.
            // SAFETY: lanes i..i+16 = i..len are within every pointer.
            unsafe {
                let mut v = _mm256_loadu_si256(input.add(i).cast());
                for a in adds {
                    v = _mm256_add_epi16(v, _mm256_loadu_si256(a.add(i).cast()));
                }
                for s in subs {
                    v = _mm256_sub_epi16(v, _mm256_loadu_si256(s.add(i).cast()));
                }
                _mm256_storeu_si256(out.add(i).cast(), v);
            }
        }
    }

    /// As `update_avx512`, 16 lanes at a time.
    ///
    /// # Safety
    /// The CPU has AVX2; otherwise as `update_avx512`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn update_avx2<const A: usize, const S: usize>(
        out: *mut i16,
        input: *const i16,
        len: usize,
        adds: [*const i16; A],
        subs: [*const i16; S],
    ) {
        let mut i = 0;
        while i + 16 <= len {
            // SAFETY: lanes i..i+16 are within `len` of every pointer.
            unsafe {
                let mut v = _mm256_loadu_si256(input.add(i).cast());
                for a in adds {
                    v = _mm256_add_epi16(v, _mm256_loadu_si256(a.add(i).cast()));
                }
                for s in subs {
                    v = _mm256_sub_epi16(v, _mm256_loadu_si256(s.add(i).cast()));
                }
                _mm256_storeu_si256(out.add(i).cast(), v);
            }
            i += 16;
        }
    }

    /// `Σ clamp(acc, 0, QA)² · w` over `len` lanes, 32 at a time.
    ///
    /// # Safety
    /// The CPU has AVX-512F, AVX-512BW and AVX2; both pointers hold `len`
    /// lanes, a multiple of 16.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub unsafe fn dot_avx512(acc: *const i16, w: *const i16, len: usize) -> i32 {
        let zero = _mm512_setzero_si512();
        let qa = _mm512_set1_epi16(QA as i16);
        let mut sum = _mm512_setzero_si512();
        let mut i = 0;
        while i + 32 <= len {
            // SAFETY: lanes i..i+32 are within `len`.
            let (x, weights) = unsafe {
                (
                    _mm512_loadu_si512(acc.add(i).cast()),
                    _mm512_loadu_si512(w.add(i).cast()),
                )
            };
            let c = _mm512_min_epi16(_mm512_max_epi16(x, zero), qa);
            let cw = _mm512_mullo_epi16(c, weights);
            sum = _mm512_add_epi32(sum, _mm512_madd_epi16(cw, c));
            i += 32;
        }
        let mut total = _mm512_reduce_add_epi32(sum);
        if i < len {
            // SAFETY: the remaining 16 lanes, with the same guarantees.
            total = total.wrapping_add(unsafe { dot_avx2(acc.add(i), w.add(i), len - i) });
        }
        total
    }

    /// As `dot_avx512`, 16 lanes at a time.
    ///
    /// # Safety
    /// The CPU has AVX2; both pointers hold `len` lanes, a multiple of 16.
    #[target_feature(enable = "avx2")]
    pub unsafe fn dot_avx2(acc: *const i16, w: *const i16, len: usize) -> i32 {
        let zero = _mm256_setzero_si256();
        let qa = _mm256_set1_epi16(QA as i16);
        let mut sum = _mm256_setzero_si256();
        let mut i = 0;
        while i + 16 <= len {
            // SAFETY: lanes i..i+16 are within `len`.
            let (x, weights) = unsafe {
                (
                    _mm256_loadu_si256(acc.add(i).cast()),
                    _mm256_loadu_si256(w.add(i).cast()),
                )
            };
            let c = _mm256_min_epi16(_mm256_max_epi16(x, zero), qa);
            let cw = _mm256_mullo_epi16(c, weights);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(cw, c));
            i += 16;
        }
        let halves = _mm_add_epi32(
            _mm256_castsi256_si128(sum),
            _mm256_extracti128_si256::<1>(sum),
        );
        let pairs = _mm_add_epi32(halves, _mm_shuffle_epi32::<0b01_00_11_10>(halves));
        let one = _mm_add_epi32(pairs, _mm_shuffle_epi32::<0b10_11_00_01>(pairs));
        _mm_cvtsi128_si32(one)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Test data from the engine's generator.
    struct Rng(SplitMix64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0.next_u64()
        }
        /// Any i16, with the extremes and the clamp edges often.
        fn lane(&mut self) -> i16 {
            const EDGES: [i16; 8] = [i16::MIN, i16::MAX, -1, 0, 1, 254, 255, 256];
            match self.next() % 4 {
                0 => EDGES[(self.next() % 8) as usize],
                1 => (self.next() % 600) as i16 - 200,
                _ => self.next() as i16,
            }
        }
        fn weight(&mut self) -> i16 {
            match self.next() % 4 {
                0 => [-127, 127, 0][(self.next() % 3) as usize],
                _ => (self.next() % 255) as i16 - 127,
            }
        }
        fn lanes(&mut self, n: usize) -> Vec<i16> {
            (0..n).map(|_| self.lane()).collect()
        }
    }

    /// The levels this CPU has; AVX-512 must be among them where the CPU
    /// says it has AVX-512BW (the detection must not silently fail).
    fn levels() -> Vec<Level> {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        if cpuinfo.contains(" avx512bw") {
            assert!(Level::Avx512.available());
        }
        if cpuinfo.contains(" avx2") {
            assert!(Level::Avx2.available());
        }
        let levels: Vec<Level> = Level::ALL.into_iter().filter(|l| l.available()).collect();
        eprintln!("SIMD levels tested: {levels:?}");
        levels
    }

    #[test]
    fn the_scalar_loops_compute_the_spec_formulas() {
        let acc = [
            -5,
            0,
            1,
            100,
            255,
            256,
            300,
            i16::MIN,
            i16::MAX,
            7,
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        let w = [9, 9, 2, 3, 1, -1, -2, 127, -127, 0, 0, 0, 0, 0, 0, 0];
        // 0 + 0 + 1·2 + 10,000·3 + 65,025 − 65,025 − 2·65,025 + 0 − 127·65,025
        let expected = 2 + 30_000 + 65_025 - 65_025 - 130_050 - 127 * 65_025;
        for level in levels() {
            assert_eq!(screlu_dot_at(level, &acc, &w), expected, "{level:?}");
        }
        let mut out = [0i16; 16];
        let input = [i16::MAX; 16];
        let one = [1i16; 16];
        let two = [2i16; 16];
        update_scalar(&mut out, &input, [&one[..]], [&two[..]]);
        // MAX + 1 wraps to MIN; − 2 wraps back to MAX − 1.
        assert_eq!(out, [i16::MAX - 1; 16]);
    }

    /// `update`, `update_in_place` and `screlu_dot` of every level equal
    /// the scalar code, for `A` rows added and `S` taken away.
    fn check<const A: usize, const S: usize>(rng: &mut Rng, levels: &[Level], len: usize) {
        let input = rng.lanes(len);
        let adds: [Vec<i16>; A] = std::array::from_fn(|_| rng.lanes(len));
        let subs: [Vec<i16>; S] = std::array::from_fn(|_| rng.lanes(len));
        let (adds, subs) = (
            adds.each_ref().map(|v| &v[..]),
            subs.each_ref().map(|v| &v[..]),
        );
        let mut expected = vec![0; len];
        update_scalar(&mut expected, &input, adds, subs);
        let w: Vec<i16> = (0..len).map(|_| rng.weight()).collect();
        let dot = screlu_dot_scalar(&input, &w);
        for &level in levels {
            let mut out = vec![0; len];
            update_at(level, &mut out, &input, adds, subs);
            assert_eq!(out, expected, "{level:?} update {A}+{S}, len {len}");
            let mut acc = input.clone();
            update_in_place_at(level, &mut acc, adds, subs);
            assert_eq!(acc, expected, "{level:?} in place {A}+{S}, len {len}");
            assert_eq!(
                screlu_dot_at(level, &input, &w),
                dot,
                "{level:?} dot, len {len}"
            );
        }
    }

    #[test]
    fn every_level_gives_the_scalar_integers() {
        let levels = levels();
        let mut rng = Rng(SplitMix64::new(0x9e37_79b9_7f4a_7c15));
        for round in 0..40 {
            let len = [16, 32, 48, 64, 256, 1024, 4096, 80][round % 8];
            check::<0, 0>(&mut rng, &levels, len);
            check::<1, 0>(&mut rng, &levels, len);
            check::<1, 1>(&mut rng, &levels, len);
            check::<1, 2>(&mut rng, &levels, len);
            check::<2, 2>(&mut rng, &levels, len);
            check::<4, 0>(&mut rng, &levels, len);
            check::<0, 3>(&mut rng, &levels, len);
        }
    }

    #[test]
    fn the_sum_wraps_alike_on_every_level() {
        // 1024 lanes of 255² · 127 = 8.26e6 each: 8.46e9 wraps i32.
        let acc = vec![255i16; 1024];
        let w = vec![127i16; 1024];
        let exact: i64 = 1024 * 65_025 * 127;
        assert!(exact > i64::from(i32::MAX));
        for level in levels() {
            assert_eq!(screlu_dot_at(level, &acc, &w), exact as i32, "{level:?}");
        }
    }

    #[test]
    fn slices_that_do_not_fit_take_the_scalar_path() {
        let input = [3i16; 20];
        let row = [1i16; 20];
        for level in levels() {
            let mut out = [0i16; 20];
            update_at(level, &mut out, &input, [&row], []);
            assert_eq!(out, [4; 20]);
            assert_eq!(screlu_dot_at(level, &input, &row), 9 * 20);
        }
    }
}
