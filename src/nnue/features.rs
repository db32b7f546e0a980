//! The net's inputs: which features a position has, and which a move adds
//! and removes (NNUE-SPEC.md "Features").

use shakmaty::{Board, Color, Move, Piece, Role, Square};

/// The feature of `piece` on `square` seen from `perspective`: the board
/// turned so that `perspective` plays up the board, its own pieces first.
#[inline]
pub fn index(perspective: Color, piece: Piece, square: Square) -> usize {
    let sq = match perspective {
        Color::White => square as usize,
        Color::Black => square as usize ^ 56,
    };
    let side = usize::from(piece.color != perspective);
    let role = piece.role as usize - Role::Pawn as usize;
    side * 384 + role * 64 + sq
}

/// Every feature of `board` from `perspective`.
pub fn active(board: &Board, perspective: Color) -> impl Iterator<Item = usize> + '_ {
    board
        .iter()
        .map(move |(square, piece)| index(perspective, piece, square))
}

/// A piece on a square: what a move puts on or takes off the board.
pub type Placed = (Piece, Square);

/// What one move changes on the board: at most two pieces placed and two
/// taken away (castling moves two pieces; a capture takes two away).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    added: [Placed; 2],
    added_len: u8,
    removed: [Placed; 2],
    removed_len: u8,
}

const NOTHING: Placed = (
    Piece {
        color: Color::White,
        role: Role::Pawn,
    },
    Square::A1,
);

impl Change {
    /// The change of `m`, played by `turn`.
    pub fn of(turn: Color, m: Move) -> Change {
        let us = |role| Piece { color: turn, role };
        let them = |role| Piece { color: !turn, role };
        let mut c = Change {
            added: [NOTHING; 2],
            added_len: 0,
            removed: [NOTHING; 2],
            removed_len: 0,
        };
        match m {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => {
                c.remove(us(role), from);
                if let Some(victim) = capture {
                    c.remove(them(victim), to);
                }
                c.add(us(promotion.unwrap_or(role)), to);
            }
            Move::EnPassant { from, to } => {
                c.remove(us(Role::Pawn), from);
                c.remove(
                    them(Role::Pawn),
                    Square::from_coords(to.file(), from.rank()),
                );
                c.add(us(Role::Pawn), to);
            }
            Move::Castle { king, rook } => {
                // King takes its own rook: both land on the castling side's
                // squares (in Chess960 either may stay where it is).
                let side = shakmaty::CastlingSide::from_king_side(king < rook);
                c.remove(us(Role::King), king);
                c.remove(us(Role::Rook), rook);
                c.add(us(Role::King), side.king_to(turn));
                c.add(us(Role::Rook), side.rook_to(turn));
            }
            // Crazyhouse drops do not occur in chess.
            Move::Put { role, to } => c.add(us(role), to),
        }
        c
    }

    fn add(&mut self, piece: Piece, square: Square) {
        if let Some(slot) = self.added.get_mut(usize::from(self.added_len)) {
            *slot = (piece, square);
            self.added_len += 1;
        }
    }

    fn remove(&mut self, piece: Piece, square: Square) {
        if let Some(slot) = self.removed.get_mut(usize::from(self.removed_len)) {
            *slot = (piece, square);
            self.removed_len += 1;
        }
    }

    pub fn added(&self) -> &[Placed] {
        &self.added[..usize::from(self.added_len)]
    }

    pub fn removed(&self) -> &[Placed] {
        &self.removed[..usize::from(self.removed_len)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

    fn piece(color: Color, role: Role) -> Piece {
        Piece { color, role }
    }

    #[test]
    fn indices_follow_the_spec() {
        // White pawn e2 from White: side 0, role 0, square 12.
        assert_eq!(
            index(Color::White, piece(Color::White, Role::Pawn), Square::E2),
            12
        );
        // From Black it is the other side's pawn on e7 (52): 384 + 52.
        assert_eq!(
            index(Color::Black, piece(Color::White, Role::Pawn), Square::E2),
            436
        );
        // Black king e8 from Black: own king on e1: 5*64 + 4.
        assert_eq!(
            index(Color::Black, piece(Color::Black, Role::King), Square::E8),
            324
        );
        assert_eq!(
            index(Color::White, piece(Color::Black, Role::Queen), Square::H8),
            384 + 256 + 63
        );
    }

    /// Features of `pos` before the move, less removed, plus added, equal
    /// the features after it: for every move of some awkward positions.
    /// The castling moves of the positions below: 2 + 2 + 2 + 1 + 2 (in
    /// the fourth, the king would cross e1, which the e8 rook attacks).
    const CASTLES: usize = 9;

    #[test]
    fn changes_turn_one_board_into_the_next() {
        let fens = [
            // Castling both ways, en passant, promotions with capture.
            (
                "r3k2r/pPppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/P1PBBPPP/R3K2R w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "r3k2r/8/8/8/3pPp2/8/8/R3K2R b KQkq e3 0 1",
                CastlingMode::Standard,
            ),
            // Chess960, king b1: with the a1 rook it lands on c1 (rook d1), with
            // the f1 rook on g1 while the rook stays on f1.
            (
                "rk5r/8/8/8/8/8/8/RK3R2 w AFah - 0 1",
                CastlingMode::Chess960,
            ),
            (
                "rk2r3/8/8/8/8/8/8/RK2R3 w AEae - 0 1",
                CastlingMode::Chess960,
            ),
            // Black: king b8 to g8, the f8 rook staying where it is.
            (
                "rk3r2/8/8/8/8/8/8/RK5R b AHaf - 0 1",
                CastlingMode::Chess960,
            ),
        ];
        let mut castles = 0;
        for (fen, mode) in fens {
            let pos: Chess = fen
                .parse::<Fen>()
                .expect("fen")
                .into_position(mode)
                .expect("legal");
            for m in pos.legal_moves() {
                castles += usize::from(m.is_castle());
                let mut child = pos.clone();
                child.play_unchecked(m);
                let change = Change::of(pos.turn(), m);
                for perspective in [Color::White, Color::Black] {
                    let mut features: Vec<usize> = active(pos.board(), perspective).collect();
                    for &(p, s) in change.removed() {
                        let f = index(perspective, p, s);
                        let at = features
                            .iter()
                            .position(|&x| x == f)
                            .expect("removed is there");
                        features.swap_remove(at);
                    }
                    features.extend(
                        change
                            .added()
                            .iter()
                            .map(|&(p, s)| index(perspective, p, s)),
                    );
                    features.sort_unstable();
                    let mut after: Vec<usize> = active(child.board(), perspective).collect();
                    after.sort_unstable();
                    assert_eq!(features, after, "{fen} {m:?}");
                }
            }
        }
        assert_eq!(castles, CASTLES, "{castles}");
    }
}
