//! Accumulators: the first layer's output for both perspectives, built from
//! scratch (`refresh`) or updated by a move's change; and the stack of them
//! a search thread keeps, one per ply, updated lazily: a move only records
//! itself, and the accumulators are computed when a position is evaluated
//! (many nodes never are: TT hits, positions in check, cut-offs).

use super::features::{self, Change};
use super::network::Network;
use super::simd;
use shakmaty::{Board, Chess, Color, Move, Position};

/// Most features a position can have (32 pieces).
const MAX_ACTIVE: usize = 32;

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

    /// Applies a move's change in place.
    pub fn apply(&mut self, net: &Network, change: &Change) {
        let (white, black) = self.values.split_at_mut(net.hidden());
        for (perspective, acc) in [(Color::White, white), (Color::Black, black)] {
            let (adds, subs) = rows(net, perspective, change);
            simd::update_in_place(acc, adds.as_slice(), subs.as_slice());
        }
    }

    pub fn white(&self) -> &[i16] {
        &self.values[..self.values.len() / 2]
    }

    pub fn black(&self) -> &[i16] {
        &self.values[self.values.len() / 2..]
    }

    /// The net's score, centipawns for `turn`, unclamped.
    pub fn evaluate(&self, net: &Network, turn: Color) -> i32 {
        net.evaluate(self.white(), self.black(), turn)
    }
}

/// A few rows of W1, without allocating.
struct Rows<'a> {
    rows: [&'a [i16]; MAX_ACTIVE],
    len: usize,
}

impl<'a> Rows<'a> {
    fn new() -> Rows<'a> {
        Rows {
            rows: [&[]; MAX_ACTIVE],
            len: 0,
        }
    }
    fn push(&mut self, row: &'a [i16]) {
        if let Some(slot) = self.rows.get_mut(self.len) {
            *slot = row;
            self.len += 1;
        }
    }
    fn as_slice(&self) -> &[&'a [i16]] {
        &self.rows[..self.len]
    }
}

/// The rows a change adds and takes away, from `perspective`.
fn rows<'a>(net: &'a Network, perspective: Color, change: &Change) -> (Rows<'a>, Rows<'a>) {
    let mut adds = Rows::new();
    let mut subs = Rows::new();
    for &(p, s) in change.added() {
        adds.push(net.row(features::index(perspective, p, s)));
    }
    for &(p, s) in change.removed() {
        subs.push(net.row(features::index(perspective, p, s)));
    }
    (adds, subs)
}

/// Both perspectives of `board` into `values` (`2 * hidden` lanes).
fn refresh(net: &Network, board: &Board, values: &mut [i16]) {
    let (white, black) = values.split_at_mut(net.hidden());
    for (perspective, acc) in [(Color::White, white), (Color::Black, black)] {
        let mut adds = Rows::new();
        for f in features::active(board, perspective) {
            adds.push(net.row(f));
        }
        simd::update(acc, net.bias(), adds.as_slice(), &[]);
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
                net.evaluate(white, black, pos.turn())
            }
            None => Accumulator::new(net, pos.board()).evaluate(net, pos.turn()),
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
                    for (perspective, out, input) in [
                        (Color::White, out_white, in_white),
                        (Color::Black, out_black, in_black),
                    ] {
                        let (adds, subs) = rows(net, perspective, &change);
                        simd::update(out, input, adds.as_slice(), subs.as_slice());
                    }
                }
                Entry::Null | Entry::Ready => output.copy_from_slice(input),
            }
            self.entries[p] = Entry::Ready;
        }
        self.values.get(ply * width..(ply + 1) * width)
    }
}
