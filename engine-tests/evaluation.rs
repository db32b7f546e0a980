//! Black-box tests of the evaluation's tools: the `eval` command, `qilin
//! datagen` and `qilin tune`.

mod common;
use common::*;
use qilin::data::{RECORD_SIZE, read_file};
use shakmaty::Position;
use std::process::Command;

fn qilin(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .output()
        .expect("run qilin")
}

/// A scratch folder for one test, removed when the test ends.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("qilin-eval-test-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }
    fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const ITALIAN: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";

#[test]
fn eval_over_uci_matches_the_command_line() {
    let mut e = Engine::start();
    e.send(&format!("position fen {ITALIAN}"));
    let lines = e.ask("eval");
    let cli = qilin(&["eval", ITALIAN]);
    let cli: Vec<String> = String::from_utf8_lossy(&cli.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines, cli);
    assert!(lines[0].starts_with("term"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("material ")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == "phase 24/24 (middlegame weight), endgame scale 128/128"),
        "{lines:?}"
    );
    assert!(
        lines.last().is_some_and(|l| l.starts_with("total: ")),
        "{lines:?}"
    );
    e.close();
}

#[test]
fn eval_reports_phase_known_endgames_and_check() {
    let mut e = Engine::start();
    // KPK, drawn: the bitbase decides, whatever the terms say.
    e.send("position fen k7/8/1K6/P7/8/8/8/8 w - - 0 1");
    let lines = e.ask("eval");
    assert!(
        lines
            .iter()
            .any(|l| l == "phase 0/24 (middlegame weight), endgame scale 128/128"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == "known endgame: 0 cp for White (the terms above do not apply)"),
        "{lines:?}"
    );
    e.send("position startpos moves e2e4 f7f6 d2d4 g7g5 d1h5");
    let lines = e.ask("eval");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("(in check: the search does not use the static evaluation here)")
    );
    e.close();
}

#[test]
fn datagen_writes_quiet_positions_reproducibly() {
    let scratch = Scratch::new("datagen");
    let (a, b) = (scratch.file("a.bin"), scratch.file("b.bin"));
    let args = |out: &str| -> Vec<String> {
        [
            "datagen",
            "--out",
            out,
            "--games",
            "3",
            "--nodes",
            "400",
            "--threads",
            "1",
            "--seed",
            "7",
        ]
        .map(String::from)
        .to_vec()
    };
    for out in [&a, &b] {
        let args = args(out);
        let run = qilin(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains("games 3 "), "{err}");
    }
    let (bytes_a, bytes_b) = (std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
    assert_eq!(
        bytes_a, bytes_b,
        "one thread and one seed must give the same games"
    );
    assert!(
        !bytes_a.is_empty() && bytes_a.len() % RECORD_SIZE == 0,
        "{}",
        bytes_a.len()
    );
    let (records, bad) = read_file(&a).expect("read");
    assert_eq!(bad, 0);
    assert_eq!(records.len(), bytes_a.len() / RECORD_SIZE);
    for r in &records {
        assert!(!r.position.is_check(), "{:?}", r.position);
        assert!(r.result <= 2);
        assert!(i32::from(r.score).abs() < 20_000);
    }
    // Three games, each with one result: at most three distinct runs of
    // results in the file (records are written game by game).
    let changes = records
        .windows(2)
        .filter(|w| w[0].result != w[1].result)
        .count();
    assert!(changes <= 2, "{changes}");
}

#[test]
fn datagen_and_tune_reject_bad_arguments() {
    let run = qilin(&["datagen", "--games", "1"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--out <FILE>"));
    let run = qilin(&["tune", "--data", "/nonexistent/qilin.bin"]);
    assert!(!run.status.success());
    let run = qilin(&["tune", "--lambda", "2", "--data", "x"]);
    assert_eq!(run.status.code(), Some(2));
}

#[test]
fn tune_writes_a_weights_file() {
    let scratch = Scratch::new("tune");
    let (data, out) = (scratch.file("t.bin"), scratch.file("weights.rs"));
    let run = qilin(&[
        "datagen", "--out", &data, "--games", "2", "--nodes", "300", "--seed", "9",
    ]);
    assert!(run.status.success());
    let run = qilin(&[
        "tune",
        "--data",
        &data,
        "--out",
        &out,
        "--epochs",
        "3",
        "--threads",
        "1",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("weights file");
    assert!(
        text.contains("pub const WEIGHTS: [(i32, i32); COUNT] = ["),
        "{text}"
    );
    assert_eq!(
        text.matches("    // ").count(),
        qilin::eval::params::SECTIONS.len()
    );
}
