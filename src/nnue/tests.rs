//! Properties of the whole: incremental accumulators equal fresh ones along
//! random legal games (Chess960 castling, en passant and promotions
//! included) and along a simulated search with null moves and lazy
//! evaluation; colour-mirrored positions score alike.

use super::*;
use crate::nnue::features::Change;
use crate::rng::SplitMix64;
use proptest::prelude::*;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Move, Position, Setup};
use std::sync::LazyLock;

static NET: LazyLock<Network> = LazyLock::new(|| Network::random(11, 256));

/// A net whose kings choose its inputs: 4 king buckets with mirroring, so
/// that king moves change views (rebuilt through the refresh cache).
static KING_NET: LazyLock<Network> = LazyLock::new(|| {
    let kings = format::Kings::preset(4, true).expect("a preset");
    Network::random_shaped(12, 64, 2, kings)
});

/// Start positions rich in what the updates must get right.
const STARTS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    // Kiwipete: castling both ways, en passant, promotions near.
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    // Pawns side by side after double steps: en passant.
    "4k3/1p1p1p1p/8/P1P1P1P1/8/8/8/4K3 w - - 0 1",
    "4k3/8/8/8/1p1p1p1p/8/P1P1P1P1/4K3 w - - 0 1",
    // Promotions, with capture after the first ones.
    "8/PPPPPPPP/8/k7/7K/8/pppppppp/8 w - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
];

/// Chess960 start position number `n` (0..960), Scharnagl's numbering.
fn chess960(n: usize) -> Chess {
    let mut rank = [None::<char>; 8];
    let mut n = n % 960;
    rank[2 * (n % 4) + 1] = Some('B');
    n /= 4;
    rank[2 * (n % 4)] = Some('B');
    n /= 4;
    let place = |rank: &mut [Option<char>; 8], k: usize, c: char| {
        let at = (0..8).filter(|&i| rank[i].is_none()).nth(k).expect("room");
        rank[at] = Some(c);
    };
    place(&mut rank, n % 6, 'Q');
    n /= 6;
    let (a, b) = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ][n];
    place(&mut rank, b, 'N');
    place(&mut rank, a, 'N');
    for c in ['R', 'K', 'R'] {
        place(&mut rank, 0, c);
    }
    let white: String = rank.iter().map(|c| c.expect("full")).collect();
    let files: String = rank
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == Some('R'))
        .map(|(i, _)| (b'a' + i as u8) as char)
        .collect();
    let fen = format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {}{files} - 0 1",
        white.to_lowercase(),
        files.to_uppercase()
    );
    position(&fen, CastlingMode::Chess960)
}

fn position(fen: &str, mode: CastlingMode) -> Chess {
    fen.parse::<Fen>()
        .expect("fen")
        .into_position(mode)
        .unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// SplitMix64's draws taken modulo n (0 for n = 0), the way these tests'
/// positions have always been drawn.
struct Rng(SplitMix64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n.max(1) as u64) as usize
    }
}

/// A random legal move, favouring the rare kinds: half the time castling or
/// en passant when there is one, else half the time a promotion or capture.
fn random_move(pos: &Chess, rng: &mut Rng) -> Option<Move> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let rare: Vec<Move> = moves
        .iter()
        .copied()
        .filter(|m| m.is_castle() || m.is_en_passant())
        .collect();
    if !rare.is_empty() && rng.below(2) == 0 {
        return Some(rare[rng.below(rare.len())]);
    }
    let special: Vec<Move> = moves
        .iter()
        .copied()
        .filter(|m| m.is_promotion() || m.is_capture())
        .collect();
    if !special.is_empty() && rng.below(2) == 0 {
        return Some(special[rng.below(special.len())]);
    }
    Some(moves[rng.below(moves.len())])
}

fn start(index: usize, rng: &mut Rng) -> Chess {
    match STARTS.get(index) {
        Some(fen) => position(fen, CastlingMode::Standard),
        None => chess960(rng.below(960)),
    }
}

/// Counts of the special moves the tests played, to see they were played.
#[derive(Default, Debug)]
struct Seen {
    positions: usize,
    castles: usize,
    en_passant: usize,
    promotions: usize,
    /// King moves that changed their side's view (king bucket or flip).
    view_changes: usize,
}

impl Seen {
    fn count(&mut self, m: Move) {
        self.positions += 1;
        self.castles += usize::from(m.is_castle());
        self.en_passant += usize::from(m.is_en_passant());
        self.promotions += usize::from(m.is_promotion());
    }
}

/// One random game: the accumulator updated move by move equals the one
/// built from scratch after every move.
fn play_incrementally(net: &Network, start_index: usize, seed: u64, seen: &mut Seen) {
    let mut rng = Rng::new(seed);
    let mut pos = start(start_index, &mut rng);
    let mut acc = Accumulator::new(net, pos.board());
    for _ in 0..160 {
        let Some(m) = random_move(&pos, &mut rng) else {
            break;
        };
        let (turn, change) = (pos.turn(), Change::of(pos.turn(), m));
        let view = net.view(pos.board(), turn);
        pos.play_unchecked(m);
        acc.apply(net, &change, pos.board());
        seen.view_changes += usize::from(net.view(pos.board(), turn) != view);
        seen.count(m);
        let fresh = Accumulator::new(net, pos.board());
        assert_eq!(
            acc,
            fresh,
            "{} after {m:?}",
            Fen::from_position(&pos, shakmaty::EnPassantMode::Always)
        );
    }
}

/// A search-like walk: down by moves and null moves, back up, evaluating
/// now and then (lazily); every evaluation equals one from scratch.
fn walk_the_stack(net: &Network, start_index: usize, seed: u64, seen: &mut Seen) {
    let mut rng = Rng::new(seed ^ 0xabcd);
    let root = start(start_index, &mut rng);
    let plies = 24;
    let mut stack = AccumulatorStack::new(net, plies);
    stack.reset(net, root.board());
    let mut path = vec![root];
    for _ in 0..400 {
        let ply = path.len() - 1;
        let pos = path[ply].clone();
        let down = ply + 1 < plies + 2 && rng.below(10) < 6;
        if down {
            if !pos.is_check() && rng.below(8) == 0 {
                if let Ok(null) = pos.clone().swap_turn() {
                    stack.push_null(ply);
                    path.push(null);
                }
            } else if let Some(m) = random_move(&pos, &mut rng) {
                let mut child = pos.clone();
                child.play_unchecked(m);
                stack.push_move(ply, pos.turn(), m, child.board());
                seen.count(m);
                path.push(child);
            }
        } else if ply > 0 {
            path.pop();
        }
        let ply = path.len() - 1;
        let pos = &path[ply];
        if rng.below(3) == 0 {
            let fresh = Accumulator::new(net, pos.board());
            assert_eq!(
                stack.evaluate(net, ply, pos),
                fresh.evaluate(net, pos.turn(), accumulator::pieces(pos))
            );
            if ply < plies {
                let values = stack.materialise(net, ply).expect("in room");
                assert_eq!(&values[..net.hidden()], fresh.white());
                assert_eq!(&values[net.hidden()..], fresh.black());
            } else {
                assert_eq!(stack.materialise(net, ply), None);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn incremental_accumulators_equal_fresh_ones(start in 0usize..10, seed in any::<u64>()) {
        let mut seen = Seen::default();
        for net in [&*NET, &*KING_NET] {
            play_incrementally(net, start, seed, &mut seen);
            walk_the_stack(net, start, seed, &mut seen);
        }
    }
}

/// The same properties over fixed seeds, with counts that show the special
/// moves were played: thousands of positions.
#[test]
fn thousands_of_positions_with_every_kind_of_move() {
    for net in [&*NET, &*KING_NET] {
        let mut seen = Seen::default();
        for seed in 0..40u64 {
            let start_index = (seed % 10) as usize;
            play_incrementally(net, start_index, seed, &mut seen);
            walk_the_stack(net, start_index, seed, &mut seen);
        }
        eprintln!("{net:?}: {seen:?}");
        assert!(seen.positions >= 5000, "{seen:?}");
        assert!(seen.castles >= 20, "{seen:?}");
        assert!(seen.en_passant >= 20, "{seen:?}");
        assert!(seen.promotions >= 20, "{seen:?}");
        if net.kings_choose_inputs() {
            assert!(seen.view_changes >= 100, "{seen:?}");
        } else {
            assert_eq!(seen.view_changes, 0);
        }
    }
}

#[test]
fn chess960_numbering_gives_the_known_positions() {
    // Scharnagl's table: 518 is the standard position, 0 is BBQNNRKR.
    let fen = |n| Fen::from_position(&chess960(n), shakmaty::EnPassantMode::Legal).to_string();
    assert!(
        fen(518).starts_with("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w"),
        "{}",
        fen(518)
    );
    assert!(fen(0).starts_with("bbqnnrkr/"), "{}", fen(0));
}

/// `pos` turned upside down with the colours swapped (castling rights and
/// en passant square mirrored too): the same position for the other side.
fn mirrored(pos: &Chess) -> Chess {
    let mut setup: Setup = pos.to_setup(shakmaty::EnPassantMode::Legal);
    setup.mirror();
    setup
        .position(CastlingMode::Chess960)
        .expect("the mirror of a legal position is legal")
}

#[test]
fn mirrored_positions_get_the_same_score() {
    let net = &*NET;
    let mut rng = Rng::new(5);
    let mut checked = 0;
    for start_index in 0..10 {
        let mut pos = start(start_index, &mut rng);
        for _ in 0..60 {
            let twin = mirrored(&pos);
            assert_ne!(twin.turn(), pos.turn());
            let (a, b) = (
                Accumulator::new(net, pos.board()),
                Accumulator::new(net, twin.board()),
            );
            // Each side's view of one is the other side's view of the twin.
            assert_eq!(a.white(), b.black());
            assert_eq!(a.black(), b.white());
            assert_eq!(evaluate(net, &pos), evaluate(net, &twin));
            assert_eq!(
                a.evaluate(net, pos.turn(), accumulator::pieces(&pos)),
                b.evaluate(net, twin.turn(), accumulator::pieces(&twin)),
            );
            checked += 1;
            let Some(m) = random_move(&pos, &mut rng) else {
                break;
            };
            pos.play_unchecked(m);
        }
    }
    assert!(checked > 400, "{checked}");
    // Not trivially so: the score depends on the side to move.
    let e4 = position(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        CastlingMode::Standard,
    );
    let passed = e4.clone().swap_turn().expect("legal");
    assert_ne!(evaluate(net, &e4), evaluate(net, &passed));
}

#[test]
fn known_endgames_rule_over_the_net() {
    let net = &*NET;
    // KPK, a win for White (the KPK rule scores it 700 + 20·rank).
    let kpk = position("4k3/8/8/8/8/4K3/4P3/8 w - - 0 1", CastlingMode::Standard);
    assert_eq!(
        evaluate(net, &kpk),
        crate::endgames::known_endgame(&kpk).expect("known")
    );
    // A lone king against a knight: a draw.
    let kn = position("4k3/8/8/8/8/8/8/3NK3 w - - 0 1", CastlingMode::Standard);
    assert_eq!(evaluate(net, &kn), 0);
}

#[test]
fn net_scores_are_clamped_below_the_mate_range() {
    let n = 16;
    let huge = Network::from_parts(
        n,
        vec![0; network::INPUTS * n],
        vec![0; n],
        vec![0; 2 * n],
        vec![i32::MAX],
    )
    .expect("net");
    let pos = Chess::default();
    assert_eq!(evaluate(&huge, &pos), MAX_EVAL);
}

#[test]
fn the_embedded_net_parses() {
    // `embedded` relies on it.
    let parsed = Network::from_bytes(EMBEDDED).expect("the embedded net parses");
    assert!(*embedded() == parsed);
    assert_eq!(resolve("").map(|n| *n == parsed), Ok(true));
    assert!(matches!(
        resolve("/no/such/file.nnue"),
        Err(NetError::Io(_))
    ));
}

/// The check `build.rs` makes of `EVALFILE` (the same function, included by
/// path there) passes the net built in and fails a net of another version
/// or shape, naming what is wrong: what a build given such a net prints.
#[test]
fn the_build_time_check_is_the_load_time_check() {
    assert_eq!(format::check(EMBEDDED), Ok(embedded().shape()));
    let mut other_version = EMBEDDED.to_vec();
    other_version[8] = 4;
    let err = format::check(&other_version).expect_err("version 4");
    assert_eq!(err, NetError::BadVersion { found: 4 });
    assert_eq!(
        err.to_string(),
        "net version 4 is not supported (expected 1, 2 or 3)"
    );
    // A net of hidden size 64 whose file has the length of another size.
    let mut wrong_shape = Network::random(5, 64).to_bytes();
    let v1 = |hidden| {
        format::Shape {
            hidden,
            buckets: 1,
            kings: format::Kings::NONE,
        }
        .file_len()
    };
    wrong_shape.truncate(v1(32));
    assert_eq!(
        format::check(&wrong_shape),
        Err(NetError::BadLength {
            found: v1(32),
            expected: v1(64)
        })
    );
    assert_eq!(
        format::check(&Network::random(5, 64).to_bytes()),
        Ok(format::Shape {
            hidden: 64,
            buckets: 1,
            kings: format::Kings::NONE,
        })
    );
    assert!(matches!(
        format::check(b"not a net"),
        Err(NetError::TooShort { len: 9 })
    ));
}
