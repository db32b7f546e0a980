//! King and pawn against king, solved exactly: a bitbase computed once by
//! retrograde iteration (about 200k positions, a few tens of milliseconds)
//! on first use.

use shakmaty::attacks::{king_attacks, pawn_attacks};
use shakmaty::{Color, Square};
use std::sync::OnceLock;

const UNKNOWN: u8 = 0;
const DRAW: u8 = 1;
const WIN: u8 = 2;
const INVALID: u8 = 3;

/// White has the pawn, on files a–d; index = stm, white king, black king, pawn.
fn index(white_to_move: bool, wk: u32, bk: u32, pawn: u32) -> usize {
    let p = (pawn / 8 - 1) * 4 + pawn % 8;
    (((usize::from(white_to_move) * 64 + wk as usize) * 64 + bk as usize) * 24) + p as usize
}

fn sq(i: u32) -> Square {
    Square::new(i)
}

/// Builds the table now (once; later calls return at once), so that no
/// search pays for it on its clock.
pub fn prepare() {
    table();
}

fn table() -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    TABLE.get_or_init(build)
}

fn build() -> Vec<u8> {
    let mut t = vec![UNKNOWN; 2 * 64 * 64 * 24];
    let pawns: Vec<u32> = (1..7)
        .flat_map(|r| (0..4).map(move |f| r * 8 + f))
        .collect();
    // Initial classification.
    for &p in &pawns {
        for wk in 0..64 {
            for bk in 0..64 {
                for wtm in [true, false] {
                    let i = index(wtm, wk, bk, p);
                    let adjacent = king_attacks(sq(wk)).contains(sq(bk));
                    if wk == bk || wk == p || bk == p || adjacent {
                        t[i] = INVALID;
                    } else if wtm && pawn_attacks(Color::White, sq(p)).contains(sq(bk)) {
                        // Black in check with White to move.
                        t[i] = INVALID;
                    } else if wtm
                        && p / 8 == 6
                        && wk != p + 8
                        && bk != p + 8
                        && (!king_attacks(sq(bk)).contains(sq(p + 8))
                            || king_attacks(sq(wk)).contains(sq(p + 8)))
                    {
                        t[i] = WIN;
                    } else if !wtm {
                        let guarded = king_attacks(sq(wk)) | pawn_attacks(Color::White, sq(p));
                        let escapes = king_attacks(sq(bk)) & !guarded;
                        let can_take = king_attacks(sq(bk)).contains(sq(p))
                            && !king_attacks(sq(wk)).contains(sq(p));
                        if escapes.is_empty() || can_take {
                            t[i] = DRAW;
                        }
                    }
                }
            }
        }
    }
    // A pawn only moves up the board, so the positions with the pawn on
    // one square depend on their own kind and on those with the pawn further
    // up: settle the squares from the seventh rank down, each on its own.
    for &p in pawns.iter().rev() {
        loop {
            let mut changed = false;
            for wk in 0..64 {
                for bk in 0..64 {
                    for wtm in [true, false] {
                        let i = index(wtm, wk, bk, p);
                        if t[i] != UNKNOWN {
                            continue;
                        }
                        let v = if wtm {
                            white_value(&t, wk, bk, p)
                        } else {
                            black_value(&t, wk, bk, p)
                        };
                        if v != UNKNOWN {
                            t[i] = v;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    t
}

/// White to move: a win if one move wins, a draw if every move draws.
fn white_value(t: &[u8], wk: u32, bk: u32, p: u32) -> u8 {
    let mut all_draw = true;
    let mut consider = |v: u8| -> bool {
        match v {
            WIN => true,
            UNKNOWN => {
                all_draw = false;
                false
            }
            _ => false,
        }
    };
    for to in king_attacks(sq(wk)) {
        let to = to as u32;
        if to == p || king_attacks(sq(bk)).contains(sq(to)) {
            continue;
        }
        if consider(t[index(false, to, bk, p)]) {
            return WIN;
        }
    }
    if p / 8 < 6 && p + 8 != wk && p + 8 != bk {
        if consider(t[index(false, wk, bk, p + 8)]) {
            return WIN;
        }
        if p / 8 == 1 && p + 16 != wk && p + 16 != bk && consider(t[index(false, wk, bk, p + 16)]) {
            return WIN;
        }
    }
    if all_draw { DRAW } else { UNKNOWN }
}

/// Black to move: a draw if one move draws, a win for White if every move loses.
fn black_value(t: &[u8], wk: u32, bk: u32, p: u32) -> u8 {
    let guarded = king_attacks(sq(wk)) | pawn_attacks(Color::White, sq(p));
    let mut all_win = true;
    for to in king_attacks(sq(bk)) & !guarded {
        let to = to as u32;
        match t[index(true, wk, to, p)] {
            DRAW => return DRAW,
            WIN => {}
            _ => all_win = false,
        }
    }
    if all_win { WIN } else { UNKNOWN }
}

/// Whether the side with the pawn wins with best play.
pub fn wins(
    strong: Color,
    strong_king: Square,
    weak_king: Square,
    pawn: Square,
    strong_to_move: bool,
) -> bool {
    let flip = |s: Square| {
        if strong == Color::White {
            s
        } else {
            s.flip_vertical()
        }
    };
    let (mut wk, mut bk, mut p) = (
        flip(strong_king) as u32,
        flip(weak_king) as u32,
        flip(pawn) as u32,
    );
    if p % 8 >= 4 {
        wk ^= 7;
        bk ^= 7;
        p ^= 7;
    }
    if !(8..56).contains(&p) {
        return false;
    }
    table()[index(strong_to_move, wk, bk, p)] == WIN
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Square::*;

    #[test]
    fn known_kpk_positions() {
        // The king on the sixth rank in front of its pawn wins whoever moves.
        assert!(wins(Color::White, E6, E8, E5, false));
        assert!(wins(Color::White, E6, E8, E5, true));
        // Before the key squares, the opposition decides.
        assert!(!wins(Color::White, D5, D7, D4, true));
        assert!(wins(Color::White, D5, D7, D4, false));
        // A rook pawn with the defender in the corner is a draw.
        assert!(!wins(Color::White, B6, A8, A5, true));
        // The pawn outruns a distant king.
        assert!(wins(Color::White, A1, H8, B5, true));
        assert!(!wins(Color::White, A1, F6, B4, false));
        // Colour mirror of the first case.
        assert!(!wins(Color::Black, D4, D2, D5, true));
        assert!(wins(Color::Black, D4, D2, D5, false));
    }
}
