//! The evaluation's rules outside the net: endgames known outright, scored
//! before the net is asked (`known_endgame`: KPK from a bitbase, a lone king
//! against mating material driven to the edge, to the right corner in KBNK,
//! and the draws of a lone minor or two knights), and the material count the
//! WDL model reads. The net itself is `crate::nnue`.

mod kpk;

use shakmaty::{Bitboard, Board, Chess, Color, Position, Square};

pub use kpk::prepare;

/// Non-pawn material in pawn units (minor 3, rook 5, queen 9).
fn non_pawn(board: &Board, c: Color) -> i32 {
    let ours = board.by_color(c);
    (3 * (board.knights() & ours).count()
        + 3 * (board.bishops() & ours).count()
        + 5 * (board.rooks() & ours).count()
        + 9 * (board.queens() & ours).count()) as i32
}

/// A known endgame's score from the side to move's view (KPK, a lone king
/// against pieces): the rule the evaluation applies before the net.
pub fn known_endgame(pos: &Chess) -> Option<i32> {
    special(pos)
}

/// Known endgames, scored outright from the side to move's point of view.
fn special(pos: &Chess) -> Option<i32> {
    let board = pos.board();
    if board.occupied().count() > 5 {
        return None;
    }
    let white_score = special_white(pos)?;
    Some(if pos.turn() == Color::White {
        white_score
    } else {
        -white_score
    })
}

fn special_white(pos: &Chess) -> Option<i32> {
    let board = pos.board();
    let sign = |c: Color| if c == Color::White { 1 } else { -1 };
    // KPK.
    if board.occupied().count() == 3 && board.pawns().count() == 1 {
        let pawn = board.pawns().first()?;
        let strong = board.color_at(pawn)?;
        let (sk, wk) = (board.king_of(strong)?, board.king_of(!strong)?);
        if !kpk::wins(strong, sk, wk, pawn, pos.turn() == strong) {
            return Some(0);
        }
        let rank = i32::from(u8::from(strong.relative_rank(pawn.rank())));
        return Some(sign(strong) * (700 + 20 * rank));
    }
    // A lone king against pieces and no pawns.
    if board.pawns().any() {
        return None;
    }
    let lone = [Color::White, Color::Black]
        .into_iter()
        .find(|&c| board.by_color(c).count() == 1)?;
    let strong = !lone;
    if board.by_color(strong).count() == 1 {
        return None;
    }
    let (sk, wk) = (board.king_of(strong)?, board.king_of(lone)?);
    let npm = non_pawn(board, strong);
    let ours = board.by_color(strong);
    let knights = (board.knights() & ours).count();
    let bishops = board.bishops() & ours;
    let closeness = 7 - sk.distance(wk) as i32;
    let score = if npm == 6 && knights == 1 && bishops.count() == 1 {
        // KBNK: only the corners of the bishop's colour are mating corners.
        let dark_bishop = (bishops & Bitboard::DARK_SQUARES).any();
        let corners = if dark_bishop {
            [Square::A1, Square::H8]
        } else {
            [Square::A8, Square::H1]
        };
        let to_corner = corners
            .iter()
            .map(|c| wk.distance(*c) as i32)
            .min()
            .unwrap_or(7);
        1000 + 40 * (7 - to_corner) + 10 * closeness
    } else if npm <= 3 || (npm == 6 && knights == 2) {
        return Some(0);
    } else {
        let edge = |i: i32| if i < 4 { 3 - i } else { i - 4 };
        let centre_distance = edge(wk.file() as i32) + edge(wk.rank() as i32);
        1000 + 100 * npm + 30 * centre_distance + 10 * closeness
    };
    Some(sign(strong) * score)
}

/// Material on the board in pawn units (queens 9, rooks 5, minors 3), for
/// the WDL model.
pub fn material_count(pos: &Chess) -> i32 {
    let b = pos.board();
    b.pawns().count() as i32 + non_pawn(b, Color::White) + non_pawn(b, Color::Black)
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

    fn known(fen: &str) -> Option<i32> {
        known_endgame(&pos(fen))
    }

    #[test]
    fn kpk_draws_and_wins_are_scored_as_such() {
        // The rook pawn with the defending king in front: a draw.
        assert_eq!(known("k7/8/1K6/P7/8/8/8/8 w - - 0 1"), Some(0));
        // The king on the sixth rank in front of its pawn wins whoever is to
        // move: 700 + 20 · the pawn's relative rank (e5: 4), negated for
        // Black to move.
        assert_eq!(
            known("4k3/8/4K3/4P3/8/8/8/8 b - - 0 1"),
            Some(-(700 + 20 * 4))
        );
    }

    #[test]
    fn lone_minor_and_two_knights_are_draws() {
        assert_eq!(known("4k3/8/8/8/8/8/8/3NK3 w - - 0 1"), Some(0));
        assert_eq!(known("4k3/8/8/8/8/8/8/2NNK3 w - - 0 1"), Some(0));
        assert_eq!(known("4k3/8/8/8/8/8/8/3BK3 b - - 0 1"), Some(0));
    }

    #[test]
    fn kbnk_prefers_the_bishops_corner() {
        // Light-squared bishop (f1): a8 and h1 are the mating corners.
        let right = known("8/8/8/8/8/8/5K1k/5BN1 w - - 0 1").expect("known");
        let wrong = known("7k/8/6K1/8/8/8/8/5BN1 w - - 0 1").expect("known");
        assert!(right > wrong, "{right} {wrong}");
    }

    #[test]
    fn krk_drives_the_lone_king_to_the_edge() {
        let centre = known("8/8/8/3k4/8/8/8/R3K3 w - - 0 1").expect("known");
        let edge = known("3k4/8/8/8/8/8/8/R3K3 w - - 0 1").expect("known");
        assert!(centre > 1000 && edge > centre, "{centre} {edge}");
        // Seen from the lone king's side, the same score negated.
        assert_eq!(known("3k4/8/8/8/8/8/8/R3K3 b - - 0 1"), Some(-edge));
    }

    #[test]
    fn other_material_is_left_to_the_net() {
        assert!(known("4k3/8/8/8/8/8/8/R2QK3 w - - 0 1").is_some());
        assert_eq!(known("4k3/4p3/8/8/8/8/8/R3K3 w - - 0 1"), None);
        assert_eq!(known("4k2r/8/8/8/8/8/8/R3K3 w - - 0 1"), None);
        assert_eq!(
            known("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
            None
        );
    }

    #[test]
    fn material_counts_pawn_units() {
        assert_eq!(
            material_count(&pos(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
            )),
            2 * (8 + 2 * 3 + 2 * 3 + 2 * 5 + 9)
        );
        assert_eq!(material_count(&pos("4k3/8/8/8/8/8/8/4K3 w - - 0 1")), 0);
    }
}
