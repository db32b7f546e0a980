//! The search: Lazy SMP over the rayon pool. Every worker runs the same
//! iterative deepening on its own stack and history, sharing only the
//! transposition table, the node counter and the stop flags. The main worker
//! (index 0) keeps time, prints, and decides the `bestmove`.

pub mod checks;
pub mod correction;
pub mod features;
pub mod history;
pub mod movepick;
pub mod see;
pub mod time;
pub mod tt;
mod worker;

use crate::eval::material_count;
use crate::game::Game;
use crate::uci::options::Options;
use crate::uci::output::Output;
use crate::uci::parse::GoParams;
use history::HistoryTables;
use shakmaty::{CastlingMode, Chess, Move, Position};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use time::TimeBudget;
use tt::{MATE, MATE_BOUND, TranspositionTable};
use worker::{Outcome, RootMove, Worker, find_move};

pub use worker::{child_key, zobrist};

pub const MAX_PLY: usize = 128;

/// Flags the controller raises for a running job.
#[derive(Debug, Default)]
pub struct Signals {
    pub stop: AtomicBool,
    pub ponderhit: AtomicBool,
}

/// Everything a search needs, copied out of the controller.
pub struct SearchJob {
    pub game: Game,
    pub params: GoParams,
    /// The legal moves of `go searchmoves`; empty means all moves.
    pub searchmoves: Vec<Move>,
    pub options: Options,
    pub pool: Arc<rayon::ThreadPool>,
    pub tt: Arc<TranspositionTable>,
    /// Move-ordering memory kept from the game's earlier searches.
    pub histories: Arc<HistoryTables>,
    pub out: Output,
}

/// The limits of one `go`, with time turned into a budget.
#[derive(Clone, Debug)]
pub struct Limits {
    pub depth: i32,
    pub nodes: Option<u64>,
    pub mate: Option<u64>,
    pub budget: Option<TimeBudget>,
    /// No `bestmove` before `stop`: `go infinite`, or `go` with no limit at all.
    pub infinite: bool,
}

impl Limits {
    pub fn new(go: &GoParams, side: shakmaty::Color, overhead_ms: u64) -> Limits {
        let budget = TimeBudget::new(go, side, overhead_ms);
        let unlimited =
            budget.is_none() && go.depth.is_none() && go.nodes.is_none() && go.mate.is_none();
        Limits {
            depth: go.depth.map_or(MAX_PLY as i32 - 1, |d| {
                d.clamp(1, MAX_PLY as u64 - 1) as i32
            }),
            nodes: go.nodes,
            mate: go.mate,
            budget,
            infinite: go.infinite || (unlimited && !go.ponder),
        }
    }
}

/// State every worker of one search sees.
pub struct Shared {
    pub tt: Arc<TranspositionTable>,
    signals: Arc<Signals>,
    /// Raised by the main worker when it is done: the helpers stop.
    pub abort: AtomicBool,
    pub nodes: AtomicU64,
    pub limits: Limits,
    pub root: Chess,
    pub root_key: u64,
    pub root_moves: Vec<Move>,
    /// Keys of the game since the last irreversible move, the root's last.
    pub game_keys: Vec<u64>,
    pub multipv: usize,
    pub features: features::Features,
    start: Instant,
    /// When the clock started, in µs after `start`: at `ponderhit` when pondering.
    clock_origin_us: AtomicU64,
    pondering: AtomicBool,
    out: Output,
    mode: CastlingMode,
    show_wdl: bool,
    material: i32,
    /// The node count of the last lines printed.
    reported_nodes: AtomicU64,
    /// Iterations in a row that kept the best move (main worker).
    stable: AtomicU32,
    last_best: std::sync::Mutex<Option<Move>>,
}

impl Shared {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    fn clock_elapsed(&self) -> Duration {
        self.elapsed().saturating_sub(Duration::from_micros(
            self.clock_origin_us.load(Ordering::Relaxed),
        ))
    }

    /// Polled by the workers every so often.
    fn should_stop(&self, main: bool, may_stop: bool) -> bool {
        if self.abort.load(Ordering::Relaxed) || self.signals.stop.load(Ordering::Relaxed) {
            return true;
        }
        if !main {
            return false;
        }
        if self.pondering.load(Ordering::Relaxed) && self.signals.ponderhit.load(Ordering::Relaxed)
        {
            // The opponent played the expected move: our clock runs from now.
            self.clock_origin_us
                .store(self.elapsed().as_micros() as u64, Ordering::Relaxed);
            self.pondering.store(false, Ordering::Relaxed);
        }
        if !may_stop {
            return false;
        }
        let out_of_nodes = self
            .limits
            .nodes
            .is_some_and(|n| self.nodes.load(Ordering::Relaxed) >= n);
        let out_of_time = !self.pondering.load(Ordering::Relaxed)
            && self
                .limits
                .budget
                .is_some_and(|b| self.clock_elapsed() >= b.hard);
        if out_of_nodes || out_of_time {
            self.abort.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// After each complete iteration of the main worker: is the search done?
    fn iteration_done(&self, outcome: &Outcome) -> bool {
        let best = &outcome.lines[0];
        let stable = {
            let mut last = self.last_best.lock().unwrap_or_else(|e| e.into_inner());
            let same = *last == Some(best.mv);
            *last = Some(best.mv);
            if same {
                self.stable.fetch_add(1, Ordering::Relaxed) + 1
            } else {
                self.stable.store(0, Ordering::Relaxed);
                0
            }
        };
        if outcome.depth >= self.limits.depth {
            return true;
        }
        if let Some(n) = self.limits.mate
            && best.score >= MATE_BOUND
            && u64::from(((MATE - best.score + 1) / 2) as u32) <= n
        {
            return true;
        }
        if self.pondering.load(Ordering::Relaxed) {
            return false;
        }
        if let Some(budget) = self.limits.budget
            && !budget.exact
        {
            if self.root_moves.len() == 1 {
                return true;
            }
            // A best move that keeps its place may use less than the soft
            // bound, one that changes more.
            let factor = (1.3 - 0.15 * stable as f64).max(0.55);
            let soft = budget.soft.mul_f64(factor).min(budget.hard);
            return self.clock_elapsed() >= soft;
        }
        false
    }

    fn info_line(&self, depth: i32, line: &RootMove, multipv: usize, bound: &str) -> String {
        let elapsed = self.elapsed().as_millis() as u64;
        let nodes = self.nodes.load(Ordering::Relaxed);
        let nps = nodes * 1000 / elapsed.max(1);
        let wdl = if self.show_wdl {
            let (w, d, l) = wdl(line.score, self.material);
            format!(" wdl {w} {d} {l}")
        } else {
            String::new()
        };
        let pv: Vec<String> = line
            .pv
            .iter()
            .map(|m| m.to_uci(self.mode).to_string())
            .collect();
        format!(
            "info depth {depth} seldepth {} multipv {multipv} score {}{bound}{wdl} nodes {nodes} nps {nps} hashfull {} time {elapsed} pv {}",
            line.seldepth.max(depth as usize),
            format_score(line.score),
            self.tt.hashfull(),
            pv.join(" ")
        )
    }

    fn report_iteration(&self, outcome: &Outcome) {
        self.reported_nodes
            .store(self.nodes.load(Ordering::Relaxed), Ordering::Relaxed);
        for (i, line) in outcome.lines.iter().enumerate() {
            self.out
                .line(&self.info_line(outcome.depth, line, i + 1, ""));
        }
    }

    /// A failed aspiration window, shown once the search has run 3 s: the
    /// score is an upper bound after a fail low, a lower bound after a fail high.
    fn report_bound(
        &self,
        line: &RootMove,
        depth: i32,
        seldepth: usize,
        multipv: usize,
        fail_low: bool,
    ) {
        if self.elapsed() < Duration::from_secs(3) {
            return;
        }
        let bound = if fail_low {
            " upperbound"
        } else {
            " lowerbound"
        };
        let mut line = line.clone();
        line.seldepth = seldepth;
        self.out.line(&self.info_line(depth, &line, multipv, bound));
    }

    fn report_currmove(&self, depth: i32, m: Move, number: usize) {
        if self.elapsed() >= Duration::from_secs(3) {
            self.out.line(&format!(
                "info depth {depth} currmove {} currmovenumber {number}",
                m.to_uci(self.mode)
            ));
        }
    }
}

/// `cp X` or `mate M` (M = (plies + 1) / 2 when winning, -plies / 2 when losing).
pub fn format_score(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        format!("mate -{}", (MATE + score) / 2)
    } else {
        format!("cp {score}")
    }
}

/// Win, draw and loss chances in per mille: a logistic curve in the score
/// whose midpoint and slope grow with the material on the board (the same
/// advantage wins more surely with little material left). Qilin's own model,
/// not fitted to data yet.
pub fn wdl(score: i32, material: i32) -> (u32, u32, u32) {
    if score >= MATE_BOUND {
        return (1000, 0, 0);
    }
    if score <= -MATE_BOUND {
        return (0, 0, 1000);
    }
    let m = f64::from(material.clamp(0, 78));
    let a = 60.0 + 1.5 * m;
    let b = 40.0 + 0.5 * m;
    let s = f64::from(score);
    let win = 1.0 / (1.0 + ((a - s) / b).exp());
    let loss = 1.0 / (1.0 + ((a + s) / b).exp());
    let w = (win * 1000.0).round() as u32;
    let l = (loss * 1000.0).round() as u32;
    (w, 1000u32.saturating_sub(w + l), l)
}

/// What a search played, for `bench` and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchResult {
    pub best: Option<Move>,
    /// The score of the line played, from the side to move's point of view.
    pub score: Option<i32>,
    pub nodes: u64,
}

/// Runs one `go` to its `bestmove`.
pub fn run(job: SearchJob, signals: &Arc<Signals>) -> SearchResult {
    let game = &job.game;
    let pos = game.position();
    let mut root_moves: Vec<Move> = if job.searchmoves.is_empty() {
        pos.legal_moves().into_iter().collect()
    } else {
        job.searchmoves.clone()
    };
    let limits = Limits::new(&job.params, pos.turn(), job.options.move_overhead_ms);
    let hold = limits.infinite || job.params.ponder;
    if root_moves.is_empty() {
        let score = if pos.is_check() { "mate 0" } else { "cp 0" };
        job.out.line(&format!("info depth 0 score {score}"));
        wait_for_release(signals, limits.infinite, job.params.ponder);
        job.out.line("bestmove (none)");
        return SearchResult {
            best: None,
            score: None,
            nodes: 0,
        };
    }
    // Captures first for the first iteration; later ones sort by score.
    root_moves.sort_by_key(|m| std::cmp::Reverse(m.capture().map_or(0, |r| r as u8)));
    job.tt.new_search();
    let threads = job.pool.current_num_threads();
    let histories = if job.histories.threads() == threads {
        Arc::clone(&job.histories)
    } else {
        Arc::new(HistoryTables::new(threads))
    };
    let shared = Shared {
        tt: Arc::clone(&job.tt),
        signals: Arc::clone(signals),
        abort: AtomicBool::new(false),
        nodes: AtomicU64::new(0),
        limits,
        root: pos.clone(),
        root_key: game.key(),
        root_moves,
        game_keys: game.reversible_keys().collect(),
        multipv: job.options.multipv,
        features: features::Features::from_env(),
        start: Instant::now(),
        clock_origin_us: AtomicU64::new(0),
        pondering: AtomicBool::new(job.params.ponder),
        out: job.out.clone(),
        mode: game.castling_mode(),
        show_wdl: job.options.show_wdl,
        material: material_count(pos),
        reported_nodes: AtomicU64::new(u64::MAX),
        stable: AtomicU32::new(0),
        last_best: std::sync::Mutex::new(None),
    };
    let outcomes: Vec<Option<Outcome>> = job.pool.broadcast(|ctx| {
        let mut history = histories.lock(ctx.index());
        history.clear_all_killers();
        let outcome = Worker::new(&shared, ctx.index(), &mut history).iterate();
        if ctx.index() == 0 {
            shared.abort.store(true, Ordering::SeqCst);
        }
        outcome
    });
    if hold {
        wait_for_release(
            signals,
            shared.limits.infinite,
            shared.pondering.load(Ordering::SeqCst),
        );
    }
    let chosen = choose(&outcomes);
    let score = chosen.map(|o| o.lines[0].score);
    let (best, ponder) = match chosen {
        Some(outcome) => {
            // The line behind the move we play is the last one shown, with
            // the nodes and time of the whole search.
            let main_shown = outcomes[0]
                .as_ref()
                .is_some_and(|m| std::ptr::eq(m, outcome))
                && shared.reported_nodes.load(Ordering::SeqCst)
                    == shared.nodes.load(Ordering::SeqCst);
            if !main_shown {
                shared.report_iteration(outcome);
            }
            let line = &outcome.lines[0];
            (line.mv, line.pv.get(1).copied())
        }
        None => (shared.root_moves[0], None),
    };
    let ponder = ponder.or_else(|| {
        let mut child = pos.clone();
        child.play_unchecked(best);
        let key = child_key(pos, game.key(), best, &child);
        shared.tt.probe(key).and_then(|e| find_move(&child, e.mv))
    });
    for claim in game.claims_after(best) {
        job.out.line(&format!(
            "info string draw claim: {claim} after {}",
            game.to_uci(best)
        ));
    }
    let best_text = game.to_uci(best);
    match ponder {
        Some(p) => job.out.line(&format!(
            "bestmove {best_text} ponder {}",
            p.to_uci(game.castling_mode())
        )),
        None => job.out.line(&format!("bestmove {best_text}")),
    }
    SearchResult {
        best: Some(best),
        score,
        nodes: shared.nodes.load(Ordering::SeqCst),
    }
}

/// The main worker's result unless a helper completed a deeper iteration
/// with a score at least as good.
fn choose(outcomes: &[Option<Outcome>]) -> Option<&Outcome> {
    outcomes
        .iter()
        .flatten()
        .fold(None, |best: Option<&Outcome>, o| match best {
            Some(b) if !(o.depth > b.depth && o.lines[0].score >= b.lines[0].score) => Some(b),
            _ => Some(o),
        })
}

/// In `infinite` and `ponder` mode the GUI waits for `bestmove` until it
/// sends `stop` (or `ponderhit`, when pondering without `infinite`).
fn wait_for_release(signals: &Signals, infinite: bool, pondering: bool) {
    if !infinite && !pondering {
        return;
    }
    loop {
        if signals.stop.load(Ordering::SeqCst) {
            return;
        }
        if pondering && !infinite && signals.ponderhit.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_are_written_in_moves() {
        assert_eq!(format_score(MATE - 1), "mate 1");
        assert_eq!(format_score(MATE - 3), "mate 2");
        assert_eq!(format_score(-(MATE - 2)), "mate -1");
        assert_eq!(format_score(-(MATE - 4)), "mate -2");
        assert_eq!(format_score(35), "cp 35");
    }

    #[test]
    fn wdl_sums_to_a_thousand_and_is_symmetric() {
        for m in [0, 20, 78] {
            for s in [-500, -100, 0, 37, 250, 1200] {
                let (w, d, l) = wdl(s, m);
                assert_eq!(w + d + l, 1000);
                assert_eq!(wdl(-s, m), (l, d, w));
            }
        }
        assert_eq!(wdl(0, 78).0, wdl(0, 78).2);
    }
}
