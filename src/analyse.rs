//! `qilin analyse`: a search from the command line, its lines written for a
//! person (SAN moves, scores in pawns), or as UCI `info` lines with `--uci`.
//! It runs the same search as UCI `go`; only the listener differs.

use crate::game::Game;
use crate::nnue::Network;
use crate::search::report::{Listener, PvReport, Score};
use crate::search::time::TimeLimit;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use crate::uci::listener::{UciListener, bestmove_lines, claims_for};
use crate::uci::output::Output;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Move, Position};
use std::sync::Arc;

/// `qilin analyse`: search one position and show the lines.
#[derive(Clone, Debug, clap::Args)]
pub struct AnalyseArgs {
    /// The position (several words; default: the start position)
    #[arg(long, num_args = 1.., value_name = "FEN")]
    pub fen: Option<Vec<String>>,
    /// Moves played from the position, in UCI notation (e2e4 e7e5 ...)
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    pub moves: Vec<String>,
    /// Depth in plies [default: 12 unless --movetime is given]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=127), conflicts_with = "movetime")]
    pub depth: Option<u32>,
    /// Milliseconds to think
    #[arg(long)]
    pub movetime: Option<u64>,
    /// Best lines to show
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub multipv: u16,
    /// Search threads
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// Transposition table size in MB
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub hash: u32,
    /// Write UCI info lines instead of SAN
    #[arg(long)]
    pub uci: bool,
}

/// The depth searched when neither `--depth` nor `--movetime` is given.
const DEFAULT_DEPTH: u32 = 12;

/// Writes each line as move numbers and SAN, the score in pawns from
/// White's point of view (mates in moves, from the side to move's).
struct Readable {
    root: Chess,
}

impl Listener for Readable {
    fn on_pv(&self, line: &PvReport<'_>) {
        let score = match line.score {
            Score::Centipawns(cp) => {
                let cp = if self.root.turn().is_white() { cp } else { -cp };
                format!("{:+.2}", f64::from(cp) / 100.0)
            }
            Score::Mate(moves) => format!("mate {moves}"),
        };
        println!(
            "depth {:>2}  line {}  {score:>8}  {}",
            line.depth,
            line.multipv,
            san_line(&self.root, line.pv)
        );
    }
}

/// `moves` from `root` in SAN with move numbers: `1. e4 e5 2. Nf3`.
pub fn san_line(root: &Chess, moves: &[Move]) -> String {
    let mut pos = root.clone();
    let mut text = String::new();
    for (i, &m) in moves.iter().enumerate() {
        if !pos.is_legal(m) {
            break;
        }
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

impl AnalyseArgs {
    fn game(&self) -> Result<Game, String> {
        let mode = CastlingMode::Standard;
        let fen = self.fen.as_deref().unwrap_or_default();
        let mut game = Game::from_fen_words(fen, mode).map_err(|e| e.to_string())?;
        let moves: Vec<String> = self.moves.iter().map(|m| m.to_ascii_lowercase()).collect();
        game.play_uci_moves(&moves).map_err(|e| {
            // The same words as UCI's `info string reason:` lines.
            let why = crate::rules_explain::setup_illegality(&game, &e);
            let reasons = why.as_ref().map(crate::uci::reason_lines);
            let mut text = e.to_string();
            for line in reasons.unwrap_or_default() {
                text.push('\n');
                text.push_str(line.trim_start_matches("info string "));
            }
            text
        })?;
        Ok(game)
    }

    fn limits(&self) -> SearchLimits {
        SearchLimits {
            depth: match (self.depth, self.movetime) {
                (None, None) => Some(DEFAULT_DEPTH),
                (depth, _) => depth,
            },
            time: self.movetime.map_or(TimeLimit::None, TimeLimit::MoveTime),
            ..SearchLimits::default()
        }
    }
}

/// Runs `analyse` with `net`; `Err` is a message for the user (a bad FEN or
/// move).
pub fn run(args: &AnalyseArgs, net: Arc<Network>) -> Result<(), String> {
    let game = args.game()?;
    let mut engine = Engine::new(usize::from(args.threads), args.hash as usize)?;
    engine.set_net(net);
    let request = SearchRequest {
        multipv: usize::from(args.multipv),
        ..SearchRequest::new(game, args.limits())
    };
    let game = &request.game;
    let rules = crate::uci::rule_lines(&game.rule_status());
    let signals = Signals::default();
    if args.uci {
        let out = Output::stdout();
        rules.iter().for_each(|l| out.line(l));
        let listener = UciListener {
            out: out.clone(),
            mode: game.castling_mode(),
            show_wdl: false,
        };
        let result = engine.search(&request, &listener, &signals);
        bestmove_lines(game, &result)
            .iter()
            .for_each(|l| out.line(l));
        return Ok(());
    }
    println!("{}", game.fen());
    for line in rules {
        println!("{}", line.trim_start_matches("info string "));
    }
    let listener = Readable {
        root: game.position().clone(),
    };
    let result = engine.search(&request, &listener, &signals);
    match result.best {
        Some(best) => {
            for claim in claims_for(game, best) {
                println!("draw claim: {claim} after {}", game.to_uci(best));
            }
            println!("best move: {}", san_line(game.position(), &[best]));
        }
        None => println!("best move: (none)"),
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
        args: AnalyseArgs,
    }

    #[test]
    fn a_typed_pv_becomes_san() {
        let game = Game::default();
        let mut moves = Vec::new();
        let mut pos = game.position().clone();
        for uci in ["e2e4", "e7e5", "g1f3"] {
            let m = crate::game::parse_uci_move(&pos, uci).expect("legal");
            pos.play_unchecked(m);
            moves.push(m);
        }
        assert_eq!(san_line(game.position(), &moves), "1. e4 e5 2. Nf3");
        assert_eq!(san_line(&pos, &[]), "");
        let after_e4 = Game::from_fen(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            CastlingMode::Standard,
        )
        .expect("fen");
        assert_eq!(
            san_line(after_e4.position(), &moves[1..2]),
            "1... e5",
            "Black's first move is numbered with dots"
        );
        // A move that is not legal ends the line rather than print nonsense.
        assert_eq!(san_line(game.position(), &[moves[1]]), "");
    }

    #[test]
    fn arguments() {
        let cli = Cli::try_parse_from(
            "analyse --fen 8/8/8/8/8/8/8/K1k5 w - - 0 1 --depth 3 --multipv 2".split(' '),
        )
        .expect("valid");
        let game = cli.args.game().expect("game");
        assert_eq!(game.fen(), "8/8/8/8/8/8/8/K1k5 w - - 0 1");
        assert_eq!((cli.args.limits().depth, cli.args.multipv), (Some(3), 2));
        let cli = Cli::try_parse_from(["analyse", "--movetime", "50"]).expect("valid");
        assert_eq!(cli.args.limits().depth, None);
        assert_eq!(cli.args.limits().time, TimeLimit::MoveTime(50));
        assert!(Cli::try_parse_from(["analyse", "--bogus"]).is_err());
        assert!(Cli::try_parse_from(["analyse", "--depth", "3", "--movetime", "5"]).is_err());
    }
}
