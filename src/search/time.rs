//! Time management: from the `go` fields to two bounds. The soft bound stops
//! the search from starting another iteration; the hard bound stops it where
//! it stands. Both already have `Move Overhead` taken off.

use super::params as p;
use std::time::Duration;

/// The time a search may take, as the side to move's clock says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeLimit {
    /// No clock: depth, nodes, mate or until stopped.
    #[default]
    None,
    /// Think this many milliseconds, whatever the search looks like.
    MoveTime(u64),
    /// The side to move's clock: milliseconds left, the increment per move,
    /// and the moves until the next time control (`None` for sudden death).
    Clock {
        remaining: u64,
        increment: u64,
        moves_to_go: Option<u64>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    pub soft: Duration,
    pub hard: Duration,
    /// `movetime`: use all of it, whatever the search looks like.
    pub exact: bool,
}

impl TimeBudget {
    /// `None` when the search has no time limit (depth, nodes, mate, infinite).
    /// `game_ply` is the number of plies played in the game so far (as the
    /// position's move number says).
    pub fn new(limit: TimeLimit, overhead_ms: u64, game_ply: u32) -> Option<TimeBudget> {
        let (clock, inc, moves_to_go) = match limit {
            TimeLimit::None => return None,
            TimeLimit::MoveTime(movetime) => {
                let d = Duration::from_millis(movetime.saturating_sub(overhead_ms).max(1));
                return Some(TimeBudget {
                    soft: d,
                    hard: d,
                    exact: true,
                });
            }
            TimeLimit::Clock {
                remaining,
                increment,
                moves_to_go,
            } => (remaining, increment, moves_to_go),
        };
        // Moves we plan for when the GUI does not say (sudden death).
        let default_moves_to_go = u64::from(p::time_moves_to_go().unsigned_abs());
        let mtg = moves_to_go.unwrap_or(default_moves_to_go).clamp(1, 100);
        // The time for the moves to go: the clock and the increments still
        // to come, less the overhead of every one of those moves and two
        // more in reserve. With a few milliseconds left this is nothing,
        // and the search stops after its first iteration. Clocks may be
        // anything up to u64::MAX: every step saturates.
        let pool = clock
            .saturating_add(inc.saturating_mul(mtg - 1))
            .saturating_sub(overhead_ms.saturating_mul(mtg + 2))
            .max(1);
        let share = pool / mtg;
        let usable = clock.saturating_sub(overhead_ms).max(1);
        let (soft_cap, hard_cap) = if mtg == 1 {
            (tenths(usable, 7), tenths(usable, 9))
        } else {
            (
                tenths(usable, u64::from(p::time_soft_cap().unsigned_abs())),
                tenths(usable, u64::from(p::time_hard_cap().unsigned_abs())),
            )
        };
        let soft = share.min(soft_cap).max(1);
        let hard_factor = hard_factor(
            game_ply,
            p::time_hard_factor(),
            p::time_hard_plies(),
            p::time_hard_max(),
        );
        let hard = share.saturating_mul(hard_factor).min(hard_cap).max(soft);
        Some(TimeBudget {
            soft: Duration::from_millis(soft),
            hard: Duration::from_millis(hard),
            exact: false,
        })
    }
}

/// How many times a move's share the hard bound may be at `game_ply`: `base`
/// at the start, one more every `per_plies` plies, up to `max` (never below
/// `base`). Early on a move that runs long takes its time from many moves
/// to come; later fewer moves share what is left, and a hard one may take
/// more of it.
fn hard_factor(game_ply: u32, base: i32, per_plies: i32, max: i32) -> u64 {
    let base = u64::from(base.unsigned_abs());
    let per_plies = u64::from(per_plies.unsigned_abs().max(1));
    base.saturating_add(u64::from(game_ply) / per_plies)
        .min(u64::from(max.unsigned_abs()))
        .max(base)
}

/// The soft bound's factor from the share of the last iteration's root
/// nodes that went to its best move, `offset − slope × share` in hundredths,
/// kept within 0.5–2: a best move that took nearly all the nodes is clear,
/// one that took few is contested and worth more time.
pub fn effort_factor(best_nodes: u64, root_nodes: u64, offset: i32, slope: i32) -> f64 {
    if root_nodes == 0 {
        return 1.0;
    }
    let share = (best_nodes as f64 / root_nodes as f64).min(1.0);
    ((f64::from(offset) - f64::from(slope) * share) / 100.0).clamp(0.5, 2.0)
}

/// The soft bound's factor from the best score's change since the last
/// iteration: `per_100cp` hundredths more per 100 cp it fell (less when it
/// rose), kept within `min` and `max` hundredths.
pub fn falling_factor(previous: i32, now: i32, per_100cp: i32, min: i32, max: i32) -> f64 {
    let fell = f64::from(previous) - f64::from(now);
    let (min, max) = (f64::from(min) / 100.0, f64::from(max) / 100.0);
    (1.0 + fell * f64::from(per_100cp) / 10_000.0).clamp(min.min(max), max)
}

/// `tenths` tenths of `ms`, rounded down, without overflow.
fn tenths(ms: u64, tenths: u64) -> u64 {
    (u128::from(ms) * u128::from(tenths) / 10) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(remaining: u64, increment: u64, moves_to_go: Option<u64>) -> TimeLimit {
        TimeLimit::Clock {
            remaining,
            increment,
            moves_to_go,
        }
    }

    #[test]
    fn never_more_than_the_clock_minus_overhead() {
        for ms in [1, 5, 20, 100, 1_000, 60_000, 9_000_000] {
            for inc in [0, 10, 100, 2_000] {
                for mtg in [None, Some(1), Some(2), Some(40)] {
                    let b = TimeBudget::new(clock(ms, inc, mtg), 10, 0).expect("budget");
                    let limit = ms.saturating_sub(10).max(1);
                    assert!(
                        b.hard.as_millis() as u64 <= limit,
                        "{ms} {inc} {mtg:?}: {b:?}"
                    );
                    assert!(b.soft <= b.hard);
                }
            }
        }
    }

    #[test]
    fn a_few_milliseconds_left_means_almost_no_thinking() {
        // 29 ms on the clock, 10 ms increment, 10 ms overhead: answer at once.
        let b = TimeBudget::new(clock(29, 10, None), 10, 0).expect("budget");
        assert_eq!(b.hard, Duration::from_millis(1));
    }

    #[test]
    fn classical_control_spreads_the_time() {
        // 40 moves in 150 minutes, 40 to go: about 3.75 minutes a move.
        let b = TimeBudget::new(clock(9_000_000, 0, Some(40)), 10, 0).expect("budget");
        assert!(
            (200_000..=230_000).contains(&(b.soft.as_millis() as u64)),
            "{b:?}"
        );
    }

    #[test]
    fn movetime_less_overhead() {
        let b = TimeBudget::new(TimeLimit::MoveTime(1000), 50, 0).expect("budget");
        assert_eq!(
            (b.soft, b.hard),
            (Duration::from_millis(950), Duration::from_millis(950))
        );
        assert!(b.exact);
        assert_eq!(TimeBudget::new(TimeLimit::None, 10, 0), None);
    }

    /// `go wtime 18446744073709551615 winc 1` once wrapped to a 1 ms budget
    /// (and panicked in a debug build).
    #[test]
    fn huge_clocks_saturate_instead_of_wrapping() {
        for inc in [0, 1, u64::MAX] {
            for mtg in [None, Some(1), Some(1000)] {
                for overhead in [0, 10, 5000] {
                    let b =
                        TimeBudget::new(clock(u64::MAX, inc, mtg), overhead, 0).expect("budget");
                    assert!(b.soft >= Duration::from_secs(3600), "{inc} {mtg:?}: {b:?}");
                    assert!(b.soft <= b.hard);
                }
            }
        }
        let b = TimeBudget::new(TimeLimit::MoveTime(u64::MAX), 10, 0).expect("budget");
        assert_eq!(b.hard, Duration::from_millis(u64::MAX - 10));
    }

    #[test]
    fn the_hard_factor_grows_with_the_game_up_to_its_maximum() {
        assert_eq!(hard_factor(0, 4, 12, 7), 4);
        assert_eq!(hard_factor(11, 4, 12, 7), 4);
        assert_eq!(hard_factor(12, 4, 12, 7), 5);
        assert_eq!(hard_factor(30, 4, 12, 7), 6);
        assert_eq!(hard_factor(500, 4, 12, 7), 7);
        assert_eq!(hard_factor(u32::MAX, 4, 12, 7), 7);
        // A maximum at or below the base: the base throughout.
        assert_eq!(hard_factor(500, 4, 12, 4), 4);
        assert_eq!(hard_factor(500, 5, 12, 3), 5);
        assert_eq!(hard_factor(500, 4, 0, 7), 7);
    }

    #[test]
    fn the_best_moves_share_of_the_nodes_scales_the_soft_bound() {
        // 216 − 135 × share: a clear best move (90%) gets 0.945, a contested
        // one (20%) 1.89; the clamp holds it within 0.5–2.
        assert!((effort_factor(90, 100, 216, 135) - 0.945).abs() < 1e-9);
        assert!((effort_factor(20, 100, 216, 135) - 1.89).abs() < 1e-9);
        assert_eq!(effort_factor(0, 100, 300, 0), 2.0);
        assert_eq!(effort_factor(100, 100, 50, 250), 0.5);
        // No nodes counted, or the neutral setting: no effect.
        assert_eq!(effort_factor(0, 0, 216, 135), 1.0);
        assert_eq!(effort_factor(37, 100, 100, 0), 1.0);
    }

    #[test]
    fn a_falling_score_lengthens_the_soft_bound_within_its_limits() {
        assert!((falling_factor(50, -50, 50, 85, 150) - 1.5).abs() < 1e-9);
        assert!((falling_factor(50, 10, 50, 85, 150) - 1.2).abs() < 1e-9);
        assert!((falling_factor(0, 20, 50, 85, 150) - 0.9).abs() < 1e-9);
        assert_eq!(falling_factor(0, 1000, 50, 85, 150), 0.85);
        assert_eq!(falling_factor(30_000, -30_000, 100, 85, 250), 2.5);
        assert_eq!(falling_factor(400, -400, 0, 85, 150), 1.0);
    }
}
