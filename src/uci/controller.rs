//! The controller: owns the game, the options and the search engine, and
//! executes commands strictly in the order they came. Long work (search,
//! perft, bench) runs as a job on its own thread, one job at a time; a job
//! asked for while another runs is prepared at once (the game and options
//! of that moment) and queued. So the controller never waits: `isready` is
//! answered at once and in order, `stop` and `ponderhit` reach the job they
//! belong to, and settings that touch the tables give the next search new
//! ones or clear the shared table with threads of their own.

use super::listener::{UciListener, bestmove_lines};
use super::options::{Change, Options};
use super::output::Output;
use super::parse::{Command, GoParams, Parsed, PositionSpec};
use crate::game::Game;
use crate::perft;
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

type Work = Box<dyn FnOnce(Arc<Signals>) + Send>;

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
}

impl Controller {
    pub fn new(input: Receiver<Parsed>, out: Output) -> Controller {
        let options = Options::default();
        let engine = Engine::new(options.threads, options.hash_mb)
            .or_else(|| Engine::new(options.threads, 1))
            .unwrap_or_else(|| {
                eprintln!("cannot allocate a hash table");
                std::process::exit(1)
            });
        // Tables the evaluation builds once: before the first `go`, so
        // that no search pays for them on the clock.
        std::thread::spawn(crate::eval::prepare);
        Controller {
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
        }
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
        self.queued.clear();
        if let Some(job) = &self.running {
            job.control.signals.stop.store(true, Ordering::SeqCst);
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
        crate::eval::prepare();
        self.out.line("readyok");
    }

    fn castling_mode(&self) -> CastlingMode {
        if self.options.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }

    /// Sets up `position`; a bad FEN leaves the game as it was, a bad move
    /// leaves the game at the move before it (see the README's policy).
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
            for line in e.illegality().map(super::reason_lines).unwrap_or_default() {
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
            Change::Threads => self.engine.set_threads(self.options.threads),
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
        let hidden = self.engine.net().hidden();
        match self.options.eval_file.as_str() {
            "" => format!("embedded net ({hidden} hidden)"),
            path => format!("net {path} ({hidden} hidden)"),
        }
    }

    /// The job that `stop` and `ponderhit` are meant for: the last one asked for.
    fn newest_job(&mut self) -> Option<&mut JobControl> {
        match self.queued.back_mut() {
            Some(q) => Some(&mut q.control),
            None => self.running.as_mut().map(|r| &mut r.control),
        }
    }

    fn signal_stop(&mut self) {
        if let Some(job) = self.newest_job() {
            job.signals.stop.store(true, Ordering::SeqCst);
            job.waits_for_release = false;
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
        if self.newest_job().is_some_and(|j| j.waits_for_release) {
            self.out
                .error("go, perft or bench while an infinite or ponder search runs: stopping it");
            self.signal_stop();
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
        let handle = std::thread::spawn(move || {
            let _tx = tx;
            work(signals);
        });
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

    fn go(&mut self, params: &GoParams) {
        for line in super::rule_lines(&self.game.rule_status()) {
            self.out.line(&line);
        }
        let request = SearchRequest {
            game: self.game.clone(),
            limits: search_limits(
                params,
                self.game.position().turn(),
                self.options.move_overhead_ms,
            ),
            searchmoves: self.searchmoves(&params.searchmoves),
            multipv: self.options.multipv,
            strength: self.strength(),
        };
        let listener = UciListener {
            out: self.out.clone(),
            mode: self.game.castling_mode(),
            show_wdl: self.options.show_wdl,
        };
        let engine = self.engine.clone();
        let (infinite, ponder) = (params.infinite, params.ponder);
        self.submit(infinite || ponder, ponder && !infinite, move |signals| {
            let result = catch_unwind(AssertUnwindSafe(|| {
                engine.search(&request, &listener, &signals)
            }))
            .unwrap_or_else(|_| {
                listener
                    .out
                    .error("internal error in the search: playing the first legal move");
                first_legal_move(&request)
            });
            wait_for_release(&signals, infinite, ponder);
            for line in bestmove_lines(&request.game, &result) {
                listener.out.line(&line);
            }
        });
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

    fn perft(&mut self, depth: u32) {
        let pos = self.game.position().clone();
        let mode = self.game.castling_mode();
        let threads = self.options.threads;
        let out = self.out.clone();
        self.submit(false, false, move |signals| {
            let pool = crate::search::thread_pool(threads);
            match perft::report(&pos, depth, mode, Some(&pool), &signals.stop) {
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
  help                   this text
Command line: qilin --help lists the subcommands (perft, bench, analyse, eval, datagen, train).";

#[cfg(test)]
mod tests {
    use super::*;

    fn go(line: &str) -> GoParams {
        match super::super::parse::parse(line).command {
            Some(Command::Go(g)) => g,
            other => panic!("not a go: {other:?}"),
        }
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
