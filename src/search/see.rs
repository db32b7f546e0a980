//! Static exchange evaluation on shakmaty's attack functions: the material
//! balance of the capture sequence on one square, each side taking with its
//! least valuable attacker and free to stop.

use shakmaty::{Bitboard, Chess, Move, Position, Role, Square};

pub const SEE_VALUE: [i32; 7] = [0, 100, 300, 300, 500, 900, 20_000];

fn value(role: Role) -> i32 {
    SEE_VALUE[role as usize]
}

/// True when `m` wins at least `threshold` centipawns by exchange.
pub fn see_ge(pos: &Chess, m: Move, threshold: i32) -> bool {
    let Some(from) = m.from() else {
        return threshold <= 0;
    };
    if m.is_castle() {
        return threshold <= 0;
    }
    let to = m.to();
    let board = pos.board();
    let mut swap = m.capture().map_or(0, value) - threshold;
    if let Some(promo) = m.promotion() {
        swap += value(promo) - value(Role::Pawn);
    }
    if swap < 0 {
        return false;
    }
    // What the opponent can win back by taking the piece now on `to`.
    swap = value(m.promotion().unwrap_or(m.role())) - swap;
    if swap <= 0 {
        return true;
    }
    let mut occupied = board.occupied() ^ Bitboard::from_square(from) | Bitboard::from_square(to);
    if m.is_en_passant() {
        let captured = Square::from_coords(to.file(), from.rank());
        occupied ^= Bitboard::from_square(captured);
    }
    let mut side = !pos.turn();
    let mut result = true;
    loop {
        let attackers = board.attacks_to(to, side, occupied) & occupied;
        let Some((sq, role)) = least_valuable(pos, attackers & board.by_color(side)) else {
            break;
        };
        if role == Role::King && (board.attacks_to(to, !side, occupied) & occupied).any() {
            // The king may not take into an attack.
            break;
        }
        occupied ^= Bitboard::from_square(sq);
        result = !result;
        swap = value(role) - swap;
        if swap < i32::from(result) {
            break;
        }
        side = !side;
    }
    result
}

fn least_valuable(pos: &Chess, attackers: Bitboard) -> Option<(Square, Role)> {
    let board = pos.board();
    for role in Role::ALL {
        if let Some(sq) = (attackers & board.by_role(role)).first() {
            return Some((sq, role));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;

    fn check(fen: &str, uci: &str, threshold: i32) -> bool {
        let fen: Fen = fen.parse().expect("fen");
        let pos: Chess = fen.into_position(CastlingMode::Standard).expect("pos");
        let m = UciMove::from_ascii(uci.as_bytes())
            .expect("uci")
            .to_move(&pos)
            .expect("legal");
        see_ge(&pos, m, threshold)
    }

    #[test]
    fn pawn_takes_defended_knight_wins_material() {
        // exd5 wins a knight for a pawn: +200.
        let fen = "4k3/8/4p3/3n4/4P3/8/8/4K3 w - - 0 1";
        assert!(check(fen, "e4d5", 200));
        assert!(!check(fen, "e4d5", 201));
    }

    #[test]
    fn queen_takes_defended_pawn_loses() {
        let fen = "4k3/8/4p3/3p4/8/8/8/3QK3 w - - 0 1";
        assert!(!check(fen, "d1d5", 0));
        assert!(check(fen, "d1d5", -800));
    }

    #[test]
    fn xray_recapture_is_seen() {
        // Rook takes a pawn defended by a rook, with a second rook behind:
        // R x p, r x R, R x r nets a pawn.
        let fen = "3rk3/8/8/3p4/8/8/3R4/3RK3 w - - 0 1";
        assert!(check(fen, "d2d5", 100));
        assert!(!check(fen, "d2d5", 101));
    }

    #[test]
    fn quiet_move_onto_an_attacked_square() {
        // Knight to a square a pawn attacks loses the knight.
        let fen = "4k3/8/8/8/2p5/8/8/2N1K3 w - - 0 1";
        assert!(!check(fen, "c1d3", 0));
        assert!(check(fen, "c1d3", -300));
        assert!(check(fen, "c1e2", 0));
        assert!(!check(fen, "c1e2", 1));
    }
}
