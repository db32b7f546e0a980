//! Command line: UCI mode by default, or a one-shot subcommand.

use qilin::{engine, perft};
use shakmaty::CastlingMode;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

const USAGE: &str = "\
usage: qilin                                  UCI mode (the default)
       qilin perft <depth> [<fen>] [--threads N] [--chess960]
       qilin bench [depth]                    fixed-depth search of the bench positions
       qilin analyse [--fen FEN] [--moves m1 m2 ...] [--depth N | --movetime MS] [--multipv K] [--uci]
       qilin eval [<fen>]                     the static evaluation term by term
       qilin datagen --out FILE [--games N] [--nodes N] [--threads N] [--book EPD] [--random-plies N] [--seed N]
       qilin tune --data FILE[,FILE...] [--out src/eval/weights.rs] [--epochs N] [--lambda L] [--rate R] [--threads N] [--from-scratch]
       qilin --help | --version";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {
            qilin::uci::run();
            ExitCode::SUCCESS
        }
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("-V" | "--version") => {
            println!("{}", engine::NAME);
            ExitCode::SUCCESS
        }
        Some("perft") => run_perft(&args[1..]),
        Some("analyse" | "analyze") => match qilin::analyse::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => usage_error(&format!("{e}\nusage: {}", qilin::analyse::USAGE)),
        },
        Some("datagen") => match qilin::datagen::Settings::parse(&args[1..]) {
            Ok(settings) => match qilin::datagen::run(&settings) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("qilin datagen: {e}");
                    ExitCode::FAILURE
                }
            },
            Err(e) => usage_error(&format!(
                "{e}
usage: {}",
                qilin::datagen::USAGE
            )),
        },
        Some("eval") => {
            let fen = args[1..].join(" ");
            let game = if fen.is_empty() {
                qilin::game::Game::new(shakmaty::Chess::default(), CastlingMode::Standard)
            } else {
                match qilin::game::Game::from_fen(&fen, CastlingMode::Standard) {
                    Ok(g) => g,
                    Err(e) => return usage_error(&e.to_string()),
                }
            };
            for line in qilin::eval::describe(game.position()) {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Some("tune") => match qilin::tune::Settings::parse(&args[1..]) {
            Ok(settings) => match qilin::tune::run(&settings) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("qilin tune: {e}");
                    ExitCode::FAILURE
                }
            },
            Err(e) => usage_error(&format!("{e}\nusage: {}", qilin::tune::USAGE)),
        },
        Some("bench") => {
            let depth = match args.get(1).map(|d| d.parse::<u32>()) {
                None => None,
                Some(Ok(d)) if (1..=64).contains(&d) => Some(d),
                Some(_) => return usage_error("bench depth must be 1..64"),
            };
            qilin::bench::run(depth, &qilin::uci::output::Output::stdout());
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("qilin: unknown command '{other}'\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run_perft(args: &[String]) -> ExitCode {
    let mut threads = 1;
    let mut mode = CastlingMode::Standard;
    let mut rest = Vec::new();
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        match a.as_str() {
            "--threads" => match iter.next().and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if (1..=256).contains(&n) => threads = n,
                _ => return usage_error("--threads takes a number 1..256"),
            },
            "--chess960" => mode = CastlingMode::Chess960,
            _ => rest.push(a.as_str()),
        }
    }
    let Some((depth, fen)) = rest.split_first() else {
        return usage_error("perft needs a depth");
    };
    let Some(depth) = depth.parse::<u32>().ok().filter(|d| (1..=64).contains(d)) else {
        return usage_error("perft depth must be 1..64");
    };
    let game = if fen.is_empty() {
        qilin::game::Game::new(shakmaty::Chess::default(), mode)
    } else {
        match qilin::game::Game::from_fen(&fen.join(" "), mode) {
            Ok(g) => g,
            Err(e) => return usage_error(&e.to_string()),
        }
    };
    let pool = engine::thread_pool(threads);
    let stop = AtomicBool::new(false);
    match perft::report(game.position(), depth, mode, Some(&pool), &stop) {
        Some(lines) => lines.iter().for_each(|l| println!("{l}")),
        None => return ExitCode::FAILURE,
    }
    ExitCode::SUCCESS
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("qilin: {message}\n{USAGE}");
    ExitCode::from(2)
}
