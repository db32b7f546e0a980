//! The search: Lazy SMP over the rayon pool. Every worker runs the same
//! iterative deepening on its own stack and history, sharing only the
//! transposition table, the node counter and the stop flags. The main worker
//! (index 0) keeps time and reports progress to the listener; the best move
//! is chosen from every worker's outcome. [`Engine`] is the way in: it owns
//! the pool and the tables, and knows nothing of UCI.

pub mod ablation;
pub mod checks;
pub mod correction;
mod engine;
#[cfg(test)]
mod engine_tests;
pub mod history;
pub mod memory;
pub mod movepick;
pub mod params;
pub mod report;
pub mod see;
pub mod strength;
pub mod tablebase;
pub mod time;
pub mod tt;
mod worker;

use crate::endgames::material_count;
use crate::game::{Game, child_key};
use crate::score::{MATE_BOUND, TB_WIN_BOUND, mate_in_moves};
use ablation::Ablation;
use history::HistoryTables;
use report::{Listener, PvReport, Score, ScoreBound, SearchResult, Wdl};
use shakmaty::{Chess, Move, Position};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use strength::Strength;
use tablebase::{RootRanking, Tablebases};
use time::{TimeBudget, TimeLimit};
use tt::TranspositionTable;
use worker::{Outcome, RootMove, Worker};

pub use engine::{Engine, SyzygyLoad};

pub use crate::score::MAX_PLY;

/// Flags raised from outside a running search.
#[derive(Debug, Default)]
pub struct Signals {
    pub stop: AtomicBool,
    /// The opponent played the move we pondered on: the time limits apply
    /// from now on.
    pub ponderhit: AtomicBool,
}

/// What ends a search, in the search's own terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Plies; `None` searches as deep as the search can go.
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// Stop after the iteration in which this many nodes were passed: an
    /// iteration is finished rather than cut off (`nodes` stays a hard cap).
    pub soft_nodes: Option<u64>,
    /// Stop once a mate in this many moves is found.
    pub mate: Option<u64>,
    pub time: TimeLimit,
    /// Think on the opponent's time: no time limit applies before
    /// `ponderhit`; after it the limits count from the search's start.
    pub ponder: bool,
    /// Milliseconds the GUI and the pipes lose per move.
    pub move_overhead_ms: u64,
}

/// One search: the game to search from and how.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    pub game: Game,
    pub limits: SearchLimits,
    /// Search only these root moves (legal, without repeats); empty means all.
    pub searchmoves: Vec<Move>,
    /// How many best lines to find and report.
    pub multipv: usize,
    /// Play below full strength; `None` plays the best move found.
    pub strength: Option<Strength>,
    /// Search features switched off, for the strength lab.
    pub ablation: Ablation,
}

impl SearchRequest {
    /// A search of `game` within `limits`, all moves, one line.
    pub fn new(game: Game, limits: SearchLimits) -> SearchRequest {
        SearchRequest {
            game,
            limits,
            searchmoves: Vec::new(),
            multipv: 1,
            strength: None,
            ablation: Ablation::default(),
        }
    }
}

/// The limits of one search, with time turned into a budget.
#[derive(Clone, Debug)]
struct Limits {
    /// A ponder search (the `pondering` flag says whether it still is).
    ponder: bool,
    depth: i32,
    nodes: Option<u64>,
    soft_nodes: Option<u64>,
    mate: Option<u64>,
    budget: Option<TimeBudget>,
}

impl Limits {
    fn new(limits: &SearchLimits, strength: Option<Strength>, game_ply: u32) -> Limits {
        let cap = strength.map(Strength::node_cap);
        Limits {
            ponder: limits.ponder,
            depth: limits.depth.map_or(MAX_PLY as i32 - 1, |d| {
                d.clamp(1, MAX_PLY as u32 - 1) as i32
            }),
            nodes: match (limits.nodes, cap) {
                (Some(n), Some(c)) => Some(n.min(c)),
                (n, c) => n.or(c),
            },
            soft_nodes: limits.soft_nodes,
            mate: limits.mate,
            budget: TimeBudget::new(limits.time, limits.move_overhead_ms, game_ply),
        }
    }
}

/// How the workers of one search probe the tables.
pub struct SearchTb {
    pub tables: Arc<Tablebases>,
    /// Positions with more pieces are not probed.
    pub cardinality: usize,
    pub probe_depth: i32,
    pub fifty_move_rule: bool,
}

/// State every worker of one search sees.
pub struct Shared<'a> {
    pub tt: Arc<TranspositionTable>,
    signals: &'a Signals,
    listener: &'a dyn Listener,
    /// Raised by the main worker when it is done: the helpers stop.
    pub abort: AtomicBool,
    pub nodes: AtomicU64,
    limits: Limits,
    pub root: Chess,
    pub root_key: u64,
    pub root_moves: Vec<Move>,
    /// Keys of the game since the last irreversible move, the root's last.
    pub game_keys: Vec<u64>,
    pub multipv: usize,
    pub ablation: Ablation,
    /// Tablebase probing inside the tree; `None` when off (no tables, or
    /// the root moves were already ranked by DTZ).
    pub tb: Option<SearchTb>,
    /// Tablebase probes that answered, root ranking included.
    pub tbhits: AtomicU64,
    /// What the root is worth by the tables, shown in place of the search's
    /// score unless the search finds a mate.
    pub root_tb_score: Option<i32>,
    /// The net to evaluate with.
    pub net: Arc<crate::nnue::Network>,
    start: Instant,
    /// A ponder search before `ponderhit`: no time limit applies yet.
    pondering: AtomicBool,
    material: i32,
    /// The node count of the last lines reported.
    reported_nodes: AtomicU64,
    /// Iterations in a row that kept the best move (main worker).
    stable: AtomicU32,
    /// The main worker's best move and score after its last iteration.
    last_best: std::sync::Mutex<Option<(Move, i32)>>,
}

impl Shared<'_> {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
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
            // The opponent played the expected move: the time limits apply
            // from now on, to the time since `go ponder`. The GUI's clock
            // for us only started at `ponderhit`, so the time spent
            // pondering counts as thinking already done: a search that
            // pondered longer than its budget moves at once.
            self.pondering.store(false, Ordering::Relaxed);
        }
        if !may_stop {
            return false;
        }
        let out_of_nodes = self
            .limits
            .nodes
            .is_some_and(|n| self.nodes.load(Ordering::Relaxed) >= n);
        let elapsed = self.elapsed();
        let out_of_time = !self.pondering.load(Ordering::Relaxed)
            && self.limits.budget.is_some_and(|b| {
                // After a ponderhit the soft bound ends the search where it
                // stands: it has searched longer than any iteration end
                // would have let it.
                elapsed >= b.hard || (self.limits.ponder && elapsed >= b.soft)
            });
        if out_of_nodes || out_of_time {
            self.abort.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// After each complete iteration of the main worker: is the search done?
    fn iteration_done(&self, outcome: &Outcome) -> bool {
        let best = &outcome.lines[0];
        let (stable, previous_score) = {
            let mut last = self.last_best.lock().unwrap_or_else(|e| e.into_inner());
            let previous = *last;
            *last = Some((best.mv, best.score));
            let stable = if previous.is_some_and(|(mv, _)| mv == best.mv) {
                self.stable.fetch_add(1, Ordering::Relaxed) + 1
            } else {
                self.stable.store(0, Ordering::Relaxed);
                0
            };
            (stable, previous.map(|(_, score)| score))
        };
        if outcome.depth >= self.limits.depth
            || self
                .limits
                .soft_nodes
                .is_some_and(|n| self.nodes.load(Ordering::Relaxed) >= n)
        {
            return true;
        }
        if let Some(n) = self.limits.mate
            && best.score >= MATE_BOUND
            && mate_in_moves(best.score).is_some_and(|moves| u64::from(moves as u32) <= n)
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
            let hundredths = |v: i32| f64::from(v) / 100.0;
            let stability = (hundredths(params::time_unstable())
                - hundredths(params::time_stability_step()) * stable as f64)
                .max(hundredths(params::time_stable_min()));
            // A best move that took most of the iteration's nodes needs
            // less time than one the search kept doubting.
            let effort = if outcome.depth >= params::time_nodes_min_depth() {
                time::effort_factor(
                    best.nodes,
                    outcome.root_nodes,
                    params::time_nodes_offset(),
                    params::time_nodes_slope(),
                )
            } else {
                1.0
            };
            // A score that falls asks for more time to find a way out;
            // mates and table wins say nothing about that.
            let falling = match previous_score {
                Some(previous)
                    if previous.abs() < TB_WIN_BOUND && best.score.abs() < TB_WIN_BOUND =>
                {
                    time::falling_factor(
                        previous,
                        best.score,
                        params::time_falling(),
                        params::time_falling_min(),
                        params::time_falling_max(),
                    )
                }
                _ => 1.0,
            };
            let factor = stability * effort * falling;
            // A clock of u64::MAX milliseconds must not overflow the product.
            let soft = Duration::try_from_secs_f64(budget.soft.as_secs_f64() * factor)
                .unwrap_or(Duration::MAX)
                .min(budget.hard);
            return self.elapsed() >= soft;
        }
        false
    }

    fn report_line(&self, depth: i32, line: &RootMove, multipv: usize, bound: ScoreBound) {
        let (win, draw, loss) = wdl(line.score, self.material);
        self.listener.on_pv(&PvReport {
            depth,
            seldepth: line.seldepth.max(depth as usize),
            multipv,
            score: Score::from_search(line.score),
            bound,
            wdl: Wdl { win, draw, loss },
            nodes: self.nodes.load(Ordering::Relaxed),
            tbhits: self.tbhits.load(Ordering::Relaxed),
            time: self.elapsed(),
            hashfull: self.tt.hashfull(),
            pv: &line.pv,
        });
    }

    fn report_iteration(&self, outcome: &Outcome) {
        if !self.listener.active() {
            return;
        }
        self.reported_nodes
            .store(self.nodes.load(Ordering::Relaxed), Ordering::Relaxed);
        report_tb_failures(self.tb.as_ref().map(|tb| &*tb.tables), self.listener);
        for (i, line) in outcome.lines.iter().enumerate() {
            self.report_line(outcome.depth, line, i + 1, ScoreBound::Exact);
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
        if !self.listener.active() || self.elapsed() < Duration::from_secs(3) {
            return;
        }
        let bound = if fail_low {
            ScoreBound::Upper
        } else {
            ScoreBound::Lower
        };
        let mut line = line.clone();
        line.seldepth = seldepth;
        self.report_line(depth, &line, multipv, bound);
    }

    fn report_currmove(&self, depth: i32, m: Move, number: usize) {
        if self.listener.active() && self.elapsed() >= Duration::from_secs(3) {
            self.listener.on_current_move(depth, m, number);
        }
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

/// Runs one search to its end: the limits are met, or `signals.stop`.
/// The caller decides what to do with the result (UCI holds `bestmove`
/// back in `infinite` and `ponder` mode until told).
fn run(
    engine: &Engine,
    request: &SearchRequest,
    listener: &dyn Listener,
    signals: &Signals,
) -> SearchResult {
    let game = &request.game;
    let pos = game.position();
    let root_moves: Vec<Move> = if request.searchmoves.is_empty() {
        pos.legal_moves().into_iter().collect()
    } else {
        request.searchmoves.clone()
    };
    if root_moves.is_empty() {
        listener.on_no_legal_moves(pos.is_check());
        return SearchResult {
            best: None,
            ponder: None,
            score: None,
            depth: 0,
            nodes: 0,
        };
    }
    let ranking = engine
        .tablebases()
        .and_then(|tb| tb.rank_root(game, &root_moves, engine.tb_config()));
    report_tb_failures(engine.tablebases().map(|tb| &**tb), listener);
    // A table still being built or cleared is waited for; a search stopped
    // meanwhile plays its first iteration's move with a table of its own.
    let tt = engine
        .table(&signals.stop)
        .unwrap_or_else(|| Arc::new(TranspositionTable::minimal()));
    let shared = shared_state(engine, tt, request, root_moves, ranking, listener, signals);
    let threads = engine.pool().current_num_threads();
    let histories = if engine.histories().threads() == threads {
        Arc::clone(engine.histories())
    } else {
        Arc::new(HistoryTables::new(threads))
    };
    let outcomes: Vec<Option<Outcome>> = engine.pool().broadcast(|ctx| {
        let mut history = histories.lock(ctx.index());
        history.clear_all_killers();
        let outcome = Worker::new(&shared, ctx.index(), &mut history).iterate();
        if ctx.index() == 0 {
            shared.abort.store(true, Ordering::SeqCst);
        }
        outcome
    });
    report_tb_failures(engine.tablebases().map(|tb| &**tb), listener);
    conclude(&shared, game, &outcomes, request.strength)
}

/// Plies played in the game before `pos`, as its move number says (a FEN
/// from the GUI may start anywhere).
fn game_ply(pos: &Chess) -> u32 {
    let full_moves = pos.fullmoves().get().saturating_sub(1);
    full_moves
        .saturating_mul(2)
        .saturating_add(u32::from(pos.turn().is_black()))
}

/// Tells `listener` of the tables that failed a probe since the last time.
fn report_tb_failures(tables: Option<&Tablebases>, listener: &dyn Listener) {
    for failure in tables.map(Tablebases::take_failures).unwrap_or_default() {
        listener.on_tablebase_failure(&failure);
    }
}

/// The state of a new search, its root moves ordered for the first
/// iteration: those the tables rank best when the root is in them.
fn shared_state<'a>(
    engine: &Engine,
    tt: Arc<TranspositionTable>,
    request: &SearchRequest,
    mut root_moves: Vec<Move>,
    ranking: Option<RootRanking>,
    listener: &'a dyn Listener,
    signals: &'a Signals,
) -> Shared<'a> {
    let game = &request.game;
    let pos = game.position();
    let config = engine.tb_config();
    // With the root moves ranked by DTZ every move searched keeps the best
    // outcome and makes progress: probing in the tree would only hide the
    // mates the search can find. Ranked by WDL alone, probing goes on where
    // the root is won, so that the search finds its way.
    let probe_in_tree = ranking.as_ref().is_none_or(|r| !r.by_dtz && r.score > 0);
    let tb = engine
        .tablebases()
        .filter(|_| probe_in_tree && config.probe_limit > 0)
        .map(|tables| SearchTb {
            tables: Arc::clone(tables),
            cardinality: config.probe_limit.min(tables.max_pieces()),
            probe_depth: config.probe_depth,
            fifty_move_rule: config.fifty_move_rule,
        });
    let (tbhits, root_tb_score) = match ranking {
        Some(r) => {
            root_moves = r.moves;
            (r.probes, Some(r.score))
        }
        None => (0, None),
    };
    // Captures first for the first iteration; later ones sort by score.
    root_moves.sort_by_key(|m| std::cmp::Reverse(m.capture().map_or(0, |r| r as u8)));
    tt.new_search();
    Shared {
        tt,
        signals,
        listener,
        abort: AtomicBool::new(false),
        nodes: AtomicU64::new(0),
        limits: Limits::new(&request.limits, request.strength, game_ply(pos)),
        root: pos.clone(),
        root_key: game.key(),
        root_moves,
        game_keys: game.reversible_keys().collect(),
        // A weakened engine chooses among several lines (but the top levels).
        multipv: request
            .multipv
            .max(request.strength.map_or(1, Strength::lines)),
        ablation: request.ablation,
        tb,
        tbhits: AtomicU64::new(tbhits),
        root_tb_score,
        net: Arc::clone(engine.net()),
        start: Instant::now(),
        pondering: AtomicBool::new(request.limits.ponder),
        material: material_count(pos),
        reported_nodes: AtomicU64::new(u64::MAX),
        stable: AtomicU32::new(0),
        last_best: std::sync::Mutex::new(None),
    }
}

/// The move to play from the workers' outcomes, its line reported if the
/// listener has not seen it with the search's final counts.
fn conclude(
    shared: &Shared<'_>,
    game: &Game,
    outcomes: &[Option<Outcome>],
    strength: Option<Strength>,
) -> SearchResult {
    let pos = game.position();
    let chosen = choose(outcomes);
    let nodes = shared.nodes.load(Ordering::SeqCst);
    let (best, ponder, score, depth) = match chosen {
        Some(outcome) => {
            let main_shown = outcomes[0]
                .as_ref()
                .is_some_and(|m| std::ptr::eq(m, outcome))
                && shared.reported_nodes.load(Ordering::SeqCst) == nodes;
            if !main_shown {
                shared.report_iteration(outcome);
            }
            let chosen = strength.map_or(0, |s| {
                let scores: Vec<i32> = outcome.lines.iter().map(|l| l.score).collect();
                s.pick(&scores)
            });
            let line = outcome.lines.get(chosen).unwrap_or(&outcome.lines[0]);
            (
                line.mv,
                line.pv.get(1).copied(),
                Some(line.score),
                outcome.depth,
            )
        }
        None => (shared.root_moves[0], None, None, 0),
    };
    let ponder = ponder.or_else(|| {
        let mut child = pos.clone();
        child.play_unchecked(best);
        let key = child_key(pos, game.key(), best, &child);
        let entry = shared.tt.probe(key)?;
        tt::find_encoded(&child.legal_moves(), entry.mv)
    });
    SearchResult {
        best: Some(best),
        ponder,
        score,
        depth,
        nodes,
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

#[cfg(test)]
mod tests {
    use super::*;

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

    fn search_start(limits: SearchLimits) -> SearchResult {
        let engine = Engine::new(1, 1).expect("a 1 MB table");
        let request = SearchRequest::new(Game::default(), limits);
        engine.search(&request, &report::Silent, &Signals::default())
    }

    /// The switches of the strength lab come with the request: a search
    /// without late move reductions visits another tree.
    #[test]
    fn the_request_switches_features_off() {
        let nodes = |ablation| {
            let engine = Engine::new(1, 1).expect("a 1 MB table");
            let limits = SearchLimits {
                depth: Some(6),
                ..SearchLimits::default()
            };
            let request = SearchRequest {
                ablation,
                ..SearchRequest::new(Game::default(), limits)
            };
            engine
                .search(&request, &report::Silent, &Signals::default())
                .nodes
        };
        assert_eq!(nodes(Ablation::default()), nodes(Ablation::default()));
        assert_ne!(nodes(Ablation::default()), nodes(Ablation::parse("lmr")));
    }

    #[test]
    fn a_soft_node_limit_finishes_the_iteration_that_passes_it() {
        // Depth 1 of the start position searches 20 moves: past 1 node,
        // under the hard cap, so exactly that iteration completes.
        let soft = search_start(SearchLimits {
            soft_nodes: Some(1),
            nodes: Some(1_000_000),
            ..SearchLimits::default()
        });
        assert_eq!(soft.depth, 1);
        assert!(soft.nodes > 1 && soft.nodes < 1_000_000, "{}", soft.nodes);
        // A soft limit past a depth's nodes lets more iterations finish;
        // a hard cap below it still stops the search.
        let deeper = search_start(SearchLimits {
            soft_nodes: Some(soft.nodes + 1),
            ..SearchLimits::default()
        });
        assert!(deeper.depth > 1, "{}", deeper.depth);
        let capped = search_start(SearchLimits {
            soft_nodes: Some(1_000_000),
            nodes: Some(2_000),
            ..SearchLimits::default()
        });
        assert!(capped.nodes <= 2_000 + 64, "{}", capped.nodes);
    }
}
