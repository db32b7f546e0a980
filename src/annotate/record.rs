//! A game as a PGN file records it, and its replay on the board.
//!
//! Reading follows python-chess: the tags, then the main line's moves; the
//! comments, NAGs and variations of the file are skipped (the annotation
//! writes its own). The moves are read by shakmaty's SAN parser (through
//! `pgn-reader`), and played by the same rules as every move of the engine:
//! the first one that cannot be played is explained by
//! [`rules_explain`](crate::rules_explain), and the record stops being a game
//! there.

use crate::game::{Game, SetupError};
use crate::rules_explain::{Illegality, explain_illegal};
use pgn_reader::{Outcome, RawTag, Reader, SanPlus, Visitor};
use shakmaty::san::{San, SanError};
use shakmaty::{CastlingMode, Move, Piece, Position, Role, Square};
use std::fmt;
use std::io::Read;
use std::ops::ControlFlow;

/// One game of a PGN file, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Tag pairs in file order, values unescaped.
    pub tags: Vec<(String, String)>,
    /// The main line's moves.
    pub moves: Vec<SanPlus>,
    /// The termination marker after the moves, if any.
    pub outcome: Option<Outcome>,
}

/// Collects a [`Record`] from `pgn-reader`'s callbacks.
struct Collect;

impl Visitor for Collect {
    type Tags = Vec<(String, String)>;
    type Movetext = Record;
    type Output = Record;

    fn begin_tags(&mut self) -> ControlFlow<Record, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Record> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Record, Record> {
        ControlFlow::Continue(Record {
            tags,
            ..Record::default()
        })
    }

    fn san(&mut self, record: &mut Record, san: SanPlus) -> ControlFlow<Record> {
        record.moves.push(san);
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, record: &mut Record, outcome: Outcome) -> ControlFlow<Record> {
        record.outcome = Some(outcome);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, record: Record) -> Record {
        record
    }
}

/// The games of a PGN text, one at a time.
pub struct Games<R: Read> {
    reader: Reader<R>,
}

impl<R: Read> Games<R> {
    pub fn new(input: R) -> Games<R> {
        Games {
            reader: Reader::new(input),
        }
    }
}

impl<R: Read> Iterator for Games<R> {
    type Item = std::io::Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader.read_game(&mut Collect).transpose()
    }
}

impl Record {
    /// The value of tag `name` (the first, if repeated).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The result the game is written with: the `Result` tag when it is a
    /// termination marker, else the marker after the moves, else `*`.
    pub fn result(&self) -> Outcome {
        self.tag("Result")
            .and_then(|r| r.parse().ok())
            .or(self.outcome)
            .unwrap_or(Outcome::Unknown)
    }

    /// The castling notation of the game: Chess960 when the `Variant` tag
    /// says so.
    fn castling_mode(&self) -> Result<CastlingMode, RecordProblem> {
        match self.tag("Variant").map(str::to_ascii_lowercase).as_deref() {
            None | Some("" | "standard" | "chess" | "from position") => Ok(CastlingMode::Standard),
            Some("chess960" | "chess 960" | "fischerandom" | "fischer random") => {
                Ok(CastlingMode::Chess960)
            }
            Some(_) => Err(RecordProblem::Variant(
                self.tag("Variant").unwrap_or_default().to_string(),
            )),
        }
    }

    /// Plays the record's moves from its start position (the `FEN` tag, or
    /// the standard start) as far as they are legal.
    pub fn replay(&self) -> Replay {
        let start = self
            .castling_mode()
            .and_then(|mode| Game::setup(self.tag("FEN"), mode).map_err(RecordProblem::Setup));
        let mut game = match start {
            Ok(game) => game,
            Err(problem) => {
                return Replay {
                    start: Game::default(),
                    moves: Vec::new(),
                    invalid: Some(InvalidMove {
                        index: 0,
                        written: String::new(),
                        problem,
                    }),
                };
            }
        };
        let start = game.clone();
        let mut moves = Vec::with_capacity(self.moves.len());
        let mut invalid = None;
        for (index, written) in self.moves.iter().enumerate() {
            match resolve(&game, written.san) {
                Ok(m) => {
                    game.play(m);
                    moves.push(m);
                }
                Err(problem) => {
                    invalid = Some(InvalidMove {
                        index,
                        written: written.to_string(),
                        problem,
                    });
                    break;
                }
            }
        }
        Replay {
            start,
            moves,
            invalid,
        }
    }
}

/// A record played out: the moves that are legal, and where and why it
/// stops being a game.
#[derive(Clone, Debug)]
pub struct Replay {
    pub start: Game,
    /// The legal moves from the start, in order.
    pub moves: Vec<Move>,
    /// The first move that could not be played (`index` moves were).
    pub invalid: Option<InvalidMove>,
}

impl Replay {
    /// The game after every legal move: `moves.len() + 1` positions.
    pub fn positions(&self) -> Vec<Game> {
        let mut game = self.start.clone();
        let mut games = Vec::with_capacity(self.moves.len() + 1);
        games.push(game.clone());
        for &m in &self.moves {
            game.play(m);
            games.push(game.clone());
        }
        games
    }
}

/// A move of the record that cannot be played, or a game that cannot start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidMove {
    /// How many moves were played before it.
    pub index: usize,
    /// The move as the file writes it (empty when the game cannot start).
    pub written: String,
    pub problem: RecordProblem,
}

/// Why a record stops being a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordProblem {
    /// The move breaks a rule of chess.
    Illegal(Box<Illegality>),
    /// More than one legal move fits the text (the moves it could be).
    Ambiguous(Vec<String>),
    /// The side to move has no piece of the kind the move names.
    NoSuchPiece { piece: Piece, to: Square },
    /// The `FEN` tag cannot be set up.
    Setup(SetupError),
    /// A `Variant` tag naming a game other than chess.
    Variant(String),
}

impl RecordProblem {
    /// Whether the problem is a move against the rules (rather than a
    /// record that cannot be read as one move).
    pub fn is_illegal_move(&self) -> bool {
        matches!(
            self,
            RecordProblem::Illegal(_) | RecordProblem::NoSuchPiece { .. }
        )
    }
}

impl fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The explanation's lines, as one paragraph.
            RecordProblem::Illegal(why) => {
                let text = why.to_string();
                let lines: Vec<&str> = text.lines().map(str::trim).collect();
                f.write_str(&lines.join(" "))
            }
            RecordProblem::Ambiguous(candidates) => write!(
                f,
                "The move is ambiguous: it could be {}; a move must name one piece.",
                candidates.join(" or ")
            ),
            RecordProblem::NoSuchPiece { piece, to } => write!(
                f,
                "{} has no {} that could move to {to}.",
                piece.color.fold_wb("White", "Black"),
                crate::rules_explain::role_name(piece.role)
            ),
            RecordProblem::Setup(e) => write!(f, "{e}"),
            RecordProblem::Variant(v) => write!(f, "the variant '{v}' is not chess"),
        }
    }
}

/// The legal move `san` stands for in `game`, or why there is none. As
/// python-chess does, a capture mark that does not fit (`Nf3` for a capture
/// on f3, `Nxf3` onto an empty square) is forgiven: it is a slip of the
/// notation, not of the rules.
pub fn resolve(game: &Game, san: San) -> Result<Move, RecordProblem> {
    let pos = game.position();
    let first = san.to_move(pos);
    let result = match (first, san) {
        (
            Err(SanError::IllegalSan),
            San::Normal {
                role,
                file,
                rank,
                capture,
                to,
                promotion,
            },
        ) => San::Normal {
            role,
            file,
            rank,
            capture: !capture,
            to,
            promotion,
        }
        .to_move(pos),
        (result, _) => result,
    };
    match result {
        Ok(m) => Ok(m),
        Err(SanError::AmbiguousSan) => {
            let candidates = pos
                .legal_moves()
                .into_iter()
                .filter(|&m| san.matches(m))
                .map(|m| SanPlus::from_move(pos.clone(), m).to_string())
                .collect();
            Err(RecordProblem::Ambiguous(candidates))
        }
        Err(SanError::IllegalSan) => Err(explain_san(game, san)),
    }
}

/// Why `san` is no legal move here, in the words the UCI front uses for an
/// illegal move: the move is read as the UCI moves it could be, and the
/// explanation of the most telling one is kept (one that names a rule the
/// move breaks before one that only says the piece never moves that way).
fn explain_san(game: &Game, san: San) -> RecordProblem {
    let pos = game.position();
    let us = pos.turn();
    let texts: Vec<String> = match san {
        San::Null => vec!["0000".to_string()],
        San::Put { role, to } => vec![format!("{}@{to}", role.upper_char())],
        San::Castle(side) => {
            let Some(king) = pos.board().king_of(us) else {
                return RecordProblem::NoSuchPiece {
                    piece: us.king(),
                    to: side.king_to(us),
                };
            };
            // The form shakmaty reads in either mode: king takes its rook
            // where the right exists, else the standard king move.
            let to = match pos.castles().rook(us, side) {
                Some(rook) if game.castling_mode() == CastlingMode::Chess960 => rook,
                _ => side.king_to(us),
            };
            vec![format!("{king}{to}")]
        }
        San::Normal {
            role,
            file,
            rank,
            to,
            promotion,
            ..
        } => {
            // A pawn move without a file is a push along the file of `to`.
            let file = file.or((role == Role::Pawn).then(|| to.file()));
            let promotion = promotion.map(|r| r.char().to_string()).unwrap_or_default();
            let texts: Vec<String> = pos
                .board()
                .by_piece(role.of(us))
                .into_iter()
                .filter(|from| file.is_none_or(|f| from.file() == f))
                .filter(|from| rank.is_none_or(|r| from.rank() == r))
                .map(|from| format!("{from}{to}{promotion}"))
                .collect();
            if texts.is_empty() {
                return RecordProblem::NoSuchPiece {
                    piece: role.of(us),
                    to,
                };
            }
            texts
        }
    };
    let explanations: Vec<Illegality> = texts
        .iter()
        .filter_map(|t| explain_illegal(game, t))
        .collect();
    let telling = explanations
        .iter()
        .find(|why| !matches!(why, Illegality::NotThatWay { .. }))
        .or(explanations.first())
        .cloned()
        .unwrap_or(Illegality::Unexplained);
    RecordProblem::Illegal(Box::new(telling))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pgn: &str) -> Vec<Record> {
        Games::new(pgn.as_bytes())
            .collect::<std::io::Result<Vec<_>>>()
            .expect("readable")
    }

    #[test]
    fn tags_moves_and_result_without_comments_or_variations() {
        let games = read(
            "[Event \"a \\\"test\\\"\"]\n[Result \"1-0\"]\n\n\
             1. e4 {best by test} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 1-0\n\n\
             [Event \"second\"]\n\n1. d4 *\n",
        );
        assert_eq!(games.len(), 2);
        let first = &games[0];
        assert_eq!(first.tag("Event"), Some("a \"test\""));
        let moves: Vec<String> = first.moves.iter().map(ToString::to_string).collect();
        assert_eq!(moves, ["e4", "e5", "Nf3", "Nc6"]);
        assert_eq!(first.result().as_str(), "1-0");
        assert_eq!(games[1].result().as_str(), "*");
        assert_eq!(games[1].replay().moves.len(), 1);
    }

    #[test]
    fn an_illegal_move_stops_the_replay_with_the_rule() {
        // After 1. e4 e5 2. Nc3 Bb4 3. d3 the knight on c3 is pinned to the
        // king on e1.
        let games = read("1. e4 e5 2. Nc3 Bb4 3. d3 Nf6 4. Nd5 *");
        let replay = games[0].replay();
        assert_eq!(replay.moves.len(), 6);
        let invalid = replay.invalid.expect("illegal");
        assert_eq!(invalid.index, 6);
        assert_eq!(invalid.written, "Nd5");
        assert!(
            matches!(&invalid.problem, RecordProblem::Illegal(why)
                if matches!(**why, Illegality::ExposesKing { .. })),
            "{:?}",
            invalid.problem
        );
        assert!(
            invalid.problem.to_string().contains("knight on c3"),
            "{}",
            invalid.problem
        );
    }

    #[test]
    fn a_capture_mark_that_does_not_fit_is_forgiven() {
        let games = read("1. e4 d5 2. ed5 Qxd5 3. Nxc3 *");
        let replay = games[0].replay();
        assert_eq!(replay.moves.len(), 5);
        assert!(replay.invalid.is_none());
    }

    #[test]
    fn ambiguous_and_missing_pieces_are_named() {
        let games = read(
            "[FEN \"4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1\"]\n[SetUp \"1\"]\n\n1. Nd2 *\n\n\
             [FEN \"4k3/8/8/8/8/8/8/4K3 w - - 0 1\"]\n\n1. Qh5 *",
        );
        let problem = games[0].replay().invalid.expect("ambiguous").problem;
        assert_eq!(
            problem,
            RecordProblem::Ambiguous(vec!["Nbd2".into(), "Nfd2".into()])
        );
        let text = games[1]
            .replay()
            .invalid
            .expect("no queen")
            .problem
            .to_string();
        assert_eq!(text, "White has no queen that could move to h5.");
    }

    #[test]
    fn a_move_after_checkmate_is_illegal_because_the_game_is_over() {
        let games = read("1. f3 e5 2. g4 Qh4# 3. a3 0-1");
        let invalid = games[0].replay().invalid.expect("illegal");
        assert_eq!(invalid.index, 4);
        assert!(
            invalid.problem.to_string().starts_with("The game is over"),
            "{}",
            invalid.problem
        );
    }
}
