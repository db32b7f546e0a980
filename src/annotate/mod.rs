//! `qilin annotate`: a PGN file's games written back with Qilin's view of
//! every move: its evaluation (`[%eval]`), `?!`/`?`/`??` (NAGs $6, $2, $4)
//! with the better move where a move lost too much, missed and allowed
//! mates, and the rule events of RULES.md (draw claims not made, automatic
//! draws played through, an illegal move and where the record stops being a
//! game). A summary per game (average centipawn loss and counts per player)
//! opens the game's movetext as a comment and is also written to stderr;
//! `--graph` draws the evaluation curve as SVG.
//!
//! The parts: [`record`] reads and replays the PGN, [`review`] judges the
//! moves from one verdict per position, [`write`] and [`graph`] turn the
//! review into text. This file holds the I/O: files, the search (the same
//! [`Engine`] facade as `analyse` and UCI `go`) and the progress bar.

pub mod graph;
pub mod record;
pub mod review;
pub mod write;

use crate::game::Game;
use crate::nnue::Network;
use crate::search::report::{Score, Silent};
use crate::search::time::TimeLimit;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use record::{Games, InvalidMove, Record, Replay};
use review::{Evaluator, Review, Thresholds, Verdict};
use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

/// `qilin annotate`: the options.
#[derive(Clone, Debug, clap::Args)]
pub struct AnnotateArgs {
    /// The PGN file to annotate (`-`: standard input)
    #[arg(value_name = "PGN")]
    pub pgn: String,
    /// Write the annotated games to this file instead of standard output
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
    /// Depth of each position's search [default: 12 unless --movetime or --nodes is given]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=127))]
    pub depth: Option<u32>,
    /// Milliseconds for each position's search
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub movetime: Option<u64>,
    /// Nodes for each position's search (with one thread the same every run)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Centipawns a move may lose before it is an inaccuracy (?!)
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(i32).range(1..=10000))]
    pub inaccuracy: i32,
    /// Centipawns a move may lose before it is a mistake (?)
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i32).range(1..=10000))]
    pub mistake: i32,
    /// Centipawns a move may lose before it is a blunder (??)
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(i32).range(1..=10000))]
    pub blunder: i32,
    /// Draw the evaluation after each move as an SVG picture (games after the first: FILE-2.svg, …)
    #[arg(long, value_name = "FILE.svg")]
    pub graph: Option<String>,
    /// Search threads (more than one: results vary from run to run)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// Transposition table size in MB
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub hash: u32,
}

/// The depth searched when no limit is given.
const DEFAULT_DEPTH: u32 = 12;

/// Why `annotate` did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The options do not fit together (exit code 2, with the usage).
    Usage(String),
    /// A file could not be read or written (exit code 1).
    Run(String),
}

impl AnnotateArgs {
    pub fn limits(&self) -> SearchLimits {
        let depth = match (self.depth, self.movetime, self.nodes) {
            (None, None, None) => Some(DEFAULT_DEPTH),
            (depth, _, _) => depth,
        };
        SearchLimits {
            depth,
            nodes: self.nodes,
            time: self.movetime.map_or(TimeLimit::None, TimeLimit::MoveTime),
            ..SearchLimits::default()
        }
    }

    pub fn thresholds(&self) -> Result<Thresholds, String> {
        if !(self.inaccuracy < self.mistake && self.mistake < self.blunder) {
            return Err(format!(
                "the thresholds must grow: --inaccuracy {} < --mistake {} < --blunder {}",
                self.inaccuracy, self.mistake, self.blunder
            ));
        }
        Ok(Thresholds {
            inaccuracy: self.inaccuracy,
            mistake: self.mistake,
            blunder: self.blunder,
        })
    }

    /// The `Annotator` tag: the engine and what each search was given.
    fn annotator(&self) -> String {
        let limits = self.limits();
        let mut parts = Vec::new();
        if let Some(d) = limits.depth {
            parts.push(format!("depth {d}"));
        }
        if let Some(n) = limits.nodes {
            parts.push(format!("{n} nodes"));
        }
        if let Some(ms) = self.movetime {
            parts.push(format!("{ms} ms"));
        }
        format!("{}, {} per position", crate::NAME, parts.join(", "))
    }
}

/// The search every position gets: the engine of `analyse` and UCI `go`,
/// silent, within the same limits each time.
struct Searcher {
    engine: Engine,
    limits: SearchLimits,
    signals: Signals,
}

impl Evaluator for Searcher {
    fn evaluate(&mut self, game: &Game) -> Verdict {
        let request = SearchRequest::new(game.clone(), self.limits);
        let result = self.engine.search(&request, &Silent, &self.signals);
        Verdict {
            score: result.score.map(Score::from_search),
            best: result.best,
        }
    }
}

/// One game read, replayed and judged.
pub struct Annotated {
    pub replay: Replay,
    /// The start and the position after each legal move.
    pub positions: Vec<Game>,
    pub review: Review,
}

impl Annotated {
    pub fn invalid(&self) -> Option<&InvalidMove> {
        self.replay.invalid.as_ref()
    }
}

/// Replays `record` and judges it with one verdict per position;
/// `on_position` is called after each (the progress bar's tick).
pub fn annotate_game(
    record: &Record,
    evaluator: &mut dyn Evaluator,
    thresholds: &Thresholds,
    on_position: &mut dyn FnMut(),
) -> Annotated {
    let replay = record.replay();
    let positions = replay.positions();
    let verdicts: Vec<Verdict> = positions
        .iter()
        .map(|game| {
            let v = review::verdict(game, evaluator);
            on_position();
            v
        })
        .collect();
    let review = Review::new(&positions, &replay.moves, &verdicts, thresholds);
    Annotated {
        replay,
        positions,
        review,
    }
}

/// The texts of one annotated game: the PGN, the summary, the SVG graph.
pub struct Rendered {
    pub pgn: String,
    pub summary: Vec<String>,
    pub svg: String,
}

pub fn render(record: &Record, annotated: &Annotated, annotator: &str) -> Rendered {
    let review = &annotated.review;
    let invalid = annotated.invalid();
    let end = annotated
        .positions
        .last()
        .unwrap_or(&annotated.replay.start);
    let summary = write::summary_lines(record, review, invalid, end, annotator);
    let pgn = write::write_game(record, review, invalid, end, &summary, annotator);
    let title = format!(
        "{} - {}  {}",
        record.tag("White").unwrap_or("White"),
        record.tag("Black").unwrap_or("Black"),
        record.result().as_str()
    );
    let svg = graph::svg(review, &title, invalid.map(|i| i.index));
    Rendered { pgn, summary, svg }
}

/// The graph file of the `number`th game (from 1): the name given for the
/// first, `-N` before the extension for the others.
pub fn graph_path(path: &str, number: usize) -> String {
    if number <= 1 {
        return path.to_string();
    }
    match path.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.contains('/') => {
            format!("{stem}-{number}.{ext}")
        }
        _ => format!("{path}-{number}"),
    }
}

/// A bar on stderr while the positions of a game are searched, only when
/// stderr is a terminal (a log or a pipe gets the summary alone).
fn progress_bar(number: usize, positions: usize) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(positions as u64);
    let style = indicatif::ProgressStyle::with_template(
        "game {prefix} {wide_bar} {pos}/{len} positions, ETA {eta}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(number.to_string());
    bar
}

/// Runs `annotate` with `net`.
pub fn run(args: &AnnotateArgs, net: Arc<Network>) -> Result<(), Failure> {
    let thresholds = args.thresholds().map_err(Failure::Usage)?;
    let input: Box<dyn Read> = if args.pgn == "-" {
        Box::new(std::io::stdin())
    } else {
        let file = std::fs::File::open(&args.pgn)
            .map_err(|e| Failure::Run(format!("cannot read {}: {e}", args.pgn)))?;
        Box::new(std::io::BufReader::new(file))
    };
    let mut output: Box<dyn Write> = match &args.out {
        None => Box::new(std::io::stdout().lock()),
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|e| Failure::Run(format!("cannot write {path}: {e}")))?,
        )),
    };
    let mut engine =
        Engine::new(usize::from(args.threads), args.hash as usize).map_err(Failure::Run)?;
    engine.set_net(net);
    let mut searcher = Searcher {
        engine,
        limits: args.limits(),
        signals: Signals::default(),
    };
    let annotator = args.annotator();
    let mut games = 0;
    for record in Games::new(input) {
        let record = record.map_err(|e| Failure::Run(format!("cannot read {}: {e}", args.pgn)))?;
        if record.tags.is_empty() && record.moves.is_empty() {
            // Text between games (or a file that is no PGN): no game.
            continue;
        }
        games += 1;
        // Each game from a fresh table: its annotation does not depend on
        // the games before it in the file.
        searcher.engine.clear();
        let positions = record.moves.len() + 1;
        let bar = progress_bar(games, positions);
        let annotated = annotate_game(&record, &mut searcher, &thresholds, &mut || bar.inc(1));
        bar.finish_and_clear();
        let rendered = render(&record, &annotated, &annotator);
        output
            .write_all(rendered.pgn.as_bytes())
            .and_then(|()| output.flush())
            .map_err(|e| Failure::Run(format!("cannot write the annotated game: {e}")))?;
        eprintln!("Game {games}:");
        for line in &rendered.summary {
            eprintln!("  {line}");
        }
        if let Some(path) = &args.graph {
            let path = graph_path(path, games);
            std::fs::write(&path, &rendered.svg)
                .map_err(|e| Failure::Run(format!("cannot write {path}: {e}")))?;
        }
    }
    if games == 0 {
        return Err(Failure::Run(format!("no game in {}", args.pgn)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: AnnotateArgs,
    }

    #[test]
    fn arguments() {
        let cli = Cli::try_parse_from(["annotate", "g.pgn"]).expect("valid");
        assert_eq!(cli.args.limits().depth, Some(DEFAULT_DEPTH));
        assert_eq!(cli.args.thresholds(), Ok(Thresholds::default()));
        let cli = Cli::try_parse_from(["annotate", "g.pgn", "--nodes", "5000", "--movetime", "9"])
            .expect("valid");
        let limits = cli.args.limits();
        assert_eq!(
            (limits.depth, limits.nodes, limits.time),
            (None, Some(5000), TimeLimit::MoveTime(9))
        );
        assert_eq!(
            cli.args.annotator(),
            format!("{}, 5000 nodes, 9 ms per position", crate::NAME)
        );
        let cli = Cli::try_parse_from(["annotate", "g.pgn", "--mistake", "400"]).expect("valid");
        assert!(cli.args.thresholds().is_err());
        assert!(Cli::try_parse_from(["annotate"]).is_err());
        assert!(Cli::try_parse_from(["annotate", "g.pgn", "--nodes", "0"]).is_err());
    }

    #[test]
    fn graph_files_are_numbered_after_the_first() {
        assert_eq!(graph_path("out/g.svg", 1), "out/g.svg");
        assert_eq!(graph_path("out/g.svg", 2), "out/g-2.svg");
        assert_eq!(graph_path("out.d/g", 3), "out.d/g-3");
    }

    /// The whole chain without a search: an evaluator that calls every
    /// position even, and prefers the first legal move.
    #[test]
    fn a_game_is_replayed_judged_and_written() {
        struct Even;
        impl Evaluator for Even {
            fn evaluate(&mut self, game: &Game) -> Verdict {
                use shakmaty::Position;
                Verdict {
                    score: Some(Score::Centipawns(0)),
                    best: game.position().legal_moves().first().copied(),
                }
            }
        }
        let pgn = "[White \"A\"]\n[Black \"B\"]\n[Result \"*\"]\n\n1. e4 e5 2. Ke3 *\n";
        let record = Games::new(pgn.as_bytes())
            .next()
            .expect("a game")
            .expect("readable");
        let mut ticks = 0;
        let annotated = annotate_game(&record, &mut Even, &Thresholds::default(), &mut || {
            ticks += 1
        });
        assert_eq!(ticks, 3);
        let rendered = render(&record, &annotated, "Test");
        assert!(
            rendered.pgn.contains("[Annotator \"Test\"]"),
            "{}",
            rendered.pgn
        );
        let flat = rendered
            .pgn
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            flat.contains("1. e4 { [%eval 0.00] } 1... e5 { [%eval 0.00] Illegal move 2. Ke3:"),
            "{flat}"
        );
        assert!(rendered.pgn.trim_end().ends_with('*'));
        assert_eq!(
            rendered.summary[1],
            "White (A): average centipawn loss 0, 0 inaccuracies, 0 mistakes, 0 blunders."
        );
    }
}
