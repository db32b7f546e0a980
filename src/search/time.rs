//! Time management: from the `go` fields to two bounds. The soft bound stops
//! the search from starting another iteration; the hard bound stops it where
//! it stands. Both already have `Move Overhead` taken off.

use crate::uci::parse::GoParams;
use shakmaty::Color;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    pub soft: Duration,
    pub hard: Duration,
    /// `movetime`: use all of it, whatever the search looks like.
    pub exact: bool,
}

/// Moves we plan for when the GUI does not say (sudden death).
const DEFAULT_MOVES_TO_GO: u64 = 25;

impl TimeBudget {
    /// `None` when the search has no time limit (depth, nodes, mate, infinite).
    pub fn new(go: &GoParams, side: Color, overhead_ms: u64) -> Option<TimeBudget> {
        if let Some(movetime) = go.movetime {
            let ms = movetime.saturating_sub(overhead_ms).max(1);
            let d = Duration::from_millis(ms);
            return Some(TimeBudget {
                soft: d,
                hard: d,
                exact: true,
            });
        }
        let (clock, inc) = match side {
            Color::White => (go.wtime, go.winc),
            Color::Black => (go.btime, go.binc),
        };
        let clock = clock?;
        let inc = inc.unwrap_or(0);
        let mtg = go.movestogo.unwrap_or(DEFAULT_MOVES_TO_GO).clamp(1, 100);
        // The time for the moves to go: the clock and the increments still
        // to come, less the overhead of every one of those moves and two
        // more in reserve. With a few milliseconds left this is nothing,
        // and the search stops after its first iteration.
        let pool = (clock + inc * (mtg - 1))
            .saturating_sub(overhead_ms * (mtg + 2))
            .max(1);
        let share = pool / mtg;
        let usable = clock.saturating_sub(overhead_ms).max(1);
        let (soft_cap, hard_cap) = if mtg == 1 {
            (usable * 7 / 10, usable * 9 / 10)
        } else {
            (usable * 4 / 10, usable * 7 / 10)
        };
        let soft = share.min(soft_cap).max(1);
        let hard = (share * 4).min(hard_cap).max(soft);
        Some(TimeBudget {
            soft: Duration::from_millis(soft),
            hard: Duration::from_millis(hard),
            exact: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(wtime: u64, winc: u64, movestogo: Option<u64>) -> GoParams {
        GoParams {
            wtime: Some(wtime),
            btime: Some(1),
            winc: Some(winc),
            movestogo,
            ..GoParams::default()
        }
    }

    #[test]
    fn never_more_than_the_clock_minus_overhead() {
        for clock in [1, 5, 20, 100, 1_000, 60_000, 9_000_000] {
            for inc in [0, 10, 100, 2_000] {
                for mtg in [None, Some(1), Some(2), Some(40)] {
                    let b =
                        TimeBudget::new(&go(clock, inc, mtg), Color::White, 10).expect("budget");
                    let limit = clock.saturating_sub(10).max(1);
                    assert!(
                        b.hard.as_millis() as u64 <= limit,
                        "{clock} {inc} {mtg:?}: {b:?}"
                    );
                    assert!(b.soft <= b.hard);
                }
            }
        }
    }

    #[test]
    fn a_few_milliseconds_left_means_almost_no_thinking() {
        // 29 ms on the clock, 10 ms increment, 10 ms overhead: answer at once.
        let b = TimeBudget::new(&go(29, 10, None), Color::White, 10).expect("budget");
        assert_eq!(b.hard, Duration::from_millis(1));
    }

    #[test]
    fn classical_control_spreads_the_time() {
        // 40 moves in 150 minutes, 40 to go: about 3.75 minutes a move.
        let b = TimeBudget::new(&go(9_000_000, 0, Some(40)), Color::White, 10).expect("budget");
        assert!(
            (200_000..=230_000).contains(&(b.soft.as_millis() as u64)),
            "{b:?}"
        );
    }

    #[test]
    fn movetime_less_overhead_and_black_clock() {
        let g = GoParams {
            movetime: Some(1000),
            ..GoParams::default()
        };
        let b = TimeBudget::new(&g, Color::White, 50).expect("budget");
        assert_eq!(b.hard, Duration::from_millis(950));
        let g = GoParams {
            wtime: Some(100_000),
            btime: Some(1000),
            ..GoParams::default()
        };
        let b = TimeBudget::new(&g, Color::Black, 10).expect("budget");
        assert!(b.hard < Duration::from_millis(1000));
        assert_eq!(
            TimeBudget::new(&GoParams::default(), Color::White, 10),
            None
        );
    }
}
