//! Move path enumeration: counts the leaves of the legal move tree, with bulk
//! counting at the last ply and the root moves shared out over a thread pool.

use rayon::prelude::*;
use shakmaty::{Chess, Move, Position};
use std::sync::atomic::{AtomicBool, Ordering};

/// Leaves of the tree `depth` plies deep below `pos`.
pub fn perft(pos: &Chess, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.legal_moves().len() as u64,
        _ => pos
            .legal_moves()
            .iter()
            .map(|&m| {
                let mut child = pos.clone();
                child.play_unchecked(m);
                perft(&child, depth - 1)
            })
            .sum(),
    }
}

/// The count below each root move, in move generation order, or `None` when
/// `stop` was raised before the end. With a pool, root moves run in parallel.
pub fn divide(
    pos: &Chess,
    depth: u32,
    pool: Option<&rayon::ThreadPool>,
    stop: &AtomicBool,
) -> Option<Vec<(Move, u64)>> {
    let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
    let count = |&m: &Move| -> Option<(Move, u64)> {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let mut child = pos.clone();
        child.play_unchecked(m);
        Some((m, counted(&child, depth.saturating_sub(1), stop)?))
    };
    match pool {
        Some(pool) if pool.current_num_threads() > 1 => {
            pool.install(|| moves.par_iter().map(count).collect())
        }
        _ => moves.iter().map(count).collect(),
    }
}

/// The lines of `perft` / `go perft`: `e2e4: 20` per root move, a blank
/// line, then `Nodes searched: N`; `None` when stopped.
pub fn report(
    pos: &Chess,
    depth: u32,
    mode: shakmaty::CastlingMode,
    pool: Option<&rayon::ThreadPool>,
    stop: &AtomicBool,
) -> Option<Vec<String>> {
    let parts = divide(pos, depth, pool, stop)?;
    let mut lines: Vec<String> = parts
        .iter()
        .map(|(m, n)| format!("{}: {n}", m.to_uci(mode)))
        .collect();
    let total: u64 = parts.iter().map(|(_, n)| n).sum();
    lines.push(String::new());
    lines.push(format!("Nodes searched: {total}"));
    Some(lines)
}

/// Like `perft`, but gives up when `stop` is raised; it looks at the flag at
/// nodes four or more plies from the leaves, where the check costs nothing.
fn counted(pos: &Chess, depth: u32, stop: &AtomicBool) -> Option<u64> {
    if depth < 4 {
        return Some(perft(pos, depth));
    }
    if stop.load(Ordering::Relaxed) {
        return None;
    }
    let mut total = 0;
    for m in pos.legal_moves() {
        let mut child = pos.clone();
        child.play_unchecked(m);
        total += counted(&child, depth - 1, stop)?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_counts() {
        let pos = Chess::default();
        let expected = [1, 20, 400, 8_902, 197_281];
        for (depth, &n) in expected.iter().enumerate() {
            assert_eq!(perft(&pos, depth as u32), n);
        }
    }

    #[test]
    fn divide_sums_to_perft_with_and_without_pool() {
        let pos = Chess::default();
        let stop = AtomicBool::new(false);
        let pool = crate::threads::pool("perft", 2).expect("pool");
        for p in [None, Some(&pool)] {
            let parts = divide(&pos, 5, p, &stop).expect("not stopped");
            assert_eq!(parts.len(), 20);
            assert_eq!(parts.iter().map(|(_, n)| n).sum::<u64>(), 4_865_609);
        }
    }

    #[test]
    fn stop_abandons_the_count() {
        let stop = AtomicBool::new(true);
        assert_eq!(divide(&Chess::default(), 6, None, &stop), None);
    }
}
