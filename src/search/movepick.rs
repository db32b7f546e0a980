//! The staged move picker. shakmaty generates every legal move at once; the
//! picker then hands them out stage by stage, scoring and sorting each stage
//! only when it is reached, so a cutoff on the TT move or a good capture costs
//! no work for the quiet moves.

use super::history::{Context, History};
use super::see::{SEE_VALUE, see_ge};
use super::tt::find_encoded;
use shakmaty::{Bitboard, Chess, Move, MoveList, Position, Role};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    TtMove,
    ScoreNoisy,
    GoodNoisy,
    Killer1,
    Killer2,
    Counter,
    ScoreQuiets,
    Quiets,
    BadNoisy,
    Done,
}

pub struct MovePicker {
    stage: Stage,
    pub tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    counter: Option<Move>,
    /// The targets of the TT move, the killers and the counter move: most
    /// moves are told apart from those by their target alone.
    special_targets: Bitboard,
    /// The legal moves, captures and promotions first (up to `noisy_end`),
    /// then the quiet ones, each part in generation order; one list, so that
    /// a node copies and clears as little as it can.
    moves: MoveList,
    scores: [i32; 256],
    noisy_end: usize,
    noisy_next: usize,
    quiet_next: usize,
    bad: MoveList,
    bad_next: usize,
    context: Context,
    /// Quiescence: only captures and queen promotions that do not lose
    /// material, unless in check.
    noisy_only: bool,
    /// The search prunes every later quiet move that does not give check:
    /// hand the rest out unsorted, so pruning them costs no sorting.
    skip_quiets: bool,
    pub legal_count: usize,
}

/// Captures and promotions; a quiet under-promotion counts as quiet.
pub fn is_noisy(m: Move) -> bool {
    m.is_capture() || m.promotion() == Some(Role::Queen)
}

impl MovePicker {
    /// `tt_move` is a TT move encoding (0 for none); it is used only if it is
    /// one of the legal moves.
    pub fn new(
        pos: &Chess,
        tt_move: u16,
        history: &History,
        ply: usize,
        context: Context,
        noisy_only: bool,
    ) -> MovePicker {
        let mut moves = pos.legal_moves();
        let legal_count = moves.len();
        let tt_move = find_encoded(&moves, tt_move);
        // A stable partition: noisy moves are few, so the rotations are short.
        let mut noisy_end = 0;
        for i in 0..moves.len() {
            if is_noisy(moves[i]) {
                moves[noisy_end..=i].rotate_right(1);
                noisy_end += 1;
            }
        }
        let noisy_only = noisy_only && !pos.is_check();
        if noisy_only {
            moves.truncate(noisy_end);
        }
        let killers = history.killers(ply);
        let counter = history.counter(context[0]);
        let special_targets = [tt_move, killers[0], killers[1], counter]
            .into_iter()
            .flatten()
            .map(|m| Bitboard::from_square(m.to()))
            .fold(Bitboard::EMPTY, |all, b| all | b);
        MovePicker {
            stage: Stage::TtMove,
            tt_move,
            killers,
            counter,
            special_targets,
            legal_count,
            moves,
            scores: [0; 256],
            noisy_end,
            noisy_next: 0,
            quiet_next: noisy_end,
            bad: MoveList::new(),
            bad_next: 0,
            context,
            noisy_only,
            skip_quiets: false,
        }
    }

    /// The remaining quiet moves are wanted only to find those that give
    /// check, in any order.
    pub fn skip_quiets(&mut self) {
        self.skip_quiets = true;
    }

    /// The TT move, a killer or the counter move.
    pub fn is_special(&self, m: Move) -> bool {
        self.special_targets.contains(m.to())
            && (Some(m) == self.tt_move
                || Some(m) == self.killers[0]
                || Some(m) == self.killers[1]
                || Some(m) == self.counter)
    }

    /// Whether the move `next` handed out last is known not to lose
    /// material (SEE ≥ 0): it came from the good captures, which were
    /// checked on the way out. Quiescence then need not check it again.
    pub fn last_passed_see(&self) -> bool {
        self.stage == Stage::GoodNoisy
    }

    /// The next move to try, or `None` when all have been handed out.
    pub fn next(&mut self, pos: &Chess, history: &History) -> Option<Move> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::ScoreNoisy;
                    if let Some(m) = self.tt_move
                        && (!self.noisy_only || is_noisy(m))
                    {
                        return Some(m);
                    }
                }
                Stage::ScoreNoisy => {
                    for (m, score) in self.moves[..self.noisy_end]
                        .iter()
                        .zip(self.scores.iter_mut())
                    {
                        let victim = m.capture().map_or(0, |r| SEE_VALUE[r as usize]);
                        let promo = m.promotion().map_or(0, |r| SEE_VALUE[r as usize]);
                        *score = (victim + promo) * 16 - SEE_VALUE[m.role() as usize] / 16;
                    }
                    self.stage = Stage::GoodNoisy;
                }
                Stage::GoodNoisy => {
                    let Some(m) = pick_best(
                        &mut self.moves[..self.noisy_end],
                        &mut self.scores,
                        &mut self.noisy_next,
                    ) else {
                        self.stage = Stage::Killer1;
                        continue;
                    };
                    if Some(m) == self.tt_move {
                        continue;
                    }
                    if !see_ge(pos, m, 0) {
                        self.bad.push(m);
                        continue;
                    }
                    return Some(m);
                }
                Stage::Killer1 | Stage::Killer2 | Stage::Counter => {
                    let candidate = match self.stage {
                        Stage::Killer1 => self.killers[0],
                        Stage::Killer2 => self.killers[1],
                        _ => self
                            .counter
                            .filter(|&c| Some(c) != self.killers[0] && Some(c) != self.killers[1]),
                    };
                    self.stage = match self.stage {
                        Stage::Killer1 => Stage::Killer2,
                        Stage::Killer2 => Stage::Counter,
                        _ => Stage::ScoreQuiets,
                    };
                    if self.noisy_only {
                        continue;
                    }
                    if let Some(m) = candidate
                        && Some(m) != self.tt_move
                        && self.moves[self.noisy_end..]
                            .iter()
                            .any(|&q| q.to() == m.to() && q == m)
                    {
                        return Some(m);
                    }
                }
                Stage::ScoreQuiets => {
                    if self.skip_quiets {
                        self.stage = Stage::Quiets;
                        continue;
                    }
                    let scorer = history.quiet_scorer(pos.turn(), &self.context);
                    for (&m, score) in self.moves[self.noisy_end..]
                        .iter()
                        .zip(self.scores[self.noisy_end..].iter_mut())
                    {
                        *score = scorer.score(m);
                    }
                    self.stage = Stage::Quiets;
                }
                Stage::Quiets => {
                    if self.noisy_only {
                        self.stage = Stage::BadNoisy;
                        continue;
                    }
                    let next = if self.skip_quiets {
                        let m = self.moves.get(self.quiet_next).copied();
                        self.quiet_next += 1;
                        m
                    } else {
                        pick_best(&mut self.moves, &mut self.scores, &mut self.quiet_next)
                    };
                    let Some(m) = next else {
                        self.stage = Stage::BadNoisy;
                        continue;
                    };
                    if self.is_special(m) {
                        continue;
                    }
                    return Some(m);
                }
                Stage::BadNoisy => {
                    // In quiescence, captures that lose material are not tried.
                    if self.noisy_only {
                        self.stage = Stage::Done;
                        continue;
                    }
                    let Some(&m) = self.bad.get(self.bad_next) else {
                        self.stage = Stage::Done;
                        continue;
                    };
                    self.bad_next += 1;
                    return Some(m);
                }
                Stage::Done => return None,
            }
        }
    }
}

/// Selection sort, one step: swaps the best of `moves[next..]` (the first
/// of equals) to `next`. The maximum is found first and then its place:
/// two plain passes the compiler vectorizes, where one pass keeping the
/// index of the best so far it does not.
fn pick_best(moves: &mut [Move], scores: &mut [i32; 256], next: &mut usize) -> Option<Move> {
    let start = *next;
    let tail = scores.get(start..moves.len())?;
    let max = tail.iter().copied().max()?;
    let best = start + tail.iter().position(|&s| s == max)?;
    moves.swap(start, best);
    scores.swap(start, best);
    *next += 1;
    Some(moves[start])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tt::encode_move;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        let fen: Fen = fen.parse().expect("fen");
        fen.into_position(CastlingMode::Standard).expect("pos")
    }

    /// Every legal move comes out exactly once, whatever the TT move.
    #[test]
    fn hands_out_each_legal_move_once() {
        let history = History::default();
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "8/P7/8/8/8/8/7p/k6K w - - 0 1",
        ] {
            let p = pos(fen);
            let legal = p.legal_moves();
            for tt in [None, legal.first().copied(), legal.last().copied()] {
                let encoded = tt.map_or(0, encode_move);
                let mut picker = MovePicker::new(&p, encoded, &history, 0, [None; 2], false);
                let mut seen = Vec::new();
                while let Some(m) = picker.next(&p, &history) {
                    seen.push(m);
                }
                assert_eq!(seen.len(), legal.len(), "{fen}");
                for m in legal.iter() {
                    assert_eq!(seen.iter().filter(|&&s| s == *m).count(), 1, "{fen} {m}");
                }
                if let Some(t) = tt {
                    assert_eq!(seen[0], t);
                }
                // Skipping the sort after a few quiet moves loses none.
                let mut picker = MovePicker::new(&p, encoded, &history, 0, [None; 2], false);
                let mut seen = Vec::new();
                while let Some(m) = picker.next(&p, &history) {
                    if seen.len() == 3 {
                        picker.skip_quiets();
                    }
                    seen.push(m);
                }
                seen.sort_by_key(|&m| encode_move(m));
                seen.dedup();
                assert_eq!(seen.len(), legal.len(), "{fen}");
            }
        }
    }

    /// Perft where every node's moves come from the picker, with the best
    /// move of the previous visit as TT move and killers recorded: the
    /// counts must equal plain perft.
    fn picker_perft(pos: &Chess, depth: u32, history: &mut History, ply: usize) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut picker = MovePicker::new(pos, 0, history, ply, [None; 2], false);
        let mut total = 0;
        let mut first = None;
        while let Some(m) = picker.next(pos, history) {
            first.get_or_insert(m);
            let mut child = pos.clone();
            child.play_unchecked(m);
            total += picker_perft(&child, depth - 1, history, ply + 1);
        }
        if let Some(m) = first.filter(|&m| !is_noisy(m)) {
            history.add_killer(ply, m);
        }
        total
    }

    #[test]
    fn perft_through_the_picker_equals_perft() {
        let cases = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                4,
                197_281,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                3,
                97_862,
            ),
            ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4, 43_238),
            (
                "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                3,
                9_467,
            ),
        ];
        for (fen, depth, nodes) in cases {
            let mut history = History::default();
            assert_eq!(
                picker_perft(&pos(fen), depth, &mut history, 0),
                nodes,
                "{fen}"
            );
        }
    }

    #[test]
    fn good_captures_before_quiets_and_losing_captures_last() {
        // Qxd5 loses the queen to exd5... no: the pawn on e6 defends d5.
        let p = pos("4k3/8/4p3/3p4/4P3/8/8/3QK3 w - - 0 1");
        let history = History::default();
        let mut picker = MovePicker::new(&p, 0, &history, 0, [None; 2], false);
        let mut order = Vec::new();
        while let Some(m) = picker.next(&p, &history) {
            order.push(m.to_uci(CastlingMode::Standard).to_string());
        }
        assert_eq!(order.first().map(String::as_str), Some("e4d5"));
        assert_eq!(order.last().map(String::as_str), Some("d1d5"));
    }
}
