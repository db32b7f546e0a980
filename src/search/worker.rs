//! One search thread: iterative deepening with aspiration windows over a
//! principal-variation alpha-beta search and a quiescence search. Every
//! thread of a Lazy SMP search runs this; only the main one (id 0) prints
//! and watches the clock.

use super::ablation::Feature;
use super::checks::gives_check;
use super::correction::Slot;
use super::history::History;
use super::movepick::{MovePicker, is_noisy};
use super::params as p;
use super::see::see_ge;
use super::tablebase::wdl_score;
use super::tt::{Bound, TtEntry, encode_move, score_from_tt, score_to_tt};
use super::{MAX_PLY, Shared};
use crate::game::{child_key, position_key};
use crate::nnue::{self, AccumulatorStack, Network};
use crate::score::{INFINITY, MATE, MATE_BOUND, TB_WIN_BOUND};
use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{Chess, EnPassantMode, Move, MoveList, Piece, Position};
use std::sync::atomic::Ordering;

/// A root move with what the last search of it found.
#[derive(Clone, Debug)]
pub struct RootMove {
    pub mv: Move,
    pub score: i32,
    pub previous_score: i32,
    pub pv: Vec<Move>,
    pub seldepth: usize,
    /// Nodes this worker spent below the move in the iteration under way
    /// (the last complete one, in an `Outcome`).
    pub nodes: u64,
}

/// What one thread's search produced: the PVs of its deepest complete
/// iteration, best line first.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub depth: i32,
    pub lines: Vec<RootMove>,
    /// Nodes this worker spent below all root moves in the iteration, for
    /// the best move's share of them (time management).
    pub root_nodes: u64,
}

#[derive(Clone, Copy, Default)]
struct Frame {
    eval: Option<i32>,
    /// The move made from this ply, for countermoves; `None` after a null move.
    played: Option<(Piece, Move)>,
    null_move: bool,
    /// The move a singular-extension search leaves out at this ply.
    excluded: Option<Move>,
}

/// What the singular-extension search decided for the TT move.
enum Singular {
    Extend(i32),
    /// Another move beats beta too: the node fails high with this score.
    Cut(i32),
}

/// Reductions are summed in 1/RESOLUTION of a ply and rounded down to
/// whole plies only at the end, so that the history's continuous term and
/// the table's fractions add up instead of each being cut off on its own.
const RESOLUTION: i32 = 1024;

/// Late move reductions by depth and move number, in 1/RESOLUTION plies.
fn lmr_table() -> Box<[[i32; 64]; 64]> {
    let mut t = Box::new([[0; 64]; 64]);
    let base = f64::from(p::lmr_base()) / 1000.0;
    let divisor = f64::from(p::lmr_divisor()) / 100.0;
    for (d, row) in t.iter_mut().enumerate().skip(1) {
        for (m, r) in row.iter_mut().enumerate().skip(1) {
            *r = ((base + (d as f64).ln() * (m as f64).ln() / divisor) * f64::from(RESOLUTION))
                as i32;
        }
    }
    t
}

pub struct Worker<'a> {
    shared: &'a Shared<'a>,
    pub id: usize,
    history: &'a mut History,
    /// The net the worker evaluates with and its accumulators along the path.
    net: &'a Network,
    accumulators: AccumulatorStack,
    /// Keys of the game since the last irreversible move, then of the path.
    keys: Vec<u64>,
    /// The index in `keys` of the newest null-move position: no repetition
    /// reaches back across a null move, whose halfmove clock runs on.
    null_floor: usize,
    stack: Box<[Frame; MAX_PLY + 4]>,
    pv: Box<[[Option<Move>; MAX_PLY + 1]; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 1],
    lmr: Box<[[i32; 64]; 64]>,
    root_moves: Vec<RootMove>,
    pv_index: usize,
    root_depth: i32,
    seldepth: usize,
    unreported: u64,
    /// Nodes already added to the shared count.
    flushed: u64,
    /// Complete iterations: no time or node limit stops the search before one.
    completed: Option<Outcome>,
    /// A root move that beat the first one searched in the iteration under
    /// way: if a limit stops the iteration, it is still the better move.
    proven_best: Option<RootMove>,
    aborted: bool,
}

impl<'a> Worker<'a> {
    pub fn new(shared: &'a Shared<'a>, id: usize, history: &'a mut History) -> Worker<'a> {
        let root_moves = shared
            .root_moves
            .iter()
            .map(|&mv| RootMove {
                mv,
                score: -INFINITY,
                previous_score: -INFINITY,
                pv: vec![mv],
                seldepth: 0,
                nodes: 0,
            })
            .collect();
        let mut keys = Vec::with_capacity(shared.game_keys.len() + MAX_PLY + 8);
        keys.extend_from_slice(&shared.game_keys);
        let net = &*shared.net;
        // Children of the deepest node (MAX_PLY) are never evaluated but
        // are still pushed.
        let mut accumulators = AccumulatorStack::new(net, MAX_PLY + 2);
        accumulators.reset(net, shared.root.board());
        Worker {
            shared,
            id,
            history,
            net,
            accumulators,
            keys,
            null_floor: 0,
            stack: Box::new([Frame::default(); MAX_PLY + 4]),
            pv: Box::new([[None; MAX_PLY + 1]; MAX_PLY + 1]),
            pv_len: [0; MAX_PLY + 1],
            lmr: lmr_table(),
            root_moves,
            pv_index: 0,
            root_depth: 0,
            seldepth: 0,
            unreported: 0,
            flushed: 0,
            completed: None,
            proven_best: None,
            aborted: false,
        }
    }

    /// The table's reduction at this depth after `moves` moves, in
    /// 1/RESOLUTION plies.
    fn reduction(&self, depth: i32, moves: usize) -> i32 {
        self.lmr[depth.clamp(0, 63) as usize][moves.min(63)]
    }

    fn is_main(&self) -> bool {
        self.id == 0
    }

    fn on(&self, feature: Feature) -> bool {
        self.shared.ablation.on(feature)
    }

    /// Iterative deepening until the limits (main) or the main thread (helpers) say stop.
    pub fn iterate(&mut self) -> Option<Outcome> {
        let multipv = self.shared.multipv.min(self.root_moves.len()).max(1);
        let max_depth = self.shared.limits.depth;
        // Helpers start at different depths so that they spread over the tree.
        let mut depth = 1 + (self.id % 2) as i32;
        while depth <= max_depth {
            self.root_depth = depth;
            for rm in &mut self.root_moves {
                rm.previous_score = rm.score;
                rm.nodes = 0;
            }
            self.proven_best = None;
            for pv_index in 0..multipv {
                self.pv_index = pv_index;
                self.seldepth = 0;
                self.aspiration(depth);
                if self.aborted {
                    break;
                }
                self.root_moves[pv_index..].sort_by_key(|rm| std::cmp::Reverse(rm.score));
            }
            if self.aborted {
                if let (Some(best), Some(completed)) =
                    (self.proven_best.take(), &mut self.completed)
                    && multipv == 1
                {
                    completed.lines[0] = best;
                }
                break;
            }
            self.root_moves[..multipv].sort_by_key(|rm| std::cmp::Reverse(rm.score));
            let mut lines = self.root_moves[..multipv].to_vec();
            // A root in the tables shows what they say it is worth, unless
            // the search found a mate.
            if let Some(tb_score) = self.shared.root_tb_score {
                for line in lines.iter_mut().filter(|l| l.score.abs() < MATE_BOUND) {
                    line.score = tb_score;
                }
            }
            let root_nodes = self.root_moves.iter().map(|rm| rm.nodes).sum();
            self.completed = Some(Outcome {
                depth,
                lines,
                root_nodes,
            });
            self.flush_nodes();
            if self.is_main() {
                self.shared
                    .report_iteration(self.completed.as_ref().expect("just set"));
                if self
                    .shared
                    .iteration_done(self.completed.as_ref().expect("just set"))
                {
                    break;
                }
            } else if self.shared.abort.load(Ordering::Relaxed) {
                break;
            }
            depth += 1;
        }
        self.flush_nodes();
        self.completed.take()
    }

    fn aspiration(&mut self, depth: i32) {
        let previous = self.root_moves[self.pv_index].previous_score;
        let mut delta = p::aspiration_delta();
        let (mut alpha, mut beta) = if depth >= p::aspiration_min_depth()
            && previous.abs() < TB_WIN_BOUND
            && self.on(Feature::Aspiration)
        {
            (
                (previous - delta).max(-INFINITY),
                (previous + delta).min(INFINITY),
            )
        } else {
            (-INFINITY, INFINITY)
        };
        // Each fail high searches a little shallower: the move that failed
        // high is likely good, and a full-depth re-search costs the most.
        let mut failed_high = 0;
        loop {
            let score = self.root((depth - failed_high).max(1), alpha, beta);
            // The move that failed high (or a new best found before a fail
            // low) goes first in the re-search.
            self.root_moves[self.pv_index..].sort_by_key(|rm| std::cmp::Reverse(rm.score));
            if self.aborted {
                return;
            }
            let fail_low = score <= alpha;
            if !fail_low && score < beta {
                return;
            }
            if self.is_main() {
                let line = &self.root_moves[self.pv_index];
                self.shared
                    .report_bound(line, depth, self.seldepth, self.pv_index + 1, fail_low);
            }
            if fail_low {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITY);
                failed_high = 0;
            } else {
                beta = (score + delta).min(INFINITY);
                failed_high += 1;
            }
            delta += delta / 2 + p::aspiration_growth();
            if delta > p::aspiration_full() {
                alpha = -INFINITY;
                beta = INFINITY;
            }
        }
    }

    /// The root node: the moves of `root_moves[pv_index..]`, best first.
    fn root(&mut self, depth: i32, mut alpha: i32, beta: i32) -> i32 {
        let root = &self.shared.root;
        let root_key = self.shared.root_key;
        let mut best = -INFINITY;
        self.pv_len[0] = 0;
        for i in self.pv_index..self.root_moves.len() {
            let m = self.root_moves[i].mv;
            if self.is_main() {
                self.shared.report_currmove(depth, m, i + 1);
            }
            let nodes_before = self.nodes_searched();
            let (child, key) = self.make_move(root, root_key, m, 0);
            let gives_check = child.is_check();
            let new_depth = depth - 1 + i32::from(gives_check);
            let searched = i - self.pv_index;
            let mut score;
            if searched == 0 {
                score = -self.search::<true>(&child, key, new_depth, 1, -beta, -alpha, false);
            } else {
                let r = if depth >= 3 && searched >= 3 && !is_noisy(m) && !gives_check {
                    (self.reduction(depth, searched) / RESOLUTION - 1).clamp(0, new_depth - 1)
                } else {
                    0
                };
                score =
                    -self.search::<false>(&child, key, new_depth - r, 1, -alpha - 1, -alpha, true);
                if score > alpha && r > 0 {
                    score =
                        -self.search::<false>(&child, key, new_depth, 1, -alpha - 1, -alpha, false);
                }
                if score > alpha && score < beta {
                    score = -self.search::<true>(&child, key, new_depth, 1, -beta, -alpha, false);
                }
            }
            self.keys.pop();
            let spent = self.nodes_searched() - nodes_before;
            self.root_moves[i].nodes += spent;
            if self.aborted {
                return best;
            }
            let rm = &mut self.root_moves[i];
            if searched == 0 || score > alpha {
                rm.score = score;
                rm.seldepth = self.seldepth;
                rm.pv.clear();
                rm.pv.push(m);
                rm.pv
                    .extend(self.pv[1][1..self.pv_len[1].max(1)].iter().flatten());
                if searched > 0 && self.pv_index == 0 {
                    self.proven_best = Some(rm.clone());
                }
            } else {
                // Not a best move: keep it behind those that are.
                rm.score = -INFINITY;
            }
            if score > best {
                best = score;
            }
            if score > alpha {
                alpha = score;
                if alpha >= beta {
                    break;
                }
            }
        }
        best
    }

    fn flush_nodes(&mut self) {
        self.shared
            .nodes
            .fetch_add(self.unreported, Ordering::Relaxed);
        self.flushed += self.unreported;
        self.unreported = 0;
    }

    /// Nodes this worker has searched since the search began.
    fn nodes_searched(&self) -> u64 {
        self.flushed + self.unreported
    }

    /// Counts a node and, now and then, asks whether to stop. Under a node
    /// limit the main worker compares every node with the limit, but only
    /// reads the shared counter: no atomic add per node.
    fn tick(&mut self) {
        self.unreported += 1;
        let check_now = self.unreported >= 1024
            || (self.is_main()
                && self.shared.limits.nodes.is_some_and(|n| {
                    self.shared.nodes.load(Ordering::Relaxed) + self.unreported >= n
                }));
        if check_now {
            self.flush_nodes();
            let may_stop = self.completed.is_some();
            if self.shared.should_stop(self.is_main(), may_stop) {
                self.aborted = true;
            }
        }
    }

    /// What every node does first: an empty PV, the node count, the stop
    /// check and the selective depth. False when the search must unwind.
    fn enter(&mut self, ply: usize) -> bool {
        self.pv_len[ply] = ply;
        self.tick();
        self.seldepth = self.seldepth.max(ply);
        !self.aborted
    }

    /// The static evaluation as pruning sees it: corrected by what
    /// searches found with these pawns. The TT keeps the raw one.
    fn corrected(&self, slot: Slot, raw: i32) -> i32 {
        if self.on(Feature::Correction) {
            self.history.correction.apply(slot, raw)
        } else {
            raw
        }
    }

    /// The raw static evaluation of `pos`, the position at `ply`.
    fn evaluate(&mut self, pos: &Chess, ply: usize) -> i32 {
        let (net, accumulators) = (self.net, &mut self.accumulators);
        nnue::evaluate_with(pos, || accumulators.evaluate(net, ply, pos))
    }

    fn is_repetition(&self, halfmoves: u32) -> bool {
        let n = self.keys.len();
        let Some(&key) = self.keys.last() else {
            return false;
        };
        let window = (halfmoves as usize).min(n - 1 - self.null_floor.min(n - 1));
        (2..=window)
            .step_by(2)
            .any(|back| self.keys[n - 1 - back] == key)
    }

    /// Plays `m` at `ply`: the child and its key, the key pushed on the
    /// repetition stack (the caller pops it) and the move recorded for
    /// continuation history.
    fn make_move(&mut self, pos: &Chess, key: u64, m: Move, ply: usize) -> (Chess, u64) {
        let mut child = pos.clone();
        child.play_unchecked(m);
        let child_key = child_key(pos, key, m, &child);
        self.shared.tt.prefetch(child_key);
        self.keys.push(child_key);
        self.accumulators
            .push_move(ply, pos.turn(), m, child.board());
        self.stack[ply].played = pos
            .board()
            .piece_at(m.from().unwrap_or(m.to()))
            .map(|p| (p, m));
        (child, child_key)
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        self.pv[ply][ply] = Some(m);
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    /// Takes a searched move's score into the node's best; true when it
    /// raised alpha (the caller then checks for a cutoff).
    fn improve<const PV: bool>(
        &mut self,
        ply: usize,
        m: Move,
        score: i32,
        best_score: &mut i32,
        best_move: &mut Option<Move>,
        alpha: &mut i32,
    ) -> bool {
        if score <= *best_score {
            return false;
        }
        *best_score = score;
        if score <= *alpha {
            return false;
        }
        *best_move = Some(m);
        *alpha = score;
        if PV {
            self.update_pv(ply, m);
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn search<const PV: bool>(
        &mut self,
        pos: &Chess,
        key: u64,
        mut depth: i32,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
        cut_node: bool,
    ) -> i32 {
        if depth <= 0 {
            return self.qsearch::<PV>(pos, key, ply, alpha, beta);
        }
        if !self.enter(ply) {
            return 0;
        }
        let in_check = pos.is_check();

        // Draws: the fifty-move rule (unless this is mate), repetition, dead positions.
        if pos.halfmoves() >= 100 {
            return if in_check && pos.legal_moves().is_empty() {
                -MATE + ply as i32
            } else {
                0
            };
        }
        if self.is_repetition(pos.halfmoves())
            || (pos.board().occupied().count() <= 4 && pos.is_insufficient_material())
        {
            return 0;
        }
        if ply >= MAX_PLY {
            return if in_check { 0 } else { self.evaluate(pos, ply) };
        }

        // Mate distance pruning.
        alpha = alpha.max(-MATE + ply as i32);
        beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }

        let excluded = self.stack[ply].excluded;
        let tt = self.shared.tt.probe(key);
        // On a principal variation now, or when the TT stored this position.
        let tt_pv = PV || tt.is_some_and(|e| e.pv);
        if let Some(e) = tt
            && !PV
            && excluded.is_none()
            && e.depth >= depth
            && pos.halfmoves() < 90
            && let Some(score) = e.cutoff(ply, alpha, beta)
        {
            return score;
        }

        // Tablebases: a position reached by a capture or a pawn move, with
        // few enough pieces, has its outcome in the tables. A draw, or a
        // bound that settles the window, ends the node; in a PV node a win
        // is a floor for the score and a loss a ceiling.
        let mut tb_floor = None;
        let mut tb_ceiling = None;
        let shared = self.shared;
        if let Some(tb) = &shared.tb
            && excluded.is_none()
            && pos.halfmoves() == 0
        {
            let pieces = pos.board().occupied().count();
            if pieces <= tb.cardinality
                && (pieces < tb.cardinality || depth >= tb.probe_depth)
                && let Some(wdl) = tb.tables.probe_wdl(pos)
            {
                shared.tbhits.fetch_add(1, Ordering::Relaxed);
                let (score, bound) = wdl_score(wdl, ply, tb.fifty_move_rule);
                let settles = match bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if settles {
                    let raw = match (in_check, tt) {
                        (true, _) => 0,
                        (false, Some(e)) => e.eval,
                        (false, None) => self.evaluate(pos, ply),
                    };
                    shared.tt.store(
                        key,
                        0,
                        score_to_tt(score, ply),
                        raw,
                        (depth + 6).min(MAX_PLY as i32 - 1),
                        bound,
                        tt_pv,
                    );
                    return score;
                }
                if PV {
                    if bound == Bound::Lower {
                        tb_floor = Some(score);
                        alpha = alpha.max(score);
                    } else {
                        tb_ceiling = Some(score);
                    }
                }
            }
        }

        // The raw static eval and its correction slot; neither in check.
        let evaluated = (!in_check).then(|| {
            let raw = match tt {
                Some(e) => e.eval,
                None => self.evaluate(pos, ply),
            };
            (Slot::of(pos), raw)
        });
        let static_eval = evaluated.map(|(slot, raw)| self.corrected(slot, raw));
        self.stack[ply].eval = static_eval;
        // Better than the last static eval of this side; where that was in
        // check (no eval), the one before it.
        let before = |back: usize| ply.checked_sub(back).and_then(|p| self.stack[p].eval);
        let improving = match (static_eval, before(2), before(4)) {
            (None, _, _) => false,
            (Some(now), Some(two), _) => now > two,
            (Some(now), None, Some(four)) => now > four,
            (Some(_), None, None) => true,
        };
        let eval = static_eval;
        self.stack[ply + 1].null_move = false;
        // Children share killers with their cousins; grandchildren start afresh.
        self.history.clear_killers(ply + 2);

        if let (false, None, Some(eval)) = (PV, excluded, eval) {
            // Reverse futility: far above beta with little depth left.
            if depth <= p::rfp_depth()
                && self.on(Feature::ReverseFutility)
                && eval.abs() < TB_WIN_BOUND
                && eval - p::rfp_margin() * (depth - i32::from(improving)) >= beta
            {
                return eval;
            }
            // Null move: give the opponent a free move; if we still beat beta,
            // a real move will too. Not where zugzwang is likely (`has_pieces`).
            if depth >= p::nmp_min_depth()
                && self.on(Feature::NullMove)
                && eval >= beta
                && !self.stack[ply].null_move
                && has_pieces(pos)
                && let Ok(null) = pos.clone().swap_turn()
            {
                let r = p::nmp_base()
                    + depth / p::nmp_depth_divisor()
                    + ((eval - beta) / p::nmp_eval_divisor()).min(p::nmp_eval_max());
                let null_key = null_move_key(pos, key);
                self.shared.tt.prefetch(null_key);
                debug_assert_eq!(null_key, position_key(&null));
                let outer_floor = self.null_floor;
                self.null_floor = self.keys.len();
                self.keys.push(null_key);
                self.stack[ply].played = None;
                self.stack[ply + 1].null_move = true;
                self.accumulators.push_null(ply);
                let score = -self.search::<false>(
                    &null,
                    null_key,
                    depth - r,
                    ply + 1,
                    -beta,
                    -beta + 1,
                    !cut_node,
                );
                self.stack[ply + 1].null_move = false;
                self.keys.pop();
                self.null_floor = outer_floor;
                if self.aborted {
                    return 0;
                }
                if score >= beta {
                    let score = if score >= TB_WIN_BOUND { beta } else { score };
                    if depth < p::nmp_verify_depth() {
                        return score;
                    }
                    // Verification at depth: the same search without a null move.
                    self.stack[ply].null_move = true;
                    let v = self.search::<false>(pos, key, depth - r, ply, beta - 1, beta, false);
                    self.stack[ply].null_move = false;
                    if v >= beta {
                        return score;
                    }
                }
            }
        }

        let context = [1, 2].map(|back| ply.checked_sub(back).and_then(|p| self.stack[p].played));

        // ProbCut: a good capture that beats beta by a margin in a search
        // of reduced depth would very likely beat beta in a full one.
        let probcut_beta = beta + p::probcut_margin();
        if let (false, None, Some(eval), Some((_, raw))) = (PV, excluded, eval, evaluated)
            && depth >= p::probcut_min_depth()
            && beta.abs() < TB_WIN_BOUND
            && self.on(Feature::ProbCut)
            && !tt.is_some_and(|e| {
                e.depth >= depth - (p::probcut_reduction() - 1)
                    && score_from_tt(e.score, ply) < probcut_beta
            })
        {
            let mut captures = MovePicker::new(
                pos,
                tt.map_or(0, |e| e.mv),
                self.history,
                ply,
                context,
                true,
            );
            while let Some(m) = captures.next(pos, self.history) {
                if !see_ge(pos, m, probcut_beta - eval) {
                    continue;
                }
                let (child, child_key) = self.make_move(pos, key, m, ply);
                let mut score = -self.qsearch::<false>(
                    &child,
                    child_key,
                    ply + 1,
                    -probcut_beta,
                    -probcut_beta + 1,
                );
                if score >= probcut_beta {
                    score = -self.search::<false>(
                        &child,
                        child_key,
                        depth - p::probcut_reduction(),
                        ply + 1,
                        -probcut_beta,
                        -probcut_beta + 1,
                        !cut_node,
                    );
                }
                self.keys.pop();
                if self.aborted {
                    return 0;
                }
                if score >= probcut_beta {
                    self.shared.tt.store(
                        key,
                        encode_move(m),
                        score_to_tt(score, ply),
                        raw,
                        depth - (p::probcut_reduction() - 1),
                        Bound::Lower,
                        tt_pv,
                    );
                    return score;
                }
            }
        }

        let mut picker = MovePicker::new(
            pos,
            tt.map_or(0, |e| e.mv),
            self.history,
            ply,
            context,
            false,
        );
        let tt_move = picker.tt_move;
        // Internal iterative reduction: no move to try first, so search less.
        if tt_move.is_none()
            && depth >= p::iir_min_depth()
            && (PV || cut_node)
            && self.on(Feature::Iir)
        {
            depth -= 1;
        }
        if picker.legal_count == 0 {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        let original_alpha = alpha;
        let mut best_score = tb_floor.unwrap_or(-INFINITY);
        let mut best_move = None;
        let mut quiets_tried = MoveList::new();
        let mut searched = 0usize;
        // Moves picked so far, pruned ones included: the pruning and
        // reduction formulas count moves tried, not moves searched.
        let mut tried = 0usize;
        // The TT move's extension when a singular search decided it; the
        // check extension applies otherwise.
        let tt_extension = match (tt, tt_move) {
            (Some(e), Some(tt_move)) if excluded.is_none() => {
                match self.singular_extension(pos, key, depth, ply, beta, cut_node, e, tt_move) {
                    Some(Singular::Cut(score)) => return score,
                    Some(Singular::Extend(e)) => Some(e),
                    None => None,
                }
            }
            _ => None,
        };
        let lmp_limit = (p::lmp_base() + depth * depth) as usize / (2 - usize::from(improving));

        // Pruning needs pieces to move: with pawns alone, zugzwang rules.
        let prunable = has_pieces(pos);
        while let Some(m) = picker.next(pos, self.history) {
            if Some(m) == excluded {
                continue;
            }
            let tried_before = tried;
            tried += 1;
            let quiet = !is_noisy(m);
            let gives_check = gives_check(pos, m);
            // The depth a late move would be searched to after its reduction.
            let lmr_depth = (depth - 1 - self.reduction(depth, tried) / RESOLUTION).max(0);
            // Shallow pruning, never of a move that gives check (it may mate)
            // and never before one move has a score.
            if best_score > -TB_WIN_BOUND && prunable && !gives_check {
                if quiet {
                    // Late move pruning: the quiet moves ordered last.
                    // Both conditions hold for every later quiet move too.
                    if depth <= p::lmp_depth() && tried_before >= lmp_limit && self.on(Feature::Lmp)
                    {
                        picker.skip_quiets();
                        continue;
                    }
                    // Futility: a quiet move cannot lift a hopeless eval to alpha.
                    if !in_check
                        && lmr_depth <= p::futility_depth()
                        && self.on(Feature::Futility)
                        && eval.is_some_and(|e| {
                            e + p::futility_base() + p::futility_margin() * lmr_depth <= alpha
                        })
                    {
                        picker.skip_quiets();
                        continue;
                    }
                    if lmr_depth <= p::see_quiet_depth()
                        && self.on(Feature::SeePruning)
                        && !see_ge(pos, m, -p::see_quiet_margin() * lmr_depth * lmr_depth)
                    {
                        continue;
                    }
                } else if depth <= p::see_noisy_depth()
                    && self.on(Feature::SeePruning)
                    && !see_ge(pos, m, -p::see_noisy_margin() * depth)
                {
                    continue;
                }
            }
            let (child, child_key) = self.make_move(pos, key, m, ply);
            let new_depth = depth - 1
                + match tt_extension {
                    Some(e) if Some(m) == tt_move => e,
                    _ => i32::from(gives_check && ply < 2 * self.root_depth as usize),
                };
            let mut score;
            if searched == 0 {
                score =
                    -self.search::<PV>(&child, child_key, new_depth, ply + 1, -beta, -alpha, false);
            } else {
                let mut r = 0;
                if depth >= p::lmr_min_depth()
                    && searched > usize::from(PV)
                    && self.on(Feature::Lmr)
                {
                    // `fine` is in 1/RESOLUTION plies; `one` is a whole ply.
                    let one = RESOLUTION;
                    let mut fine = self.reduction(depth, tried);
                    fine -= p::lmr_pv() * i32::from(PV);
                    fine -= p::lmr_tt_pv() * i32::from(tt_pv && !PV);
                    fine += p::lmr_cut_node() * i32::from(cut_node);
                    fine += p::lmr_not_improving() * i32::from(!improving);
                    fine -= p::lmr_gives_check() * i32::from(gives_check);
                    if quiet {
                        // A ply less or more for every `lmr_history_divisor` of history.
                        fine -= self.history.quiet_score(pos.turn(), m, &context) * one
                            / p::lmr_history_divisor();
                        // Killers and the counter move refuted a sibling: trust them more.
                        fine -= p::lmr_special() * i32::from(picker.is_special(m));
                        // A capture as TT move: the quiet moves are likely worse.
                        fine += p::lmr_tt_capture() * i32::from(tt_move.is_some_and(is_noisy));
                    } else {
                        fine -= p::lmr_noisy();
                    }
                    r = fine.div_euclid(one).clamp(0, (new_depth - 1).max(0));
                }
                score = -self.search::<false>(
                    &child,
                    child_key,
                    new_depth - r,
                    ply + 1,
                    -alpha - 1,
                    -alpha,
                    true,
                );
                if score > alpha && r > 0 {
                    score = -self.search::<false>(
                        &child,
                        child_key,
                        new_depth,
                        ply + 1,
                        -alpha - 1,
                        -alpha,
                        !cut_node,
                    );
                }
                if PV && score > alpha && score < beta {
                    score = -self.search::<true>(
                        &child,
                        child_key,
                        new_depth,
                        ply + 1,
                        -beta,
                        -alpha,
                        false,
                    );
                }
            }
            self.keys.pop();
            searched += 1;
            if self.aborted {
                return 0;
            }
            if self.improve::<PV>(ply, m, score, &mut best_score, &mut best_move, &mut alpha)
                && alpha >= beta
            {
                break;
            }
            if quiet {
                quiets_tried.push(m);
            }
        }

        if searched == 0 {
            // Every move was pruned (or, in a singular search, the only one
            // was left out): fall back on what the position is worth.
            return if excluded.is_some() {
                alpha
            } else {
                tb_floor.or(eval).unwrap_or(alpha)
            };
        }
        if let Some(best) = best_move
            && best_score >= beta
            && !is_noisy(best)
        {
            if self.on(Feature::Killers) {
                self.history.add_killer(ply, best);
                self.history.set_counter(context[0], best);
            }
            if self.on(Feature::History) {
                self.history
                    .update_quiets(pos.turn(), best, &quiets_tried, depth, &context);
            }
        }
        if let Some(ceiling) = tb_ceiling {
            best_score = best_score.min(ceiling);
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if PV && best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        // A search without the TT move does not say what the node is worth.
        if excluded.is_none() {
            self.shared.tt.store(
                key,
                best_move.map_or(tt_move.map_or(0, encode_move), encode_move),
                score_to_tt(best_score, ply),
                evaluated.map_or(0, |(_, raw)| raw),
                depth,
                bound,
                tt_pv,
            );
            // Teach the correction what the search found, where the score is
            // a fact about the evaluation: not a capture's gain, not a
            // mate, and not a bound on the wrong side of the eval.
            if let (Some((slot, raw)), Some(eval)) = (evaluated, static_eval)
                && best_move.is_none_or(|m| !is_noisy(m))
                && best_score.abs() < TB_WIN_BOUND
                && !(bound == Bound::Lower && best_score <= eval)
                && !(bound == Bound::Upper && best_score >= eval)
                && self.on(Feature::Correction)
            {
                self.history.correction.update(slot, depth, raw, best_score);
            }
        }
        best_score
    }

    /// Singular extension: when the TT says its move beats beta, search the
    /// other moves at half depth against a bound a little below that score.
    /// If none reaches it, the TT move is the only good one and is searched
    /// a ply deeper; if one beats beta too, the node fails high twice over
    /// (multi-cut); if the TT score alone beats beta, the TT move is searched
    /// a ply shallower.
    #[allow(clippy::too_many_arguments)]
    fn singular_extension(
        &mut self,
        pos: &Chess,
        key: u64,
        depth: i32,
        ply: usize,
        beta: i32,
        cut_node: bool,
        entry: TtEntry,
        tt_move: Move,
    ) -> Option<Singular> {
        let tt_score = score_from_tt(entry.score, ply);
        if depth < p::singular_min_depth()
            || entry.depth < depth - p::singular_tt_depth()
            || entry.bound == Bound::Upper
            || tt_score.abs() >= TB_WIN_BOUND
            || ply >= 2 * self.root_depth as usize
            || !self.on(Feature::Singular)
        {
            return None;
        }
        let singular_beta = tt_score - p::singular_margin() * depth;
        self.stack[ply].excluded = Some(tt_move);
        let score = self.search::<false>(
            pos,
            key,
            (depth - 1) / 2,
            ply,
            singular_beta - 1,
            singular_beta,
            cut_node,
        );
        self.stack[ply].excluded = None;
        if self.aborted {
            return None;
        }
        Some(if score < singular_beta {
            Singular::Extend(1)
        } else if singular_beta >= beta {
            Singular::Cut(singular_beta)
        } else if tt_score >= beta {
            Singular::Extend(-1)
        } else {
            Singular::Extend(0)
        })
    }

    fn qsearch<const PV: bool>(
        &mut self,
        pos: &Chess,
        key: u64,
        ply: usize,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        if !self.enter(ply) {
            return 0;
        }
        let in_check = pos.is_check();
        if pos.halfmoves() >= 100 && !(in_check && pos.legal_moves().is_empty()) {
            return 0;
        }
        if ply >= MAX_PLY {
            return if in_check { 0 } else { self.evaluate(pos, ply) };
        }
        let tt = self.shared.tt.probe(key);
        if let Some(e) = tt
            && !PV
            && pos.halfmoves() < 90
            && let Some(score) = e.cutoff(ply, alpha, beta)
        {
            return score;
        }
        let mut best_score;
        let stand_pat;
        // What the TT keeps: the uncorrected eval (0 in check).
        let mut raw_eval = 0;
        if in_check {
            best_score = -INFINITY;
            stand_pat = None;
        } else {
            raw_eval = match tt {
                Some(e) => e.eval,
                None => self.evaluate(pos, ply),
            };
            let eval = self.corrected(Slot::of(pos), raw_eval);
            if eval >= beta {
                return eval;
            }
            alpha = alpha.max(eval);
            best_score = eval;
            stand_pat = Some(eval);
        }
        let mut picker = MovePicker::new(
            pos,
            tt.map_or(0, |e| e.mv),
            self.history,
            ply,
            [None; 2],
            true,
        );
        if in_check && picker.legal_count == 0 {
            return -MATE + ply as i32;
        }
        let mut best_move = None;
        while let Some(m) = picker.next(pos, self.history) {
            // Delta pruning: even winning the piece cannot reach alpha.
            if let Some(sp) = stand_pat
                && m.promotion().is_none()
                && sp
                    + m.capture().map_or(0, |r| super::see::SEE_VALUE[r as usize])
                    + p::qsearch_delta()
                    <= alpha
            {
                continue;
            }
            if !in_check
                && m.promotion().is_none()
                && !picker.last_passed_see()
                && !see_ge(pos, m, 0)
            {
                continue;
            }
            let mut child = pos.clone();
            child.play_unchecked(m);
            let child_key = child_key(pos, key, m, &child);
            self.shared.tt.prefetch(child_key);
            self.accumulators
                .push_move(ply, pos.turn(), m, child.board());
            let score = -self.qsearch::<PV>(&child, child_key, ply + 1, -beta, -alpha);
            if self.aborted {
                return 0;
            }
            if self.improve::<PV>(ply, m, score, &mut best_score, &mut best_move, &mut alpha)
                && alpha >= beta
            {
                break;
            }
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else {
            Bound::Upper
        };
        self.shared.tt.store(
            key,
            best_move.map_or(0, encode_move),
            score_to_tt(best_score, ply),
            raw_eval,
            0,
            bound,
            PV || tt.is_some_and(|e| e.pv),
        );
        best_score
    }
}

/// The key after a null move: the other side to move and no en passant
/// square (the key counts one only where a capture is legal).
fn null_move_key(pos: &Chess, key: u64) -> u64 {
    let mut z = Zobrist64(key) ^ Zobrist64::zobrist_for_white_turn();
    if let Some(ep) = pos.ep_square(EnPassantMode::Legal) {
        z ^= Zobrist64::zobrist_for_en_passant_file(ep.file());
    }
    z.0
}

/// The side to move has a rook, a queen or two pieces besides king and
/// pawns. Null move is unsound in zugzwang, which is common with pawns alone
/// or a single minor piece.
fn has_pieces(pos: &Chess) -> bool {
    let b = pos.board();
    let pieces = b.by_color(pos.turn()) & !(b.pawns() | b.kings());
    pieces.more_than_one() || (pieces & (b.rooks() | b.queens())).any()
}
