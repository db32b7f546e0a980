//! `Engine::search` in process: the typed reports a listener receives (as
//! the UCI controller receives them, before any text is made) and the
//! result, checked against answers known independently of the engine.
//!
//! Every mate below is found again here by a brute-force search over
//! shakmaty's legal moves (`mates_within`), which shares nothing with the
//! engine; the positions are also among those engine-tests/search.rs checks
//! against Stockfish 15.1. One thread and a fresh engine per test: the
//! searches are deterministic, and each takes milliseconds.

use super::report::{Listener, PvReport, Score, SearchResult};
use super::{Engine, SearchLimits, SearchRequest, Signals};
use crate::game::Game;
use crate::score::MATE;
use shakmaty::{CastlingMode, Chess, Move, Position};
use std::sync::Mutex;

/// One `on_pv` report, owned.
#[derive(Clone, Debug)]
struct Line {
    depth: i32,
    multipv: usize,
    score: Score,
    nodes: u64,
    pv: Vec<Move>,
}

/// A listener that keeps everything it is told.
#[derive(Default)]
struct Capture {
    lines: Mutex<Vec<Line>>,
    /// `Some(in_check)` once told the root has no legal move.
    no_legal_moves: Mutex<Option<bool>>,
}

impl Listener for Capture {
    fn on_pv(&self, line: &PvReport<'_>) {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.push(Line {
            depth: line.depth,
            multipv: line.multipv,
            score: line.score,
            nodes: line.nodes,
            pv: line.pv.to_vec(),
        });
    }

    fn on_no_legal_moves(&self, in_check: bool) {
        *self
            .no_legal_moves
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(in_check);
    }
}

fn game(fen: &str) -> Game {
    Game::from_fen(fen, CastlingMode::Standard).expect("test FEN")
}

fn mv(game: &Game, uci: &str) -> Move {
    game.parse_move(uci).expect("a legal test move")
}

/// Runs `request` on a fresh one-thread engine; the result and every line
/// reported, in order.
fn run(request: &SearchRequest) -> (SearchResult, Vec<Line>) {
    let engine = Engine::new(1, 16).expect("an engine");
    let capture = Capture::default();
    let result = engine.search(request, &capture, &Signals::default());
    let lines = capture
        .lines
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    (result, lines)
}

fn to_depth(game: Game, depth: u32) -> SearchRequest {
    let limits = SearchLimits {
        depth: Some(depth),
        ..SearchLimits::default()
    };
    SearchRequest::new(game, limits)
}

/// The lines of the last iteration reported, by multipv.
fn last_iteration(lines: &[Line]) -> Vec<Line> {
    let depth = lines.last().map_or(0, |l| l.depth);
    let mut last: Vec<Line> = Vec::new();
    for line in lines.iter().filter(|l| l.depth == depth) {
        match last.iter_mut().find(|l| l.multipv == line.multipv) {
            Some(kept) => *kept = line.clone(),
            None => last.push(line.clone()),
        }
    }
    last.sort_by_key(|l| l.multipv);
    last
}

/// Whether the side to move of `pos`, playing `m`, mates in at most `n`
/// moves whatever the defence: brute force over shakmaty's legal moves.
fn mates_within(pos: &Chess, m: Move, n: u32) -> bool {
    let mut after = pos.clone();
    after.play_unchecked(m);
    let replies = after.legal_moves();
    if replies.is_empty() {
        return after.is_check();
    }
    n > 1
        && replies.iter().all(|&reply| {
            let mut next = after.clone();
            next.play_unchecked(reply);
            next.legal_moves()
                .iter()
                .any(|&again| mates_within(&next, again, n - 1))
        })
}

/// The moves of `game` that mate in exactly `n` (in `n` and not sooner),
/// as UCI text, sorted.
fn mates_in_exactly(game: &Game, n: u32) -> Vec<String> {
    let pos = game.position();
    let mut moves: Vec<String> = pos
        .legal_moves()
        .iter()
        .filter(|&&m| mates_within(pos, m, n) && (n == 1 || !mates_within(pos, m, n - 1)))
        .map(|&m| game.to_uci(m))
        .collect();
    moves.sort();
    moves
}

/// Plays `pv` from `game`'s position; false at the first illegal move.
fn legal_line(game: &Game, pv: &[Move]) -> bool {
    let mut pos = game.position().clone();
    pv.iter().all(|&m| {
        let legal = pos.is_legal(m);
        if legal {
            pos.play_unchecked(m);
        }
        legal
    })
}

/// A mate in `n` by its only mating move: the result and the last line say
/// so, with the mate score the search defines (`MATE - plies`).
fn finds_the_only_mate(fen: &str, n: u32, uci: &str, depth: u32) {
    let g = game(fen);
    assert_eq!(
        mates_in_exactly(&g, n),
        vec![uci],
        "{fen}: the test's own answer"
    );
    for shorter in 1..n {
        assert!(mates_in_exactly(&g, shorter).is_empty(), "{fen}");
    }
    let (result, lines) = run(&to_depth(g.clone(), depth));
    let plies = 2 * n as i32 - 1;
    assert_eq!(result.best, Some(mv(&g, uci)), "{fen}");
    assert_eq!(result.score, Some(MATE - plies), "{fen}");
    assert_eq!(result.depth, depth as i32, "{fen}");
    let last = lines.last().expect("a reported line");
    assert_eq!(last.score, Score::Mate(n as i32), "{fen}");
    assert_eq!(last.pv.first(), Some(&mv(&g, uci)), "{fen}");
    assert!(legal_line(&g, &last.pv), "{fen}: {:?}", last.pv);
}

#[test]
fn a_mate_in_one() {
    // The back-rank mate: Ra8#.
    finds_the_only_mate("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 1, "a1a8", 4);
}

#[test]
fn mates_in_two() {
    // Morphy's problem: 1.Ra6! bxa6 2.b7#.
    finds_the_only_mate("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", 2, "a1a6", 6);
    // Legal's mate: 1.Bxf7+ Ke7 2.Nd5#.
    let legal = "r2qkbnr/ppp2p1p/2np2p1/4N3/2B1P3/2N5/PPPP1PPP/R1BbK2R w KQkq - 0 6";
    finds_the_only_mate(legal, 2, "c4f7", 6);
}

/// King and rook against the king in the corner: Rh8 is the only mate in
/// one, and several moves mate in two (the test works out which).
const CORNER: &str = "k7/8/1K6/8/8/8/8/7R w - - 0 1";

#[test]
fn multipv_three_lines_are_ordered_by_score() {
    let g = game(CORNER);
    assert_eq!(mates_in_exactly(&g, 1), vec!["h1h8"]);
    let in_two = mates_in_exactly(&g, 2);
    assert!(in_two.len() >= 2, "{in_two:?}");
    let request = SearchRequest {
        multipv: 3,
        ..to_depth(g.clone(), 5)
    };
    let (result, lines) = run(&request);
    assert_eq!(result.best, Some(mv(&g, "h1h8")));
    let last = last_iteration(&lines);
    let multipvs: Vec<usize> = last.iter().map(|l| l.multipv).collect();
    assert_eq!(multipvs, vec![1, 2, 3]);
    let scores: Vec<Score> = last.iter().map(|l| l.score).collect();
    assert_eq!(scores, vec![Score::Mate(1), Score::Mate(2), Score::Mate(2)]);
    assert_eq!(g.to_uci(last[0].pv[0]), "h1h8");
    for line in &last[1..] {
        let first = g.to_uci(line.pv[0]);
        assert!(in_two.contains(&first), "{first} is no mate in two");
    }
    assert_ne!(last[1].pv[0], last[2].pv[0], "two lines, two first moves");
}

#[test]
fn searchmoves_restrict_the_root() {
    // Without Rh8 the best is a mate in two, by one of the moves allowed.
    let g = game(CORNER);
    let allowed = ["h1h2", "b6c7"];
    let in_two = mates_in_exactly(&g, 2);
    assert!(allowed.iter().all(|m| in_two.contains(&m.to_string())));
    let request = SearchRequest {
        searchmoves: allowed.iter().map(|m| mv(&g, m)).collect(),
        ..to_depth(g.clone(), 5)
    };
    let (result, lines) = run(&request);
    let best = result.best.map(|m| g.to_uci(m)).unwrap_or_default();
    assert!(allowed.contains(&best.as_str()), "{best}");
    assert_eq!(result.score, Some(MATE - 3));
    assert!(!lines.is_empty());
    for line in &lines {
        let first = g.to_uci(line.pv[0]);
        assert!(allowed.contains(&first.as_str()), "{first} reported");
        assert_ne!(line.score, Score::Mate(1));
    }
}

#[test]
fn a_node_limit_is_honoured() {
    // One thread: the main worker compares every node with the limit (see
    // `Worker::tick`) and stops at it once an iteration is complete; the
    // nodes entered while the search unwinds are the only slack.
    const LIMIT: u64 = 5_000;
    const SLACK: u64 = 64;
    let limits = SearchLimits {
        nodes: Some(LIMIT),
        ..SearchLimits::default()
    };
    let (result, lines) = run(&SearchRequest::new(Game::default(), limits));
    assert!(
        (LIMIT..=LIMIT + SLACK).contains(&result.nodes),
        "{} nodes",
        result.nodes
    );
    let last = lines.last().expect("a reported line");
    assert_eq!(
        last.nodes, result.nodes,
        "the last line has the final count"
    );
    assert!(lines.iter().all(|l| l.nodes <= result.nodes));
    assert!(result.best.is_some());
}

#[test]
fn a_depth_limit_is_reached_exactly() {
    let (result, lines) = run(&to_depth(Game::default(), 5));
    assert_eq!(result.depth, 5);
    let depths: Vec<i32> = lines.iter().map(|l| l.depth).collect();
    assert_eq!(depths.iter().max(), Some(&5), "{depths:?}");
    for depth in 1..=5 {
        assert!(depths.contains(&depth), "depth {depth} never reported");
    }
    assert!(depths.windows(2).all(|w| w[0] <= w[1]), "{depths:?}");
    let best = result.best.expect("a move");
    assert_eq!(lines.last().map(|l| l.pv[0]), Some(best));
}

#[test]
fn no_legal_move_is_told_and_no_move_is_played() {
    // After Fool's mate White is checkmated.
    let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
    let engine = Engine::new(1, 16).expect("an engine");
    let capture = Capture::default();
    let result = engine.search(&to_depth(game(mated), 3), &capture, &Signals::default());
    assert_eq!(result.best, None);
    assert_eq!(result.score, None);
    assert_eq!(*capture.no_legal_moves.lock().expect("lock"), Some(true));
    assert!(capture.lines.lock().expect("lock").is_empty());
}
