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
    pub fn new(limit: TimeLimit, overhead_ms: u64) -> Option<TimeBudget> {
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
        let hard = share
            .saturating_mul(u64::from(p::time_hard_factor().unsigned_abs()))
            .min(hard_cap)
            .max(soft);
        Some(TimeBudget {
            soft: Duration::from_millis(soft),
            hard: Duration::from_millis(hard),
            exact: false,
        })
    }
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
                    let b = TimeBudget::new(clock(ms, inc, mtg), 10).expect("budget");
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
        let b = TimeBudget::new(clock(29, 10, None), 10).expect("budget");
        assert_eq!(b.hard, Duration::from_millis(1));
    }

    #[test]
    fn classical_control_spreads_the_time() {
        // 40 moves in 150 minutes, 40 to go: about 3.75 minutes a move.
        let b = TimeBudget::new(clock(9_000_000, 0, Some(40)), 10).expect("budget");
        assert!(
            (200_000..=230_000).contains(&(b.soft.as_millis() as u64)),
            "{b:?}"
        );
    }

    #[test]
    fn movetime_less_overhead() {
        let b = TimeBudget::new(TimeLimit::MoveTime(1000), 50).expect("budget");
        assert_eq!(
            (b.soft, b.hard),
            (Duration::from_millis(950), Duration::from_millis(950))
        );
        assert!(b.exact);
        assert_eq!(TimeBudget::new(TimeLimit::None, 10), None);
    }

    /// `go wtime 18446744073709551615 winc 1` once wrapped to a 1 ms budget
    /// (and panicked in a debug build).
    #[test]
    fn huge_clocks_saturate_instead_of_wrapping() {
        for inc in [0, 1, u64::MAX] {
            for mtg in [None, Some(1), Some(1000)] {
                for overhead in [0, 10, 5000] {
                    let b = TimeBudget::new(clock(u64::MAX, inc, mtg), overhead).expect("budget");
                    assert!(b.soft >= Duration::from_secs(3600), "{inc} {mtg:?}: {b:?}");
                    assert!(b.soft <= b.hard);
                }
            }
        }
        let b = TimeBudget::new(TimeLimit::MoveTime(u64::MAX), 10).expect("budget");
        assert_eq!(b.hard, Duration::from_millis(u64::MAX - 10));
    }
}
