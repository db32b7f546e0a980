//! A move as a person types it, SAN (`Nf3`, `exd5`, `O-O`, `e8=Q`) or UCI
//! (`g1f3`), turned into a legal move, or into the words that say why it
//! cannot be played. The reasons are `rules_explain`'s, the same the UCI
//! loop prints: a SAN move is first turned into the from- and to-squares a
//! player means by it.

use crate::game::Game;
use crate::rules_explain::{Illegality, explain_illegal};
use shakmaty::san::{San, SanError, SanPlus};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingSide, Chess, Move, Position, Role, Square};

/// Why a typed move cannot be played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Neither SAN nor UCI.
    NotAMove,
    /// A SAN move more than one piece could make; the moves it may mean.
    Ambiguous(Vec<String>),
    /// A move in form that the rules forbid.
    Illegal(Illegality),
    /// A SAN move no piece of the side to move could make at all: there is
    /// no such piece (on that file or rank), or none moves that way.
    NoSuchPiece { role: Role, to: Square },
}

/// The legal move `text` names in `game`'s position.
pub fn read_move(game: &Game, text: &str) -> Result<Move, Refusal> {
    let pos = game.position();
    if let Ok(m) = game.parse_move(text) {
        return Ok(m);
    }
    if UciMove::from_ascii(text.as_bytes()).is_ok() {
        // UCI in form but illegal: the rule it breaks.
        return Err(explain_illegal(game, text).map_or(Refusal::NotAMove, Refusal::Illegal));
    }
    let Ok(san) = San::from_ascii(text.as_bytes()) else {
        return Err(Refusal::NotAMove);
    };
    match san.to_move(pos) {
        Ok(m) => Ok(m),
        Err(SanError::AmbiguousSan) => Err(Refusal::Ambiguous(matching(pos, san))),
        Err(SanError::IllegalSan) => {
            // A capture mark where nothing is taken, or none where a piece
            // is: the move meant is plain, so it is taken as meant.
            if let Some(m) = with_capture_mark_flipped(san).and_then(|s| s.to_move(pos).ok()) {
                return Ok(m);
            }
            Err(explain_san(game, san))
        }
    }
}

/// A move written in SAN with its check or mate mark.
pub fn san(pos: &Chess, m: Move) -> String {
    SanPlus::from_move(pos.clone(), m).to_string()
}

fn with_capture_mark_flipped(san: San) -> Option<San> {
    match san {
        San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        } => Some(San::Normal {
            role,
            file,
            rank,
            capture: !capture,
            to,
            promotion,
        }),
        _ => None,
    }
}

/// The legal moves an ambiguous SAN may mean, in SAN.
fn matching(pos: &Chess, san: San) -> Vec<String> {
    pos.legal_moves()
        .into_iter()
        .filter(|m| san.matches(*m))
        .map(|m| self::san(pos, m))
        .collect()
}

/// Why no legal move matches a SAN: the rule the move a player means by
/// it breaks. The pieces it may mean are tried in turn; the first whose
/// move breaks a rule other than "this piece does not move that way"
/// explains it, as that is the piece the player had in mind.
fn explain_san(game: &Game, san: San) -> Refusal {
    let pos = game.position();
    let texts: Vec<String> = match san {
        San::Null => vec!["0000".to_string()],
        San::Put { role, to } => vec![format!("{}@{to}", role.upper_char())],
        San::Castle(side) => {
            let king = pos.board().king_of(pos.turn());
            king.map(|from| {
                let file = match side {
                    CastlingSide::KingSide => shakmaty::File::G,
                    CastlingSide::QueenSide => shakmaty::File::C,
                };
                format!("{from}{}", Square::from_coords(file, from.rank()))
            })
            .into_iter()
            .collect()
        }
        San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        } => {
            // A pawn move without a file is a push along the target's file.
            let file = match (role, file, capture) {
                (Role::Pawn, None, false) => Some(to.file()),
                _ => file,
            };
            let pieces = pos.board().by_piece(role.of(pos.turn()));
            let promotion = promotion.map_or(String::new(), |p| p.char().to_string());
            let texts: Vec<String> = pieces
                .into_iter()
                .filter(|sq| file.is_none_or(|f| sq.file() == f))
                .filter(|sq| rank.is_none_or(|r| sq.rank() == r))
                .map(|from| format!("{from}{to}{promotion}"))
                .collect();
            if texts.is_empty() {
                return Refusal::NoSuchPiece { role, to };
            }
            texts
        }
    };
    let reasons: Vec<Illegality> = texts
        .iter()
        .filter_map(|t| explain_illegal(game, t))
        .collect();
    let meant = reasons
        .iter()
        .find(|r| !matches!(r, Illegality::NotThatWay { .. }))
        .or(if reasons.len() == 1 {
            reasons.first()
        } else {
            None
        });
    match (meant, san) {
        (Some(why), _) => Refusal::Illegal(why.clone()),
        (None, San::Normal { role, to, .. }) => Refusal::NoSuchPiece { role, to },
        (None, _) => Refusal::NotAMove,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;

    fn game(fen: &str) -> Game {
        Game::from_fen(fen, CastlingMode::Standard).expect("test FEN")
    }

    fn reason(game: &Game, text: &str) -> String {
        match read_move(game, text) {
            Err(Refusal::Illegal(why)) => why.to_string(),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn san_and_uci_are_both_read() {
        let g = Game::default();
        for text in ["Nf3", "g1f3", "Ng1f3"] {
            let m = read_move(&g, text).expect(text);
            assert_eq!(g.to_uci(m), "g1f3", "{text}");
        }
        let m = read_move(&g, "e4").expect("e4");
        assert_eq!(san(g.position(), m), "e4");
        // A capture mark where nothing is taken is forgiven.
        assert_eq!(
            read_move(&g, "Nxf3").map(|m| g.to_uci(m)),
            Ok("g1f3".into())
        );
        assert_eq!(read_move(&g, "hello"), Err(Refusal::NotAMove));
    }

    #[test]
    fn an_illegal_san_move_gets_the_rule_it_breaks() {
        let g = Game::default();
        // The bishop on f1 is blocked by the pawn on e2.
        assert_eq!(
            reason(&g, "Bc4"),
            "The white bishop on f1 cannot get to c4: the white pawn on e2 is in the way, and \
             only a knight can jump over pieces."
        );
        // The same words as for the UCI move the UCI loop would get.
        assert_eq!(
            read_move(&g, "Bc4"),
            Err(Refusal::Illegal(
                explain_illegal(&g, "f1c4").expect("illegal")
            ))
        );
        assert_eq!(
            read_move(&g, "Qh9"),
            Err(Refusal::NotAMove),
            "no such square"
        );
        let castle = read_move(&g, "O-O");
        assert!(
            matches!(castle, Err(Refusal::Illegal(Illegality::Castling { .. }))),
            "{castle:?}"
        );
    }

    #[test]
    fn an_ambiguous_san_names_the_moves_it_may_mean() {
        let g = game("4k3/8/8/8/8/8/4K3/R6R w - - 0 1");
        assert_eq!(
            read_move(&g, "Rd1"),
            Err(Refusal::Ambiguous(vec!["Rad1".into(), "Rhd1".into()]))
        );
        assert_eq!(
            read_move(&g, "Rad1").map(|m| g.to_uci(m)),
            Ok("a1d1".into())
        );
    }

    #[test]
    fn a_piece_that_is_not_there() {
        let g = game("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
        assert_eq!(
            read_move(&g, "Nf3"),
            Err(Refusal::NoSuchPiece {
                role: Role::Knight,
                to: Square::F3
            })
        );
    }
}
