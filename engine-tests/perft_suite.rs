//! Perft through the UCI interface: the six positions of the Chess Programming
//! Wiki, a published perft suite and a Chess960 suite (counts from the
//! literature, cross-checked against Stockfish 15.1: see the data files).

mod common;
use common::*;

/// (FEN, depth, nodes) from https://www.chessprogramming.org/Perft_Results.
const CPW: [(&str, u32, u64); 6] = [
    (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        5,
        4_865_609,
    ),
    (
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        4,
        4_085_603,
    ),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 674_624),
    (
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        4,
        422_333,
    ),
    (
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        4,
        2_103_487,
    ),
    (
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        4,
        3_894_594,
    ),
];

#[test]
fn chess_programming_wiki_positions() {
    let mut e = Engine::start();
    for (fen, depth, nodes) in CPW {
        assert!(e.ask(&format!("position fen {fen}")).is_empty(), "{fen}");
        assert_eq!(e.perft(depth).1, nodes, "{fen} depth {depth}");
    }
}

/// Runs every `;Dn count` entry of an EPD suite and returns how many ran.
fn run_suite(file: &str, chess960: bool) -> usize {
    let text = std::fs::read_to_string(file).expect("suite file");
    let mut e = Engine::start();
    e.ask("setoption name Threads value 2");
    if chess960 {
        e.ask("setoption name UCI_Chess960 value true");
    }
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut parts = line.split(';');
        let fen = parts.next().expect("fen").trim();
        let errors = e.ask(&format!("position fen {fen}"));
        assert!(errors.is_empty(), "{fen}: {errors:?}");
        for entry in parts {
            let entry = entry.trim();
            let (d, n) = entry
                .strip_prefix('D')
                .and_then(|e| e.split_once(' '))
                .expect("Dn count");
            let depth: u32 = d.trim().parse().expect("depth");
            let nodes: u64 = n.trim().parse().expect("count");
            assert_eq!(e.perft(depth).1, nodes, "{fen} depth {depth}");
            checked += 1;
        }
    }
    checked
}

#[test]
fn published_perft_suite() {
    let checked = run_suite("engine-tests/data/perftsuite.epd", false);
    assert!(checked > 1500, "only {checked} entries");
}

#[test]
fn chess960_perft_suite() {
    let checked = run_suite("engine-tests/data/perft960.epd", true);
    assert!(checked > 350, "only {checked} entries");
}

#[test]
fn threads_do_not_change_the_count() {
    let mut e = Engine::start();
    let kiwipete = CPW[1].0;
    e.ask(&format!("position fen {kiwipete}"));
    let one = e.perft(3);
    e.ask("setoption name Threads value 3");
    assert_eq!(e.perft(3), one);
    assert_eq!(one.1, 97_862);
}

#[test]
fn command_line_perft_matches() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["perft", "4", "--threads", "2"])
        .output()
        .expect("run qilin perft");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(text.ends_with("\nNodes searched: 197281\n"), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains(": ")).count(), 21);
}
