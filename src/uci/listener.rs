//! The UCI text of a search's reports: `info` lines, and the `bestmove`
//! line with its draw claims.

use super::output::Output;
use crate::game::{Claim, Game};
use crate::search::report::{Listener, ProbeFailure, PvReport, Score, ScoreBound, SearchResult};
use shakmaty::{CastlingMode, Move};

/// Writes a search's progress as `info` lines.
pub struct UciListener {
    pub out: Output,
    pub mode: CastlingMode,
    pub show_wdl: bool,
}

impl Listener for UciListener {
    fn on_pv(&self, line: &PvReport<'_>) {
        self.out.line(&info_line(line, self.mode, self.show_wdl));
    }

    fn on_current_move(&self, depth: i32, mv: Move, number: usize) {
        self.out.line(&format!(
            "info depth {depth} currmove {} currmovenumber {number}",
            mv.to_uci(self.mode)
        ));
    }

    fn on_no_legal_moves(&self, in_check: bool) {
        let score = if in_check { "mate 0" } else { "cp 0" };
        self.out.line(&format!("info depth 0 score {score}"));
    }

    fn on_tablebase_failure(&self, failure: &ProbeFailure) {
        self.out.error(&format!(
            "Syzygy probe failed for {} ({}): {}; searching on without it",
            failure.material, failure.table, failure.reason
        ));
    }
}

/// `cp X` or `mate M`.
pub fn format_score(score: Score) -> String {
    match score {
        Score::Centipawns(cp) => format!("cp {cp}"),
        Score::Mate(moves) => format!("mate {moves}"),
    }
}

/// One `info … pv …` line.
pub fn info_line(line: &PvReport<'_>, mode: CastlingMode, show_wdl: bool) -> String {
    let bound = match line.bound {
        ScoreBound::Exact => "",
        ScoreBound::Lower => " lowerbound",
        ScoreBound::Upper => " upperbound",
    };
    let wdl = if show_wdl {
        format!(" wdl {} {} {}", line.wdl.win, line.wdl.draw, line.wdl.loss)
    } else {
        String::new()
    };
    let mut pv = String::new();
    for m in line.pv {
        pv.push(' ');
        pv.push_str(&m.to_uci(mode).to_string());
    }
    format!(
        "info depth {} seldepth {} multipv {} score {}{bound}{wdl} nodes {} nps {} hashfull {} tbhits {} time {} pv{pv}",
        line.depth,
        line.seldepth,
        line.multipv,
        format_score(line.score),
        line.nodes,
        line.nps(),
        line.hashfull,
        line.tbhits,
        line.time.as_millis(),
    )
}

/// The lines that end a search: the draw claims the move gives (none when
/// the game is already over), then `bestmove` with its ponder move.
pub fn bestmove_lines(game: &Game, result: &SearchResult) -> Vec<String> {
    let Some(best) = result.best else {
        return vec!["bestmove (none)".to_string()];
    };
    let mut lines: Vec<String> = claims_for(game, best)
        .into_iter()
        .map(|claim| {
            format!(
                "info string draw claim: {claim} after {}",
                game.to_uci(best)
            )
        })
        .collect();
    let best_text = game.to_uci(best);
    lines.push(match result.ponder {
        Some(p) => format!(
            "bestmove {best_text} ponder {}",
            p.to_uci(game.castling_mode())
        ),
        None => format!("bestmove {best_text}"),
    });
    lines
}

/// The draws `best` lets the player claim; none when the game is already
/// over (a move played after the end claims nothing).
pub fn claims_for(game: &Game, best: Move) -> Vec<Claim> {
    if game.rule_status().is_over() {
        return Vec::new();
    }
    game.claims_after(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::report::Wdl;
    use shakmaty::{Chess, Position, Role, Square};
    use std::time::Duration;

    fn report(score: Score, bound: ScoreBound, multipv: usize, pv: &[Move]) -> PvReport<'_> {
        PvReport {
            depth: 7,
            seldepth: 11,
            multipv,
            score,
            bound,
            wdl: Wdl {
                win: 700,
                draw: 250,
                loss: 50,
            },
            nodes: 12_345,
            tbhits: 6,
            time: Duration::from_millis(50),
            hashfull: 3,
            pv,
        }
    }

    #[test]
    fn an_exact_line() {
        let e4 = Move::Normal {
            role: Role::Pawn,
            from: Square::E2,
            capture: None,
            to: Square::E4,
            promotion: None,
        };
        let pv = [e4];
        let line = report(Score::Centipawns(-31), ScoreBound::Exact, 1, &pv);
        assert_eq!(
            info_line(&line, CastlingMode::Standard, false),
            "info depth 7 seldepth 11 multipv 1 score cp -31 nodes 12345 nps 246900 hashfull 3 tbhits 6 time 50 pv e2e4"
        );
    }

    #[test]
    fn mate_scores_bounds_wdl_and_multipv_numbers() {
        let line = report(Score::Mate(-2), ScoreBound::Upper, 3, &[]);
        assert_eq!(
            info_line(&line, CastlingMode::Standard, true),
            "info depth 7 seldepth 11 multipv 3 score mate -2 upperbound wdl 700 250 50 nodes 12345 nps 246900 hashfull 3 tbhits 6 time 50 pv"
        );
        let line = report(Score::Mate(3), ScoreBound::Lower, 2, &[]);
        assert!(
            info_line(&line, CastlingMode::Standard, false)
                .contains(" multipv 2 score mate 3 lowerbound nodes ")
        );
    }

    #[test]
    fn castling_is_written_for_the_castling_mode() {
        let pos: Chess = crate::game::Game::from_fen(
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
            CastlingMode::Standard,
        )
        .expect("fen")
        .position()
        .clone();
        let castle = pos
            .legal_moves()
            .into_iter()
            .find(|m| m.is_castle() && m.to() == Square::H1)
            .expect("O-O");
        let line = report(
            Score::Centipawns(0),
            ScoreBound::Exact,
            1,
            std::slice::from_ref(&castle),
        );
        assert!(info_line(&line, CastlingMode::Standard, false).ends_with("pv e1g1"));
        assert!(info_line(&line, CastlingMode::Chess960, false).ends_with("pv e1h1"));
    }

    #[test]
    fn no_claim_after_a_game_that_is_already_over() {
        // The seventy-five-move rule has ended this game: a move gives no claim.
        let game = Game::from_fen(
            "4k3/8/8/8/8/8/8/4KR2 w - - 4294967295 1",
            CastlingMode::Standard,
        )
        .expect("fen");
        let rook_move = game.parse_move("f1f2").expect("legal");
        let result = SearchResult {
            best: Some(rook_move),
            ponder: None,
            score: Some(0),
            depth: 1,
            nodes: 1,
        };
        assert_eq!(bestmove_lines(&game, &result), vec!["bestmove f1f2"]);
        let none = SearchResult {
            best: None,
            ..result
        };
        assert_eq!(bestmove_lines(&game, &none), vec!["bestmove (none)"]);
    }
}
