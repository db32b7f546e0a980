//! The UCI protocol as a GUI sees it: handshake, options, synchronisation,
//! `stop`/`ponderhit` semantics, bad input and each vampirc-uci fault.

mod common;
use common::*;
use std::time::{Duration, Instant};

const OPTIONS: [&str; 16] = [
    "option name Hash type spin default 16 min 1 max 65536",
    "option name Threads type spin default 1 min 1 max 256",
    "option name MultiPV type spin default 1 min 1 max 256",
    "option name Skill Level type spin default 20 min 0 max 20",
    "option name Ponder type check default false",
    "option name Move Overhead type spin default 10 min 0 max 5000",
    "option name Clear Hash type button",
    "option name UCI_Chess960 type check default false",
    "option name UCI_ShowWDL type check default false",
    "option name UCI_LimitStrength type check default false",
    "option name UCI_Elo type spin default 1350 min 1350 max 2850",
    "option name SyzygyPath type string default <empty>",
    "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
    "option name Syzygy50MoveRule type check default true",
    "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
    "option name EvalFile type string default <empty>",
];

#[test]
fn handshake() {
    let mut e = Engine::start();
    e.send("uci");
    let lines = e.read_until(|l| l == "uciok");
    assert!(lines[0].starts_with("id name Qilin "), "{lines:?}");
    assert!(lines[1].starts_with("id author "), "{lines:?}");
    assert_eq!(&lines[2..lines.len() - 1], OPTIONS);
    assert_eq!(e.ask("isready"), Vec::<String>::new());
}

#[test]
fn nothing_is_printed_before_the_first_command() {
    let mut e = Engine::start();
    assert_eq!(e.next_line(Duration::from_millis(300)), None);
    // Arena's auto-detection probe is ignored silently.
    e.send("xboard");
    assert_eq!(e.next_line(Duration::from_millis(200)), None);
}

#[test]
fn end_of_input_is_quit_with_exit_code_zero() {
    let mut e = Engine::start();
    e.ask("position startpos moves e2e4");
    let status = e.close();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn quit_during_an_infinite_search_exits_at_once() {
    let mut e = Engine::start();
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    e.send("quit");
    let status = wait_exit(e.child(), Duration::from_secs(2));
    assert_eq!(status.code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn isready_is_answered_while_perft_runs_and_stop_is_quick() {
    let mut e = Engine::start();
    e.send("go perft 8");
    std::thread::sleep(Duration::from_millis(100));
    let asked = Instant::now();
    e.send("isready");
    assert_eq!(e.next_line(TIMEOUT).as_deref(), Some("readyok"));
    assert!(
        asked.elapsed() < Duration::from_millis(50),
        "{:?}",
        asked.elapsed()
    );
    let stopped = Instant::now();
    e.send("stop");
    assert_eq!(
        e.next_line(TIMEOUT).as_deref(),
        Some("info string perft stopped")
    );
    assert!(
        stopped.elapsed() < Duration::from_millis(50),
        "{:?}",
        stopped.elapsed()
    );
}

#[test]
fn stop_and_ponderhit_while_idle_print_nothing() {
    let mut e = Engine::start();
    assert!(e.ask("stop").is_empty());
    assert!(e.ask("ponderhit").is_empty());
}

#[test]
fn infinite_search_waits_for_stop() {
    let mut e = Engine::start();
    e.ask("position startpos");
    e.send("go infinite");
    // Only info lines may come before stop.
    while let Some(line) = e.next_line(Duration::from_millis(300)) {
        assert!(line.starts_with("info"), "{line}");
    }
    e.send("stop");
    let lines = e.read_until(|l| l.starts_with("bestmove"));
    assert!(lines.last().is_some_and(|l| l.starts_with("bestmove ")));
    assert!(e.ask("isready").is_empty(), "exactly one bestmove");
}

#[test]
fn ponder_waits_for_ponderhit_or_stop() {
    for (go, release) in [
        ("go ponder wtime 1000 btime 1000", "ponderhit"),
        ("go wtime 1000 btime 1000 ponder", "stop"),
    ] {
        let mut e = Engine::start();
        e.ask("position startpos moves e2e4");
        e.send(go);
        while let Some(line) = e.next_line(Duration::from_millis(300)) {
            assert!(line.starts_with("info"), "{go}: {line}");
        }
        e.send(release);
        let lines = e.read_until(|l| l.starts_with("bestmove"));
        assert!(lines.last().is_some_and(|l| l.starts_with("bestmove ")));
    }
}

/// Black's legal moves after 1.e4 e5 2.Nf3, as python-chess 1.11.2 lists
/// them (`chess.Board().legal_moves` after the three moves): an oracle apart
/// from the engine's own move generator.
const LEGAL_AFTER_E4_E5_NF3: &str = "a7a5 a7a6 b7b5 b7b6 b8a6 b8c6 c7c5 c7c6 d7d5 d7d6 \
    d8e7 d8f6 d8g5 d8h4 e8e7 f7f5 f7f6 f8a3 f8b4 f8c5 f8d6 f8e7 g7g5 g7g6 g8e7 g8f6 g8h6 \
    h7h5 h7h6";

#[test]
fn one_bestmove_per_go_and_it_is_legal() {
    let mut e = Engine::start();
    e.ask("position startpos moves e2e4 e7e5 g1f3");
    let legal = moves(LEGAL_AFTER_E4_E5_NF3);
    assert_eq!(legal.len(), 29);
    for _ in 0..3 {
        let lines = e.go("depth 1");
        let best = lines
            .last()
            .and_then(|l| l.strip_prefix("bestmove "))
            .expect("bestmove");
        let best = best.split(' ').next().unwrap_or_default();
        assert!(legal.contains(best), "{best}");
        assert!(e.ask("isready").is_empty());
    }
}

#[test]
fn searchmoves_are_respected() {
    let mut e = Engine::start();
    let best = |lines: &[String]| {
        lines
            .last()
            .and_then(|l| l.split(' ').nth(1))
            .map(String::from)
    };
    let lines = e.go("depth 4 searchmoves a2a3");
    assert_eq!(best(&lines).as_deref(), Some("a2a3"));
    // Every PV starts with the only move allowed.
    assert!(
        lines
            .iter()
            .filter(|l| l.contains(" pv "))
            .all(|l| l.contains(" pv a2a3"))
    );
    let lines = e.go("searchmoves h2h4 e2e5 g1f3 depth 3");
    assert_eq!(
        info_strings(&lines),
        vec!["info string error: illegal searchmove ignored: e2e5"]
    );
    let played = best(&lines).unwrap_or_default();
    assert!(played == "h2h4" || played == "g1f3", "{played}");
}

#[test]
fn setoption_forms() {
    let mut e = Engine::start();
    assert!(e.ask("setoption name Hash value 32").is_empty());
    assert!(e.ask("setoption name move overhead value 100").is_empty());
    assert!(e.ask("SETOPTION NAME threads VALUE 2").is_empty());
    assert!(e.ask("setoption name Clear Hash").is_empty());
    assert!(e.ask("setoption name UCI_ShowWDL value true").is_empty());
    // An empty SyzygyPath switches probing off, silently (cutechess sends
    // it with no value at all).
    assert!(e.ask("setoption name SyzygyPath value <empty>").is_empty());
    assert!(e.ask("setoption name SyzygyPath").is_empty());
    assert_eq!(
        e.ask("setoption name Syzygy value x"),
        vec!["info string error: no such option: Syzygy"]
    );
    assert_eq!(
        e.ask("setoption name Hash value 0"),
        vec!["info string error: invalid value for Hash: '0' (expected an integer 1..65536)"]
    );
    assert_eq!(
        e.ask("setoption name Threads value two"),
        vec!["info string error: invalid value for Threads: 'two' (expected an integer 1..256)"]
    );
    assert_eq!(
        e.ask("setoption name Ponder value yes"),
        vec!["info string error: invalid value for Ponder: 'yes' (expected true or false)"]
    );
    // Stockfish's strength options, with Stockfish's ranges.
    assert!(e.ask("setoption name Skill Level value 0").is_empty());
    assert!(e.ask("setoption name skill level value 20").is_empty());
    assert_eq!(
        e.ask("setoption name Skill Level value 21"),
        vec!["info string error: invalid value for Skill Level: '21' (expected an integer 0..20)"]
    );
    assert!(e.ask("setoption name UCI_Elo value 2850").is_empty());
    assert_eq!(
        e.ask("setoption name UCI_Elo value 2851"),
        vec![
            "info string error: invalid value for UCI_Elo: '2851' (expected an integer 1350..2850)"
        ]
    );
    assert_eq!(
        e.ask("setoption Hash 5"),
        vec!["info string error: setoption expects: setoption name <name> [value <value>]"]
    );
}

#[test]
fn unknown_commands_are_named() {
    let mut e = Engine::start();
    assert_eq!(
        e.ask("foo   bar\t"),
        vec!["info string error: unknown command: foo bar"]
    );
    // vampirc-uci would take this as `isready`.
    assert_eq!(
        e.ask("isreadyxyz"),
        vec!["info string error: unknown command: isreadyxyz"]
    );
    e.send_raw(b"\xff\xfe garbage\n");
    assert_eq!(
        e.sync(),
        vec!["info string error: unknown command: \u{fffd}\u{fffd} garbage"]
    );
}

#[test]
fn crlf_tabs_and_upper_case_keywords() {
    let mut e = Engine::start();
    e.send_raw(b"POSITION\tstartpos   MOVES e2e4\r\n");
    e.send_raw(b"ISREADY\r\n");
    assert_eq!(e.next_line(TIMEOUT).as_deref(), Some("readyok"));
    let d = e.ask("d");
    assert!(
        d.contains(&"Fen: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".to_string())
    );
}

#[test]
fn display_shows_fen_key_and_checkers() {
    let mut e = Engine::start();
    let d = e.ask("d");
    assert!(d.contains(&"Key: 463B96181691FC9C".to_string()), "{d:?}");
    e.ask("position startpos moves e2e4 f7f6 d2d4 g7g5 d1h5");
    let d = e.ask("d");
    assert!(d.contains(&"Checkers: h5".to_string()), "{d:?}");
    assert!(d.contains(&"info string game over: checkmate, white wins".to_string()));
}

#[test]
fn bad_fen_is_rejected_with_the_reason_and_the_game_is_kept() {
    let mut e = Engine::start();
    e.ask("position startpos moves e2e4");
    let cases = [
        (
            "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1",
            "info string error: invalid fen 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1': invalid board part in fen",
        ),
        (
            "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
            "info string error: invalid fen '8/8/8/8/8/8/8/8 w - - 0 1': illegal position: empty board, missing king",
        ),
        (
            // The side not to move is in check.
            "position fen 4k3/8/8/8/8/8/8/R3K2r b - - 0 1",
            "info string error: invalid fen '4k3/8/8/8/8/8/8/R3K2r b - - 0 1': illegal position: opposite check",
        ),
        (
            "position fen",
            "info string error: position fen without a FEN",
        ),
        (
            "position startpos e2e4",
            "info string error: unexpected 'e2e4' after startpos (expected moves)",
        ),
        (
            "position",
            "info string error: position expects startpos or fen",
        ),
    ];
    for (line, error) in cases {
        assert_eq!(e.ask(line), vec![error], "{line}");
    }
    let d = e.ask("d");
    assert!(
        d.contains(&"Fen: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".to_string())
    );
}

#[test]
fn fen_forms_are_accepted() {
    let mut e = Engine::start();
    for fen in [
        // Without the move counters.
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3",
        // Shredder-FEN castling for a standard position.
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
        // An en passant square with no capture possible.
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
    ] {
        assert!(e.ask(&format!("position fen {fen}")).is_empty(), "{fen}");
    }
    assert_eq!(e.legal_moves().len(), 20);
}

#[test]
fn broken_move_list_sets_up_to_the_last_legal_move() {
    let mut e = Engine::start();
    assert_eq!(
        e.ask("position startpos moves e2e4 e7e5 e4e5 d7d5"),
        vec![
            "info string error: illegal move 'e4e5' at ply 3; position set up to ply 2",
            "info string reason: The white pawn on e4 cannot move to e5: the black pawn on e5 \
             stands there, and a pawn captures only diagonally, never straight ahead."
        ]
    );
    let d = e.ask("d");
    assert!(d.contains(
        &"Fen: rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2".to_string()
    ));
    assert_eq!(
        e.ask("position startpos moves e2e4 xyz"),
        vec!["info string error: unparsable move 'xyz' at ply 2; position set up to ply 1"]
    );
    // vampirc-uci would cut `a7a8k` to `a7a8`, a legal move.
    assert_eq!(
        e.ask("position fen 8/P7/8/8/8/8/8/k6K w - - 0 1 moves a7a8k"),
        vec![
            "info string error: illegal move 'a7a8k' at ply 1; position set up to ply 0",
            "info string reason: A pawn that reaches the last rank must become a queen, a rook, \
             a bishop or a knight, never a king: a7a8k is not allowed."
        ]
    );
    // `0000` (a null move) is not a move of chess.
    assert_eq!(
        e.ask("position startpos moves 0000"),
        vec![
            "info string error: illegal move '0000' at ply 1; position set up to ply 0",
            "info string reason: 0000 means passing, and in chess a player may never pass: \
             every turn must be a move."
        ]
    );
}

#[test]
fn double_space_in_the_move_list_keeps_every_move() {
    let mut e = Engine::start();
    assert!(e.ask("position startpos moves  e2e4  e7e5").is_empty());
    let d = e.ask("d");
    assert!(d.contains(
        &"Fen: rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2".to_string()
    ));
}

#[test]
fn go_with_trailing_whitespace_and_large_values() {
    let mut e = Engine::start();
    // vampirc-uci panics on the first two lines.
    for go in [
        "depth 1 ",
        "depth 1 movestogo 300 ",
        "nodes 1234567890123 depth 1",
    ] {
        let lines = e.go(go);
        assert!(
            lines.last().is_some_and(|l| l.starts_with("bestmove ")),
            "{go}"
        );
        assert!(info_strings(&lines).is_empty(), "{go}: {lines:?}");
    }
}

#[test]
fn malformed_go_fields_are_named_and_go_still_answers() {
    let mut e = Engine::start();
    let lines = e.go("depth x movetime 50");
    assert_eq!(
        info_strings(&lines),
        vec!["info string error: malformed number for go depth: x"]
    );
    assert!(lines.last().is_some_and(|l| l.starts_with("bestmove ")));
    let lines = e.go("movetime 50 frobnicate");
    assert_eq!(
        info_strings(&lines),
        vec!["info string error: unknown go parameter: frobnicate"]
    );
}

#[test]
fn perft_forms() {
    let mut e = Engine::start();
    e.send("perft 2");
    let lines = e.read_until(|l| l.starts_with("Nodes searched"));
    assert_eq!(lines.len(), 22);
    assert_eq!(lines[20], "");
    assert_eq!(lines[21], "Nodes searched: 400");
    assert!(lines.contains(&"e2e4: 20".to_string()));
    assert_eq!(
        e.ask("perft"),
        vec!["info string error: perft expects one depth: perft <depth>"]
    );
    assert_eq!(
        e.ask("go perft 0"),
        vec!["info string error: perft depth out of range 1..64: 0"]
    );
}

#[test]
fn a_thousand_plies_are_set_up_quickly() {
    let mut e = Engine::start();
    let moves = ["g1f3 g8f6 f3g1 f6g8"; 250].join(" ");
    let line = format!("position startpos moves {moves}");
    e.ask(&line);
    let started = Instant::now();
    assert!(e.ask(&line).is_empty());
    // Setup plus one pipe round trip.
    assert!(
        started.elapsed() < Duration::from_millis(50),
        "{:?}",
        started.elapsed()
    );
    let d = e.ask("d");
    assert!(d.contains(&"info string game over: fivefold repetition".to_string()));
}

#[test]
fn debug_and_register_are_accepted() {
    let mut e = Engine::start();
    // With debug on, every line received is echoed (here `isready`).
    assert_eq!(e.ask("debug on"), vec!["info string debug: isready"]);
    assert_eq!(e.ask("debug off"), vec!["info string debug: debug off"]);
    assert!(e.ask("debug off").is_empty());
    assert!(e.ask("register later").is_empty());
    assert_eq!(
        e.ask("debug maybe"),
        vec!["info string error: debug expects on or off: debug maybe"]
    );
}

#[test]
fn help_is_available() {
    let mut e = Engine::start();
    let lines = e.ask("help");
    assert!(lines.iter().any(|l| l.contains("perft")), "{lines:?}");
}

#[test]
fn output_lines_are_clean() {
    let mut e = Engine::start();
    e.send("uci");
    let mut lines = e.read_until(|l| l == "uciok");
    lines.extend(e.go("depth 2"));
    for l in &lines {
        assert!(
            !l.contains('\r') && !l.contains("  ") && l.trim() == l,
            "{l:?}"
        );
    }
}

/// 64 GB of hash must be refused with a message, not crash the engine or
/// swap the machine to death. The engine runs under `ulimit -v` (4 GB of
/// address space), so that 64 GB is more than it may have on every machine,
/// also one with more than 64 GB free, where the test used to return early
/// and pass without testing anything.
#[test]
fn a_hash_larger_than_memory_is_refused() {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\"")
        .arg(env!("CARGO_BIN_EXE_qilin"));
    let mut e = Engine::from_command(command);
    // The limit holds: the engine still starts and answers.
    assert_eq!(
        e.sync(),
        Vec::<String>::new(),
        "the engine under `ulimit -v 4194304` (sh needed) did not start"
    );
    assert_eq!(
        e.ask("setoption name Hash value 65536"),
        vec!["info string error: not enough memory for Hash 65536 MB; keeping 16 MB"]
    );
    let lines = e.go("depth 3");
    assert!(lines.last().is_some_and(|l| l.starts_with("bestmove ")));
    assert!(lines.iter().any(|l| l.contains(" hashfull ")));
}
