//! Property test: thousands of random and mutated lines through the parsing
//! front and the controller. Nothing may panic, the engine must keep
//! answering `isready`, and every line that is not executed gets exactly
//! one error naming it.

use proptest::prelude::*;
use qilin::uci::controller::Controller;
use qilin::uci::output::Output;
use qilin::uci::parse::{Command, Parsed, parse};
use std::io::Write;
use std::sync::{Arc, Mutex};
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

/// A sink the test can read while the engine writes to it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::ErrorKind::Other)?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn take_lines(&self) -> Vec<String> {
        let mut buf = self.0.lock().expect("sink");
        let text = String::from_utf8_lossy(&buf).into_owned();
        buf.clear();
        text.lines().map(String::from).collect()
    }
}

struct Harness {
    tx: crossbeam_channel::Sender<Parsed>,
    sink: Shared,
}

impl Harness {
    fn start() -> Harness {
        let sink = Shared::default();
        let (tx, rx) = crossbeam_channel::unbounded();
        let out = Output::new(Box::new(sink.clone()));
        std::thread::spawn(move || Controller::new(rx, out).run());
        Harness { tx, sink }
    }

    /// Sends one line, then `stop` (so that no search or perft outlives it)
    /// and `isready`; returns what came before `readyok`.
    fn line(&self, line: &str) -> Vec<String> {
        for l in [line, "stop", "isready"] {
            self.tx.send(parse(l)).expect("engine alive");
        }
        // The line may be an `isready` itself: wait for every `readyok`.
        let expected = 1 + usize::from(parse(line).command == Some(Command::IsReady));
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut lines = Vec::new();
        loop {
            lines.extend(self.sink.take_lines());
            if lines.iter().filter(|l| *l == "readyok").count() >= expected {
                lines.retain(|l| l != "readyok");
                return lines;
            }
            assert!(
                Instant::now() < deadline,
                "no readyok after {line:?}: {lines:?}"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

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

/// Checks one line's answer: the rule every input line obeys.
fn check(h: &Harness, line: &str) {
    let parsed = parse(line);
    let out = h.line(line);
    if std::env::var("FUZZ_TRACE").is_ok() {
        eprintln!("{line:?} => {out:?}");
    }
    let errors: Vec<&String> = out
        .iter()
        .filter(|l| l.starts_with("info string error:"))
        .collect();
    assert!(
        !out.iter().any(|l| l.contains("internal error")),
        "{line:?}: {out:?}"
    );
    if parsed.command.is_none() && !parse(line).errors.is_empty() {
        assert_eq!(errors.len(), 1, "{line:?}: {out:?}");
    }
    for l in &out {
        assert!(!l.contains('\r'), "{line:?}: {out:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 3000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn parse_never_panics(line in line_strategy()) {
        let parsed = parse(&line);
        // A line is executed, rejected with errors, or blank/ignored.
        if parsed.command.is_none() && !parsed.errors.is_empty() {
            prop_assert_eq!(parsed.errors.len(), 1);
        }
    }
}

#[test]
fn engine_survives_mutated_lines() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let h = Harness::start();
    let mut runner = TestRunner::deterministic();
    let strategy = line_strategy();
    for _ in 0..2000 {
        let line = strategy.new_tree(&mut runner).expect("value").current();
        check(&h, &line);
    }
    // The engine still plays a legal move in a sane position afterwards.
    let out = h.line("position startpos moves e2e4");
    assert!(
        out.is_empty() || out.iter().all(|l| !l.contains("error")),
        "{out:?}"
    );
}
