//! Black-box tests of the rules of chess (RULES.md), through UCI only.
//!
//! Part A compares `go perft 1` with legal move lists that were produced
//! independently of Qilin: every list below was generated with Stockfish 15.1
//! (`position ...` then `go perft 1`) and checked against python-chess 1.11.
//! Part B checks the `info string` lines of RULES.md §5 (draw claims and game
//! ends). Part C checks Chess960 castling and the castling notations.
//! Part D checks the reason given for each kind of illegal move: positions
//! built so that the broken rule, its pieces and squares are known.

mod common;
use common::*;
use std::collections::BTreeSet;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Sets up `position <spec>` and asserts the engine reported no error.
fn set(e: &mut Engine, spec: &str) {
    let out = e.ask(&format!("position {spec}"));
    let errors: Vec<&String> = out
        .iter()
        .filter(|l| l.starts_with("info string error"))
        .collect();
    assert!(errors.is_empty(), "position {spec}: {errors:?}");
}

/// A fresh engine at `position <spec>`.
fn engine_at(spec: &str) -> Engine {
    let mut e = Engine::start();
    set(&mut e, spec);
    e
}

/// Asserts that `got` is exactly the set `expected`, naming the differences.
fn assert_same_moves(got: &BTreeSet<String>, expected: &str, what: &str) {
    let want = moves(expected);
    let missing: Vec<&String> = want.difference(got).collect();
    let extra: Vec<&String> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: missing {missing:?}, extra {extra:?}"
    );
}

/// The legal moves at `position <spec>` must be exactly `expected`.
/// `present`/`absent` name the moves the position is about; they only
/// document (and guard) the hard-coded list.
fn check_legal(spec: &str, expected: &str, present: &[&str], absent: &[&str]) {
    let want = moves(expected);
    for m in present {
        assert!(want.contains(*m), "test list lacks {m}");
    }
    for m in absent {
        assert!(!want.contains(*m), "test list holds {m}");
    }
    let mut e = engine_at(spec);
    let got = e.legal_moves();
    assert_same_moves(&got, expected, &format!("position {spec}"));
}

fn is_rule_line(l: &str) -> bool {
    l.starts_with("info string game over: ") || l.starts_with("info string draw claim: ")
}

/// The rule lines about the position itself (not the `... after <move>` claims).
fn position_rules(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .map(String::as_str)
        .filter(|l| is_rule_line(l) && !l.contains(" after "))
        .collect()
}

/// The `info string draw claim: ... after <move>` lines.
fn claims_after(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .map(String::as_str)
        .filter(|l| l.starts_with("info string draw claim: ") && l.contains(" after "))
        .collect()
}

/// Runs `go <params>` and checks that the position's rule lines come first,
/// before any search output.
fn go(e: &mut Engine, params: &str) -> Vec<String> {
    let lines = e.go(params);
    let rules = position_rules(&lines);
    let head: Vec<&str> = lines[..rules.len()].iter().map(String::as_str).collect();
    assert_eq!(
        head, rules,
        "rule lines must lead the go output: {lines:#?}"
    );
    lines
}

fn bestmove(lines: &[String]) -> &str {
    lines
        .last()
        .and_then(|l| l.strip_prefix("bestmove "))
        .and_then(|l| l.split_whitespace().next())
        .expect("bestmove line")
}

/// `go depth 1` at `position <spec>`: the position's rule lines must be
/// exactly `expected`, and the engine must answer a move of `legal`.
fn check_rules_and_move(spec: &str, expected: &[&str], legal: &str) {
    let mut e = engine_at(spec);
    let lines = go(&mut e, "depth 1");
    assert_eq!(
        position_rules(&lines),
        expected,
        "position {spec}: {lines:#?}"
    );
    let best = bestmove(&lines);
    assert!(
        moves(legal).contains(best),
        "position {spec}: bestmove {best} is not legal"
    );
}

/// The rule lines shown by `d`.
fn d_rules(e: &mut Engine) -> Vec<String> {
    e.ask("d").into_iter().filter(|l| is_rule_line(l)).collect()
}

/// The line of `d`'s board diagram for `rank` (1..=8).
fn d_rank(e: &mut Engine, rank: char) -> String {
    e.ask("d")
        .into_iter()
        .find(|l| l.starts_with(" |") && l.ends_with(&format!("| {rank}")))
        .unwrap_or_else(|| panic!("no diagram line for rank {rank}"))
}

/// The `Fen:` line of `d`.
fn d_fen(e: &mut Engine) -> String {
    e.ask("d")
        .into_iter()
        .find_map(|l| l.strip_prefix("Fen: ").map(String::from))
        .expect("Fen line")
}

const STARTPOS_MOVES: &str = "a2a3 a2a4 b1a3 b1c3 b2b3 b2b4 c2c3 c2c4 d2d3 d2d4 e2e3 e2e4 \
     f2f3 f2f4 g1f3 g1h3 g2g3 g2g4 h2h3 h2h4";

const SHUFFLE: &str = "g1f3 g8f6 f3g1 f6g8";

// ---------------------------------------------------------------------------
// Part A: castling
// ---------------------------------------------------------------------------

/// Both sides may castle both ways: the baseline the castling cases vary.
#[test]
fn castling_allowed_white() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 e1f1 e1f2 e1g1 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1g1", "e1c1"],
        &[],
    );
}

/// Condition 1: the king went e1-f1-e1 (and e8-f8-e8); returning does not
/// restore the rights.
#[test]
fn castling_lost_after_king_moved_and_back_white() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1f1 e8f8 f1e1 f8e8",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1d1 e1d2 e1e2 e1f1 e1f2 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &[],
        &["e1g1", "e1c1"],
    );
}

#[test]
fn castling_lost_after_king_moved_and_back_black() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1 moves e8d8 e1d1 d8e8 d1e1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8d7 e8d8 e8e7 e8f7 e8f8 \
         h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &[],
        &["e8g8", "e8c8"],
    );
}

/// Condition 1 for the rook: h1 went to h2 and back, so only the long
/// castle stays for White.
#[test]
fn castling_lost_after_rook_moved_and_back_white() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves h1h2 a8a7 h2h1 a7a8",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 e1f1 e1f2 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1c1"],
        &["e1g1"],
    );
}

/// Black's h8 rook went to h7 and back: only the long castle stays.
#[test]
fn castling_lost_after_rook_moved_and_back_black() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1 moves h8h7 a1a2 h7h8 a2a1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8c8 e8d7 e8d8 e8e7 e8f7 e8f8 \
         h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8c8"],
        &["e8g8"],
    );
}

/// Condition 2: a knight on b1 forbids the long castle although the king
/// never crosses b1.
#[test]
fn castling_long_needs_b1_empty() {
    check_legal(
        "fen 4k3/8/8/8/8/8/8/RN2K2R w KQ - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 b1a3 b1c3 b1d2 e1d1 e1d2 e1e2 e1f1 e1f2 e1g1 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1g1"],
        &["e1c1"],
    );
}

#[test]
fn castling_long_needs_b8_empty() {
    check_legal(
        "fen rn2k2r/8/8/8/8/8/8/4K3 b kq - 0 1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 b8a6 b8c6 b8d7 e8d7 e8d8 e8e7 e8f7 e8f8 e8g8 \
         h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8g8"],
        &["e8c8"],
    );
}

/// Condition 2: a bishop on f1 blocks the short castle.
#[test]
fn castling_short_needs_f1_empty() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3KB1R w KQkq - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 e1f2 \
         f1a6 f1b5 f1c4 f1d3 f1e2 f1g2 f1h3 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1c1"],
        &["e1g1"],
    );
}

/// Condition 2: a knight on g8 blocks Black's short castle.
#[test]
fn castling_short_needs_g8_empty() {
    check_legal(
        "fen r3k1nr/8/8/8/8/8/8/4K3 b kq - 0 1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8c8 e8d7 e8d8 e8e7 e8f7 e8f8 \
         g8e7 g8f6 g8h6 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8c8"],
        &["e8g8"],
    );
}

/// Condition 3: the rook on e5 checks; f1, g1, d1 and c1 are all safe, yet
/// neither castle is an answer to the check.
#[test]
fn castling_not_out_of_check_white() {
    check_legal(
        "fen r3k2r/8/8/4r3/8/8/8/R3K2R w KQ - 0 1",
        "e1d1 e1d2 e1f1 e1f2",
        &[],
        &["e1g1", "e1c1"],
    );
}

/// Condition 3 for Black: the bishop on b5 checks along b5-e8.
#[test]
fn castling_not_out_of_check_black() {
    check_legal(
        "fen r3k2r/8/8/1B6/8/8/8/4K3 b kq - 0 1",
        "e8d8 e8e7 e8f7 e8f8",
        &[],
        &["e8g8", "e8c8"],
    );
}

/// Condition 4: the rook on f8 attacks f1, which the king would cross.
#[test]
fn castling_not_through_attacked_f1() {
    check_legal(
        "fen 4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1c1"],
        &["e1g1"],
    );
}

/// Condition 4: the rook on d8 attacks d1.
#[test]
fn castling_not_through_attacked_d1() {
    check_legal(
        "fen 3rk3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1e2 e1f1 e1f2 e1g1 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1g1"],
        &["e1c1"],
    );
}

/// Condition 4 for Black: the rook on f1 attacks f8.
#[test]
fn castling_not_through_attacked_f8() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/4KR2 b kq - 0 1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8c8 e8d7 e8d8 e8e7 \
         h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8c8"],
        &["e8g8"],
    );
}

/// Condition 4 for Black: the rook on d1 attacks d8.
#[test]
fn castling_not_through_attacked_d8() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/3RK3 b kq - 0 1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8e7 e8f7 e8f8 e8g8 \
         h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8g8"],
        &["e8c8"],
    );
}

/// Condition 5: the rook on g8 attacks g1, where the king would land.
#[test]
fn castling_not_onto_attacked_g1() {
    check_legal(
        "fen 4k1r1/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 e1f1 e1f2 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1c1"],
        &["e1g1"],
    );
}

/// Condition 5: the bishop on h6 attacks c1 (and d2).
#[test]
fn castling_not_onto_attacked_c1() {
    check_legal(
        "fen 4k3/8/7b/8/8/8/8/R3K2R w KQ - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1d1 e1e2 e1f1 e1f2 e1g1 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6",
        &["e1g1"],
        &["e1c1"],
    );
}

/// Condition 5 for Black: the rook on g1 attacks g8.
#[test]
fn castling_not_onto_attacked_g8() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/4K1R1 b kq - 0 1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8c8 e8d7 e8d8 e8e7 e8f7 e8f8 \
         h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8c8"],
        &["e8g8"],
    );
}

/// Condition 5 for Black: the bishop on a6 attacks c8.
#[test]
fn castling_not_onto_attacked_c8() {
    check_legal(
        "fen r3k2r/8/B7/8/8/8/8/4K3 b kq - 0 1",
        "a8a6 a8a7 a8b8 a8c8 a8d8 e8d7 e8d8 e8e7 e8f7 e8f8 e8g8 \
         h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8g8"],
        &["e8c8"],
    );
}

/// Conditions 1 and 6: the bishop takes the h1 rook, leaves, and another
/// rook comes to h1. The right went with the captured rook: the new rook on
/// h1 cannot castle, the a1 rook still can.
#[test]
fn castling_right_gone_with_captured_rook() {
    check_legal(
        "fen 4k3/8/8/7R/8/8/6b1/R3K2R b KQ - 0 1 moves g2h1 h5h2 h1d5 h2h1 e8d8",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 e1f1 e1f2 \
         h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1c1"],
        &["e1g1"],
    );
}

/// Allowed: the king was in check earlier (Bb4+ blocked by c3, bishop gone
/// back to f8) and never moved.
#[test]
fn castling_allowed_after_earlier_check_white() {
    check_legal(
        "fen 4k3/8/3b4/8/8/8/2P5/R3K2R b KQ - 0 1 moves d6b4 c2c3 b4f8",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 c3c4 e1c1 e1d1 e1d2 e1e2 e1f1 \
         e1f2 e1g1 h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1g1", "e1c1"],
        &[],
    );
}

/// Allowed for Black: Bb5+ blocked by c6, bishop gone back to f1.
#[test]
fn castling_allowed_after_earlier_check_black() {
    check_legal(
        "fen r3k2r/2p5/8/8/8/3B4/8/4K3 w kq - 0 1 moves d3b5 c7c6 b5f1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 c6c5 e8c8 e8d7 e8d8 e8e7 e8f7 \
         e8f8 e8g8 h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8g8", "e8c8"],
        &[],
    );
}

/// Allowed: both white rooks are attacked by the black rooks on the files.
#[test]
fn castling_allowed_with_attacked_rooks_white() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 e1f1 e1f2 \
         e1g1 h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1g1", "e1c1"],
        &[],
    );
}

#[test]
fn castling_allowed_with_attacked_rooks_black() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/R3K2R b kq - 0 1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8c8 e8d7 e8d8 e8e7 e8f7 e8f8 \
         e8g8 h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8g8", "e8c8"],
        &[],
    );
}

/// Allowed: the rook on b8 attacks b1, which the king does not cross.
#[test]
fn castling_long_allowed_with_attacked_b1() {
    check_legal(
        "fen 1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1c1 e1d1 e1d2 e1e2 e1f1 e1f2 \
         e1g1 h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1c1"],
        &[],
    );
}

/// Allowed: the rook on b1 attacks b8.
#[test]
fn castling_long_allowed_with_attacked_b8() {
    check_legal(
        "fen r3k2r/8/8/8/8/8/8/1R2K3 b kq - 0 1",
        "a8a1 a8a2 a8a3 a8a4 a8a5 a8a6 a8a7 a8b8 a8c8 a8d8 e8c8 e8d7 e8d8 e8e7 e8f7 e8f8 \
         e8g8 h8f8 h8g8 h8h1 h8h2 h8h3 h8h4 h8h5 h8h6 h8h7",
        &["e8c8"],
        &[],
    );
}

// ---------------------------------------------------------------------------
// Part A: en passant
// ---------------------------------------------------------------------------

/// 1.e4 d5 2.e5 f5: exf6 en passant is legal at once.
#[test]
fn en_passant_right_after_double_push_white() {
    check_legal(
        "startpos moves e2e4 d7d5 e4e5 f7f5",
        "a2a3 a2a4 b1a3 b1c3 b2b3 b2b4 c2c3 c2c4 d1e2 d1f3 d1g4 d1h5 d2d3 d2d4 e1e2 e5e6 \
         e5f6 f1a6 f1b5 f1c4 f1d3 f1e2 f2f3 f2f4 g1e2 g1f3 g1h3 g2g3 g2g4 h2h3 h2h4",
        &["e5f6"],
        &[],
    );
}

/// ... and one move later (3.Nc3 Nc6) the right has lapsed.
#[test]
fn en_passant_right_lapses_white() {
    check_legal(
        "startpos moves e2e4 d7d5 e4e5 f7f5 b1c3 b8c6",
        "a1b1 a2a3 a2a4 b2b3 b2b4 c3a4 c3b1 c3b5 c3d5 c3e2 c3e4 d1e2 d1f3 d1g4 d1h5 d2d3 \
         d2d4 e1e2 e5e6 f1a6 f1b5 f1c4 f1d3 f1e2 f2f3 f2f4 g1e2 g1f3 g1h3 g2g3 g2g4 h2h3 \
         h2h4",
        &[],
        &["e5f6"],
    );
}

/// Black's pawn on e4 may take d4 en passant right after d2d4.
#[test]
fn en_passant_right_after_double_push_black() {
    check_legal(
        "startpos moves g1f3 e7e5 f3g1 e5e4 d2d4",
        "a7a5 a7a6 b7b5 b7b6 b8a6 b8c6 c7c5 c7c6 d7d5 d7d6 d8e7 d8f6 d8g5 d8h4 e4d3 e4e3 \
         e8e7 f7f5 f7f6 f8a3 f8b4 f8c5 f8d6 f8e7 g7g5 g7g6 g8e7 g8f6 g8h6 h7h5 h7h6",
        &["e4d3"],
        &[],
    );
}

#[test]
fn en_passant_right_lapses_black() {
    check_legal(
        "startpos moves g1f3 e7e5 f3g1 e5e4 d2d4 b8c6 b1c3",
        "a7a5 a7a6 a8b8 b7b5 b7b6 c6a5 c6b4 c6b8 c6d4 c6e5 c6e7 d7d5 d7d6 d8e7 d8f6 d8g5 \
         d8h4 e4e3 e8e7 f7f5 f7f6 f8a3 f8b4 f8c5 f8d6 f8e7 g7g5 g7g6 g8e7 g8f6 g8h6 h7h5 \
         h7h6",
        &[],
        &["e4d3"],
    );
}

/// The horizontal pin: Ka5, d5 (just pushed), e5, rook h5. Taking en passant
/// would empty the rank between the king and the rook.
#[test]
fn en_passant_illegal_under_horizontal_pin() {
    check_legal(
        "fen 8/3p4/8/K3P2r/8/8/8/4k3 b - - 0 1 moves d7d5",
        "a5a4 a5a6 a5b4 a5b5 a5b6 e5e6",
        &["e5e6"],
        &["e5d6"],
    );
}

/// The control of the pin: with the rook on h4 the same capture is legal.
#[test]
fn en_passant_legal_without_the_pin() {
    check_legal(
        "fen 8/3p4/8/K3P3/7r/8/8/4k3 b - - 0 1 moves d7d5",
        "a5a6 a5b5 a5b6 e5d6 e5e6",
        &["e5d6"],
        &[],
    );
}

/// d7d5 checks the king on e4; exd6 en passant removes the checker.
#[test]
fn en_passant_captures_the_checking_pawn() {
    check_legal(
        "fen 4k3/3p4/8/4P3/4K3/8/8/8 b - - 0 1 moves d7d5",
        "e4d3 e4d4 e4d5 e4e3 e4f3 e4f4 e4f5 e5d6",
        &["e5d6"],
        &["e5e6"],
    );
}

// ---------------------------------------------------------------------------
// Part A: promotion, checks, pins, mate and stalemate
// ---------------------------------------------------------------------------

/// e7 promotes to all four pieces by advance (e8) and by capture (d8).
#[test]
fn promotion_white_push_and_capture() {
    check_legal(
        "fen 3r2k1/4P3/8/8/8/8/8/4K3 w - - 0 1",
        "e1e2 e1f1 e1f2 e7d8b e7d8n e7d8q e7d8r e7e8b e7e8n e7e8q e7e8r",
        &["e7e8q", "e7e8r", "e7e8b", "e7e8n", "e7d8q", "e7d8n"],
        &["e7e8", "e7d8", "e7e8k"],
    );
}

#[test]
fn promotion_black_push_and_capture() {
    check_legal(
        "fen 4k3/8/8/8/8/8/3p4/2R4K b - - 0 1",
        "d2c1b d2c1n d2c1q d2c1r d2d1b d2d1n d2d1q d2d1r e8d7 e8d8 e8e7 e8f7 e8f8",
        &["d2d1q", "d2d1r", "d2d1b", "d2d1n", "d2c1q", "d2c1n"],
        &["d2d1", "d2c1"],
    );
}

/// An upper-case promotion letter in a move list is accepted: e7e8Q makes a
/// queen that checks along the eighth rank.
#[test]
fn promotion_upper_case_queen_in_move_list() {
    let spec = "fen 3r2k1/4P3/8/8/8/8/8/4K3 w - - 0 1 moves e7e8Q";
    let mut e = engine_at(spec);
    assert_eq!(d_fen(&mut e), "3rQ1k1/8/8/8/8/8/8/4K3 b - - 0 1");
    assert_same_moves(&e.legal_moves(), "d8e8 g8g7 g8h7", spec);
}

/// e7e8N makes a knight (no check): the piece is the one named.
#[test]
fn promotion_upper_case_knight_in_move_list() {
    let spec = "fen 3r2k1/4P3/8/8/8/8/8/4K3 w - - 0 1 moves e7e8N";
    let mut e = engine_at(spec);
    assert_eq!(d_fen(&mut e), "3rN1k1/8/8/8/8/8/8/4K3 b - - 0 1");
    assert_same_moves(
        &e.legal_moves(),
        "d8a8 d8b8 d8c8 d8d1 d8d2 d8d3 d8d4 d8d5 d8d6 d8d7 d8e8 g8f7 g8f8 g8h7 g8h8",
        spec,
    );
}

/// Double check by the rook e1 and the knight d6: the rook a6 could take
/// the knight and the bishop f6 could block on e7, but only the king moves.
#[test]
fn double_check_only_king_moves() {
    check_legal(
        "fen 4k3/8/r2N1b2/8/8/8/8/4R1K1 b - - 0 1",
        "e8d7 e8d8 e8f8",
        &[],
        &["a6d6", "f6e7"],
    );
}

/// The knight on e7 is pinned to the king by the rook on e1: it has no move.
#[test]
fn pinned_knight_has_no_moves() {
    check_legal(
        "fen 4k3/4n3/8/8/8/8/8/4R1K1 b - - 0 1",
        "e8d7 e8d8 e8f7 e8f8",
        &[],
        &["e7c6", "e7g6", "e7d5", "e7f5", "e7c8", "e7g8"],
    );
}

/// The bishop on c6 is pinned on the a4-e8 diagonal: it moves only along it.
#[test]
fn pinned_bishop_moves_along_the_pin() {
    check_legal(
        "fen 4k3/8/2b5/8/B7/8/8/6K1 b - - 0 1",
        "c6a4 c6b5 c6d7 e8d7 e8d8 e8e7 e8f7 e8f8",
        &["c6a4", "c6b5", "c6d7"],
        &["c6b7", "c6d5", "c6e4"],
    );
}

fn assert_no_moves(spec: &str) {
    let mut e = engine_at(spec);
    let (moves, total) = e.perft(1);
    assert!(moves.is_empty(), "{spec}: {moves:?}");
    assert_eq!(total, 0, "{spec}");
}

/// Fool's mate: Black has mated, White has no move.
#[test]
fn checkmate_has_no_moves() {
    assert_no_moves("startpos moves f2f3 e7e5 g2g4 d8h4");
}

/// Scholar's mate: White has mated.
#[test]
fn checkmate_by_white_has_no_moves() {
    assert_no_moves("startpos moves e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7");
}

#[test]
fn stalemate_has_no_moves() {
    assert_no_moves("fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
}

// ---------------------------------------------------------------------------
// Part B: repetition
// ---------------------------------------------------------------------------

const THREEFOLD: &str = "info string draw claim: threefold repetition";
const PERPETUAL: &str = "info string draw claim: threefold repetition (perpetual check)";
const FIFTY: &str = "info string draw claim: fifty-move rule";
const FIVEFOLD: &str = "info string game over: fivefold repetition";
const SEVENTY_FIVE: &str = "info string game over: seventy-five-move rule";
const DEAD: &str = "info string game over: insufficient material";
const WHITE_MATES: &str = "info string game over: checkmate, white wins";
const BLACK_MATES: &str = "info string game over: checkmate, black wins";
const STALEMATE: &str = "info string game over: stalemate";

/// The start position stands for the second time: no claim yet.
#[test]
fn twofold_repetition_is_no_claim() {
    check_rules_and_move(&format!("startpos moves {SHUFFLE}"), &[], STARTPOS_MOVES);
}

/// The start position stands for the third time.
#[test]
fn threefold_repetition_claim() {
    check_rules_and_move(
        &format!("startpos moves {SHUFFLE} {SHUFFLE}"),
        &[THREEFOLD],
        STARTPOS_MOVES,
    );
}

/// After 1.e4 no black pawn can take en passant, so the position after 1.e4
/// (e3 square set) and the same position later (none) are one position:
/// the third occurrence comes after two knight cycles.
#[test]
fn repetition_ignores_an_en_passant_square_without_capture() {
    let ep_moves = "a7a5 a7a6 b7b5 b7b6 b8a6 b8c6 c7c5 c7c6 d7d5 d7d6 e7e5 e7e6 \
                    f7f5 f7f6 g7g5 g7g6 g8f6 g8h6 h7h5 h7h6";
    check_rules_and_move("startpos moves e2e4 g8f6 g1f3 f6g8 f3g1", &[], ep_moves);
    check_rules_and_move(
        "startpos moves e2e4 g8f6 g1f3 f6g8 f3g1 g8f6 g1f3 f6g8 f3g1",
        &[THREEFOLD],
        ep_moves,
    );
}

/// With a black pawn on d4, 1...d4 ... e2e4 allows d4xe3: that position
/// differs from the later ones without the right. Two knight cycles give
/// the same pieces only three times in all, twice without the right: no
/// claim; a third cycle makes it three times without the right.
#[test]
fn repetition_counts_an_en_passant_right_with_capture() {
    let start = "startpos moves g1f3 d7d5 f3g1 d5d4 e2e4";
    let cycle = "g8f6 g1f3 f6g8 f3g1";
    let mut e = engine_at(&format!("{start} {cycle} {cycle}"));
    let lines = go(&mut e, "depth 1");
    assert_eq!(position_rules(&lines), Vec::<&str>::new(), "{lines:#?}");
    set(&mut e, &format!("{start} {cycle} {cycle} {cycle}"));
    let lines = go(&mut e, "depth 1");
    assert_eq!(position_rules(&lines), [THREEFOLD], "{lines:#?}");
}

/// The kings go out and back: the position with castling rights (the FEN)
/// and the later ones without are different. Two cycles: no claim (with
/// rights ignored it would be the third time); three cycles: claim.
#[test]
fn repetition_counts_castling_rights() {
    let fen = "fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves";
    let cycle = "e1f1 e8f8 f1e1 f8e8";
    let mut e = engine_at(&format!("{fen} {cycle} {cycle}"));
    let lines = go(&mut e, "depth 1");
    assert_eq!(position_rules(&lines), Vec::<&str>::new(), "{lines:#?}");
    set(&mut e, &format!("{fen} {cycle} {cycle} {cycle}"));
    let lines = go(&mut e, "depth 1");
    assert_eq!(position_rules(&lines), [THREEFOLD], "{lines:#?}");
}

/// Every White move of the cycle checks: the claim names perpetual check.
#[test]
fn threefold_repetition_by_perpetual_check() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/Q7/8/4K3 w - - 0 1 moves a3a4 e8e7 a4a3 e7e8 a3a4 e8e7 a4a3 e7e8",
        &[PERPETUAL],
        "a3a1 a3a2 a3a4 a3a5 a3a6 a3a7 a3a8 a3b2 a3b3 a3b4 a3c1 a3c3 a3c5 a3d3 a3d6 a3e3 \
         a3e7 a3f3 a3f8 a3g3 a3h3 e1d1 e1d2 e1e2 e1f1 e1f2",
    );
}

/// One cycle of checks, one quiet cycle (Qb3, Qa3 give no check): a plain
/// threefold repetition.
#[test]
fn threefold_repetition_with_a_quiet_cycle_is_not_perpetual() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/Q7/8/4K3 w - - 0 1 moves a3a4 e8e7 a4a3 e7e8 a3b3 e8d8 b3a3 d8e8",
        &[THREEFOLD],
        "a3a1 a3a2 a3a4 a3a5 a3a6 a3a7 a3a8 a3b2 a3b3 a3b4 a3c1 a3c3 a3c5 a3d3 a3d6 a3e3 \
         a3e7 a3f3 a3f8 a3g3 a3h3 e1d1 e1d2 e1e2 e1f1 e1f2",
    );
}

/// The fifth occurrence ends the game; no claim is printed, and the engine
/// still answers a legal move.
#[test]
fn fivefold_repetition_ends_the_game() {
    check_rules_and_move(
        &format!("startpos moves {SHUFFLE} {SHUFFLE} {SHUFFLE} {SHUFFLE}"),
        &[FIVEFOLD],
        STARTPOS_MOVES,
    );
}

/// The fourth occurrence is still only a claim.
#[test]
fn fourfold_repetition_is_a_claim() {
    check_rules_and_move(
        &format!("startpos moves {SHUFFLE} {SHUFFLE} {SHUFFLE}"),
        &[THREEFOLD],
        STARTPOS_MOVES,
    );
}

// ---------------------------------------------------------------------------
// Part B: move clocks
// ---------------------------------------------------------------------------

const KR_K_BLACK_MOVES: &str = "e8d7 e8d8 e8e7 e8f7 e8f8";

#[test]
fn fifty_move_rule_not_at_99() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/7P/R3K3 w - - 99 80",
        &[],
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1d1 e1d2 e1e2 e1f1 e1f2 h2h3 h2h4",
    );
}

#[test]
fn fifty_move_rule_claim_at_100() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/8/R3K3 w - - 99 80 moves a1a2",
        &[FIFTY],
        KR_K_BLACK_MOVES,
    );
}

/// At 149 the fifty-move claim stands, the game is not over yet.
#[test]
fn fifty_move_claim_at_149() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/8/R3K3 b - - 149 80",
        &[FIFTY],
        KR_K_BLACK_MOVES,
    );
}

#[test]
fn seventy_five_move_rule_ends_the_game() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/8/R3K3 w - - 149 80 moves a1a2",
        &[SEVENTY_FIVE],
        KR_K_BLACK_MOVES,
    );
}

/// Ra8 mates with the move that brings the clock to 150: mate wins.
#[test]
fn checkmate_beats_the_seventy_five_move_rule() {
    let mut e = engine_at("fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 149 100 moves a1a8");
    let lines = go(&mut e, "depth 1");
    assert_eq!(
        lines,
        [WHITE_MATES, "info depth 0 score mate 0", "bestmove (none)"]
    );
}

// ---------------------------------------------------------------------------
// Part B: mate, stalemate, dead positions
// ---------------------------------------------------------------------------

#[test]
fn checkmate_white_wins_report() {
    let mut e = engine_at("startpos moves e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7");
    let lines = go(&mut e, "depth 1");
    assert_eq!(
        lines,
        [WHITE_MATES, "info depth 0 score mate 0", "bestmove (none)"]
    );
}

#[test]
fn checkmate_black_wins_report() {
    let mut e = engine_at("startpos moves f2f3 e7e5 g2g4 d8h4");
    let lines = go(&mut e, "depth 1");
    assert_eq!(
        lines,
        [BLACK_MATES, "info depth 0 score mate 0", "bestmove (none)"]
    );
}

#[test]
fn stalemate_report() {
    let mut e = engine_at("fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    let lines = go(&mut e, "depth 1");
    assert_eq!(
        lines,
        [STALEMATE, "info depth 0 score cp 0", "bestmove (none)"]
    );
}

#[test]
fn dead_position_king_v_king() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        &[DEAD],
        "e1d1 e1d2 e1e2 e1f1 e1f2",
    );
}

#[test]
fn dead_position_king_and_bishop_v_king() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/8/2B1K3 w - - 0 1",
        &[DEAD],
        "c1a3 c1b2 c1d2 c1e3 c1f4 c1g5 c1h6 e1d1 e1d2 e1e2 e1f1 e1f2",
    );
}

#[test]
fn dead_position_king_and_knight_v_king() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/8/1N2K3 b - - 0 1",
        &[DEAD],
        "e8d7 e8d8 e8e7 e8f7 e8f8",
    );
}

/// Bishops on c1 and f8: both on dark squares.
#[test]
fn dead_position_same_coloured_bishops() {
    check_rules_and_move(
        "fen 4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1",
        &[DEAD],
        "c1a3 c1b2 c1d2 c1e3 c1f4 c1g5 c1h6 e1d1 e1d2 e1e2 e1f1 e1f2",
    );
}

/// Bishops on c1 (dark) and c8 (light): a mate can still happen.
#[test]
fn opposite_coloured_bishops_are_not_dead() {
    check_rules_and_move(
        "fen 2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1",
        &[],
        "c1a3 c1b2 c1d2 c1e3 c1f4 c1g5 c1h6 e1d1 e1d2 e1e2 e1f1 e1f2",
    );
}

/// K+N+N v K cannot force mate, but a mate exists: not dead.
#[test]
fn two_knights_are_not_dead() {
    check_rules_and_move(
        "fen 4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1",
        &[],
        "b1a3 b1c3 b1d2 e1d1 e1d2 e1e2 e1f2 f1d2 f1e3 f1g3 f1h2",
    );
}

// ---------------------------------------------------------------------------
// Part B: claims after the engine's move
// ---------------------------------------------------------------------------

/// Nf6-g8 would bring the start position for the third time.
#[test]
fn threefold_claim_after_move() {
    let mut e = engine_at(&format!("startpos moves {SHUFFLE} g1f3 g8f6 f3g1"));
    let lines = go(&mut e, "depth 1 searchmoves f6g8");
    assert_eq!(position_rules(&lines), Vec::<&str>::new(), "{lines:#?}");
    assert_eq!(
        claims_after(&lines),
        ["info string draw claim: threefold repetition after f6g8"]
    );
    assert_eq!(bestmove(&lines), "f6g8");
}

/// ... while e7e5 (a pawn move) repeats nothing.
#[test]
fn no_claim_after_a_move_that_does_not_repeat() {
    let mut e = engine_at(&format!("startpos moves {SHUFFLE} g1f3 g8f6 f3g1"));
    let lines = go(&mut e, "depth 1 searchmoves e7e5");
    assert_eq!(claims_after(&lines), Vec::<&str>::new(), "{lines:#?}");
    assert_eq!(bestmove(&lines), "e7e5");
}

/// At clock 99 a quiet move completes the fifty moves; a pawn move does not.
#[test]
fn fifty_move_claim_after_move() {
    let mut e = engine_at("fen 4k3/8/8/8/8/8/7P/R3K3 w - - 99 80");
    let lines = go(&mut e, "depth 1 searchmoves a1a2");
    assert_eq!(position_rules(&lines), Vec::<&str>::new(), "{lines:#?}");
    assert_eq!(
        claims_after(&lines),
        ["info string draw claim: fifty-move rule after a1a2"]
    );
    assert_eq!(bestmove(&lines), "a1a2");

    let lines = go(&mut e, "depth 1 searchmoves h2h3");
    assert_eq!(claims_after(&lines), Vec::<&str>::new(), "{lines:#?}");
    assert_eq!(bestmove(&lines), "h2h3");
}

/// Ra8 mates at clock 100: a mate needs no claim. Ra7 would claim.
#[test]
fn no_claim_after_a_mating_move() {
    let mut e = engine_at("fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 100");
    let lines = go(&mut e, "depth 1 searchmoves a1a8");
    assert_eq!(claims_after(&lines), Vec::<&str>::new(), "{lines:#?}");
    assert_eq!(bestmove(&lines), "a1a8");

    let lines = go(&mut e, "depth 1 searchmoves a1a7");
    assert_eq!(
        claims_after(&lines),
        ["info string draw claim: fifty-move rule after a1a7"]
    );
    assert_eq!(bestmove(&lines), "a1a7");
}

/// A move that ends the game leaves nothing to claim (RULES.md §4: fivefold,
/// seventy-five moves and stalemate are automatic): no "after" line.
#[test]
fn no_claim_after_a_move_that_ends_the_game() {
    let cases = [
        // The move makes the clock 150.
        ("fen 4k3/8/8/8/8/8/8/R3K3 w - - 149 80", "a1a2"),
        // The move stalemates at clock 100.
        ("fen 7k/8/5K2/8/8/8/8/6Q1 w - - 99 80", "g1g6"),
        // The move brings the start position for the fifth time.
        (
            &format!("startpos moves {SHUFFLE} {SHUFFLE} {SHUFFLE} g1f3 g8f6 f3g1"),
            "f6g8",
        ),
    ];
    for (spec, m) in cases {
        let mut e = engine_at(spec);
        let lines = go(&mut e, &format!("depth 1 searchmoves {m}"));
        assert_eq!(
            claims_after(&lines),
            Vec::<&str>::new(),
            "position {spec}: {lines:#?}"
        );
        assert_eq!(bestmove(&lines), m, "position {spec}");
    }
}

/// Qa3+ brings the position for the third time and every White move of the
/// cycle was a check: the claim after the move names the perpetual check.
#[test]
fn perpetual_check_claim_after_move() {
    let mut e = engine_at(
        "fen 4k3/8/8/8/8/Q7/8/4K3 w - - 0 1 moves a3a4 e8e7 a4a3 e7e8 a3a4 e8e7 a4a3 e7e8 a3a4 e8e7",
    );
    let lines = go(&mut e, "depth 1 searchmoves a4a3");
    assert_eq!(
        claims_after(&lines),
        ["info string draw claim: threefold repetition (perpetual check) after a4a3"],
        "{lines:#?}"
    );
}

// ---------------------------------------------------------------------------
// Part B: `d` shows the rule lines
// ---------------------------------------------------------------------------

#[test]
fn display_shows_rule_lines() {
    let cases: [(&str, &[&str]); 6] = [
        ("startpos", &[]),
        (&format!("startpos moves {SHUFFLE} {SHUFFLE}"), &[THREEFOLD]),
        ("fen 4k3/8/8/8/8/8/8/R3K3 w - - 99 80 moves a1a2", &[FIFTY]),
        ("startpos moves f2f3 e7e5 g2g4 d8h4", &[BLACK_MATES]),
        ("fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", &[STALEMATE]),
        ("fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1", &[DEAD]),
    ];
    let mut e = Engine::start();
    for (spec, want) in cases {
        set(&mut e, spec);
        assert_eq!(d_rules(&mut e), want, "d at position {spec}");
    }
}

#[test]
fn display_shows_fivefold_and_perpetual() {
    let mut e = engine_at(&format!(
        "startpos moves {SHUFFLE} {SHUFFLE} {SHUFFLE} {SHUFFLE}"
    ));
    assert_eq!(d_rules(&mut e), [FIVEFOLD]);
    set(
        &mut e,
        "fen 4k3/8/8/8/8/Q7/8/4K3 w - - 0 1 moves a3a4 e8e7 a4a3 e7e8 a3a4 e8e7 a4a3 e7e8",
    );
    assert_eq!(d_rules(&mut e), [PERPETUAL]);
}

// ---------------------------------------------------------------------------
// Part C: Chess960 and castling notation
// ---------------------------------------------------------------------------

fn engine_960() -> Engine {
    let mut e = Engine::start();
    let out = e.ask("setoption name UCI_Chess960 value true");
    assert!(
        !out.iter().any(|l| l.starts_with("info string error")),
        "{out:?}"
    );
    e
}

fn check_legal_960(spec: &str, expected: &str, castles: &[&str]) {
    for m in castles {
        assert!(moves(expected).contains(*m), "test list lacks {m}");
    }
    let mut e = engine_960();
    set(&mut e, spec);
    assert_same_moves(&e.legal_moves(), expected, spec);
}

const RK2R_MOVES: &str = "a2a3 a2a4 b1a1 b1c1 b1e1 b2b3 b2b4 c2c3 c2c4 d2d3 d2d4 e1c1 e1d1 \
     e1f1 e1g1 e1h1 e2e3 e2e4 f2f3 f2f4 g2g3 g2g4 h2h3 h2h4";

/// King b1, rooks a1 and e1 (Shredder rights EAea): both castles are
/// written king-takes-rook, b1a1 and b1e1.
#[test]
fn chess960_castling_shredder_fen() {
    check_legal_960(
        "fen rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w EAea - 0 1",
        RK2R_MOVES,
        &["b1a1", "b1e1"],
    );
}

/// The same position with X-FEN rights (KQkq).
#[test]
fn chess960_castling_x_fen() {
    check_legal_960(
        "fen rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w KQkq - 0 1",
        RK2R_MOVES,
        &["b1a1", "b1e1"],
    );
}

/// Playing b1e1 puts the king on g1 and the rook on f1; Black may still
/// castle both ways (b8a8, b8e8).
#[test]
fn chess960_castling_in_move_list_short() {
    let mut e = engine_960();
    set(
        &mut e,
        "fen rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w EAea - 0 1 moves b1e1",
    );
    assert_eq!(d_rank(&mut e, '1'), " | R |   |   |   |   | R | K |   | 1");
    assert_same_moves(
        &e.legal_moves(),
        "a7a5 a7a6 b7b5 b7b6 b8a8 b8c8 b8e8 c7c5 c7c6 d7d5 d7d6 e7e5 e7e6 e8c8 e8d8 e8f8 \
         e8g8 e8h8 f7f5 f7f6 g7g5 g7g6 h7h5 h7h6",
        "after b1e1",
    );
}

/// Playing b1a1 puts the king on c1 and the rook on d1.
#[test]
fn chess960_castling_in_move_list_long() {
    let mut e = engine_960();
    set(
        &mut e,
        "fen rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w EAea - 0 1 moves b1a1",
    );
    assert_eq!(d_rank(&mut e, '1'), " |   |   | K | R | R |   |   |   | 1");
}

/// From the perft960 suite: king g1, rook h1 (HEhe). The king stays on g1,
/// the rook jumps to f1: written g1h1.
#[test]
fn chess960_castling_king_stays_put() {
    let fen = "fen qnbnr1kr/ppp1b1pp/4p3/3p1p2/8/2NPP3/PPP1BPPP/QNB1R1KR";
    let expected = "a2a3 a2a4 b1a3 b1d2 b2b3 b2b4 c1d2 c3a4 c3b5 c3d1 c3d5 c3e4 d3d4 e1d1 \
                    e1f1 e2d1 e2f1 e2f3 e2g4 e2h5 e3e4 f2f3 f2f4 g1f1 g1h1 g2g3 g2g4 h2h3 h2h4";
    check_legal_960(&format!("{fen} w HEhe - 1 9"), expected, &["g1h1"]);
    check_legal_960(&format!("{fen} w KQkq - 1 9"), expected, &["g1h1"]);
    let mut e = engine_960();
    set(&mut e, &format!("{fen} w HEhe - 1 9 moves g1h1"));
    assert_eq!(d_rank(&mut e, '1'), " | Q | N | B |   | R | R | K |   | 1");
    assert_same_moves(
        &e.legal_moves(),
        "a7a5 a7a6 b7b5 b7b6 b8a6 b8c6 b8d7 c7c5 c7c6 c8d7 d5d4 d8c6 d8f7 e6e5 e7a3 e7b4 \
         e7c5 e7d6 e7f6 e7f8 e7g5 e7h4 e8f8 f5f4 g7g5 g7g6 g8f7 g8f8 g8h8 h7h5 h7h6",
        "after g1h1",
    );
}

/// From the perft960 suite: king d1, rook c1 (GCgc). Castling d1c1 swaps
/// them: king c1, rook d1.
#[test]
fn chess960_castling_king_and_rook_swap() {
    check_legal_960(
        "fen n1rkbqrb/pp1ppp2/2n3p1/2p4p/P5PP/1P6/2PPPP2/NNRKBQRB w GCgc - 0 9",
        "a4a5 b1a3 b1c3 b3b4 c2c3 c2c4 d1c1 d2d3 d2d4 e2e3 e2e4 f1g2 f1h3 f2f3 f2f4 g1g2 \
         g1g3 g4g5 g4h5 h1c6 h1d5 h1e4 h1f3 h1g2",
        &["d1c1"],
    );
    let mut e = engine_960();
    set(
        &mut e,
        "fen n1rkbqrb/pp1ppp2/2n3p1/2p4p/P5PP/1P6/2PPPP2/NNRKBQRB w GCgc - 0 9 moves d1c1",
    );
    assert_eq!(d_rank(&mut e, '1'), " | N | N | K | R | B | Q | R | B | 1");
}

/// With UCI_Chess960 on, standard castling is written e1h1 / e1a1.
#[test]
fn chess960_option_writes_standard_castling_as_king_takes_rook() {
    check_legal_960(
        "fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 e1a1 e1d1 e1d2 e1e2 e1f1 e1f2 \
         e1h1 h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8",
        &["e1h1", "e1a1"],
    );
}

/// With UCI_Chess960 off, a move list may write castling king-takes-rook.
#[test]
fn standard_move_list_accepts_king_takes_rook_castling() {
    let mut e = engine_at("fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1h1 e8a8");
    assert_eq!(d_fen(&mut e), "2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2");
    assert_same_moves(
        &e.legal_moves(),
        "a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 a1b1 a1c1 a1d1 a1e1 f1b1 f1c1 f1d1 f1e1 f1f2 \
         f1f3 f1f4 f1f5 f1f6 f1f7 f1f8 g1f2 g1g2",
        "after e1h1 e8a8",
    );
}

/// The same from the start position (1.e4 e5 2.Nf3 Nc6 3.Bc4 Nf6 4.O-O).
#[test]
fn standard_game_accepts_king_takes_rook_castling() {
    let mut e = engine_at("startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1h1");
    assert_eq!(
        d_fen(&mut e),
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4"
    );
    let mut e = engine_at("startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1");
    assert_eq!(
        d_fen(&mut e),
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4"
    );
}

// ---------------------------------------------------------------------------
// Part D: an illegal move explained by the rule it breaks
// ---------------------------------------------------------------------------

/// `position <spec>` answers exactly `want`: the error line, then the reason.
fn check_reason(chess960: bool, spec: &str, want: &[&str]) {
    let mut e = Engine::start();
    if chess960 {
        assert!(
            e.ask("setoption name UCI_Chess960 value true").is_empty(),
            "UCI_Chess960"
        );
    }
    assert_eq!(e.ask(&format!("position {spec}")), want, "position {spec}");
}

#[test]
fn illegal_moves_are_explained() {
    let cases: &[(&str, &[&str])] = &[
        (
            "startpos moves e2e4 0000",
            &[
                "info string error: illegal move '0000' at ply 2; position set up to ply 1",
                "info string reason: 0000 means passing, and in chess a player may never pass: every turn must be a move.",
            ],
        ),
        (
            "startpos moves e3e4",
            &[
                "info string error: illegal move 'e3e4' at ply 1; position set up to ply 0",
                "info string reason: There is no piece on e3 to move.",
            ],
        ),
        (
            "startpos moves e7e5",
            &[
                "info string error: illegal move 'e7e5' at ply 1; position set up to ply 0",
                "info string reason: The piece on e7 is a black pawn, and it is White's turn: a player moves only their own pieces.",
            ],
        ),
        (
            "startpos moves g1g3",
            &[
                "info string error: illegal move 'g1g3' at ply 1; position set up to ply 0",
                "info string reason: A knight jumps in an L shape: two squares one way, then one square to the side, so the white knight on g1 cannot go to g3.",
            ],
        ),
        (
            "startpos moves c1g5",
            &[
                "info string error: illegal move 'c1g5' at ply 1; position set up to ply 0",
                "info string reason: The white bishop on c1 cannot get to g5: the white pawn on d2 is in the way, and only a knight can jump over pieces.",
            ],
        ),
        (
            "startpos moves a1a2",
            &[
                "info string error: illegal move 'a1a2' at ply 1; position set up to ply 0",
                "info string reason: The white rook on a1 cannot go to a2: the white pawn on a2 stands there, and a piece can never capture a piece of its own colour.",
            ],
        ),
        (
            "startpos moves e2e4 e7e5 e4e5",
            &[
                "info string error: illegal move 'e4e5' at ply 3; position set up to ply 2",
                "info string reason: The white pawn on e4 cannot move to e5: the black pawn on e5 stands there, and a pawn captures only diagonally, never straight ahead.",
            ],
        ),
        (
            "startpos moves e2e4 a7a6 e4e5 d7d5 h2h3 h7h6 e5d6",
            &[
                "info string error: illegal move 'e5d6' at ply 7; position set up to ply 6",
                "info string reason: The white pawn on e5 cannot capture en passant on d6: the black pawn on d5 made its two-square move at ply 4, and en passant is allowed only on the very next move, so that chance has passed.",
            ],
        ),
        (
            "fen 8/P7/8/8/8/8/8/k6K w - - 0 1 moves a7a8",
            &[
                "info string error: illegal move 'a7a8' at ply 1; position set up to ply 0",
                "info string reason: The white pawn on a7 reaches the last rank on a8, so it must be promoted: add the letter of the new piece, for example a7a8q (q queen, r rook, b bishop, n knight).",
            ],
        ),
        (
            "fen 8/P7/8/8/8/8/8/k6K w - - 0 1 moves a7a8k",
            &[
                "info string error: illegal move 'a7a8k' at ply 1; position set up to ply 0",
                "info string reason: A pawn that reaches the last rank must become a queen, a rook, a bishop or a knight, never a king: a7a8k is not allowed.",
            ],
        ),
        (
            "startpos moves e2e4q",
            &[
                "info string error: illegal move 'e2e4q' at ply 1; position set up to ply 0",
                "info string reason: A pawn is promoted only when it reaches the last rank, and e4 is not the last rank for the white pawn on e2: leave out the 'q' at the end.",
            ],
        ),
        (
            "fen 4k3/8/8/8/1b6/8/3r4/4K3 w - - 0 1 moves e1f2",
            &[
                "info string error: illegal move 'e1f2' at ply 1; position set up to ply 0",
                "info string reason: The white king on e1 cannot go to f2: the black rook on d2 attacks f2, and a king may never move onto a square where it would be in check.",
            ],
        ),
        (
            "fen 4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1 moves d2f3",
            &[
                "info string error: illegal move 'd2f3' at ply 1; position set up to ply 0",
                "info string reason: The white knight on d2 is pinned: it stands between the white king on e1 and the black bishop on b4, so moving it to f3 would leave the king in check, and a player may never leave their own king in check.",
            ],
        ),
        (
            "fen 4k3/8/8/8/4B3/1N6/3PP3/r3K3 w - - 0 1 moves d2d3",
            &[
                "info string error: illegal move 'd2d3' at ply 1; position set up to ply 0",
                "info string reason: The white king on e1 is in check from the black rook on a1, and d2d3 does not get it out of check: a check must be answered at once.",
                "info string reason: The moves that answer the check: king moves e1f2; blocks b3c1, e4b1; captures b3a1.",
            ],
        ),
        (
            "startpos moves g1f3 g8f6 h1g1 h8g8 g1h1 g8h8 e2e4 e7e5 f1c4 f8c5 e1g1",
            &[
                "info string error: illegal move 'e1g1' at ply 11; position set up to ply 10",
                "info string reason: White cannot castle kingside: the rook from h1 moved at ply 3 (h1g1), and a rook that has moved may never castle, even after going back.",
            ],
        ),
        (
            "fen 4k3/8/8/8/2b5/8/8/R3K2R w KQ - 0 1 moves e1g1",
            &[
                "info string error: illegal move 'e1g1' at ply 1; position set up to ply 0",
                "info string reason: White cannot castle kingside: the king would pass over f1, which the black bishop on c4 attacks, and a castling king may not cross an attacked square.",
            ],
        ),
        (
            "startpos moves f2f3 e7e5 g2g4 d8h4 e2e4",
            &[
                "info string error: illegal move 'e2e4' at ply 5; position set up to ply 4",
                "info string reason: The game is over: White is checkmated (at ply 4) and Black has won, so no more moves can be played.",
            ],
        ),
    ];
    for (spec, want) in cases {
        check_reason(false, spec, want);
    }
    // Chess960: king-takes-rook castling with the f1 rook in the way.
    check_reason(
        true,
        "fen bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9 moves g1h1",
        &[
            "info string error: illegal move 'g1h1' at ply 1; position set up to ply 0",
            "info string reason: White cannot castle kingside: the white rook on f1 is in the way, and every square the king and the rook pass over or land on must be empty.",
        ],
    );
    // Text that is no move keeps its one error line.
    check_reason(
        false,
        "startpos moves e2e4 xyz",
        &["info string error: unparsable move 'xyz' at ply 2; position set up to ply 1"],
    );
}
