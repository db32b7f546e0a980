//! The game record: the position, the keys of every position since the game
//! (or the FEN) began, and the rule status derived from them.
//!
//! shakmaty knows how pieces move and when a side has no legal move; it does
//! not know repetition or the move clocks. Those rules live here.

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Move, Position, PositionError};
use std::fmt;

/// The key every repetition is judged by: en passant counts only when a legal
/// capture exists, as the threefold rule says.
pub fn position_key(pos: &Chess) -> u64 {
    let key: Zobrist64 = pos.zobrist_hash(EnPassantMode::Legal);
    key.0
}

/// The key after `m` (`key` being the parent's), incremental where shakmaty
/// can, from scratch elsewhere: the same key as `position_key(child)`.
pub fn child_key(parent: &Chess, key: u64, m: Move, child: &Chess) -> u64 {
    parent
        .update_zobrist_hash(Zobrist64(key), m, EnPassantMode::Legal)
        .map_or_else(|| position_key(child), |z| z.0)
}

/// One position of the game, as the repetition rules need to remember it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ply {
    key: u64,
    /// The side to move is in check, so the move that led here gave check.
    in_check: bool,
}

/// A game from its start position through the moves played so far.
#[derive(Clone, Debug)]
pub struct Game {
    start: Chess,
    pos: Chess,
    mode: CastlingMode,
    moves: Vec<Move>,
    /// Every position from the start, the current one last.
    plies: Vec<Ply>,
}

/// Why a `position` command could not be carried out in full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// The FEN was rejected; the game is left as it was.
    Fen { fen: String, reason: String },
    /// A move of the list could not be played; the game holds the moves
    /// before it. `ply` counts the moves of the list from 1.
    Move {
        text: String,
        ply: usize,
        problem: MoveError,
    },
}

/// What is wrong with a move text, as far as the game record can tell.
/// Which rule an illegal move breaks is the rule teacher's to say
/// (`rules_explain::setup_illegality`), from the game the error left: the
/// record knows the rules, not how to teach them, and so depends on nothing
/// of the teacher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveError {
    /// The text is not a move at all (`xyz`, `e9e1`).
    Unparsable,
    /// A move in form, against the rules here.
    Illegal,
}

impl MoveError {
    /// The word the error line starts with.
    pub fn word(self) -> &'static str {
        match self {
            MoveError::Unparsable => "unparsable",
            MoveError::Illegal => "illegal",
        }
    }
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Fen { fen, reason } => write!(f, "invalid fen '{fen}': {reason}"),
            SetupError::Move { text, ply, problem } => write!(
                f,
                "{} move '{text}' at ply {ply}; position set up to ply {}",
                problem.word(),
                ply.saturating_sub(1)
            ),
        }
    }
}

impl Default for Game {
    fn default() -> Self {
        Game::new(Chess::default(), CastlingMode::Standard)
    }
}

impl Game {
    pub fn new(start: Chess, mode: CastlingMode) -> Game {
        let first = Ply {
            key: position_key(&start),
            in_check: start.is_check(),
        };
        Game {
            pos: start.clone(),
            start,
            mode,
            moves: Vec::new(),
            plies: vec![first],
        }
    }

    /// Reads a FEN (with or without the move counters; standard, Shredder or
    /// X-FEN castling). An en passant square that no pawn could have made is
    /// dropped, as Stockfish does; a check no single move could have given
    /// (two bishops at once, say) is accepted, as published perft suites
    /// and composed studies use such positions and move generation is exact.
    pub fn from_fen(fen: &str, mode: CastlingMode) -> Result<Game, SetupError> {
        let error = |reason: String| SetupError::Fen {
            fen: fen.to_string(),
            reason,
        };
        let parsed: Fen = fen.parse().map_err(|e| error(format!("{e}")))?;
        let pos: Chess = parsed
            .into_position(mode)
            .or_else(PositionError::ignore_invalid_ep_square)
            .or_else(PositionError::ignore_impossible_check)
            .map_err(|e| error(describe_position_error(&e, mode)))?;
        Ok(Game::new(pos, mode))
    }

    /// The game of a FEN, or of the start position for `None`.
    pub fn setup(fen: Option<&str>, mode: CastlingMode) -> Result<Game, SetupError> {
        match fen {
            None => Ok(Game::new(Chess::default(), mode)),
            Some(fen) => Game::from_fen(fen, mode),
        }
    }

    /// The game of a FEN given as the words of a command line (a shell
    /// splits a FEN at its spaces), or of the start position for no words:
    /// the one reading of `--fen` for every tool.
    pub fn from_fen_words(words: &[String], mode: CastlingMode) -> Result<Game, SetupError> {
        let fen = (!words.is_empty()).then(|| words.join(" "));
        Game::setup(fen.as_deref(), mode)
    }

    /// Plays a list of UCI moves, stopping at the first one that is not
    /// legal here; the moves before it stay played.
    pub fn play_uci_moves<S: AsRef<str>>(&mut self, moves: &[S]) -> Result<(), SetupError> {
        self.moves.reserve(moves.len());
        self.plies.reserve(moves.len());
        for (i, text) in moves.iter().enumerate() {
            let text = text.as_ref();
            let m = self.parse_move(text).map_err(|problem| SetupError::Move {
                text: text.to_string(),
                ply: i + 1,
                problem,
            })?;
            self.play(m);
        }
        Ok(())
    }

    /// Turns a UCI move into a legal move of the current position.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        parse_uci_move(&self.pos, text)
    }

    /// Plays a move known to be legal in the current position.
    pub fn play(&mut self, m: Move) {
        self.pos.play_unchecked(m);
        self.moves.push(m);
        self.plies.push(Ply {
            key: position_key(&self.pos),
            in_check: self.pos.is_check(),
        });
    }

    /// Takes back the last move, if any: the game is as it was before it.
    /// The position is replayed from the start (a take-back is rare; the
    /// record stays the only state).
    pub fn take_back(&mut self) -> Option<Move> {
        let m = self.moves.pop()?;
        self.plies.pop();
        let mut pos = self.start.clone();
        for &played in &self.moves {
            pos.play_unchecked(played);
        }
        self.pos = pos;
        Some(m)
    }

    pub fn position(&self) -> &Chess {
        &self.pos
    }

    pub fn start(&self) -> &Chess {
        &self.start
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    pub fn castling_mode(&self) -> CastlingMode {
        self.mode
    }

    /// How castling moves are written from now on (`UCI_Chess960`).
    pub fn set_castling_mode(&mut self, mode: CastlingMode) {
        self.mode = mode;
    }

    pub fn key(&self) -> u64 {
        self.plies.last().map_or(0, |p| p.key)
    }

    /// Keys of the positions that a later position may still repeat: those
    /// since the last capture or pawn move, oldest first, the current one last.
    pub fn reversible_keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.reversible_plies().iter().map(|p| p.key)
    }

    fn reversible_plies(&self) -> &[Ply] {
        let window = (self.pos.halfmoves() as usize + 1).min(self.plies.len());
        &self.plies[self.plies.len() - window..]
    }

    pub fn to_uci(&self, m: Move) -> String {
        m.to_uci(self.mode).to_string()
    }

    pub fn fen(&self) -> String {
        Fen::from_position(&self.pos, EnPassantMode::Legal).to_string()
    }

    /// How many times the current position has stood, this time included.
    pub fn repetitions(&self) -> usize {
        let plies = self.reversible_plies();
        let key = self.key();
        plies
            .iter()
            .rev()
            .step_by(2)
            .filter(|p| p.key == key)
            .count()
    }

    /// True when the side that kept giving check in the repeated stretch gave
    /// check with every one of its moves there. The stretch runs from the
    /// first of the last three occurrences of the position to now.
    fn repetition_is_perpetual_check(&self) -> bool {
        let plies = self.reversible_plies();
        let key = self.key();
        let occurrences: Vec<usize> = (0..plies.len())
            .rev()
            .step_by(2)
            .filter(|&i| plies[i].key == key)
            .take(3)
            .collect();
        let Some(&first) = occurrences.last() else {
            return false;
        };
        // plies[i].in_check tells whether the move that reached ply i gave check.
        // Moves reaching first+1, first+3, ... were made by one side, the
        // others by its opponent.
        let stretch = &plies[first + 1..];
        let all_checks = |offset: usize| stretch.iter().skip(offset).step_by(2).all(|p| p.in_check);
        !stretch.is_empty() && (all_checks(0) || all_checks(1))
    }

    /// What the rules of chess say about the current position.
    pub fn rule_status(&self) -> RuleStatus {
        let pos = &self.pos;
        let mut ended = Vec::new();
        let mut claims = Vec::new();
        let no_moves = pos.legal_moves().is_empty();
        if no_moves && pos.is_check() {
            // Checkmate ends the game whatever the clocks say.
            ended.push(GameOver::Checkmate {
                winner: !pos.turn(),
            });
        } else {
            if no_moves {
                ended.push(GameOver::Stalemate);
            }
            if pos.is_insufficient_material() {
                ended.push(GameOver::InsufficientMaterial);
            }
            let repetitions = self.repetitions();
            if repetitions >= 5 {
                ended.push(GameOver::FivefoldRepetition);
            }
            if pos.halfmoves() >= 150 {
                ended.push(GameOver::SeventyFiveMoves);
            }
            if ended.is_empty() {
                if repetitions >= 3 {
                    claims.push(Claim::ThreefoldRepetition {
                        perpetual_check: self.repetition_is_perpetual_check(),
                    });
                }
                if pos.halfmoves() >= 100 {
                    claims.push(Claim::FiftyMoves);
                }
            }
        }
        RuleStatus { ended, claims }
    }

    /// The claims that playing `m` would give: the position after it would
    /// stand for the third time, or the fifty moves would be complete. A move
    /// that ends the game (checkmate, stalemate, fivefold repetition, the
    /// seventy-five-move rule, a dead position) leaves nothing to claim; a
    /// repetition reached by perpetual check is named as such.
    pub fn claims_after(&self, m: Move) -> Vec<Claim> {
        let mut next = self.clone();
        next.play(m);
        next.rule_status().claims
    }
}

/// Reads a UCI move (`e2e4`, `e7e8q`; castling as `e1g1` or king-takes-rook
/// `e1h1`) and checks it is legal in `pos`.
pub fn parse_uci_move(pos: &Chess, text: &str) -> Result<Move, MoveError> {
    let uci = UciMove::from_ascii(text.as_bytes()).map_err(|_| MoveError::Unparsable)?;
    uci.to_move(pos).map_err(|_| MoveError::Illegal)
}

fn describe_position_error(e: &PositionError<Chess>, mode: CastlingMode) -> String {
    let text = e.to_string();
    if mode == CastlingMode::Standard && text.contains("castling") {
        format!("{text} (for Chess960 castling set UCI_Chess960 to true)")
    } else {
        text
    }
}

/// A game end that the rules make automatic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameOver {
    Checkmate { winner: Color },
    Stalemate,
    InsufficientMaterial,
    FivefoldRepetition,
    SeventyFiveMoves,
}

/// A draw a player may claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    ThreefoldRepetition { perpetual_check: bool },
    FiftyMoves,
}

/// Everything the rules say about one position: the automatic game ends that
/// apply, and, when the game is not over, the draws that may be claimed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleStatus {
    pub ended: Vec<GameOver>,
    pub claims: Vec<Claim>,
}

impl RuleStatus {
    pub fn is_over(&self) -> bool {
        !self.ended.is_empty()
    }
}

impl fmt::Display for GameOver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameOver::Checkmate {
                winner: Color::White,
            } => f.write_str("checkmate, white wins"),
            GameOver::Checkmate {
                winner: Color::Black,
            } => f.write_str("checkmate, black wins"),
            GameOver::Stalemate => f.write_str("stalemate"),
            GameOver::InsufficientMaterial => f.write_str("insufficient material"),
            GameOver::FivefoldRepetition => f.write_str("fivefold repetition"),
            GameOver::SeventyFiveMoves => f.write_str("seventy-five-move rule"),
        }
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::ThreefoldRepetition {
                perpetual_check: false,
            } => f.write_str("threefold repetition"),
            Claim::ThreefoldRepetition {
                perpetual_check: true,
            } => f.write_str("threefold repetition (perpetual check)"),
            Claim::FiftyMoves => f.write_str("fifty-move rule"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(fen: &str, moves: &str) -> Game {
        let mut g = if fen == "startpos" {
            Game::default()
        } else {
            Game::from_fen(fen, CastlingMode::Standard).expect("test FEN")
        };
        let moves: Vec<&str> = moves.split_whitespace().collect();
        g.play_uci_moves(&moves).expect("test moves");
        g
    }

    const KNIGHT_SHUFFLE: &str = "g1f3 g8f6 f3g1 f6g8";

    #[test]
    fn take_back_restores_the_position_and_the_repetition_count() {
        let mut g = game("startpos", &format!("{KNIGHT_SHUFFLE} {KNIGHT_SHUFFLE}"));
        assert_eq!(g.repetitions(), 3);
        let m = g.take_back().expect("a move");
        assert_eq!(g.to_uci(m), "f6g8");
        assert_eq!(g.moves().len(), 7);
        assert_eq!(g.repetitions(), 2, "the position after f3g1 stood twice");
        assert_eq!(
            g.fen(),
            "rnbqkb1r/pppppppp/5n2/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 7 4"
        );
        assert!(g.rule_status().claims.is_empty());
        let mut start = Game::default();
        assert_eq!(start.take_back(), None);
    }

    #[test]
    fn a_fen_given_as_words() {
        let fen = "8/8/8/8/8/8/8/K1k5 w - - 0 1";
        let words: Vec<String> = fen.split(' ').map(String::from).collect();
        let mode = CastlingMode::Standard;
        assert_eq!(Game::from_fen_words(&words, mode).expect("FEN").fen(), fen);
        let start = Game::from_fen_words(&[], mode).expect("the start position");
        assert_eq!(start.fen(), Game::default().fen());
        assert!(matches!(
            Game::from_fen_words(&["8/8".to_string()], mode),
            Err(SetupError::Fen { .. })
        ));
    }

    #[test]
    fn start_key_is_polyglot() {
        assert_eq!(Game::default().key(), 0x463b96181691fc9c);
    }

    #[test]
    fn threefold_after_two_shuffles() {
        let once = game("startpos", KNIGHT_SHUFFLE);
        assert_eq!(once.repetitions(), 2);
        assert!(once.rule_status().claims.is_empty());
        let twice = game("startpos", &format!("{KNIGHT_SHUFFLE} {KNIGHT_SHUFFLE}"));
        assert_eq!(twice.repetitions(), 3);
        assert_eq!(
            twice.rule_status().claims,
            vec![Claim::ThreefoldRepetition {
                perpetual_check: false
            }]
        );
    }

    #[test]
    fn fivefold_ends_the_game() {
        let moves = [KNIGHT_SHUFFLE; 4].join(" ");
        let g = game("startpos", &moves);
        assert_eq!(g.repetitions(), 5);
        assert_eq!(g.rule_status().ended, vec![GameOver::FivefoldRepetition]);
        assert!(g.rule_status().claims.is_empty());
    }

    #[test]
    fn en_passant_counts_only_when_a_legal_capture_exists() {
        let key = |fen: &str| {
            Game::from_fen(fen, CastlingMode::Standard)
                .expect("FEN")
                .key()
        };
        // After 1. e4 no black pawn can take on e3: the square changes nothing.
        assert_eq!(
            key("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"),
            key("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
        );
        // With a black pawn on d4 the capture d4xe3 exists: a different position.
        assert_ne!(
            key("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"),
            key("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
        );
    }

    #[test]
    fn claim_after_a_move() {
        let g = game("startpos", &format!("{KNIGHT_SHUFFLE} g1f3 g8f6 f3g1"));
        let m = g.parse_move("f6g8").expect("legal");
        assert_eq!(
            g.claims_after(m),
            vec![Claim::ThreefoldRepetition {
                perpetual_check: false
            }]
        );
        let other = g.parse_move("e7e5").expect("legal");
        assert!(g.claims_after(other).is_empty());
    }

    /// A move that ends the game leaves nothing to claim: the game is over
    /// by the rules (RULES.md §4), so no "draw claim: … after" may be printed.
    #[test]
    fn no_claim_after_a_move_that_reaches_seventy_five_moves() {
        let g = game("4k3/8/8/8/8/8/8/R3K3 w - - 149 80", "");
        let m = g.parse_move("a1a2").expect("legal");
        assert_eq!(g.claims_after(m), Vec::<Claim>::new());
        // Already over (clock far past 150): still nothing to claim.
        let g = game("4k3/8/8/8/8/8/8/4KR2 w - - 4294967295 1", "");
        let m = g.parse_move("f1f2").expect("legal");
        assert_eq!(g.claims_after(m), Vec::<Claim>::new());
    }

    #[test]
    fn no_claim_after_a_move_that_makes_a_fivefold_repetition() {
        let moves = format!("{} g1f3 g8f6 f3g1", [KNIGHT_SHUFFLE; 3].join(" "));
        let g = game("startpos", &moves);
        assert_eq!(g.repetitions(), 4, "the start position stood 4 times");
        let m = g.parse_move("f6g8").expect("legal");
        assert_eq!(g.claims_after(m), Vec::<Claim>::new());
    }

    #[test]
    fn no_claim_after_a_stalemating_move() {
        // Qg1-g6 stalemates the king on h8 with the move that makes the clock 100.
        let g = game("7k/8/5K2/8/8/8/8/6Q1 w - - 99 80", "");
        let m = g.parse_move("g1g6").expect("legal");
        let mut after = g.clone();
        after.play(m);
        assert_eq!(after.rule_status().ended, vec![GameOver::Stalemate]);
        assert_eq!(g.claims_after(m), Vec::<Claim>::new());
        // Any other quiet queen move completes the fifty moves: a claim.
        let m = g.parse_move("g1g2").expect("legal");
        assert_eq!(g.claims_after(m), vec![Claim::FiftyMoves]);
    }

    #[test]
    fn claim_after_a_move_names_perpetual_check() {
        // Qa4+ Ke7 Qa3+ Ke8 twice, then Qa4+ Ke7 and Qa3+ again: the
        // position after it stands for the third time, and every White move
        // since its first time was a check.
        let g = game(
            "4k3/8/8/8/8/Q7/8/4K3 w - - 0 1",
            "a3a4 e8e7 a4a3 e7e8 a3a4 e8e7 a4a3 e7e8 a3a4 e8e7",
        );
        let m = g.parse_move("a4a3").expect("legal");
        assert_eq!(
            g.claims_after(m),
            vec![Claim::ThreefoldRepetition {
                perpetual_check: true
            }]
        );
    }

    #[test]
    fn fifty_move_claim_and_seventy_five_move_end() {
        let g = game("4k3/8/8/8/8/8/8/R3K3 w - - 99 80", "a1a2");
        assert_eq!(g.rule_status().claims, vec![Claim::FiftyMoves]);
        let g = game("4k3/8/8/8/8/8/8/R3K3 w - - 149 80", "a1a2");
        assert_eq!(g.rule_status().ended, vec![GameOver::SeventyFiveMoves]);
    }

    #[test]
    fn mate_beats_the_seventy_five_move_rule() {
        // Ra1-a8 mates on the move that makes the clock 150.
        let g = game("6k1/5ppp/8/8/8/8/8/R5K1 w - - 149 100", "a1a8");
        assert_eq!(
            g.rule_status().ended,
            vec![GameOver::Checkmate {
                winner: Color::White
            }]
        );
    }

    #[test]
    fn perpetual_check_is_named() {
        // White's queen checks from a4 and a3 in turn while Black's king
        // steps between e8 and e7: every White move of the cycle is a check.
        let fen = "4k3/8/8/8/8/Q7/8/4K3 w - - 0 1";
        let cycle = "a3a4 e8e7 a4a3 e7e8";
        let g = game(fen, &format!("{cycle} {cycle}"));
        let status = g.rule_status();
        assert_eq!(
            status.claims,
            vec![Claim::ThreefoldRepetition {
                perpetual_check: true
            }]
        );
    }

    #[test]
    fn a_thousand_plies_set_up_in_under_ten_milliseconds() {
        let text = [KNIGHT_SHUFFLE; 250].join(" ");
        let moves: Vec<&str> = text.split(' ').collect();
        let started = std::time::Instant::now();
        let mut g = Game::default();
        g.play_uci_moves(&moves).expect("legal");
        let status = g.rule_status();
        assert!(
            started.elapsed() < std::time::Duration::from_millis(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(g.moves().len(), 1000);
        // 1000 plies without a capture or pawn move: both automatic draws hold.
        assert_eq!(
            status.ended,
            vec![GameOver::FivefoldRepetition, GameOver::SeventyFiveMoves]
        );
    }

    #[test]
    fn bad_move_keeps_the_moves_before_it() {
        let mut g = Game::default();
        let err = g.play_uci_moves(&["e2e4", "e7e5", "e4e5"]).unwrap_err();
        assert_eq!(
            err,
            SetupError::Move {
                text: "e4e5".into(),
                ply: 3,
                problem: MoveError::Illegal,
            }
        );
        assert_eq!(g.moves().len(), 2);
        assert_eq!(g.position().turn(), Color::White);
    }
}
