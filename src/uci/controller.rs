//! The controller: owns the game, the options and the search engine, and
//! executes commands strictly in the order they came. Long work (search,
//! perft, bench) runs as a job on its own thread, one job at a time. So the
//! controller never waits: `isready` is answered at once and in order, and
//! settings that touch the tables give the next search new ones, built or
//! cleared by threads of their own (the next search waits for them).
//!
//! A `go` (or `perft`, `bench`) sent while a job runs is a GUI's mistake,
//! answered so: it is prepared at once (the game and options of that
//! moment) and queued behind the running job, and runs when that one ends,
//! as scripts that send `go` before the last `bestmove` expect. A running
//! or queued infinite or ponder search, which would hold the queue for
//! ever, is stopped first, with an error line. `stop` ends the running job
//! and every queued one: each `go` still gets exactly one `bestmove` (a
//! queued one answers at once, with its first iteration's move), in the
//! order of the `go` lines. `ponderhit` reaches the newest job.

use super::listener::{UciListener, bestmove_lines};
use super::options::{Change, Options};
use super::output::Output;
use super::parse::{Command, GoParams, Parsed, PositionSpec};
use crate::game::Game;
use crate::perft;
use crate::search::ablation::Ablation;
use crate::search::report::SearchResult;
use crate::search::strength::Strength;
use crate::search::tablebase::TbConfig;
use crate::search::time::TimeLimit;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use crossbeam_channel::{Receiver, never, select};
use shakmaty::{CastlingMode, Chess, Color, Move, Position};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a `go` thinks when it names limits but none the search can use
/// (all malformed, or a clock for the side not to move only): short, so a
/// GUI that sent a real clock badly does not lose on time waiting.
pub const FALLBACK_MOVETIME_MS: u64 = 100;

/// What the controller keeps of a job to steer it.
struct JobControl {
    signals: Arc<Signals>,
    /// An `infinite` or `ponder` search that has not yet been released by
    /// `stop` (or `ponderhit`, for a ponder search that is not infinite):
    /// it will not end by itself.
    waits_for_release: bool,
    /// Whether `ponderhit` ends the wait (a ponder search without `infinite`).
    released_by_ponderhit: bool,
}

impl JobControl {
    /// Raises `stop` and lets the job end.
    fn stop(&mut self) {
        self.signals.stop.store(true, Ordering::SeqCst);
        self.waits_for_release = false;
    }
}

type Work = Box<dyn FnOnce(Arc<Signals>) + Send>;

/// Places where a unit test makes a `go` fail, to see it answered all the
/// same; outside unit tests [`Faults::check`] is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FaultPoint {
    /// Preparing the search, on the controller thread.
    PrepareGo,
    /// Writing the draw claims and `bestmove`, on the job's thread.
    WriteBestmove,
}

#[derive(Clone, Copy, Default)]
struct Faults {
    #[cfg(test)]
    at: Option<FaultPoint>,
}

impl Faults {
    #[inline(always)]
    fn check(self, point: FaultPoint) {
        #[cfg(test)]
        if self.at == Some(point) {
            panic!("fault injected by a test: {point:?}");
        }
        #[cfg(not(test))]
        let _ = point;
    }
}

/// A `go` made ready on the controller thread, run on the job's.
struct SearchJob {
    request: SearchRequest,
    listener: UciListener,
    /// False when preparing it failed: it answers with a legal move.
    search: bool,
    infinite: bool,
    ponder: bool,
    faults: Faults,
}

impl SearchJob {
    /// Searches, waits for the release of an infinite or ponder search, and
    /// writes `bestmove`: exactly one, whatever fails on the way.
    fn run(self, engine: &Engine, signals: &Signals) {
        let out = &self.listener.out;
        let result = if self.search {
            catch_unwind(AssertUnwindSafe(|| {
                engine.search(&self.request, &self.listener, signals)
            }))
            .unwrap_or_else(|_| {
                out.error("internal error in the search: playing the first legal move");
                first_legal_move(&self.request)
            })
        } else {
            first_legal_move(&self.request)
        };
        wait_for_release(signals, self.infinite, self.ponder);
        let game = &self.request.game;
        let lines = catch_unwind(AssertUnwindSafe(|| {
            self.faults.check(FaultPoint::WriteBestmove);
            bestmove_lines(game, &result)
        }))
        .unwrap_or_else(|_| {
            out.error("internal error while writing the draw claims: bestmove alone");
            vec![bare_bestmove(game.castling_mode(), &result)]
        });
        for line in &lines {
            out.line(line);
        }
    }
}

/// A job running on its own thread.
struct Running {
    control: JobControl,
    /// Disconnects when the job's thread ends.
    done: Receiver<()>,
    handle: JoinHandle<()>,
}

/// A job waiting for the running one to end.
struct Queued {
    control: JobControl,
    work: Work,
}

pub struct Controller {
    game: Game,
    options: Options,
    out: Output,
    input: Receiver<Parsed>,
    /// False once the input has ended: it is then read no more.
    input_open: bool,
    engine: Engine,
    running: Option<Running>,
    queued: VecDeque<Queued>,
    /// `debug on`: every received line is echoed as `info string debug: …`.
    debug: bool,
    uci_seen: bool,
    /// `xboard` came before any `uci`: a GUI probing for the protocol, which
    /// must see no error lines for the lines of its probe.
    probing: bool,
    quit: bool,
    /// Seeds the move choice of a weakened engine (`UCI_LimitStrength`, `Skill Level`):
    /// from the clock at start-up, then one step per search.
    strength_seed: u64,
    /// Lines from the command line (`qilin "genfens …" "quit"`): `quit` lets
    /// the jobs run to their end instead of stopping them.
    finish_jobs_on_quit: bool,
    faults: Faults,
    /// The search features the strength lab switched off for every search
    /// (`QILIN_DISABLE`), read once at start-up.
    ablation: Ablation,
}

impl Controller {
    /// `Err` when not even a table of 1 MB and one search thread can be had.
    pub fn new(input: Receiver<Parsed>, out: Output) -> Result<Controller, String> {
        let mut options = Options::default();
        let engine = Engine::new(options.threads, options.hash_mb)
            .or_else(|_| Engine::new(options.threads, 1))?;
        options.hash_mb = engine.hash_mb();
        // Tables the evaluation builds once: before the first `go`, so
        // that no search pays for them on the clock.
        std::thread::spawn(crate::endgames::prepare);
        Ok(Controller {
            game: Game::default(),
            engine,
            options,
            out,
            input,
            input_open: true,
            running: None,
            queued: VecDeque::new(),
            debug: false,
            uci_seen: false,
            probing: false,
            quit: false,
            strength_seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            finish_jobs_on_quit: false,
            faults: Faults::default(),
            ablation: std::env::var("QILIN_DISABLE")
                .map_or_else(|_| Ablation::default(), |list| Ablation::parse(&list)),
        })
    }

    /// A controller for lines given on the command line: every job they
    /// start runs to its end before the engine quits (a search that waits
    /// for `stop` is stopped, as no `stop` can come).
    pub fn finishing_jobs_on_quit(mut self) -> Controller {
        self.finish_jobs_on_quit = true;
        self
    }

    /// Executes commands until `quit` or the end of input.
    pub fn run(mut self) {
        while !self.quit {
            let done = self.running.as_ref().map_or_else(never, |j| j.done.clone());
            let input = if self.input_open {
                self.input.clone()
            } else {
                never()
            };
            let parsed = select! {
                recv(input) -> msg => self.received(msg),
                recv(done) -> _ => {
                    self.finish_job();
                    self.start_next_job();
                    continue;
                }
            };
            // A fault in one command must not silence the engine.
            if catch_unwind(AssertUnwindSafe(|| self.execute(parsed))).is_err() {
                self.out.error("internal error while executing the command");
            }
        }
        while self.finish_jobs_on_quit
            && let Some(job) = &mut self.running
        {
            if job.control.waits_for_release {
                job.control.stop();
            }
            self.finish_job();
            self.start_next_job();
        }
        self.queued.clear();
        if let Some(job) = &mut self.running {
            job.control.stop();
        }
        self.finish_job();
    }

    /// A message from the input channel; its end reads as `quit`, once.
    fn received(&mut self, msg: Result<Parsed, crossbeam_channel::RecvError>) -> Parsed {
        msg.unwrap_or_else(|_| {
            self.input_open = false;
            Parsed::of(Command::Quit)
        })
    }

    fn execute(&mut self, parsed: Parsed) {
        if self.debug {
            self.out.info_string(&format!("debug: {}", parsed.line));
        }
        // A probe lasts until a command Qilin knows: Arena follows
        // `xboard` with `protover 2` and more, then `uci`.
        match parsed.command {
            Some(Command::Xboard) => self.probing = !self.uci_seen,
            Some(_) => self.probing = false,
            None => {}
        }
        if !self.probing {
            for e in &parsed.errors {
                self.out.error(e);
            }
        }
        let Some(command) = parsed.command else {
            return;
        };
        match command {
            Command::Uci => {
                self.uci_seen = true;
                self.out.line(&format!("id name {}", crate::NAME));
                self.out.line(&format!("id author {}", crate::AUTHOR));
                for line in Options::declarations() {
                    self.out.line(&line);
                }
                self.out.line("uciok");
            }
            Command::Xboard => {}
            Command::IsReady => self.is_ready(),
            Command::Debug(on) => self.debug = on,
            Command::Register => {}
            Command::UciNewGame => {
                self.game = Game::new(Chess::default(), self.castling_mode());
                self.engine.clear();
            }
            Command::Position(spec) => self.set_position(&spec),
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::Go(params) => self.go(&params),
            Command::Stop => self.signal_stop(),
            Command::PonderHit => self.signal_ponderhit(),
            Command::Quit => self.quit = true,
            Command::Display => self.display(),
            Command::Eval => {
                let pos = self.game.position();
                for line in crate::nnue::describe(self.engine.net(), pos) {
                    self.out.line(&line);
                }
                if pos.is_check() {
                    self.out
                        .line("(in check: the search does not use the static evaluation here)");
                }
            }
            Command::Perft(depth) => self.perft(depth),
            Command::Bench(depth) => {
                let out = self.out.clone();
                let net = Arc::clone(self.engine.net());
                self.submit(false, false, move |signals| {
                    crate::bench::run(depth, net, &signals, &|line| out.line(line));
                });
            }
            Command::Genfens(request) => {
                let out = self.out.clone();
                let net = Arc::clone(self.engine.net());
                self.submit(false, false, move |signals| {
                    let found = |fen: &str| out.info_string(&format!("genfens {fen}"));
                    if let Err(e) = crate::genfens::generate(&request, net, &signals, &found) {
                        out.error(&format!("genfens: {e}"));
                    }
                });
            }
            Command::Help => {
                for line in HELP.lines() {
                    self.out.line(line);
                }
            }
        }
    }

    /// `readyok` once the engine can search at once: the evaluation's
    /// tables are built (a few milliseconds, once).
    fn is_ready(&self) {
        crate::endgames::prepare();
        self.out.line("readyok");
    }

    fn castling_mode(&self) -> CastlingMode {
        CastlingMode::from_chess960(self.options.chess960)
    }

    /// Sets up `position`; a bad FEN leaves the game as it was, a bad move
    /// leaves the game at the move before it (see the bad input policy in docs/uci.md).
    fn set_position(&mut self, spec: &PositionSpec) {
        let mode = self.castling_mode();
        let mut game = match Game::setup(spec.fen.as_deref(), mode) {
            Ok(g) => g,
            Err(e) => return self.out.error(&e.to_string()),
        };
        let result = game.play_uci_moves(&spec.moves);
        self.game = game;
        if let Err(e) = result {
            self.out.error(&e.to_string());
            let why = crate::rules_explain::setup_illegality(&self.game, &e);
            for line in why.as_ref().map(super::reason_lines).unwrap_or_default() {
                self.out.line(&line);
            }
        }
    }

    /// Never waits for a running search: it keeps the pool and tables it
    /// started with.
    fn set_option(&mut self, name: &str, value: Option<&str>) {
        let eval_file = self.options.eval_file.clone();
        let change = match self.options.set(name, value) {
            Err(e) => return self.out.error(&e),
            Ok(change) => change,
        };
        match change {
            Change::Threads => {
                if let Err(e) = self.engine.set_threads(self.options.threads) {
                    let kept = self.engine.threads();
                    self.out.error(&format!("{e}; keeping {kept}"));
                    self.options.threads = kept;
                }
            }
            Change::Chess960 => self.game.set_castling_mode(self.castling_mode()),
            Change::Hash => {
                if let Err(e) = self.engine.set_hash(self.options.hash_mb) {
                    self.out
                        .error(&format!("{e}; keeping {} MB", self.engine.hash_mb()));
                    self.options.hash_mb = self.engine.hash_mb();
                }
            }
            Change::ClearHash => self.engine.clear(),
            Change::SyzygyPath => self.load_tablebases(),
            Change::SyzygyConfig => self.engine.set_tb_config(TbConfig {
                probe_depth: self.options.syzygy_probe_depth,
                fifty_move_rule: self.options.syzygy_50_move_rule,
                probe_limit: self.options.syzygy_probe_limit,
            }),
            Change::EvalFile => match self.engine.load_net(&self.options.eval_file) {
                Ok(()) => self
                    .out
                    .info_string(&format!("evaluation: {}", self.evaluation_name())),
                Err(e) => {
                    let refused = std::mem::replace(&mut self.options.eval_file, eval_file);
                    self.out.error(&format!(
                        "EvalFile '{refused}': {e}; keeping the {}",
                        self.evaluation_name()
                    ));
                }
            },
            Change::Other => {}
        }
    }

    /// Loads the tables of `SyzygyPath` for the next searches: one error
    /// line names every folder and file that could not be used, one line
    /// says what was found. An empty path switches probing off silently.
    fn load_tablebases(&mut self) {
        let load = self.engine.set_syzygy_path(&self.options.syzygy_path);
        if !load.problems.is_empty() {
            self.out
                .error(&format!("SyzygyPath: {}", load.problems.join("; ")));
        }
        if !self.options.syzygy_path.is_empty() {
            self.out.info_string(&format!(
                "Found {} tablebases ({} with DTZ, up to {} pieces)",
                load.wdl_tables, load.dtz_tables, load.max_pieces
            ));
        }
    }

    /// What the engine evaluates with, for the `EvalFile` reports.
    fn evaluation_name(&self) -> String {
        let shape = self.engine.net().shape();
        match self.options.eval_file.as_str() {
            "" => format!("embedded net ({shape})"),
            path => format!("net {path} ({shape})"),
        }
    }

    /// The job that `ponderhit` is meant for: the last one asked for.
    fn newest_job(&mut self) -> Option<&mut JobControl> {
        match self.queued.back_mut() {
            Some(q) => Some(&mut q.control),
            None => self.running.as_mut().map(|r| &mut r.control),
        }
    }

    /// Ends the running job and every queued one (see the module comment):
    /// the GUI that sends `stop` waits for every `bestmove` it is owed.
    fn signal_stop(&mut self) {
        if let Some(job) = &mut self.running {
            job.control.stop();
        }
        for job in &mut self.queued {
            job.control.stop();
        }
    }

    fn signal_ponderhit(&mut self) {
        if let Some(job) = self.newest_job() {
            job.signals.ponderhit.store(true, Ordering::SeqCst);
            if job.released_by_ponderhit {
                job.waits_for_release = false;
            }
        }
    }

    fn finish_job(&mut self) {
        if let Some(job) = self.running.take()
            && job.handle.join().is_err()
        {
            self.out.error("internal error: a job failed");
        }
    }

    /// Runs `work` as soon as the jobs before it are done (a `go` sent before
    /// the last `bestmove` came, as scripts do). A job that would never end
    /// by itself (an infinite or ponder search never released) would hold up
    /// the new one for ever: the GUI has plainly forgotten it, so it is
    /// stopped, with an error line.
    fn submit(
        &mut self,
        waits_for_release: bool,
        released_by_ponderhit: bool,
        work: impl FnOnce(Arc<Signals>) + Send + 'static,
    ) {
        if let Some(job) = self.newest_job().filter(|j| j.waits_for_release) {
            job.stop();
            self.out
                .error("go, perft or bench while an infinite or ponder search runs: stopping it");
        }
        self.queued.push_back(Queued {
            control: JobControl {
                signals: Arc::new(Signals::default()),
                waits_for_release,
                released_by_ponderhit,
            },
            work: Box::new(work),
        });
        if self.running.is_none() {
            self.start_next_job();
        }
    }

    fn start_next_job(&mut self) {
        let Some(Queued { control, work }) = self.queued.pop_front() else {
            return;
        };
        let (tx, done) = crossbeam_channel::bounded::<()>(0);
        let signals = Arc::clone(&control.signals);
        let out = self.out.clone();
        // The work waits in a slot, so that it can still run here, stopped
        // at once, if the system gives no thread: every `go` is answered.
        let slot = Arc::new(std::sync::Mutex::new(Some(work)));
        let take = |slot: &std::sync::Mutex<Option<Work>>| {
            slot.lock().unwrap_or_else(|e| e.into_inner()).take()
        };
        let job_slot = Arc::clone(&slot);
        let job_signals = Arc::clone(&signals);
        let spawned = std::thread::Builder::new()
            .name("job".into())
            .spawn(move || {
                let _tx = tx;
                if let Some(work) = take(&job_slot)
                    && catch_unwind(AssertUnwindSafe(|| work(job_signals))).is_err()
                {
                    out.error("internal error: a job failed");
                }
            });
        let handle = match spawned {
            Ok(handle) => handle,
            Err(e) => {
                self.out.error(&format!(
                    "cannot start a thread for the job ({e}): stopping it"
                ));
                signals.stop.store(true, Ordering::SeqCst);
                if let Some(work) = take(&slot) {
                    work(signals);
                }
                return self.start_next_job();
            }
        };
        self.running = Some(Running {
            control,
            done,
            handle,
        });
    }

    /// The strength limit of the next search, a new seed each time.
    fn strength(&mut self) -> Option<Strength> {
        self.strength_seed = self.strength_seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.options.strength(self.strength_seed)
    }

    /// Queues the search of a `go`. A failure while preparing it (a bug)
    /// still gives the `go` its `bestmove`: a legal move, with an error line.
    fn go(&mut self, params: &GoParams) {
        let (infinite, ponder) = (params.infinite, params.ponder);
        let prepared = catch_unwind(AssertUnwindSafe(|| self.prepare_search(params)));
        let (request, search) = match prepared {
            Ok(request) => (request, true),
            Err(_) => {
                self.out
                    .error("internal error while preparing the search: playing a legal move");
                let limits = SearchLimits::default();
                (SearchRequest::new(self.game.clone(), limits), false)
            }
        };
        let job = SearchJob {
            request,
            listener: UciListener {
                out: self.out.clone(),
                mode: self.game.castling_mode(),
                show_wdl: self.options.show_wdl,
            },
            search,
            infinite,
            ponder,
            faults: self.faults,
        };
        let engine = self.engine.clone();
        self.submit(infinite || ponder, ponder && !infinite, move |signals| {
            job.run(&engine, &signals);
        });
    }

    /// The request of a `go`, after the lines that say how the game stands.
    fn prepare_search(&mut self, params: &GoParams) -> SearchRequest {
        self.faults.check(FaultPoint::PrepareGo);
        for line in super::rule_lines(&self.game.rule_status()) {
            self.out.line(&line);
        }
        SearchRequest {
            game: self.game.clone(),
            limits: search_limits(
                params,
                self.game.position().turn(),
                self.options.move_overhead_ms,
            ),
            searchmoves: self.searchmoves(&params.searchmoves),
            multipv: self.options.multipv,
            strength: self.strength(),
            ablation: self.ablation,
        }
    }

    /// The legal moves of `go searchmoves`, each once; illegal ones are
    /// named and left out.
    fn searchmoves(&self, texts: &[String]) -> Vec<Move> {
        let mut moves: Vec<Move> = Vec::with_capacity(texts.len().min(256));
        for text in texts {
            match self.game.parse_move(text) {
                Ok(m) if !moves.contains(&m) => moves.push(m),
                Ok(_) => {}
                Err(reason) => self
                    .out
                    .error(&format!("{reason} searchmove ignored: {text}")),
            }
        }
        if moves.is_empty() && !texts.is_empty() {
            self.out.error("no legal searchmove: searching all moves");
        }
        moves
    }

    /// Counts on the search's threads: no second pool (which the system
    /// may refuse) for a job that never runs beside a search.
    fn perft(&mut self, depth: u32) {
        let pos = self.game.position().clone();
        let mode = self.game.castling_mode();
        let engine = self.engine.clone();
        let out = self.out.clone();
        self.submit(false, false, move |signals| {
            match perft::report(&pos, depth, mode, Some(engine.pool()), &signals.stop) {
                Some(lines) => lines.iter().for_each(|l| out.line(l)),
                None => out.info_string("perft stopped"),
            }
        });
    }

    fn display(&self) {
        for line in board_diagram(self.game.position()) {
            self.out.line(&line);
        }
        self.out.line("");
        self.out.line(&format!("Fen: {}", self.game.fen()));
        self.out.line(&format!("Key: {:016X}", self.game.key()));
        let checkers: Vec<String> = self
            .game
            .position()
            .checkers()
            .into_iter()
            .map(|sq| sq.to_string())
            .collect();
        self.out.line(&format!("Checkers: {}", checkers.join(" ")));
        for line in super::rule_lines(&self.game.rule_status()) {
            self.out.line(&line);
        }
    }
}

/// The search limits of a `go` for the side to move. A `go` with no field
/// at all searches until it can go no deeper (or is stopped); one that
/// names limits but none the search can use thinks [`FALLBACK_MOVETIME_MS`],
/// so that every `go` that is not `infinite` or `ponder` ends by itself.
pub fn search_limits(go: &GoParams, side: Color, move_overhead_ms: u64) -> SearchLimits {
    let (clock, increment) = match side {
        Color::White => (go.wtime, go.winc),
        Color::Black => (go.btime, go.binc),
    };
    let time = match (go.movetime, clock) {
        (Some(ms), _) => TimeLimit::MoveTime(ms),
        (None, Some(remaining)) => TimeLimit::Clock {
            remaining,
            increment: increment.unwrap_or(0),
            moves_to_go: go.movestogo,
        },
        (None, None) => TimeLimit::None,
    };
    let mut limits = SearchLimits {
        depth: go.depth.map(|d| d.min(u64::from(u32::MAX)) as u32),
        nodes: go.nodes,
        soft_nodes: None,
        mate: go.mate,
        time,
        ponder: go.ponder,
        move_overhead_ms,
    };
    let usable = limits.time != TimeLimit::None
        || limits.depth.is_some()
        || limits.nodes.is_some()
        || limits.mate.is_some();
    if !usable && !go.infinite && go.names_limits {
        limits.time = TimeLimit::MoveTime(FALLBACK_MOVETIME_MS);
    }
    limits
}

/// In `infinite` and `ponder` mode the GUI waits for `bestmove` until it
/// sends `stop` (or `ponderhit`, when pondering without `infinite`), even
/// if the search ended before.
fn wait_for_release(signals: &Signals, infinite: bool, ponder: bool) {
    if !infinite && !ponder {
        return;
    }
    loop {
        if signals.stop.load(Ordering::SeqCst) {
            return;
        }
        if ponder && !infinite && signals.ponderhit.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What a failed search plays: a legal move, never nothing.
fn first_legal_move(request: &SearchRequest) -> SearchResult {
    let best = request
        .searchmoves
        .first()
        .copied()
        .or_else(|| request.game.position().legal_moves().first().copied());
    SearchResult {
        best,
        ponder: None,
        score: None,
        depth: 0,
        nodes: 0,
    }
}

/// `bestmove` without the claims, for when writing them failed.
fn bare_bestmove(mode: CastlingMode, result: &SearchResult) -> String {
    match result.best {
        Some(m) => format!("bestmove {}", m.to_uci(mode)),
        None => "bestmove (none)".to_string(),
    }
}

/// The board as Stockfish's `d` draws it, White at the bottom.
fn board_diagram(pos: &Chess) -> Vec<String> {
    let rule = " +---+---+---+---+---+---+---+---+".to_string();
    let mut lines = vec![rule.clone()];
    for rank in shakmaty::Rank::ALL.iter().rev() {
        let mut row = String::from(" |");
        for file in shakmaty::File::ALL {
            let square = shakmaty::Square::from_coords(file, *rank);
            let c = pos.board().piece_at(square).map_or(' ', |p| p.char());
            row.push_str(&format!(" {c} |"));
        }
        row.push_str(&format!(" {}", rank.char()));
        lines.push(row);
        lines.push(rule.clone());
    }
    lines.push("   a   b   c   d   e   f   g   h".to_string());
    lines
}

const HELP: &str = "\
Qilin speaks UCI (https://www.shredderchess.com/download/div/uci.zip).
Commands besides the standard ones:
  d                      show the board, FEN, key, checkers and rule status
  eval                   the static evaluation: the net's output, or a known endgame's rule
  perft <depth>          count the leaves of the move tree (also: go perft <depth>)
  bench [depth]          search the bench positions; last line: <nodes> nodes <nps> nps
                         (stopped: info string bench stopped after <k> of <n> positions)
  genfens <N> seed <S> book <None|file>
                         N opening positions for OpenBench: info string genfens <FEN>
  help                   this text
Command line: qilin --help lists the subcommands (perft, bench, analyse, eval, datagen, train);
qilin \"<line>\" \"<line>\"… executes each argument as a line, then quits (qilin \"genfens 8 seed 1 book None\" quit).";

#[cfg(test)]
mod tests {
    use super::*;

    fn go(line: &str) -> GoParams {
        match super::super::parse::parse(line).command {
            Some(Command::Go(g)) => g,
            other => panic!("not a go: {other:?}"),
        }
    }

    /// An output that a test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn lines(&self) -> Vec<String> {
            let bytes = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
            String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::to_string)
                .collect()
        }

        fn bestmoves(&self) -> Vec<String> {
            let all = self.lines();
            all.into_iter()
                .filter(|l| l.starts_with("bestmove"))
                .collect()
        }

        /// Waits up to 10 s for `n` bestmove lines.
        fn wait_for_bestmoves(&self, n: usize) -> Vec<String> {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while self.bestmoves().len() < n && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            self.bestmoves()
        }
    }

    /// A controller on its own thread with `fault` injected; lines go in
    /// through the returned sender, output comes back in `Captured`.
    fn controller_with(
        fault: FaultPoint,
    ) -> (
        crossbeam_channel::Sender<Parsed>,
        Captured,
        std::thread::JoinHandle<()>,
    ) {
        let (tx, rx) = crossbeam_channel::unbounded();
        let captured = Captured::default();
        let mut controller =
            Controller::new(rx, Output::new(Box::new(captured.clone()))).expect("controller");
        controller.faults = Faults { at: Some(fault) };
        let handle = std::thread::spawn(move || controller.run());
        (tx, captured, handle)
    }

    fn send(tx: &crossbeam_channel::Sender<Parsed>, line: &str) {
        tx.send(super::super::parse::parse(line))
            .expect("controller runs");
    }

    /// The move of a `bestmove` line, checked legal in the start position.
    fn legal_in_startpos(line: &str) -> bool {
        let game = Game::default();
        line.split(' ')
            .nth(1)
            .is_some_and(|m| game.parse_move(m).is_ok())
    }

    #[test]
    fn a_go_whose_preparation_fails_still_gets_one_bestmove() {
        let (tx, out, handle) = controller_with(FaultPoint::PrepareGo);
        send(&tx, "position startpos");
        send(&tx, "go depth 3");
        let best = out.wait_for_bestmoves(1);
        assert_eq!(best.len(), 1, "{:#?}", out.lines());
        assert!(legal_in_startpos(&best[0]), "{best:?}");
        assert!(out.lines().iter().any(|l| l
            == "info string error: internal error while preparing the search: playing a legal move"));
        // An infinite search still waits for `stop`, then answers once.
        send(&tx, "go infinite");
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(out.bestmoves().len(), 1, "a bestmove before stop");
        send(&tx, "stop");
        let best = out.wait_for_bestmoves(2);
        assert_eq!(best.len(), 2, "{:#?}", out.lines());
        assert!(legal_in_startpos(&best[1]), "{best:?}");
        drop(tx);
        handle.join().expect("controller thread");
        assert_eq!(out.bestmoves().len(), 2);
    }

    #[test]
    fn a_go_whose_bestmove_line_fails_still_gets_one_bestmove() {
        let (tx, out, handle) = controller_with(FaultPoint::WriteBestmove);
        send(&tx, "position startpos");
        send(&tx, "go depth 2");
        let best = out.wait_for_bestmoves(1);
        assert_eq!(best.len(), 1, "{:#?}", out.lines());
        assert!(legal_in_startpos(&best[0]), "{best:?}");
        assert!(out.lines().iter().any(|l| l
            == "info string error: internal error while writing the draw claims: bestmove alone"));
        drop(tx);
        handle.join().expect("controller thread");
        assert_eq!(out.bestmoves().len(), 1);
    }

    #[test]
    fn the_clock_of_the_side_to_move() {
        let g = go("go wtime 200 btime 60000 winc 5 binc 7 movestogo 9");
        let clock = |remaining, increment| TimeLimit::Clock {
            remaining,
            increment,
            moves_to_go: Some(9),
        };
        assert_eq!(search_limits(&g, Color::White, 10).time, clock(200, 5));
        assert_eq!(search_limits(&g, Color::Black, 10).time, clock(60000, 7));
        assert_eq!(
            search_limits(&go("go movetime 300 wtime 5"), Color::White, 10).time,
            TimeLimit::MoveTime(300)
        );
    }

    #[test]
    fn a_go_with_no_usable_limit_still_ends() {
        let fallback = TimeLimit::MoveTime(FALLBACK_MOVETIME_MS);
        for line in [
            "go depth -1",
            "go movetime 1e3",
            "go wtime 1000.5 btime 1000.5",
            "go nodes -5",
            "go btime 100 binc 10",
            "go winc 10",
            "go mate 0",
        ] {
            let limits = search_limits(&go(line), Color::White, 10);
            assert_eq!(limits.time, fallback, "{line}");
        }
        // Bare `go` searches to the end of its depth; `infinite` waits for stop.
        assert_eq!(
            search_limits(&go("go"), Color::White, 10).time,
            TimeLimit::None
        );
        assert_eq!(
            search_limits(&go("go infinite movetime x"), Color::White, 10).time,
            TimeLimit::None
        );
        assert_eq!(
            search_limits(&go("go depth 3 movetime x"), Color::White, 10),
            SearchLimits {
                depth: Some(3),
                move_overhead_ms: 10,
                ..SearchLimits::default()
            }
        );
    }

    #[test]
    fn huge_clocks() {
        // The largest u64 is a clock (the search saturates its sums)…
        let g = go("go wtime 18446744073709551615 btime 5");
        assert_eq!(
            search_limits(&g, Color::White, 10).time,
            TimeLimit::Clock {
                remaining: u64::MAX,
                increment: 0,
                moves_to_go: None
            }
        );
        // …one more is malformed, and the go still ends.
        let g = go("go wtime 18446744073709551616");
        assert_eq!(
            search_limits(&g, Color::White, 10).time,
            TimeLimit::MoveTime(FALLBACK_MOVETIME_MS)
        );
    }
}
