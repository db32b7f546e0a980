//! `qilin analyse`: a search from the command line, its lines written for a
//! person (SAN moves, scores in pawns). It runs the same search as UCI `go`;
//! only the printing differs.

use crate::engine::thread_pool;
use crate::game::{Game, parse_uci_move};
use crate::search::history::HistoryTables;
use crate::search::tt::TranspositionTable;
use crate::search::{self, SearchJob, Signals};
use crate::uci::options::Options;
use crate::uci::output::Output;
use crate::uci::parse::GoParams;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Position};
use std::io::Write;
use std::sync::Arc;

pub const USAGE: &str = "qilin analyse [--fen FEN] [--moves m1 m2 ...] [--depth N | --movetime MS] [--multipv K] [--threads N] [--hash MB] [--uci]";

/// Command-line arguments of `analyse`.
#[derive(Debug, Default)]
struct Request {
    fen: Option<String>,
    moves: Vec<String>,
    go: GoParams,
    multipv: usize,
    threads: usize,
    hash: usize,
    uci: bool,
}

fn number(value: Option<&String>, flag: &str) -> Result<u64, String> {
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{flag} needs a number"))
}

fn parse_args(args: &[String]) -> Result<Request, String> {
    let mut r = Request {
        multipv: 1,
        threads: 1,
        hash: 16,
        ..Request::default()
    };
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        i += 1;
        match flag {
            "--fen" => {
                // A FEN is several words: take them up to the next flag.
                let start = i;
                while i < args.len() && !args[i].starts_with("--") {
                    i += 1;
                }
                r.fen = Some(args[start..i].join(" "));
            }
            "--moves" => {
                while i < args.len() && !args[i].starts_with("--") {
                    r.moves.push(args[i].to_ascii_lowercase());
                    i += 1;
                }
            }
            "--depth" => {
                r.go.depth = Some(number(args.get(i), flag)?);
                i += 1;
            }
            "--movetime" => {
                r.go.movetime = Some(number(args.get(i), flag)?);
                i += 1;
            }
            "--multipv" => {
                r.multipv = number(args.get(i), flag)?.clamp(1, 256) as usize;
                i += 1;
            }
            "--threads" => {
                r.threads = number(args.get(i), flag)?.clamp(1, 256) as usize;
                i += 1;
            }
            "--hash" => {
                r.hash = number(args.get(i), flag)?.clamp(1, 65536) as usize;
                i += 1;
            }
            "--uci" => r.uci = true,
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if r.go.depth.is_none() && r.go.movetime.is_none() {
        r.go.depth = Some(12);
    }
    Ok(r)
}

/// Rewrites the search's UCI lines for a person.
struct Readable {
    root: Chess,
}

impl Readable {
    fn rewrite(&self, line: &str) -> Option<String> {
        let words: Vec<&str> = line.split(' ').collect();
        let field = |name: &str| {
            words
                .iter()
                .position(|w| *w == name)
                .and_then(|i| words.get(i + 1))
                .copied()
        };
        if let Some(best) = line.strip_prefix("bestmove ") {
            let m = best.split(' ').next().unwrap_or(best);
            return Some(format!("best move: {}", self.san_line(&[m]).trim()));
        }
        if line.starts_with("info string ") {
            return Some(line.trim_start_matches("info string ").to_string());
        }
        let pv_at = words.iter().position(|w| *w == "pv")?;
        let score = match (field("cp"), field("mate")) {
            (Some(cp), _) => {
                let cp: i32 = cp.parse().ok()?;
                let cp = if self.root.turn().is_white() { cp } else { -cp };
                format!("{:+.2}", f64::from(cp) / 100.0)
            }
            (_, Some(m)) => format!("mate {m}"),
            _ => return None,
        };
        Some(format!(
            "depth {:>2}  line {}  {:>8}  {}",
            field("depth")?,
            field("multipv").unwrap_or("1"),
            score,
            self.san_line(&words[pv_at + 1..])
        ))
    }

    fn san_line(&self, moves: &[&str]) -> String {
        let mut pos = self.root.clone();
        let mut text = String::new();
        for (i, uci) in moves.iter().enumerate() {
            let Ok(m) = parse_uci_move(&pos, uci) else {
                break;
            };
            let number = pos.fullmoves().get();
            if pos.turn().is_white() {
                text.push_str(&format!("{number}. "));
            } else if i == 0 {
                text.push_str(&format!("{number}... "));
            }
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            text.push_str(&format!("{san} "));
        }
        text.trim_end().to_string()
    }
}

/// A writer that passes whole lines through `Readable`.
struct ReadableWriter {
    readable: Readable,
    pending: Vec<u8>,
}

impl Write for ReadableWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line);
            if let Some(out) = self.readable.rewrite(text.trim_end()) {
                println!("{out}");
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
}

/// Runs `analyse`; `Err` carries a usage message.
pub fn run(args: &[String]) -> Result<(), String> {
    let r = parse_args(args)?;
    let mode = CastlingMode::Standard;
    let mut game = match &r.fen {
        Some(fen) => Game::from_fen(fen, mode).map_err(|e| e.to_string())?,
        None => Game::default(),
    };
    game.play_uci_moves(&r.moves).map_err(|e| e.to_string())?;
    let pool = thread_pool(r.threads);
    let tt = TranspositionTable::new(r.hash, &pool).ok_or("cannot allocate the hash table")?;
    let out = if r.uci {
        Output::stdout()
    } else {
        println!("{}", game.fen());
        Output::new(Box::new(ReadableWriter {
            readable: Readable {
                root: game.position().clone(),
            },
            pending: Vec::new(),
        }))
    };
    for line in game.rule_status().lines() {
        out.line(&line);
    }
    let options = Options {
        multipv: r.multipv,
        threads: r.threads,
        hash_mb: r.hash,
        ..Options::default()
    };
    let job = SearchJob {
        game,
        params: r.go,
        searchmoves: Vec::new(),
        options,
        pool,
        tt: Arc::new(tt),
        histories: Arc::new(HistoryTables::new(r.threads)),
        out,
    };
    search::run(job, &Arc::new(Signals::default()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_become_san() {
        let r = Readable {
            root: Chess::default(),
        };
        assert_eq!(
            r.rewrite("info depth 3 seldepth 4 multipv 1 score cp 25 nodes 9 nps 9 hashfull 0 time 1 pv e2e4 e7e5 g1f3")
                .as_deref(),
            Some("depth  3  line 1     +0.25  1. e4 e5 2. Nf3")
        );
        assert_eq!(
            r.rewrite("bestmove e2e4 ponder e7e5").as_deref(),
            Some("best move: 1. e4")
        );
    }

    #[test]
    fn arguments() {
        let args: Vec<String> = "--fen 8/8/8/8/8/8/8/K1k5 w - - 0 1 --depth 3 --multipv 2"
            .split(' ')
            .map(String::from)
            .collect();
        let r = parse_args(&args).expect("valid");
        assert_eq!(r.fen.as_deref(), Some("8/8/8/8/8/8/8/K1k5 w - - 0 1"));
        assert_eq!((r.go.depth, r.multipv), (Some(3), 2));
        assert!(parse_args(&["--bogus".to_string()]).is_err());
    }
}
