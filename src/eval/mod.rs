//! Evaluation: one function from a position to a score in centipawns from the
//! side to move's point of view. The first evaluation is tapered material and
//! piece-square tables, a bishop-pair bonus and a tempo bonus.

mod weights;

use shakmaty::{Chess, Color, Position};
use weights::{BISHOP_PAIR, MATERIAL, PHASE, PHASE_MAX, PST, TEMPO};

/// Middlegame and endgame terms for White, and the game phase (0..=24).
fn terms(pos: &Chess) -> (i32, i32, i32) {
    let board = pos.board();
    let (mut mg, mut eg, mut phase) = (0, 0, 0);
    for (sq, piece) in board.iter() {
        let role = piece.role as usize - 1;
        let (index, sign) = match piece.color {
            Color::White => (sq.to_usize(), 1),
            Color::Black => (sq.flip_vertical().to_usize(), -1),
        };
        let (m, e) = MATERIAL[role];
        let (pm, pe) = PST[role][index];
        mg += sign * (m + pm);
        eg += sign * (e + pe);
        phase += PHASE[role];
    }
    for (color, sign) in [(Color::White, 1), (Color::Black, -1)] {
        if (board.bishops() & board.by_color(color)).count() >= 2 {
            mg += sign * BISHOP_PAIR.0;
            eg += sign * BISHOP_PAIR.1;
        }
    }
    (mg, eg, phase.min(PHASE_MAX))
}

/// The static evaluation, from the side to move's point of view.
pub fn evaluate(pos: &Chess) -> i32 {
    let (mg, eg, phase) = terms(pos);
    let white = (mg * phase + eg * (PHASE_MAX - phase)) / PHASE_MAX;
    let score = match pos.turn() {
        Color::White => white,
        Color::Black => -white,
    };
    score + TEMPO
}

/// Material on the board in pawn units (queens 9, rooks 5, minors 3), for
/// the WDL model.
pub fn material_count(pos: &Chess) -> i32 {
    let b = pos.board();
    (b.pawns().count()
        + 3 * (b.knights().count() + b.bishops().count())
        + 5 * b.rooks().count()
        + 9 * b.queens().count()) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        let fen: Fen = fen.parse().expect("fen");
        fen.into_position(CastlingMode::Standard).expect("position")
    }

    #[test]
    fn start_position_is_the_tempo() {
        assert_eq!(evaluate(&Chess::default()), TEMPO);
    }

    #[test]
    fn colour_symmetry() {
        let w = pos("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
        let b = pos("rnbqk2r/pppp1ppp/5n2/2b1p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 4 4");
        assert_eq!(evaluate(&w), evaluate(&b));
    }

    #[test]
    fn an_extra_queen_is_winning() {
        let p = pos("4k3/8/8/8/8/8/8/3QK3 w - - 0 1");
        assert!(evaluate(&p) > 900);
    }
}
