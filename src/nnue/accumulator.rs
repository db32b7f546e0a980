//! Accumulators: the first layer's output for both perspectives, built from
//! scratch (`refresh`) or updated by a move's change; and the stack of them
//! a search thread keeps, one per ply, updated lazily: a move only records
//! itself, and the accumulators are computed when a position is evaluated
//! (many nodes never are: TT hits, positions in check, cut-offs).
//!
//! In a net whose kings choose the inputs (king buckets, mirroring), a king
//! move that changes its side's view rebuilds that side's accumulator from
//! a per-thread cache of the last accumulator built in each view
//! (`RefreshCache`): only the pieces that differ from the cached board are
//! added or taken away.

use super::features::{self, Change};
use super::format::View;
use super::network::Network;
use super::simd;
use shakmaty::{Bitboard, Board, ByColor, ByRole, Chess, Color, Move, Piece, Position, Role};

/// The accumulator pair of one position: White's perspective, then Black's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accumulator {
    /// `2 * hidden` lanes: White's perspective first.
    values: Box<[i16]>,
    /// The view of each perspective: White's, then Black's.
    views: [View; 2],
}

impl Accumulator {
    /// The accumulators of `board`, from scratch.
    pub fn new(net: &Network, board: &Board) -> Accumulator {
        let mut values = vec![0; 2 * net.hidden()].into_boxed_slice();
        let views = refresh(net, board, &mut values);
        Accumulator { values, views }
    }

    /// The accumulators of two feature lists (White's perspective, then
    /// Black's), as a trainer stores positions; every index below 768
    /// (the net's kings choose the inputs from them).
    pub fn from_features(net: &Network, white: &[u16], black: &[u16]) -> Accumulator {
        let mut values = vec![0; 2 * net.hidden()].into_boxed_slice();
        let views = [net.kings().view_of(white), net.kings().view_of(black)];
        let (w, b) = values.split_at_mut(net.hidden());
        fill(
            net,
            white.iter().map(|&f| views[0].input(usize::from(f))),
            w,
        );
        fill(
            net,
            black.iter().map(|&f| views[1].input(usize::from(f))),
            b,
        );
        Accumulator { values, views }
    }

    /// Applies a move's change in place; `after` is the board the move
    /// leads to (a perspective whose view the move changes is rebuilt).
    #[cfg(test)]
    pub fn apply(&mut self, net: &Network, change: &Change, after: &Board) {
        let (white, black) = self.values.split_at_mut(net.hidden());
        for (i, (perspective, lanes)) in [(Color::White, white), (Color::Black, black)]
            .into_iter()
            .enumerate()
        {
            let view = net.view(after, perspective);
            if view == self.views[i] {
                apply_change(net, perspective, view, change, lanes, None);
            } else {
                fill_view(net, after, perspective, view, lanes);
                self.views[i] = view;
            }
        }
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
/// removes`, from `perspective` in `view`, with the loop made for the
/// change's shape.
fn apply_change(
    net: &Network,
    perspective: Color,
    view: View,
    change: &Change,
    out: &mut [i16],
    input: Option<&[i16]>,
) {
    let row = |&(p, s): &(shakmaty::Piece, shakmaty::Square)| {
        net.row(view.input(features::index(perspective, p, s)))
    };
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

/// Both perspectives of `board` into `values` (`2 * hidden` lanes); their
/// views, White's then Black's.
fn refresh(net: &Network, board: &Board, values: &mut [i16]) -> [View; 2] {
    let views = [net.view(board, Color::White), net.view(board, Color::Black)];
    let (white, black) = values.split_at_mut(net.hidden());
    fill_view(net, board, Color::White, views[0], white);
    fill_view(net, board, Color::Black, views[1], black);
    views
}

/// `out` = the accumulator of `perspective` in `view` for `board`, from
/// scratch.
fn fill_view(net: &Network, board: &Board, perspective: Color, view: View, out: &mut [i16]) {
    fill(
        net,
        features::active(board, perspective).map(|f| view.input(f)),
        out,
    );
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

/// The last accumulator built in each view of each perspective, with the
/// pieces it holds: a perspective whose view a king move changes starts
/// from there and adds or takes away only the pieces that differ.
struct RefreshCache {
    hidden: usize,
    /// Per (perspective, king bucket, flip): `hidden` lanes.
    values: Box<[i16]>,
    /// The pieces each entry's lanes hold.
    pieces: Box<[ByColor<ByRole<Bitboard>>]>,
}

impl RefreshCache {
    /// Empty entries (the bias alone) for every view of `net`.
    fn new(net: &Network) -> RefreshCache {
        let entries = 2 * net.kings().count * 2;
        let mut values = Vec::with_capacity(entries * net.hidden());
        for _ in 0..entries {
            values.extend_from_slice(net.bias());
        }
        RefreshCache {
            hidden: net.hidden(),
            values: values.into_boxed_slice(),
            pieces: vec![ByColor::<ByRole<Bitboard>>::default(); entries].into_boxed_slice(),
        }
    }

    /// `out` = the accumulator of `perspective` in `view` for `board`.
    fn refresh(
        &mut self,
        net: &Network,
        perspective: Color,
        view: View,
        board: &Board,
        out: &mut [i16],
    ) {
        let entry = (perspective as usize * net.kings().count + view.bucket()) * 2
            + usize::from(view.flipped());
        let (Some(lanes), Some(held)) = (
            self.values
                .get_mut(entry * self.hidden..(entry + 1) * self.hidden),
            self.pieces.get_mut(entry),
        ) else {
            // Not a view of this net: built from scratch.
            fill_view(net, board, perspective, view, out);
            return;
        };
        for color in Color::ALL {
            for role in Role::ALL {
                let piece = Piece { color, role };
                let now = board.by_piece(piece);
                let was = held.get(color).get(role);
                let row = |square| net.row(view.input(features::index(perspective, piece, square)));
                for square in now & !*was {
                    simd::update_in_place(lanes, [row(square)], []);
                }
                for square in *was & !now {
                    simd::update_in_place(lanes, [], [row(square)]);
                }
                *held.get_mut(color).get_mut(role) = now;
            }
        }
        out.copy_from_slice(lanes);
    }
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
    /// Each ply's views, White's then Black's (of ready plies).
    views: Box<[[View; 2]]>,
    entries: Box<[Entry]>,
    /// Whether the net's kings choose its inputs: then a king move keeps
    /// the board it leads to in `boards`, and may rebuild its side.
    kings: bool,
    boards: Box<[Board]>,
    cache: RefreshCache,
}

impl AccumulatorStack {
    /// Room for plies `0..plies` of `net` (at least the root).
    pub fn new(net: &Network, plies: usize) -> AccumulatorStack {
        let plies = plies.max(1);
        let kings = net.kings_choose_inputs();
        AccumulatorStack {
            hidden: net.hidden(),
            values: vec![0; plies * 2 * net.hidden()].into_boxed_slice(),
            views: vec![[View::default(); 2]; plies].into_boxed_slice(),
            entries: vec![Entry::Null; plies].into_boxed_slice(),
            kings,
            boards: vec![Board::empty(); if kings { plies } else { 0 }].into_boxed_slice(),
            cache: RefreshCache::new(net),
        }
    }

    /// Sets the root position, from scratch, for `net` (the refresh cache
    /// starts empty: it may hold another net's lanes).
    pub fn reset(&mut self, net: &Network, board: &Board) {
        if net.hidden() != self.hidden || net.kings_choose_inputs() != self.kings {
            *self = AccumulatorStack::new(net, self.entries.len());
        } else {
            self.cache = RefreshCache::new(net);
        }
        let width = 2 * self.hidden;
        if let Some(root) = self.values.get_mut(..width) {
            let views = refresh(net, board, root);
            if let Some(v) = self.views.first_mut() {
                *v = views;
            }
        }
        if let Some(e) = self.entries.first_mut() {
            *e = Entry::Ready;
        }
    }

    /// Ply `ply + 1` is ply `ply` after `turn` played `m`, which leads to
    /// `after`.
    #[inline]
    pub fn push_move(&mut self, ply: usize, turn: Color, m: Move, after: &Board) {
        if let Some(e) = self.entries.get_mut(ply + 1) {
            *e = Entry::Move(turn, m);
        }
        if self.kings
            && m.role() == Role::King
            && let Some(b) = self.boards.get_mut(ply + 1)
        {
            b.clone_from(after);
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
        if net.hidden() != self.hidden
            || net.kings_choose_inputs() != self.kings
            || ply >= self.entries.len()
        {
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
            let views = self.views[p - 1];
            match self.entries[p] {
                Entry::Move(turn, m) => {
                    let change = Change::of(turn, m);
                    let (out_white, out_black) = output.split_at_mut(self.hidden);
                    let (in_white, in_black) = input.split_at(self.hidden);
                    let mut after = views;
                    for (i, perspective, out, input) in [
                        (0, Color::White, out_white, in_white),
                        (1, Color::Black, out_black, in_black),
                    ] {
                        // Only a king move changes its own side's view.
                        if self.kings && perspective == turn && m.role() == Role::King {
                            let board = &self.boards[p];
                            let view = net.view(board, perspective);
                            if view != views[i] {
                                self.cache.refresh(net, perspective, view, board, out);
                                after[i] = view;
                                continue;
                            }
                        }
                        apply_change(net, perspective, views[i], &change, out, Some(input));
                    }
                    self.views[p] = after;
                }
                Entry::Null | Entry::Ready => {
                    output.copy_from_slice(input);
                    self.views[p] = views;
                }
            }
            self.entries[p] = Entry::Ready;
        }
        self.values.get(ply * width..(ply + 1) * width)
    }
}
