//! The engine's seeded generators: tiny, whole state one u64, and fixed bit
//! for bit, because runs replay them. Two algorithms, each where a replay
//! depends on its exact draws:
//!
//! - [`SplitMix64`]: the trainer (the validation split, the first weights and
//!   every epoch's shuffle; a checkpoint stores the state and a resumed run
//!   draws on), `genfens`, the weakened engine's move choice, the nets of
//!   random weights (`Network::random`) and the tests' random positions.
//! - [`XorShift64Star`]: `datagen`'s openings (a resumed run must play the
//!   same games from the same seed) and the data tests' random games.
//!
//! Each maps a draw to `0..n` its own way (`below`); that too is part of
//! what a replay depends on.

/// SplitMix64 (Steele, Lea and Flood; Vigna's splitmix64.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    pub state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by the high half of a 128-bit product.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in ±bound.
    pub fn uniform(&mut self, bound: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        (2.0 * unit - 1.0) * bound
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// xorshift64* (Vigna): the state must not be 0, which it never leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift64Star {
    state: u64,
}

impl XorShift64Star {
    pub fn new(state: u64) -> XorShift64Star {
        XorShift64Star { state }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// In 0..n (0 for n = 0): the high 32 bits of a draw, modulo n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() >> 32) as usize % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_splitmix64() {
        // The reference outputs for seed 1234567 (Vigna's splitmix64.c).
        let mut rng = SplitMix64::new(1_234_567);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
        let mut items: Vec<usize> = (0..100).collect();
        rng.shuffle(&mut items);
        let mut sorted = items.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_ne!(items, sorted);
    }

    #[test]
    fn the_generator_is_xorshift64_star() {
        // The first outputs from state 1 (0x47e4_ce4b_896c_dd1d first), as
        // datagen drew them before this module existed.
        let mut rng = XorShift64Star::new(1);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                5_180_492_295_206_395_165,
                12_380_297_144_915_551_517,
                13_389_498_078_930_870_103
            ]
        );
        let mut rng = XorShift64Star::new(1);
        assert_eq!(
            rng.below(1000),
            (5_180_492_295_206_395_165u64 >> 32) as usize % 1000
        );
        assert_eq!(rng.below(0), 0);
    }
}
