//! The UCI side: reading lines, parsing them, the controller that executes
//! them, options, and the text of every line the engine writes.
//!
//! input (stdin) → parse → controller → search engine → listener → output

pub mod controller;
pub mod listener;
pub mod options;
pub mod output;
pub mod parse;

use crate::game::RuleStatus;
use crate::rules_explain::Illegality;
use controller::Controller;
use output::Output;
use parse::{Command, parse};
use std::io::BufRead;

/// Runs the protocol on stdin/stdout until `quit` or the end of input. This
/// thread only reads and parses; the controller executes on its own thread.
/// `Err` when the engine cannot start at all (no memory or no thread for
/// even the smallest table and pool).
pub fn run() -> Result<(), String> {
    let out = Output::stdout();
    let (tx, rx) = crossbeam_channel::unbounded();
    let controller = Controller::new(rx, out)?;
    let controller = std::thread::Builder::new()
        .name("controller".into())
        .spawn(move || controller.run())
        .map_err(|e| format!("cannot start the controller thread: {e}"))?;
    let stdin = std::io::stdin();
    let mut reader = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // Bytes, not a String: a line that is not UTF-8 must not end the loop.
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let parsed = parse(&line);
        let is_quit = parsed.command == Some(Command::Quit);
        if tx.send(parsed).is_err() || is_quit {
            break;
        }
    }
    drop(tx);
    let _ = controller.join();
    Ok(())
}

/// Executes `lines` (the command line's arguments, as OpenBench's client
/// gives `"genfens …" "quit"`) as if they came on standard input, then
/// quits once every job they started has ended; standard input is not read.
pub fn run_lines(lines: &[String]) -> Result<(), String> {
    let (tx, rx) = crossbeam_channel::unbounded();
    for line in lines {
        let parsed = parse(line);
        let is_quit = parsed.command == Some(Command::Quit);
        if tx.send(parsed).is_err() || is_quit {
            break;
        }
    }
    // The end of the lines reads as `quit`.
    drop(tx);
    Controller::new(rx, Output::stdout())?
        .finishing_jobs_on_quit()
        .run();
    Ok(())
}

/// The `info string` lines of RULES.md §5 for a position: game ends first,
/// then the draws that may be claimed.
pub fn rule_lines(status: &RuleStatus) -> Vec<String> {
    let ended = status
        .ended
        .iter()
        .map(|g| format!("info string game over: {g}"));
    let claims = status
        .claims
        .iter()
        .map(|c| format!("info string draw claim: {c}"));
    ended.chain(claims).collect()
}

/// The lines after the error line of an illegal move: the rule it breaks,
/// `info string reason: …`, one line per line of the explanation.
pub fn reason_lines(why: &Illegality) -> Vec<String> {
    why.to_string()
        .lines()
        .map(|l| format!("info string reason: {l}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Claim, GameOver};

    #[test]
    fn rule_lines_put_game_ends_first() {
        let status = RuleStatus {
            ended: vec![GameOver::Stalemate],
            claims: vec![Claim::FiftyMoves],
        };
        assert_eq!(
            rule_lines(&status),
            vec![
                "info string game over: stalemate",
                "info string draw claim: fifty-move rule"
            ]
        );
    }
}
