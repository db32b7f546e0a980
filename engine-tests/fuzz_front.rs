//! Black-box fuzzing of the input front: thousands of random and mutated
//! lines sent to the built engine, each followed by `stop` and `isready`.
//!
//! What each line must give is decided here, from the protocol alone, never
//! by asking the engine's own parser (the code under test):
//! - a blank line (whitespace and control characters only) and `xboard`
//!   print nothing;
//! - a line whose first word is no command prints exactly one
//!   `info string error: unknown command: …` line naming that word, and
//!   nothing else;
//! - `go` (but `go perft`) gives exactly one `bestmove`, any other line none:
//!   bestmoves are counted over the whole stream, so a second or a late one
//!   is caught at the next line;
//! - every error line names the command or a word of the line, no line is
//!   malformed (`\r`, an error outside `info string`, `info` without a UCI
//!   info keyword, a bad `bestmove`), and no line says `internal error`;
//! - `quit` exits with status 0 within a second; otherwise the engine keeps
//!   answering `isready`, and afterwards still plays a legal move.

mod common;
use common::{Engine, shape_fault};
use proptest::prelude::*;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// Valid lines to mutate: every command, FEN forms, moves, options.
const SEEDS: &[&str] = &[
    "uci",
    "isready",
    "ucinewgame",
    "position startpos",
    "position startpos moves e2e4 e7e5 g1f3 b8c6 f1b5 a7a6",
    "position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 moves e1g1 e8c8",
    "position fen 8/P7/8/8/8/8/8/k6K w - - 0 1 moves a7a8n",
    "position fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3",
    "position fen bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "go depth 1",
    "go wtime 100 btime 100 winc 10 binc 10 movestogo 5",
    "go movetime 5 searchmoves e2e4 d2d4",
    "go nodes 100",
    "go perft 1",
    "perft 2",
    "setoption name Hash value 1",
    "setoption name Threads value 2",
    "setoption name Move Overhead value 0",
    "setoption name UCI_Chess960 value true",
    "setoption name Clear Hash",
    "debug on",
    "d",
    "stop",
    "ponderhit",
];

fn mutate(seed: &str, ops: &[(u8, usize, char)]) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for &(op, at, c) in ops {
        let at = if chars.is_empty() {
            0
        } else {
            at % (chars.len() + 1)
        };
        match op % 5 {
            0 => chars.insert(at, c),
            1 if at < chars.len() => {
                chars.remove(at);
            }
            2 if at < chars.len() => chars[at] = c,
            3 => chars.insert(at, ' '),
            _ => {
                // Duplicate a slice: repeated tokens.
                let end = (at + 5).min(chars.len());
                let piece: Vec<char> = chars[at..end].to_vec();
                chars.splice(at..at, piece);
            }
        }
    }
    chars.into_iter().collect()
}

fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(vec![
            ' ', '\t', '\r', '0', '9', '-', '/', 'k', 'K', 'q', 'x', 'e', '8', '\u{0}', '\u{fffd}',
        ]),
        any::<char>(),
    ]
}

fn line_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (
            prop::sample::select(SEEDS),
            prop::collection::vec((any::<u8>(), any::<usize>(), interesting_char()), 0..6)
        )
            .prop_map(|(seed, ops)| mutate(seed, &ops)),
        1 => ".{0,80}",
    ]
}

/// The words of a line as UCI reads them: split at whitespace and control
/// characters.
fn words(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// Every command word the engine knows (UCI, and the extras of its README).
const COMMANDS: [&str; 17] = [
    "uci",
    "debug",
    "isready",
    "setoption",
    "register",
    "ucinewgame",
    "position",
    "go",
    "stop",
    "ponderhit",
    "quit",
    "d",
    "eval",
    "perft",
    "bench",
    "help",
    "xboard",
];

/// The engine and the count of `go` and `bestmove` over its whole life.
struct Front {
    e: Engine,
    gos: usize,
    bestmoves: usize,
    /// The line before the current one, for messages.
    previous: String,
    /// Lines sent by kind: blank or xboard, unknown, go, other command, quit.
    kinds: [usize; 5],
}

impl Front {
    fn start() -> Front {
        Front {
            e: Engine::start(),
            gos: 0,
            bestmoves: 0,
            previous: String::new(),
            kinds: [0; 5],
        }
    }

    fn send(&mut self, line: &str, what: &str) {
        if let Err(err) = self.e.try_send(line) {
            panic!("{what}: cannot send {line:?}: {err} (has the engine exited?)");
        }
    }

    /// Reads lines until `done` holds for the collected lines, checking each
    /// on the way; fails after `within`.
    /// `done` sees the lines so far and the count of bestmoves.
    fn read(
        &mut self,
        within: Duration,
        what: &str,
        out: &mut Vec<String>,
        done: impl Fn(&[String], usize) -> bool,
    ) {
        let deadline = Instant::now() + within;
        while !done(out, self.bestmoves) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.e.recv(left) {
                Ok(l) => {
                    if let Some(fault) = shape_fault(&l) {
                        panic!("{what}: malformed line {l:?} ({fault}); so far {out:?}");
                    }
                    if l.starts_with("bestmove") {
                        self.bestmoves += 1;
                        if self.bestmoves > self.gos {
                            panic!(
                                "{what}: {l:?} is bestmove {} for {} go (previous line {:?}); so far {out:?}",
                                self.bestmoves, self.gos, self.previous
                            );
                        }
                    }
                    out.push(l);
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{what}: nothing more within {within:?}; so far {out:?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.e.child().try_wait().ok().flatten();
                    panic!("{what}: the engine exited ({status:?}); so far {out:?}")
                }
            }
        }
    }
}

fn count(lines: &[String], text: &str) -> usize {
    lines.iter().filter(|l| *l == text).count()
}

/// Sends one line (then `stop` and `isready`) and checks its answer. After a
/// `quit`, a fresh engine takes the place of the one that exited.
fn check(f: &mut Front, raw: &str) {
    // A newline would make two lines of one; the rest goes through as is.
    let line = raw.replace('\n', " ");
    let what = format!("line {line:?}");
    let w = words(&line);
    let keyword = w.first().map(|k| k.to_lowercase()).unwrap_or_default();
    let known = COMMANDS.contains(&keyword.as_str());
    if known && keyword == "quit" {
        f.send(&line, &what);
        let started = Instant::now();
        let status = loop {
            if let Ok(Some(status)) = f.e.child().try_wait() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "{what}: still running 1 s after quit"
            );
            std::thread::sleep(Duration::from_millis(2));
        };
        assert_eq!(status.code(), Some(0), "{what}: exit status");
        let kinds = f.kinds;
        *f = Front::start();
        f.kinds = kinds;
        f.kinds[4] += 1;
        return;
    }
    let is_go =
        known && keyword == "go" && w.get(1).is_none_or(|a| !a.eq_ignore_ascii_case("perft"));
    if is_go {
        f.gos += 1;
    }
    let kind = match () {
        _ if w.is_empty() || keyword == "xboard" => 0,
        _ if !known => 1,
        _ if is_go => 2,
        _ => 3,
    };
    f.kinds[kind] += 1;
    let readyoks = 1 + usize::from(known && keyword == "isready");
    f.send(&line, &what);
    f.send("stop", &what);
    f.send("isready", &what);
    let mut out = Vec::new();
    f.read(Duration::from_secs(10), &what, &mut out, |o, _| {
        count(o, "readyok") >= readyoks
    });
    // `stop` ends the search, but its bestmove may follow `readyok`.
    let gos = f.gos;
    f.read(Duration::from_secs(5), &what, &mut out, |_, b| b >= gos);
    // Likewise the end of a perft (`Nodes searched: N`, or the line saying
    // `stop` ended it), unless the line was refused with an error.
    let perft = known && (keyword == "perft" || (keyword == "go" && !is_go));
    if perft {
        f.read(Duration::from_secs(5), &what, &mut out, |o, _| {
            o.iter().any(|l| {
                l.starts_with("Nodes searched:")
                    || l == "info string perft stopped"
                    || l.starts_with("info string error")
            })
        });
    }
    let answer: Vec<&String> = out
        .iter()
        .filter(|l| *l != "readyok" && !l.starts_with("info string debug:"))
        .collect();
    let errors: Vec<&&String> = answer
        .iter()
        .filter(|l| l.starts_with("info string error"))
        .collect();
    if w.is_empty() || keyword == "xboard" {
        assert!(
            answer.is_empty(),
            "{what}: a blank line or xboard printed {answer:?}"
        );
    } else if !known {
        let first = &w[0];
        assert!(
            answer.len() == 1
                && answer[0].starts_with("info string error: unknown command: ")
                && answer[0].contains(first.as_str()),
            "{what}: want one `info string error: unknown command: …{first}…` line, got {answer:?}"
        );
    } else {
        // An error names the line when it quotes one of its words (two
        // characters or more, or the command), or uses a word of four letters
        // or more that starts one of them (`searchmove` for `searchmoves`).
        let lower_words: Vec<String> = w.iter().map(|x| x.to_lowercase()).collect();
        for e in &errors {
            let text = e.to_lowercase();
            let quoted = lower_words
                .iter()
                .any(|x| (x.chars().count() >= 2 || x == &keyword) && text.contains(x.as_str()));
            let named = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|t| t.len() >= 4)
                .any(|t| lower_words.iter().any(|x| x.starts_with(t)));
            assert!(
                quoted || named,
                "{what}: the error {e:?} names nothing of the line"
            );
        }
    }
    assert_eq!(
        f.bestmoves, f.gos,
        "{what}: {} go, {} bestmove; answer {out:?}",
        f.gos, f.bestmoves
    );
    f.previous = line;
}

#[test]
fn engine_survives_mutated_lines() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut f = Front::start();
    let mut runner = TestRunner::deterministic();
    let strategy = line_strategy();
    for _ in 0..5000 {
        let line = strategy.new_tree(&mut runner).expect("value").current();
        check(&mut f, &line);
    }
    let [blank, unknown, go, other, quit] = f.kinds;
    eprintln!(
        "lines: {blank} blank or xboard, {unknown} unknown, {go} go, {other} other commands, {quit} quit"
    );
    // The engine still plays a legal move in a sane position afterwards.
    let what = "after the fuzzing, `ucinewgame`, `setoption name UCI_Chess960 value false`, `position startpos moves e2e4`, `go depth 1`";
    for line in [
        "ucinewgame",
        "setoption name UCI_Chess960 value false",
        "position startpos moves e2e4",
        "go depth 1",
    ] {
        f.send(line, what);
    }
    f.gos += 1;
    let mut out = Vec::new();
    let gos = f.gos;
    f.read(Duration::from_secs(10), what, &mut out, |_, b| b >= gos);
    let best = out
        .last()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or_default()
        .to_string();
    let mut pos = Chess::default();
    let e4 = UciMove::from_ascii(b"e2e4")
        .ok()
        .and_then(|m| m.to_move(&pos).ok());
    pos.play_unchecked(e4.expect("e2e4 is legal at the start"));
    let legal = UciMove::from_ascii(best.as_bytes())
        .ok()
        .and_then(|m| m.to_move(&pos).ok())
        .is_some_and(|m| m.to_uci(CastlingMode::Standard).to_string() == best);
    assert!(
        legal,
        "{what}: bestmove {best:?} is not legal after 1.e4: {out:?}"
    );
}
