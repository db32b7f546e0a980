//! Command line: UCI mode by default, or a one-shot tool.

use clap::{CommandFactory, Parser, Subcommand, error::ErrorKind};
use qilin::game::Game;
use qilin::nnue::Network;
use qilin::search::Signals;
use shakmaty::CastlingMode;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Qilin, a UCI chess engine. Without a subcommand it speaks UCI on
/// standard input and output, as GUIs and match runners expect.
#[derive(Parser)]
#[command(name = "qilin", disable_version_flag = true)]
struct Cli {
    /// Print the engine's name and version
    #[arg(short = 'V', long)]
    version: bool,
    #[command(subcommand)]
    tool: Option<Tool>,
}

#[derive(Subcommand)]
enum Tool {
    /// Count the leaves of the move tree, move by move
    Perft(PerftArgs),
    /// Search the bench positions to a fixed depth; the last line gives the nodes and nodes per second
    Bench(BenchArgs),
    /// Search a position and show its best lines in SAN
    #[command(alias = "analyze")]
    Analyse(AnalyseArgs),
    /// The static evaluation of a position: the net's score, or a known endgame's rule
    Eval(EvalArgs),
    /// Play self-play games and write them whole into resumable chunk files
    Datagen(DatagenArgs),
    /// Train a neural network (NNUE) on self-play positions and write it quantised
    Train(qilin::train::Settings),
    /// Play a game against Qilin in the terminal
    Play(qilin::play::PlayArgs),
    /// Annotate the games of a PGN file: evaluations, mistakes, missed draw claims, illegal moves
    Annotate(AnnotateArgs),
    /// Count what a run of self-play data holds: games, positions, bytes, distinct openings
    DataStats(DataStatsArgs),
    /// Print the search parameters as OpenBench's SPSA input (name, int, default, min, max,
    /// c_end, r_end), for engine-tests/lab/spsa.py or OpenBench
    // Only in tune builds, and hidden from the tool list, which stays the
    // normal build's (the README's table is checked against it).
    #[cfg(feature = "tune")]
    #[command(hide = true)]
    SpsaParams,
}

#[derive(clap::Args)]
struct DataStatsArgs {
    /// Run folders or game files
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// The ply after each game's recorded start (its opening: book line and
    /// random plies) at which games are compared
    #[arg(long, default_value_t = 16)]
    ply: usize,
}

#[derive(clap::Args)]
struct PerftArgs {
    /// Plies to count
    #[arg(value_parser = clap::value_parser!(u32).range(1..=64))]
    depth: u32,
    /// The position (default: the start position)
    #[arg(value_name = "FEN")]
    fen: Vec<String>,
    /// Threads sharing the root moves
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Read the FEN's castling rights as Chess960 (Shredder or X-FEN)
    #[arg(long)]
    chess960: bool,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Depth of each search
    #[arg(default_value_t = qilin::bench::DEFAULT_DEPTH, value_parser = clap::value_parser!(u32).range(1..=64))]
    depth: u32,
    #[command(flatten)]
    net: NetArg,
}

#[derive(clap::Args)]
struct EvalArgs {
    /// The position (default: the start position)
    #[arg(value_name = "FEN")]
    fen: Vec<String>,
    #[command(flatten)]
    net: NetArg,
}

#[derive(clap::Args)]
struct AnalyseArgs {
    #[command(flatten)]
    args: qilin::analyse::AnalyseArgs,
    #[command(flatten)]
    net: NetArg,
}

#[derive(clap::Args)]
struct AnnotateArgs {
    #[command(flatten)]
    args: qilin::annotate::AnnotateArgs,
    #[command(flatten)]
    net: NetArg,
}

#[derive(clap::Args)]
struct DatagenArgs {
    #[command(flatten)]
    settings: qilin::datagen::Settings,
    #[command(flatten)]
    net: NetArg,
}

/// `--net`, for the tools that search or evaluate.
#[derive(clap::Args)]
struct NetArg {
    /// NNUE net file to evaluate with (default: the net built in)
    #[arg(long, value_name = "FILE")]
    net: Option<String>,
}

impl NetArg {
    /// The net to use, or a usage error (exit code 2) for a file that is
    /// not a valid net.
    fn resolve(&self, tool: &str) -> Result<Arc<Network>, ExitCode> {
        qilin::nnue::resolve(self.net.as_deref().unwrap_or(""))
            .map_err(|e| usage_error(tool, &format!("--net: {e}")))
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if are_uci_lines(&args) {
        return failure_of("uci", qilin::uci::run_lines(&args));
    }
    let cli = Cli::parse();
    if cli.version {
        println!("{}", qilin::NAME);
        return ExitCode::SUCCESS;
    }
    match cli.tool {
        None => failure_of("uci", qilin::uci::run()),
        Some(Tool::Perft(args)) => perft(&args),
        Some(Tool::Bench(args)) => {
            let net = match args.net.resolve("bench") {
                Ok(net) => net,
                Err(code) => return code,
            };
            qilin::bench::run(Some(args.depth), net, &Signals::default(), &|line| {
                println!("{line}")
            });
            ExitCode::SUCCESS
        }
        Some(Tool::Analyse(a)) => {
            let net = match a.net.resolve("analyse") {
                Ok(net) => net,
                Err(code) => return code,
            };
            match qilin::analyse::run(&a.args, net) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => usage_error("analyse", &e),
            }
        }
        Some(Tool::Eval(args)) => {
            let net = match args.net.resolve("eval") {
                Ok(net) => net,
                Err(code) => return code,
            };
            let game = match game(&args.fen, CastlingMode::Standard) {
                Ok(g) => g,
                Err(e) => return usage_error("eval", &e),
            };
            for line in qilin::nnue::describe(&net, game.position()) {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Some(Tool::Datagen(a)) => {
            let net = match a.net.resolve("datagen") {
                Ok(net) => net,
                Err(code) => return code,
            };
            failure_of("datagen", qilin::datagen::run(&a.settings, net))
        }
        Some(Tool::Train(settings)) => failure_of("train", qilin::train::run(&settings)),
        Some(Tool::Play(args)) => match qilin::play::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => usage_error("play", &e),
        },
        Some(Tool::DataStats(a)) => data_stats(&a),
        #[cfg(feature = "tune")]
        Some(Tool::SpsaParams) => {
            print!("{}", qilin::search::params::spsa_input());
            ExitCode::SUCCESS
        }
        Some(Tool::Annotate(a)) => {
            let net = match a.net.resolve("annotate") {
                Ok(net) => net,
                Err(code) => return code,
            };
            match qilin::annotate::run(&a.args, net) {
                Ok(()) => ExitCode::SUCCESS,
                Err(qilin::annotate::Failure::Usage(e)) => usage_error("annotate", &e),
                Err(qilin::annotate::Failure::Run(e)) => failure_of::<()>("annotate", Err(e)),
            }
        }
    }
}

fn data_stats(args: &DataStatsArgs) -> ExitCode {
    let quiet = qilin::data::Filter::quiet(qilin::score::MATE_BOUND);
    println!("run games positions quiet bytes/position distinct-starts reached@ply distinct share");
    for run in &args.runs {
        match qilin::data::run_stats(std::path::Path::new(run), args.ply, &quiet) {
            Ok(s) => println!(
                "{run} {} {} {} ({:.1}%) {:.2} {} ({:.1}%) {}@{} {} {:.1}%",
                s.games,
                s.positions,
                s.quiet,
                100.0 * s.quiet as f64 / s.positions.max(1) as f64,
                s.bytes_per_position(),
                s.distinct_starts,
                100.0 * s.distinct_starts as f64 / s.games.max(1) as f64,
                s.reached,
                s.ply,
                s.distinct,
                100.0 * s.distinct_share(),
            ),
            Err(e) => {
                eprintln!("data-stats: {run}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// Arguments that are UCI lines (`qilin "genfens 8 seed 1 book None" quit`,
/// as OpenBench runs engines) rather than a subcommand: the first is not a
/// subcommand's name nor an option, and is a line of words or a command
/// the UCI parser knows (`qilin perf` stays a mistyped subcommand).
fn are_uci_lines(args: &[String]) -> bool {
    let Some(first) = args.first() else {
        return false;
    };
    let cli = Cli::command();
    let is_tool = first == "help"
        || cli
            .get_subcommands()
            .any(|t| t.get_name() == first || t.get_all_aliases().any(|a| a == first));
    !is_tool
        && !first.starts_with('-')
        && (first.contains(char::is_whitespace)
            || qilin::uci::parse::parse(first).command.is_some())
}

fn perft(args: &PerftArgs) -> ExitCode {
    let mode = CastlingMode::from_chess960(args.chess960);
    let game = match game(&args.fen, mode) {
        Ok(g) => g,
        Err(e) => return usage_error("perft", &e),
    };
    let pool = match qilin::threads::pool("perft", usize::from(args.threads)) {
        Ok(pool) => pool,
        Err(e) => return failure_of("perft", Err::<(), _>(e)),
    };
    let stop = AtomicBool::new(false);
    match qilin::perft::report(game.position(), args.depth, mode, Some(&pool), &stop) {
        Some(lines) => lines.iter().for_each(|l| println!("{l}")),
        None => return ExitCode::FAILURE,
    }
    ExitCode::SUCCESS
}

/// The game of a FEN given as words, or the start position for none.
fn game(fen: &[String], mode: CastlingMode) -> Result<Game, String> {
    Game::from_fen_words(fen, mode).map_err(|e| e.to_string())
}

/// A value clap accepted but the tool refused (a bad FEN or move): clap's
/// own wording, the tool's usage and exit code 2, like every other usage
/// error.
fn usage_error(tool: &str, message: &str) -> ExitCode {
    let mut cli = Cli::command();
    cli.build();
    let command = cli.find_subcommand_mut(tool).cloned().unwrap_or(cli);
    let _ = command
        .bin_name(format!("qilin {tool}"))
        .error(ErrorKind::ValueValidation, message)
        .print();
    ExitCode::from(2)
}

/// A tool that ran and failed (a missing file…): exit code 1.
fn failure_of<T>(tool: &str, result: Result<T, String>) -> ExitCode {
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("qilin {tool}: {e}");
            ExitCode::FAILURE
        }
    }
}
