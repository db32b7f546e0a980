//! Whether a move gives check, found from attack sets without making it: the
//! search decides most of its pruning on that answer, and playing each move
//! only to ask cost a position copy per pruned move.

use shakmaty::attacks::{attacks, bishop_attacks, ray, rook_attacks};
use shakmaty::{Bitboard, Chess, Move, Piece, Position};

/// True when `m` (legal in `pos`) leaves the opponent in check: directly from
/// its target square, or by uncovering one of our sliders. Castling and en
/// passant, rare and with extra squares changing, are played out.
pub fn gives_check(pos: &Chess, m: Move) -> bool {
    let Move::Normal {
        role,
        from,
        to,
        promotion,
        ..
    } = m
    else {
        let mut child = pos.clone();
        child.play_unchecked(m);
        return child.is_check();
    };
    let board = pos.board();
    let us = pos.turn();
    let Some(king) = board.king_of(!us) else {
        return false;
    };
    let occupied = board.occupied() & !Bitboard::from_square(from) | Bitboard::from_square(to);
    let piece = Piece {
        color: us,
        role: promotion.unwrap_or(role),
    };
    if attacks(to, piece, occupied).contains(king) {
        return true;
    }
    // A discovered check needs `from` on a line through the king, and then
    // one of our sliders on that line with nothing left between.
    if ray(king, from).is_empty() {
        return false;
    }
    let ours = board.by_color(us) & !Bitboard::from_square(from);
    let queens = board.queens();
    (bishop_attacks(king, occupied) & ours & (board.bishops() | queens)).any()
        || (rook_attacks(king, occupied) & ours & (board.rooks() | queens)).any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    /// Checks among the leaves of a perft tree, by `gives_check`; every
    /// move on the way must agree with playing it out.
    fn leaf_checks(pos: &Chess, depth: u32) -> u64 {
        let mut total = 0;
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let checks = gives_check(pos, m);
            assert_eq!(checks, child.is_check(), "{m:?}");
            total += if depth == 1 {
                u64::from(checks)
            } else {
                leaf_checks(&child, depth - 1)
            };
        }
        total
    }

    /// The "checks" column of the perft tables (chessprogramming.org,
    /// "Perft Results"): the start position, Kiwipete, positions 3 and 4.
    #[test]
    fn perft_check_counts() {
        for (fen, depth, checks) in [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                4,
                469,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                3,
                993,
            ),
            ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4, 1680),
            (
                "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                3,
                38,
            ),
        ] {
            let setup: Fen = fen.parse().expect("fen");
            let pos: Chess = setup.into_position(CastlingMode::Standard).expect("pos");
            assert_eq!(leaf_checks(&pos, depth), checks, "{fen}");
        }
    }
}
