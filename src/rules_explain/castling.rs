//! Castling: the rights that the game's moves lost, and the conditions of
//! RULES.md §2 (empty squares between, not in check, not through or onto an
//! attacked square), in that order. A king move is read as castling when the
//! text can only mean castling (see `castling_side_asked`).

use super::{Illegality, Placed, all_placed};
use crate::game::Game;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingSide, Chess, Color, Move, Position, Square, attacks};

/// How the castling right of one side was lost, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CastlingProblem {
    /// The game's start position (its FEN) does not give this right.
    NoRightAtStart,
    /// The king moved (or castled) at `ply`; `played` is that move.
    KingMoved {
        ply: usize,
        played: UciMove,
        castled: bool,
    },
    /// The castling rook left `rook` at `ply`.
    RookMoved {
        ply: usize,
        rook: Square,
        played: UciMove,
    },
    /// The castling rook was captured on `rook` at `ply`.
    RookCaptured {
        ply: usize,
        rook: Square,
        played: UciMove,
    },
    /// The right exists, with the rook on `rook`, and the text names
    /// another rook or square: `expected` is how the castling is written.
    Notation { rook: Square, expected: UciMove },
    /// Squares the king or the rook must cross or land on are taken.
    SquaresOccupied { pieces: Vec<Placed> },
    /// The king is in check now.
    InCheck { checkers: Vec<Placed> },
    /// The king would cross `square`, which the opponent attacks.
    PassesAttacked {
        square: Square,
        attackers: Vec<Placed>,
    },
    /// The king would land on `square`, which the opponent attacks.
    LandsAttacked {
        square: Square,
        attackers: Vec<Placed>,
    },
}

/// The castling side a king move `from`-`to` asks for, read as shakmaty
/// reads it (the king takes a rook that has the right; `e1g1`/`e1c1` from
/// e1/e8), and also when the king takes any own rook on its back rank or
/// goes to its castled square along that rank (castling written the
/// standard way in Chess960): castling is what such a text means.
pub(super) fn castling_side_asked(pos: &Chess, from: Square, to: Square) -> Option<CastlingSide> {
    let us = pos.turn();
    let side = CastlingSide::from_king_side(to.file() > from.file());
    if (pos.castles().castling_rights() & pos.us()).contains(to) {
        return Some(side);
    }
    let back = us.backrank();
    if from.rank() != back || to.rank() != back || from == to {
        return None;
    }
    let standard_form = from == us.fold_wb(Square::E1, Square::E8) && from.distance(to) == 2;
    let takes_own_rook = pos.board().by_piece(us.rook()).contains(to);
    let to_castled_square =
        from.distance(to) >= 2 && pos.castles().rook(us, side).is_some() && to == side.king_to(us);
    (standard_form || takes_own_rook || to_castled_square).then_some(side)
}

/// The castling that the king move `from`-`to` asks for, and why it cannot
/// be played.
pub(super) fn explain(game: &Game, from: Square, to: Square, side: CastlingSide) -> Illegality {
    Illegality::Castling {
        color: game.position().turn(),
        side,
        problem: match castling_problem(game, from, to, side) {
            Some(problem) => problem,
            None => return Illegality::Unexplained,
        },
    }
}

/// Which castling condition fails for the king on `from` castling to `side`
/// (the text asked `from`-`to`): RULES.md §2, in its order.
fn castling_problem(
    game: &Game,
    from: Square,
    to: Square,
    side: CastlingSide,
) -> Option<CastlingProblem> {
    let pos = game.position();
    let board = pos.board();
    let us = pos.turn();
    let castles = pos.castles();
    let Some(rook) = castles.rook(us, side) else {
        return lost_right(game, us, side);
    };
    // The rook the text names: the one it takes, or for `e1g1`/`e1c1` the
    // one on the h- or a-file, as shakmaty reads it.
    let named_rook = if board.by_piece(us.rook()).contains(to) {
        Some(to)
    } else if from == us.fold_wb(Square::E1, Square::E8) && from.distance(to) == 2 {
        let file = on_side(side, shakmaty::File::H, shakmaty::File::A);
        Some(Square::from_coords(file, us.backrank()))
    } else {
        None
    };
    if named_rook != Some(rook) {
        return Some(CastlingProblem::Notation {
            rook,
            expected: Move::Castle { king: from, rook }.to_uci(game.castling_mode()),
        });
    }
    let occupied = board.occupied();
    let in_path = castles.path(us, side) & occupied;
    if in_path.any() {
        return Some(CastlingProblem::SquaresOccupied {
            pieces: all_placed(pos, in_path),
        });
    }
    if pos.is_check() {
        return Some(CastlingProblem::InCheck {
            checkers: all_placed(pos, pos.checkers()),
        });
    }
    let king_to = side.king_to(us);
    for square in attacks::between(from, king_to) {
        let attackers = board.attacks_to(square, !us, occupied.without(from));
        if attackers.any() {
            return Some(CastlingProblem::PassesAttacked {
                square,
                attackers: all_placed(pos, attackers),
            });
        }
    }
    let landed = occupied
        .toggled(from)
        .toggled(rook)
        .toggled(side.rook_to(us));
    let attackers = board.attacks_to(king_to, !us, landed);
    // None: legal after all, though shakmaty refused it.
    attackers.any().then(|| CastlingProblem::LandsAttacked {
        square: king_to,
        attackers: all_placed(pos, attackers),
    })
}

/// How `color` lost the right to castle to `side`: replays the game from
/// its start to find the move after which the right was gone.
fn lost_right(game: &Game, color: Color, side: CastlingSide) -> Option<CastlingProblem> {
    let mut pos = game.start().clone();
    if pos.castles().rook(color, side).is_none() {
        return Some(CastlingProblem::NoRightAtStart);
    }
    let mode = game.castling_mode();
    for (i, &m) in game.moves().iter().enumerate() {
        let rook = pos.castles().rook(color, side);
        let king = pos.board().king_of(color);
        pos.play_unchecked(m);
        let Some(rook) = rook else { continue };
        if pos.castles().rook(color, side).is_some() {
            continue;
        }
        let ply = i + 1;
        let played = m.to_uci(mode);
        return Some(if m.from().is_some() && m.from() == king {
            CastlingProblem::KingMoved {
                ply,
                played,
                castled: m.is_castle(),
            }
        } else if m.from() == Some(rook) {
            CastlingProblem::RookMoved { ply, rook, played }
        } else {
            CastlingProblem::RookCaptured { ply, rook, played }
        });
    }
    None
}

pub(super) fn on_side<T>(side: CastlingSide, king_side: T, queen_side: T) -> T {
    match side {
        CastlingSide::KingSide => king_side,
        CastlingSide::QueenSide => queen_side,
    }
}

#[cfg(test)]
mod tests {
    use crate::rules_explain::testing::*;
    use crate::rules_explain::*;
    use shakmaty::CastlingMode;

    #[test]
    fn castling_rights_lost_say_when() {
        assert_eq!(
            said("4k3/8/8/8/8/8/8/4K2R w - - 0 1", "", "e1g1"),
            "White cannot castle kingside: the position was set up without that castling right \
             (the FEN's castling field does not give it)."
        );
        let king_walk = "e2e4 e7e5 e1e2 e8e7 e2e1 e7e8 g1f3 g8f6 f1e2 f8e7";
        assert_eq!(
            said("startpos", king_walk, "e1g1"),
            "White cannot castle kingside: the white king moved at ply 3 (e1e2), and a king that \
             has moved may never castle, even after going back."
        );
        let rook_walk = "g1f3 g8f6 h1g1 h8g8 g1h1 g8h8 e2e4 e7e5 f1c4 f8c5";
        assert_eq!(
            said("startpos", rook_walk, "e1g1"),
            "White cannot castle kingside: the rook from h1 moved at ply 3 (h1g1), and a rook \
             that has moved may never castle, even after going back."
        );
        assert_eq!(
            said("4k3/8/8/8/8/8/6b1/R3K2R b KQ - 0 1", "g2h1", "e1g1"),
            "White cannot castle kingside: the white rook on h1 was captured at ply 1 (g2h1)."
        );
        // King takes own rook, after castling the other way.
        let castled = "e2e4 e7e5 g1f3 g8f6 f1c4 f8c5 e1g1 b8c6";
        assert_eq!(
            said("startpos", castled, "g1a1"),
            "White cannot castle queenside: the white king already castled at ply 7 (e1g1), and \
             a player castles at most once."
        );
    }

    #[test]
    fn castling_conditions_name_squares_and_attackers() {
        assert_eq!(
            said("startpos", "", "e1g1"),
            "White cannot castle kingside: the white bishop on f1 and the white knight on g1 are \
             in the way, and every square the king and the rook pass over or land on must be \
             empty."
        );
        assert_eq!(
            said("4k3/8/8/8/1b6/8/8/R3K2R w KQ - 0 1", "", "e1g1"),
            "White cannot castle while in check (from the black bishop on b4): castling is never \
             a way out of check."
        );
        assert_eq!(
            said("4k3/8/8/8/2b5/8/8/R3K2R w KQ - 0 1", "", "e1g1"),
            "White cannot castle kingside: the king would pass over f1, which the black bishop \
             on c4 attacks, and a castling king may not cross an attacked square."
        );
        assert_eq!(
            said("4k3/8/8/8/8/7n/8/R3K2R w KQ - 0 1", "", "e1g1"),
            "White cannot castle kingside: the king would land on g1, which the black knight on \
             h3 attacks, so it would be in check there."
        );
        // b1 attacked does not stop the long castle (RULES.md §2).
        let g = game_in(
            CastlingMode::Standard,
            "1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
            "",
        );
        assert_eq!(explain_illegal(&g, "e1c1"), None);
        // King-takes-rook is read as castling in standard mode too.
        assert_eq!(
            why("4k3/8/8/8/8/7n/8/R3K2R w KQ - 0 1", "", "e1h1"),
            why("4k3/8/8/8/8/7n/8/R3K2R w KQ - 0 1", "", "e1g1")
        );
    }

    #[test]
    fn chess960_castling() {
        let fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
        let g = game_in(CastlingMode::Chess960, fen, "");
        assert_eq!(
            explain_illegal(&g, "g1h1")
                .map(|i| i.to_string())
                .as_deref(),
            Some(
                "White cannot castle kingside: the white rook on f1 is in the way, and every \
                 square the king and the rook pass over or land on must be empty."
            )
        );
        assert_eq!(
            explain_illegal(&g, "g1f1")
                .map(|i| i.to_string())
                .as_deref(),
            Some(
                "White cannot castle queenside: the white bishop on d1 and the white knight on \
                 e1 are in the way, and every square the king and the rook pass over or land on \
                 must be empty."
            )
        );
        // Standard notation for a Chess960 castling whose rook is not on h1.
        let g = game_in(
            CastlingMode::Chess960,
            "4k3/8/8/8/8/8/8/1R2KR2 w FB - 0 1",
            "",
        );
        assert_eq!(explain_illegal(&g, "e1f1"), None);
        assert_eq!(
            explain_illegal(&g, "e1g1")
                .map(|i| i.to_string())
                .as_deref(),
            Some(
                "White can castle kingside only with the rook on f1, and that move is written e1f1."
            )
        );
    }
}
