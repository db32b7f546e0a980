//! The controller: owns the game, the options and the thread pool, and
//! executes commands strictly in the order they came. Long work (search,
//! perft) runs as a job on its own thread, so the controller stays free to
//! answer `isready` and to pass on `stop` and `ponderhit`.

use crate::bench;
use crate::game::Game;
use crate::perft;
use crate::search::history::HistoryTables;
use crate::search::tt::TranspositionTable;
use crate::search::{self, SearchJob, Signals};
use crate::uci::options::{Change, Options};
use crate::uci::output::Output;
use crate::uci::parse::{Command, GoParams, Parsed, PositionSpec};
use crossbeam_channel::{Receiver, never, select};
use shakmaty::{CastlingMode, Chess, Position};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

pub const NAME: &str = concat!("Qilin ", env!("CARGO_PKG_VERSION"));
pub const AUTHOR: &str = "the Qilin developers";

/// Work running off the controller thread.
struct Job {
    signals: Arc<Signals>,
    /// An `infinite` or `ponder` search: it ends only on `stop`/`ponderhit`.
    waits_for_stop: bool,
    /// Disconnects when the job's thread ends.
    done: Receiver<()>,
    handle: JoinHandle<()>,
}

pub struct Engine {
    game: Game,
    options: Options,
    out: Output,
    input: Receiver<Parsed>,
    pool: Arc<rayon::ThreadPool>,
    tt: Arc<TranspositionTable>,
    /// The size `tt` was made with.
    tt_mb: usize,
    histories: Arc<HistoryTables>,
    job: Option<Job>,
    /// Commands that arrived while waiting for a job to end.
    deferred: VecDeque<Parsed>,
    debug: bool,
    quit: bool,
}

/// Search threads recurse deeply over copied positions and move lists.
const STACK_SIZE: usize = 64 << 20;

/// A pool of `threads` workers; one that cannot be built (the system refused
/// threads) falls back to the smallest pool rayon can make.
pub fn thread_pool(threads: usize) -> Arc<rayon::ThreadPool> {
    let build = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .stack_size(STACK_SIZE)
            .build()
    };
    let pool = build(threads).or_else(|_| build(1)).unwrap_or_else(|e| {
        eprintln!("cannot start any thread: {e}");
        std::process::exit(1)
    });
    Arc::new(pool)
}

impl Engine {
    /// New, empty move-ordering tables; a running search keeps its old ones.
    fn forget_history(&mut self) {
        self.histories = Arc::new(HistoryTables::new(self.options.threads));
    }

    pub fn new(input: Receiver<Parsed>, out: Output) -> Engine {
        let options = Options::default();
        let pool = thread_pool(options.threads);
        let tt = allocate_tt(options.hash_mb, &pool)
            .or_else(|| allocate_tt(1, &pool))
            .unwrap_or_else(|| {
                eprintln!("cannot allocate a hash table");
                std::process::exit(1)
            });
        Engine {
            game: Game::default(),
            pool,
            tt,
            tt_mb: options.hash_mb,
            histories: Arc::new(HistoryTables::new(options.threads)),
            options,
            out,
            input,
            job: None,
            deferred: VecDeque::new(),
            debug: false,
            quit: false,
        }
    }

    /// Executes commands until `quit` or the end of input.
    pub fn run(mut self) {
        while !self.quit {
            let parsed = match self.deferred.pop_front() {
                Some(p) => p,
                None => {
                    let done = self.job.as_ref().map_or_else(never, |j| j.done.clone());
                    select! {
                        recv(self.input) -> msg => msg.unwrap_or_else(|_| quit()),
                        recv(done) -> _ => {
                            self.finish_job();
                            continue;
                        }
                    }
                }
            };
            self.execute(parsed);
        }
        self.signal(|s| &s.stop);
        self.finish_job();
    }

    fn execute(&mut self, parsed: Parsed) {
        for e in &parsed.errors {
            self.out.error(e);
        }
        let Some(command) = parsed.command else {
            return;
        };
        match command {
            Command::Uci => {
                self.out.line(&format!("id name {NAME}"));
                self.out.line(&format!("id author {AUTHOR}"));
                for line in Options::declarations() {
                    self.out.line(&line);
                }
                self.out.line("uciok");
            }
            Command::IsReady => self.out.line("readyok"),
            Command::Debug(on) => self.debug = on,
            Command::Register => {}
            Command::UciNewGame => {
                self.game = Game::new(Chess::default(), self.castling_mode());
                self.tt.clear(&self.pool);
                self.forget_history();
            }
            Command::Position(spec) => self.set_position(&spec),
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::Go(params) => {
                self.wait_for_job_end();
                self.go(params);
            }
            Command::Stop => self.signal(|s| &s.stop),
            Command::PonderHit => self.signal(|s| &s.ponderhit),
            Command::Quit => self.quit = true,
            Command::Display => self.display(),
            Command::Eval => {
                let pos = self.game.position();
                for line in crate::eval::describe(pos) {
                    self.out.line(&line);
                }
                if pos.is_check() {
                    self.out
                        .line("(in check: the search does not use the static evaluation here)");
                }
            }
            Command::Perft(depth) => {
                self.wait_for_job_end();
                self.perft(depth);
            }
            Command::Bench(depth) => {
                self.wait_for_job_end();
                let out = self.out.clone();
                self.spawn_job(false, move |_| {
                    bench::run(depth, &out);
                });
            }
            Command::Help => {
                for line in HELP.lines() {
                    self.out.line(line);
                }
            }
        }
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
        let mut game = match &spec.fen {
            None => Game::new(Chess::default(), mode),
            Some(fen) => match Game::from_fen(fen, mode) {
                Ok(g) => g,
                Err(e) => return self.out.error(&e.to_string()),
            },
        };
        let result = game.play_uci_moves(&spec.moves);
        self.game = game;
        if let Err(e) = result {
            self.out.error(&e.to_string());
        }
    }

    /// Never waits for a running search: it keeps the pool it started with.
    fn set_option(&mut self, name: &str, value: Option<&str>) {
        let change = match self.options.set(name, value) {
            Err(e) => return self.out.error(&e),
            Ok(change) => change,
        };
        match change {
            Change::Threads => {
                self.pool = thread_pool(self.options.threads);
                self.forget_history();
            }
            Change::Chess960 => self.game.set_castling_mode(self.castling_mode()),
            Change::Hash => match allocate_tt(self.options.hash_mb, &self.pool) {
                Some(tt) => {
                    self.tt = tt;
                    self.tt_mb = self.options.hash_mb;
                }
                None => {
                    self.out.error(&format!(
                        "not enough memory for Hash {} MB; keeping {} MB",
                        self.options.hash_mb, self.tt_mb
                    ));
                    self.options.hash_mb = self.tt_mb;
                }
            },
            // A running search may share the table: clearing it is safe
            // (every slot is atomic) and only costs that search some hits.
            Change::ClearHash => {
                self.tt.clear(&self.pool);
                self.forget_history();
            }
            Change::Other => {}
        }
    }

    /// Waits for the running job to end before a new one starts (a `go`
    /// sent before the last `bestmove` came, as scripts do). Every command
    /// that comes meanwhile keeps its place in the queue behind the new job,
    /// `stop` included: it belongs to that job. The running job is finite or
    /// already told to stop; an infinite or ponder search is stopped here, as
    /// the GUI has plainly forgotten it. Only `quit` acts at once.
    fn wait_for_job_end(&mut self) {
        if self.job.as_ref().is_some_and(|j| j.waits_for_stop) {
            self.out
                .error("go or perft while an infinite or ponder search runs: stopping it");
            self.signal(|s| &s.stop);
        }
        while let Some(job) = &self.job {
            let done = job.done.clone();
            select! {
                recv(done) -> _ => self.finish_job(),
                recv(self.input) -> msg => {
                    let parsed = msg.unwrap_or_else(|_| quit());
                    if parsed.command == Some(Command::Quit) {
                        self.signal(|s| &s.stop);
                    }
                    self.deferred.push_back(parsed);
                }
            }
        }
    }

    fn signal(&self, flag: impl Fn(&Signals) -> &std::sync::atomic::AtomicBool) {
        if let Some(job) = &self.job {
            flag(&job.signals).store(true, Ordering::SeqCst);
        }
    }

    fn finish_job(&mut self) {
        if let Some(job) = self.job.take()
            && job.handle.join().is_err()
        {
            self.out.error("internal error: a job panicked");
        }
    }

    fn spawn_job(
        &mut self,
        waits_for_stop: bool,
        work: impl FnOnce(Arc<Signals>) + Send + 'static,
    ) {
        let signals = Arc::new(Signals::default());
        let (tx, done) = crossbeam_channel::bounded::<()>(0);
        let job_signals = Arc::clone(&signals);
        let handle = std::thread::spawn(move || {
            let _tx = tx;
            work(job_signals);
        });
        self.job = Some(Job {
            signals,
            waits_for_stop,
            done,
            handle,
        });
    }

    fn go(&mut self, params: GoParams) {
        for line in self.game.rule_status().lines() {
            self.out.line(&line);
        }
        let mut searchmoves = Vec::with_capacity(params.searchmoves.len());
        for text in &params.searchmoves {
            match self.game.parse_move(text) {
                Ok(m) => searchmoves.push(m),
                Err(reason) => self
                    .out
                    .error(&format!("{reason} searchmove ignored: {text}")),
            }
        }
        if searchmoves.is_empty() && !params.searchmoves.is_empty() {
            self.out.error("no legal searchmove: searching all moves");
        }
        let job = SearchJob {
            game: self.game.clone(),
            params,
            searchmoves,
            options: self.options.clone(),
            pool: Arc::clone(&self.pool),
            tt: Arc::clone(&self.tt),
            histories: Arc::clone(&self.histories),
            out: self.out.clone(),
        };
        let waits_for_stop = job.params.infinite || job.params.ponder;
        self.spawn_job(waits_for_stop, move |signals| {
            search::run(job, &signals);
        });
    }

    fn perft(&mut self, depth: u32) {
        let pos = self.game.position().clone();
        let mode = self.game.castling_mode();
        let pool = Arc::clone(&self.pool);
        let out = self.out.clone();
        self.spawn_job(false, move |signals| {
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
        for line in self.game.rule_status().lines() {
            self.out.line(&line);
        }
    }
}

/// A table of `mb` megabytes, or `None` when the machine does not have the
/// memory free (the allocation would succeed and the pages fail later).
fn allocate_tt(mb: usize, pool: &rayon::ThreadPool) -> Option<Arc<TranspositionTable>> {
    if available_mb().is_some_and(|free| mb > free * 9 / 10) {
        return None;
    }
    TranspositionTable::new(mb, pool).map(Arc::new)
}

/// MemAvailable from /proc/meminfo, where there is one.
fn available_mb() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

fn quit() -> Parsed {
    Parsed {
        command: Some(Command::Quit),
        errors: Vec::new(),
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
  eval                   the static evaluation term by term, for both colours
  perft <depth>          count the leaves of the move tree (also: go perft <depth>)
  bench [depth]          search the bench positions; last line: <nodes> nodes <nps> nps
  help                   this text
Command line: qilin [perft <depth> [<fen>] | bench [depth] | eval [<fen>] | datagen ... | tune ...] [--help]";
