//! Playing below full strength, on the Elo scale of Stockfish's own
//! `UCI_Elo` (so that a GUI's number means the same with either engine).
//! A weaker Qilin sees less (a node cap per move: short tactics are missed
//! as a club player misses them) and chooses less surely (a random choice
//! among the best few lines, likelier the better the line: near-equal moves
//! are mixed up often, a clearly worse one rarely, a losing blunder never
//! while a safe move exists).
//!
//! The node caps are measured, not guessed: at each anchor below, Qilin
//! with that cap (and the temperature of its level) was matched against
//! Stockfish 15.1 at the same `UCI_Elo` at 10+0.1 (README, "Playing
//! strength", for the table and the command).
//!
//! Levels are asked for in two ways, both as Stockfish 15.1 declares them
//! so that a GUI or lichess-bot configuration copied from it works
//! unchanged: `UCI_Elo` 1350..2850 with `UCI_LimitStrength`, and `Skill
//! Level` 0..20. Only 1350..[`Strength::MAX_ELO`] is calibrated; a level
//! above it is played at full strength (see [`Strength::limited`]).

use crate::score::MATE_BOUND;

/// (Elo, nodes a move) where a match put Qilin, choosing among
/// [`Strength::LINES`] lines, level with Stockfish at that `UCI_Elo`;
/// between anchors the cap grows geometrically (Elo is close to linear in
/// the logarithm of the nodes).
const CHOOSING_ANCHORS: [(u32, f64); 5] = [
    (1350, 1_030.0),
    (1400, 1_350.0),
    (1700, 6_500.0),
    (2000, 100_000.0),
    (2100, 190_000.0),
];

/// Above the choosing range a level plays its single best line. Searching
/// four lines costs strength the top levels cannot give: at 10+0.1 four
/// lines stop near 2180 however many nodes they may search (400,000, a cap
/// the clock mostly reaches first, played +81 ± 65 against Stockfish's
/// 2100), while one line goes on up to full strength (one line at 150,000
/// nodes played −115 ± 61 against 2300, so about 2185).
/// (Elo, nodes a move) as above: 2200 is measured; 2100, the lower end of
/// the band, is set from it by about 70 Elo a doubling.
const SINGLE_LINE_ANCHORS: [(u32, f64); 2] = [(2100, 65_000.0), (2200, 175_000.0)];

/// The band in which the choice among lines cools from 30 cp to 2 cp.
const CHOOSING_ELO: (u32, u32) = (
    CHOOSING_ANCHORS[0].0,
    CHOOSING_ANCHORS[CHOOSING_ANCHORS.len() - 1].0,
);

/// A playing strength below full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strength {
    elo: u32,
    /// Seeds the choice among lines; the same seed and search give the same move.
    seed: u64,
}

impl Strength {
    /// The weakest level: Stockfish's lowest.
    pub const MIN_ELO: u32 = CHOOSING_ANCHORS[0].0;
    /// The top calibrated level; above it Qilin plays at full strength.
    pub const MAX_ELO: u32 = SINGLE_LINE_ANCHORS[SINGLE_LINE_ANCHORS.len() - 1].0;
    /// Lines searched to choose among, up to the top of the choosing band.
    pub const LINES: usize = 4;
    /// The top of Stockfish 15.1's `UCI_Elo` range, declared as it is so
    /// that a configuration copied from Stockfish is accepted.
    pub const DECLARED_MAX_ELO: u32 = 2850;
    /// `Skill Level` as Stockfish declares it; the top is full strength.
    pub const MAX_SKILL: u32 = 20;

    /// The strength to play at for an asked `elo`, or `None` for full
    /// strength. Above the top calibrated anchor nothing is measured: a
    /// higher cap would be a guess, while full strength (about 2345 at
    /// 10+0.1) is what such a number asks for at least as nearly, so it
    /// plays with no cap. Below the bottom anchor the level is the bottom
    /// one.
    pub fn limited(elo: u32, seed: u64) -> Option<Strength> {
        (elo <= Self::MAX_ELO).then(|| Strength::new(elo, seed))
    }

    /// The Elo a `Skill Level` asks for, or `None` for full strength
    /// (level 20, or more). The map is Stockfish 15.1's own (its search
    /// turns `UCI_Elo` into a skill as ((Elo − 1346.6) / 143.4)^(1/0.806);
    /// this is the inverse), so a level means the same number on the
    /// `UCI_Elo` scale with either engine: 0 is 1347 (played as 1350), 4 is
    /// 1785, 7 is 2035, 9 is 2189; from 10 (2264) up the Elo is above the
    /// calibrated range and [`Strength::limited`] plays it at full strength.
    pub fn elo_of_skill(skill: u32) -> Option<u32> {
        (skill < Self::MAX_SKILL)
            .then(|| (1346.6 + 143.4 * f64::from(skill).powf(0.806)).round() as u32)
    }

    /// A strength of `elo`, clamped to the range Qilin honours.
    pub fn new(elo: u32, seed: u64) -> Strength {
        Strength {
            elo: elo.clamp(Self::MIN_ELO, Self::MAX_ELO),
            seed,
        }
    }

    #[cfg(test)]
    pub fn elo(self) -> u32 {
        self.elo
    }

    /// Lines to search: several to choose among, or one at the top levels.
    pub fn lines(self) -> usize {
        if self.elo <= CHOOSING_ELO.1 {
            Self::LINES
        } else {
            1
        }
    }

    /// Nodes per move, interpolated between the calibrated anchors.
    pub fn node_cap(self) -> u64 {
        let anchors: &[(u32, f64)] = if self.lines() > 1 {
            &CHOOSING_ANCHORS
        } else {
            &SINGLE_LINE_ANCHORS
        };
        // `new` clamps the Elo to the anchors' range, so a pair is found;
        // the last pair stands in all the same.
        let pair = anchors
            .windows(2)
            .find(|pair| self.elo <= pair[1].0)
            .unwrap_or(&anchors[anchors.len() - 2..]);
        let (low, high) = (pair[0], pair[1]);
        let span = f64::from(high.0.saturating_sub(low.0)).max(1.0);
        let fraction = (f64::from(self.elo.saturating_sub(low.0)) / span).clamp(0.0, 1.0);
        (low.1 * (high.1 / low.1).powf(fraction)).round() as u64
    }

    /// How far (centipawns) below the best a line's chance falls by e:
    /// 30 at the bottom of the choosing band, 2 at its top, linear in
    /// between (and 2 above, where only one line is searched).
    fn temperature(self) -> f64 {
        let (low, high) = CHOOSING_ELO;
        let above_bottom = self.elo.clamp(low, high) - low;
        2.0 + 28.0 * f64::from(high - low - above_bottom) / f64::from(high - low)
    }

    /// The index of the line to play among `scores` (best first, from the
    /// side to move's view).
    pub fn pick(self, scores: &[i32]) -> usize {
        let Some(&best) = scores.first() else {
            return 0;
        };
        let t = self.temperature();
        let weights: Vec<f64> = scores
            .iter()
            .map(|&s| {
                let losing_blunder = s <= -MATE_BOUND && best > -MATE_BOUND;
                let drop = f64::from(best.saturating_sub(s).max(0));
                if losing_blunder || drop > 4.0 * t {
                    0.0
                } else {
                    (-drop / t).exp()
                }
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let mut point = unit_random(self.seed) * total;
        for (i, w) in weights.iter().enumerate() {
            if point < *w {
                return i;
            }
            point -= w;
        }
        0
    }
}

/// A number in [0, 1) from a seed (SplitMix64's first draw).
fn unit_random(seed: u64) -> f64 {
    let z = crate::rng::SplitMix64::new(seed).next_u64();
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_is_clamped_and_nodes_grow_with_it() {
        assert_eq!(Strength::new(100, 0).elo(), Strength::MIN_ELO);
        assert_eq!(Strength::new(9999, 0).elo(), Strength::MAX_ELO);
        // Each anchor is met exactly (the single-line band's lower end
        // belongs to the choosing band); between two the cap is geometric.
        for (elo, nodes) in CHOOSING_ANCHORS.iter().chain(&SINGLE_LINE_ANCHORS[1..]) {
            assert_eq!(Strength::new(*elo, 0).node_cap(), *nodes as u64, "{elo}");
        }
        let (low, high) = (CHOOSING_ANCHORS[1], CHOOSING_ANCHORS[2]);
        let middle = Strength::new((low.0 + high.0) / 2, 0).node_cap() as f64;
        assert!((middle - (low.1 * high.1).sqrt()).abs() <= 1.0, "{middle}");
        let (low, high) = (SINGLE_LINE_ANCHORS[0], SINGLE_LINE_ANCHORS[1]);
        let middle = Strength::new((low.0 + high.0) / 2, 0).node_cap() as f64;
        assert!((middle - (low.1 * high.1).sqrt()).abs() <= 1.0, "{middle}");
        for band in [
            Strength::MIN_ELO..=CHOOSING_ELO.1,
            CHOOSING_ELO.1 + 1..=Strength::MAX_ELO,
        ] {
            let caps: Vec<u64> = band.map(|elo| Strength::new(elo, 0).node_cap()).collect();
            assert!(caps.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    #[test]
    fn the_top_levels_search_one_line() {
        assert_eq!(Strength::new(1350, 0).lines(), Strength::LINES);
        assert_eq!(Strength::new(2100, 0).lines(), Strength::LINES);
        assert_eq!(Strength::new(2101, 0).lines(), 1);
        assert_eq!(Strength::new(2200, 0).lines(), 1);
        // 2101 starts the single-line band at its lower end, 65,000 nodes
        // (one line at 65,000 nodes plays about as four at 190,000).
        assert_eq!(Strength::new(2101, 0).node_cap(), 65_647);
    }

    #[test]
    fn the_choice_cools_across_the_choosing_band_only() {
        let t = |elo| Strength::new(elo, 0).temperature();
        assert_eq!(t(1350), 30.0);
        assert!((t(1700) - (2.0 + 28.0 * 400.0 / 750.0)).abs() < 1e-9);
        assert_eq!(t(2100), 2.0);
        assert_eq!(t(2200), 2.0);
    }

    #[test]
    fn levels_above_the_calibrated_range_play_at_full_strength() {
        assert_eq!(
            Strength::limited(Strength::MAX_ELO, 7),
            Some(Strength::new(Strength::MAX_ELO, 7))
        );
        assert_eq!(Strength::limited(Strength::MAX_ELO + 1, 7), None);
        assert_eq!(Strength::limited(Strength::DECLARED_MAX_ELO, 7), None);
        assert_eq!(Strength::limited(1000, 7).map(Strength::elo), Some(1350));
    }

    #[test]
    fn skill_levels_follow_stockfish_s_elo_map() {
        // Stockfish 15.1: skill = ((Elo - 1346.6) / 143.4)^(1/0.806).
        let expected = [
            (0, 1347),
            (1, 1490),
            (4, 1785),
            (7, 2035),
            (8, 2113),
            (19, 2886),
        ];
        for (skill, elo) in expected {
            assert_eq!(Strength::elo_of_skill(skill), Some(elo), "skill {skill}");
        }
        assert_eq!(Strength::elo_of_skill(20), None);
        let elos: Vec<u32> = (0..20).filter_map(Strength::elo_of_skill).collect();
        assert!(elos.windows(2).all(|w| w[0] < w[1]), "{elos:?}");
    }

    #[test]
    fn a_lost_line_is_never_chosen_while_another_holds() {
        for seed in 0..2000 {
            let s = Strength::new(1350, seed);
            assert_eq!(s.pick(&[-50, -MATE_BOUND - 3]), 0);
            // A mate for us is far above anything else: always taken.
            assert_eq!(s.pick(&[MATE_BOUND + 10, 300, 290]), 0);
        }
    }

    #[test]
    fn equal_lines_are_mixed_and_worse_ones_rarer() {
        let count = |scores: &[i32], elo: u32| {
            let mut n = [0usize; 4];
            for seed in 0..4000 {
                n[Strength::new(elo, seed).pick(scores)] += 1;
            }
            n
        };
        let even = count(&[20, 20, 20, 20], 1350);
        assert!(even.iter().all(|&k| (800..1200).contains(&k)), "{even:?}");
        // 1350: temperature 30 cp; a line 30 cp worse has weight 1/e, one
        // more than 4 temperatures worse none.
        let graded = count(&[0, -30, -60, -121], 1350);
        assert!(graded[0] > graded[1] && graded[1] > graded[2], "{graded:?}");
        assert_eq!(graded[3], 0, "{graded:?}");
        // Near full strength a 100 cp worse line is almost never played.
        let strong = count(&[0, -100, -200, -300], CHOOSING_ELO.1);
        assert_eq!(strong[0], 4000, "{strong:?}");
    }
}
