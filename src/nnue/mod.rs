//! NNUE evaluation: a (768·K→N)×2→B net with SCReLU, its file format and
//! integer arithmetic fixed by NNUE-SPEC.md (versions 1 to 3), shared with the
//! trainer. `Network` holds a net; `Accumulator` and `AccumulatorStack` hold
//! its first layer for a position and along a search path; `simd` has the
//! hot loops. The search evaluates with the net compiled in (`EMBEDDED`)
//! unless UCI `EvalFile` or `--net` names another; the known endgames of
//! `crate::endgames` rule over any net.

pub mod accumulator;
pub mod features;
pub mod format;
pub mod network;
pub mod simd;

pub use accumulator::{Accumulator, AccumulatorStack};
pub use network::{NetError, Network};

use crate::score::MAX_EVAL;
use shakmaty::{Chess, Color, Position};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The net compiled into the binary, the default evaluation: the file
/// `EVALFILE` named at build time, by default `nets/qilin-net-3.nnue`
/// (`nets/README.md` says how it was made and measured). `build.rs` has
/// checked it with `format::check`.
const EMBEDDED: &[u8] = include_bytes!(env!("QILIN_EVALFILE"));

/// The compiled-in net, parsed once. The bytes are part of the program, not
/// input: `build.rs` refuses to build with bytes `Network::from_bytes` would
/// refuse (the same `format::check`), so the `expect` cannot fire.
pub fn embedded() -> Arc<Network> {
    static NET: OnceLock<Arc<Network>> = OnceLock::new();
    NET.get_or_init(|| {
        Arc::new(Network::from_bytes(EMBEDDED).expect("the embedded net is checked by a test"))
    })
    .clone()
}

/// The net a path names: the file's, or for an empty path the embedded one.
pub fn resolve(path: &str) -> Result<Arc<Network>, NetError> {
    let path = path.trim();
    if path.is_empty() {
        return Ok(embedded());
    }
    Network::load(Path::new(path)).map(Arc::new)
}

/// The evaluation: a known endgame (KPK, a lone king) is scored by its
/// rule, any other position by the net (`net_score`, side to move's view),
/// clamped to ±`MAX_EVAL`.
#[inline]
pub fn evaluate_with(pos: &Chess, net_score: impl FnOnce() -> i32) -> i32 {
    crate::endgames::known_endgame(pos).unwrap_or_else(|| net_score().clamp(-MAX_EVAL, MAX_EVAL))
}

/// The evaluation of `pos` with `net`, from scratch: what the search's
/// incremental evaluation must equal.
#[cfg(test)]
pub fn evaluate(net: &Network, pos: &Chess) -> i32 {
    evaluate_with(pos, || {
        Accumulator::new(net, pos.board()).evaluate(net, pos.turn(), accumulator::pieces(pos))
    })
}

/// `eval`: the net's shape, output and score, or the known endgame's rule.
pub fn describe(net: &Network, pos: &Chess) -> Vec<String> {
    let acc = Accumulator::new(net, pos.board());
    let (us, them) = match pos.turn() {
        Color::White => (acc.white(), acc.black()),
        Color::Black => (acc.black(), acc.white()),
    };
    let pieces = accumulator::pieces(pos);
    let raw = net.output(us, them, pieces);
    let cp = acc.evaluate(net, pos.turn(), pieces);
    let white = |s: i32| if pos.turn() == Color::White { s } else { -s };
    let mut lines = vec![
        format!(
            "net: ({} -> {}) x 2 -> {}, SCReLU; {pieces} features a side",
            net.kings().inputs(),
            net.hidden(),
            net.buckets(),
        ),
        if net.buckets() > 1 {
            format!(
                "net output: {raw} from bucket {} of {} (scaled: {cp} cp for the side to move)",
                network::bucket(pieces, net.buckets()) + 1,
                net.buckets()
            )
        } else {
            format!("net output: {raw} (scaled: {cp} cp for the side to move)")
        },
    ];
    if net.kings_choose_inputs() {
        let side = |color: Color| {
            let view = net.view(pos.board(), color);
            let flipped = if view.flipped() {
                ", the board flipped a-h"
            } else {
                ""
            };
            let name = color.fold_wb("White", "Black");
            format!(
                "{name}'s king in bucket {} of {}{flipped}",
                view.bucket() + 1,
                net.kings().count
            )
        };
        lines.insert(
            1,
            format!("net inputs: {}; {}", side(Color::White), side(Color::Black)),
        );
    }
    match crate::endgames::known_endgame(pos) {
        Some(s) => lines.push(format!(
            "known endgame: {} cp for White (the net's score does not apply)",
            white(s)
        )),
        None => lines.push(format!(
            "total: {} cp for White",
            white(cp.clamp(-MAX_EVAL, MAX_EVAL))
        )),
    }
    lines
}

#[cfg(test)]
mod tests;
