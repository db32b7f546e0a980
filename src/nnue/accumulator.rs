//! Accumulators: the first layer's output for both perspectives, built from
//! scratch (`refresh`) or updated by a move's change; and the stack of them
//! a search thread keeps, one per ply, updated lazily: a move only records
//! itself, and the accumulators are computed when a position is evaluated
//! (many nodes never are: TT hits, positions in check, cut-offs).

use super::features::{self, Change};
use super::network::Network;
use super::simd;
use shakmaty::{Board, Chess, Color, Move, Position};

/// The accumulator pair of one position: White's perspective, then Black's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accumulator {
    /// `2 * hidden` lanes: White's perspective first.
    values: Box<[i16]>,
}

impl Accumulator {
    /// The accumulators of `board`, from scratch.
    pub fn new(net: &Network, board: &Board) -> Accumulator {
        let mut values = vec![0; 2 * net.hidden()].into_boxed_slice();
        refresh(net, board, &mut values);
        Accumulator { values }
    }

    /// The accumulators of two feature lists (White's perspective, then
    /// Black's), as a trainer stores positions; every index below 768.
    pub fn from_features(net: &Network, white: &[u16], black: &[u16]) -> Accumulator {
        let mut values = vec![0; 2 * net.hidden()].into_boxed_slice();
        let (w, b) = values.split_at_mut(net.hidden());
        fill(net, white.iter().map(|&f| usize::from(f)), w);
        fill(net, black.iter().map(|&f| usize::from(f)), b);
        Accumulator { values }
    }

    /// Applies a move's change in place.
    #[cfg(test)]
    pub fn apply(&mut self, net: &Network, change: &Change) {
        let (white, black) = self.values.split_at_mut(net.hidden());
        apply_change(net, Color::White, change, white, None);
        apply_change(net, Color::Black, change, black, None);
    }

    pub fn white(&self) -> &[i16] {
        &self.values[..self.values.len() / 2]
    }

    pub fn black(&self) -> &[i16] {
        &self.values[self.values.len() / 2..]
    }

    /// The net's score, centipawns for `turn`, unclamped, of a position
    /// of `pieces` pieces (what picks the output bucket).
    pub fn evaluate(&self, net: &Network, turn: Color, pieces: usize) -> i32 {
        net.evaluate(self.white(), self.black(), turn, pieces)
    }
}

/// The pieces on the board, kings included: what picks the output bucket.
#[inline]
pub fn pieces(pos: &Chess) -> usize {
    pos.board().occupied().count()
}

/// `out = input + the rows of what `change` adds − those of what it
/// removes`, from `perspective`, with the loop made for the change's shape.
fn apply_change(
    net: &Network,
    perspective: Color,
    change: &Change,
    out: &mut [i16],
    input: Option<&[i16]>,
) {
    let row =
        |&(p, s): &(shakmaty::Piece, shakmaty::Square)| net.row(features::index(perspective, p, s));
    macro_rules! go {
        ($adds:expr, $subs:expr) => {
            match input {
                Some(input) => simd::update(out, input, $adds, $subs),
                None => simd::update_in_place(out, $adds, $subs),
            }
        };
    }
    match (change.added(), change.removed()) {
        ([a], [s]) => go!([row(a)], [row(s)]),
        ([a], [s, t]) => go!([row(a)], [row(s), row(t)]),
        ([a, b], [s, t]) => go!([row(a), row(b)], [row(s), row(t)]),
        (added, removed) => {
            // No move of chess has another shape; done row by row.
            if let Some(input) = input {
                simd::update(out, input, [], []);
            }
            for a in added {
                simd::update_in_place(out, [row(a)], []);
            }
            for s in removed {
                simd::update_in_place(out, [], [row(s)]);
            }
        }
    }
}

/// Both perspectives of `board` into `values` (`2 * hidden` lanes).
fn refresh(net: &Network, board: &Board, values: &mut [i16]) {
    let (white, black) = values.split_at_mut(net.hidden());
    fill(net, features::active(board, Color::White), white);
    fill(net, features::active(board, Color::Black), black);
}

/// `acc = bias + the rows of `active``, four rows a pass.
fn fill(net: &Network, active: impl Iterator<Item = usize>, acc: &mut [i16]) {
    simd::update(acc, net.bias(), [], []);
    let rows: Vec<&[i16]> = active.map(|f| net.row(f)).collect();
    let mut fours = rows.chunks_exact(4);
    for four in fours.by_ref() {
        simd::update_in_place(acc, [four[0], four[1], four[2], four[3]], []);
    }
    for &row in fours.remainder() {
        simd::update_in_place(acc, [row], []);
    }
}

/// How the accumulators of a ply relate to those of the ply before.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// Computed.
    Ready,
    /// The move `turn` played from the ply before; not computed yet.
    Move(Color, Move),
    /// A null move: the same pieces as the ply before.
    Null,
}

/// The accumulators along a search path, by ply. `reset` sets the root
/// (ply 0); `push_move` and `push_null` record what leads to ply + 1;
/// `evaluate` computes what is missing up to its ply. Every child position
/// the search makes must be pushed, so that ply `p` always holds the
/// position the search is at on ply `p`.
pub struct AccumulatorStack {
    hidden: usize,
    /// `plies` accumulator pairs of `2 * hidden` lanes.
    values: Box<[i16]>,
    entries: Box<[Entry]>,
}

impl AccumulatorStack {
    /// Room for plies `0..plies` of `net` (at least the root).
    pub fn new(net: &Network, plies: usize) -> AccumulatorStack {
        let plies = plies.max(1);
        AccumulatorStack {
            hidden: net.hidden(),
            values: vec![0; plies * 2 * net.hidden()].into_boxed_slice(),
            entries: vec![Entry::Null; plies].into_boxed_slice(),
        }
    }

    /// Sets the root position, from scratch.
    pub fn reset(&mut self, net: &Network, board: &Board) {
        if net.hidden() != self.hidden {
            *self = AccumulatorStack::new(net, self.entries.len());
        }
        let width = 2 * self.hidden;
        if let Some(root) = self.values.get_mut(..width) {
            refresh(net, board, root);
        }
        if let Some(e) = self.entries.first_mut() {
            *e = Entry::Ready;
        }
    }

    /// Ply `ply + 1` is ply `ply` after `turn` played `m`.
    #[inline]
    pub fn push_move(&mut self, ply: usize, turn: Color, m: Move) {
        if let Some(e) = self.entries.get_mut(ply + 1) {
            *e = Entry::Move(turn, m);
        }
    }

    /// Ply `ply + 1` is ply `ply` with the turn passed.
    #[inline]
    pub fn push_null(&mut self, ply: usize) {
        if let Some(e) = self.entries.get_mut(ply + 1) {
            *e = Entry::Null;
        }
    }

    /// The net's score of `pos`, the position at `ply`, centipawns for
    /// the side to move, unclamped. Beyond the stack's room, or with
    /// another net than the stack's, it is computed from scratch.
    pub fn evaluate(&mut self, net: &Network, ply: usize, pos: &Chess) -> i32 {
        let hidden = self.hidden;
        match self.materialise(net, ply) {
            Some(values) => {
                let (white, black) = values.split_at(hidden);
                net.evaluate(white, black, pos.turn(), pieces(pos))
            }
            None => Accumulator::new(net, pos.board()).evaluate(net, pos.turn(), pieces(pos)),
        }
    }

    /// The accumulators of `ply` (White's then Black's lanes), computed
    /// from the nearest ready ply below; `None` when `ply` is out of room.
    pub fn materialise(&mut self, net: &Network, ply: usize) -> Option<&[i16]> {
        if net.hidden() != self.hidden || ply >= self.entries.len() {
            return None;
        }
        let ready = (0..=ply)
            .rev()
            .find(|&p| matches!(self.entries[p], Entry::Ready))?;
        let width = 2 * self.hidden;
        for p in ready + 1..=ply {
            let (before, rest) = self.values.split_at_mut(p * width);
            let input = &before[(p - 1) * width..];
            let output = &mut rest[..width];
            match self.entries[p] {
                Entry::Move(turn, m) => {
                    let change = Change::of(turn, m);
                    let (out_white, out_black) = output.split_at_mut(self.hidden);
                    let (in_white, in_black) = input.split_at(self.hidden);
                    apply_change(net, Color::White, &change, out_white, Some(in_white));
                    apply_change(net, Color::Black, &change, out_black, Some(in_black));
                }
                Entry::Null | Entry::Ready => output.copy_from_slice(input),
            }
            self.entries[p] = Entry::Ready;
        }
        self.values.get(ply * width..(ply + 1) * width)
    }
}
