//! `qilin annotate` on real games (engine-tests/data/annotate.pgn):
//!
//! 1. Nguyen Van Huy – Petrosyan, Mumbai 2025, round 9.3 (from The Week in
//!    Chess): the grandmasters repeat with 9. Bf4 Nh5 10. Bd2 Nhf6 11. Bf4 Nh5
//!    12. Bd2 Nhf6; after 12... Nhf6 the position of 8... c6 stands for the
//!    third time, and the game goes on with 13. Bf4, which repeats the
//!    position of 9. Bf4 a third time; draw.
//! 2. lichess.org/VCZwAISr (the lichess database, CC0), a blitz game with
//!    lichess's own `[%eval]` comments, which the annotation replaces: after
//!    the opening 1. e4 g5 2. e5, 2... f6?? allows 3. Qh5#, and 3. exf6??
//!    misses it; 15. d3?? leaves the queen on g4 to 15... Bxg4. Lichess
//!    marks all three `??`.
//! 3. Game 1 with a wrong 5th move: 5. e3 leaves the king in the check of
//!    4... Bb4+.
//!
//! The searches get 5,000 nodes each on one thread, the same every run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn data() -> PathBuf {
    root().join("engine-tests/data/annotate.pgn")
}

fn qilin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .output()
        .expect("run qilin")
}

/// A fresh folder for this test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qilin-annotate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The games of a PGN text, each with its whitespace made single spaces
/// (the writer wraps lines at 80 characters).
fn games(pgn: &str) -> Vec<String> {
    pgn.split("\n\n[Event ")
        .map(|g| g.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The `info string reason:` lines UCI gives for the same illegal move.
fn uci_reason(moves: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start qilin");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "position startpos moves {moves}\nquit").expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("output");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("info string reason: "))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text with every pawn-unit score (`0.27`, `-13.73`, `+0.28`) written
/// as `N`: what the annotation says around a score does not depend on the
/// net built in, the score itself does, so the tests compare the words and
/// the mate scores (`#1`) exactly and leave the net's numbers out.
fn scores_masked(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let sign = matches!(chars[i], '+' | '-');
        let start = i + usize::from(sign);
        let mut end = start;
        while end < chars.len() && chars[end].is_ascii_digit() {
            end += 1;
        }
        let is_score = end > start
            && (sign || start == 0 || !matches!(chars[start - 1], '0'..='9' | '.'))
            && chars.get(end) == Some(&'.')
            && chars.get(end + 1).is_some_and(char::is_ascii_digit)
            && chars.get(end + 2).is_some_and(char::is_ascii_digit)
            && !chars.get(end + 3).is_some_and(char::is_ascii_digit)
            // a date goes on after its second number: `2025.06.24`
            && !(chars.get(end + 3) == Some(&'.')
                && chars.get(end + 4).is_some_and(char::is_ascii_digit));
        if is_score {
            out.push('N');
            i = end + 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn scores_are_masked_and_move_numbers_kept() {
    assert_eq!(
        scores_masked(
            "[Date \"2025.06.24\"] 12... Nhf6 { [%eval 0.27] } 3. exf6 #1 -> +0.28. [%eval -13.73] 2.5"
        ),
        "[Date \"2025.06.24\"] 12... Nhf6 { [%eval N] } 3. exf6 #1 -> N. [%eval N] 2.5"
    );
}

#[test]
fn real_games_are_annotated_with_rule_events_and_blunders() {
    let dir = scratch("games");
    let out_path = dir.join("out.pgn");
    let graph_path = dir.join("eval.svg");
    let data = data();
    let args = [
        "annotate",
        data.to_str().expect("path"),
        "--nodes",
        "5000",
        "--out",
        out_path.to_str().expect("path"),
        "--graph",
        graph_path.to_str().expect("path"),
    ];
    let run = qilin(&args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(run.stdout.is_empty(), "--out takes the games");
    let written = std::fs::read_to_string(&out_path).expect("annotated file");
    let pgn = scores_masked(&written);
    let games = games(&pgn);
    assert_eq!(games.len(), 3, "{pgn}");

    // Game 1: the threefold repetition played through, at exactly 12... Nhf6,
    // and the claim the game ended with at 13. Bf4; no other rule event.
    let g1 = &games[0];
    assert!(
        g1.contains(
            "12... Nhf6 { [%eval N] Draw claim: threefold repetition: the position stands for \
             the third time. Not claimed: Black could claim by announcing this move, White \
             before moving, and the game went on. } 13. Bf4 { [%eval N] Draw claim: \
             threefold repetition: the position stands for the third time. } 1/2-1/2"
        ),
        "{g1}"
    );
    assert_eq!(g1.matches("Draw claim").count(), 2, "{g1}");
    assert!(g1.contains("[Annotator \"Qilin "), "{g1}");

    // Game 2: the mate allowed and the mate missed, with the mating move,
    // and the queen left hanging; lichess's own comments are gone.
    let g2 = &games[1];
    assert!(
        g2.contains("2... f6 $4 { [%eval #1] Blunder, allows mate in 1: "),
        "{g2}"
    );
    assert!(
        g2.contains("3. exf6 $4 { [%eval N] Blunder, missed mate in 1: #1 -> N. Best was Qh5#. }"),
        "{g2}"
    );
    assert!(g2.contains("15. d3 $4 { [%eval N] Blunder: "), "{g2}");
    assert!(!g2.contains("%clk"), "the file's comments are not copied");
    assert!(
        g2.contains("35... Qh2# { Game over: checkmate, black wins. } 0-1"),
        "{g2}"
    );

    // Game 3: the illegal move, with UCI's own explanation, and the moves
    // not played.
    let g3 = &games[2];
    let reason = uci_reason("d2d4 g8f6 g1f3 e7e6 c2c4 d7d5 g2g3 f8b4 e2e3");
    assert!(
        reason.starts_with("The white king on e1 is in check from the black bishop on b4"),
        "{reason}"
    );
    assert!(
        g3.contains(&format!(
            "4... Bb4+ {{ [%eval N] Illegal move 5. e3: {reason} The record is not a legal \
             game from here on; not played: 5. e3 Be7 6. Bg2 O-O. }} 1/2-1/2"
        )),
        "{g3}"
    );
    assert!(
        g3.contains("The record has an illegal move: 5. e3; it is not a legal game from there on."),
        "{g3}"
    );

    // The summary on stderr, one block per game.
    let summary = format!(
        "Game 2:\n  {}, 5000 nodes per position.\n  White (Maelo1705): average centipawn loss ",
        qilin::NAME
    );
    assert!(stderr.contains(&summary), "{stderr}");
    assert_eq!(stderr.matches("Game ").count(), 3, "{stderr}");

    // The graphs: one file per game, marks where the review put them.
    let svg = |name: &str| scores_masked(&std::fs::read_to_string(dir.join(name)).expect(name));
    let first = svg("eval.svg");
    assert_eq!(first.matches(">3-fold</text>").count(), 2, "{first}");
    let second = svg("eval-2.svg");
    assert!(
        second.contains("<title>3. exf6: Blunder N</title>"),
        "{second}"
    );
    assert!(second.contains(">mate</text>"), "{second}");
    let third = svg("eval-3.svg");
    assert!(third.contains(">illegal move</text>"), "{third}");

    // A node budget gives the same annotation every time, to standard output.
    let again = qilin(&args[..4]);
    assert_eq!(String::from_utf8_lossy(&again.stdout), written);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where the lab venv is built (`make lab-venv`), python-chess reads the
/// annotation back: no error, every legal move, the evaluations and the
/// NAGs where they were written. Without it the test says so and passes
/// (`make test` needs no Python).
#[test]
fn python_chess_reads_the_annotation_back() {
    let python = root().join("engine-tests/.venv/bin/python");
    if !python.exists() {
        eprintln!("no engine-tests/.venv: the python-chess read-back is not run");
        return;
    }
    let dir = scratch("readback");
    let out_path = dir.join("out.pgn");
    let data = data();
    let run = qilin(&[
        "annotate",
        data.to_str().expect("path"),
        "--nodes",
        "5000",
        "--out",
        out_path.to_str().expect("path"),
    ]);
    assert_eq!(run.status.code(), Some(0));
    let read = Command::new(python)
        .arg(root().join("engine-tests/tools/pgn_readback.py"))
        .arg(&out_path)
        .output()
        .expect("run python");
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let games: Vec<&str> = text.lines().filter(|l| l.starts_with("game ")).collect();
    // Every move carries an evaluation but the mate on the board.
    assert_eq!(
        games,
        [
            "game errors=0 moves=25 evals=25",
            "game errors=0 moves=70 evals=69",
            "game errors=0 moves=8 evals=8"
        ],
        "{text}"
    );
    for nag in ["4 f6 $4", "5 exf6 $4", "29 d3 $4"] {
        assert!(text.lines().any(|l| l == nag), "{nag}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
