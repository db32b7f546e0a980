//! `qilin play`: a game against Qilin in the terminal.
//!
//! [`Session`] is the game as a state machine: it takes one typed line at
//! a time and answers with typed [`Event`]s; it knows no terminal. The rule
//! status comes from `game` (the same record and claims as the UCI loop),
//! the reasons for illegal moves from `rules_explain` (through
//! [`notation`]), Qilin's moves from the same search as UCI `go`, weakened
//! with the same `Strength`. [`run`] is the terminal around it: it reads
//! standard input line by line and draws the events ([`view`]).

pub mod notation;
pub mod pgn;
pub mod view;

use crate::game::{Claim, Game, GameOver};
use crate::search::report::{Score, Silent};
use crate::search::strength::Strength;
use crate::search::time::TimeLimit;
use crate::search::{Engine, SearchLimits, SearchRequest, Signals};
use notation::{Refusal, read_move, san};
use shakmaty::{CastlingMode, Color, Move, Position};
use std::io::BufRead;
use std::time::{Duration, Instant};

/// `qilin play`: the command line.
#[derive(Clone, Debug, clap::Args)]
pub struct PlayArgs {
    /// Your colour
    #[arg(long, value_enum, default_value = "white")]
    pub color: Side,
    /// Qilin's level on Stockfish's UCI_Elo scale (as `UCI_LimitStrength`
    /// with `UCI_Elo`; above the calibrated 2200 it plays at full strength)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1350..=2850))]
    pub elo: Option<u32>,
    /// Clocks for both sides: minutes plus an increment in seconds, as 5+3
    #[arg(long, value_name = "MIN+INC", value_parser = parse_clock)]
    pub clock: Option<ClockSetting>,
    /// Milliseconds Qilin thinks a move when there are no clocks
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub movetime: u64,
    /// Nodes Qilin searches a move instead of a time (the same game every time)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Start from this position (default: the start position)
    #[arg(long, num_args = 1.., value_name = "FEN")]
    pub fen: Option<Vec<String>>,
    /// Draw the board with letters (KQRBNP for White, kqrbnp for Black)
    #[arg(long)]
    pub ascii: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Side {
    White,
    Black,
}

/// Clocks as `--clock` gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockSetting {
    pub start_ms: u64,
    pub increment_ms: u64,
}

fn parse_clock(text: &str) -> Result<ClockSetting, String> {
    let (minutes, increment) = text.split_once('+').unwrap_or((text, "0"));
    let minutes: f64 = minutes
        .trim()
        .parse()
        .map_err(|_| format!("'{text}': expected minutes+increment, as 5+3"))?;
    let increment: u64 = increment
        .trim()
        .parse()
        .map_err(|_| format!("'{text}': the increment is whole seconds, as 5+3"))?;
    if !(minutes > 0.0 && minutes <= 600.0) || increment > 600 {
        return Err(format!(
            "'{text}': minutes 0..600 (more than 0), increment 0..600 seconds"
        ));
    }
    Ok(ClockSetting {
        start_ms: (minutes * 60_000.0).round() as u64,
        increment_ms: increment * 1000,
    })
}

/// Qilin accepts a draw offer, or claims a draw it may claim, when its own
/// search (at its level) scores the position at most this, in centipawns
/// from its side: level, or worse for it.
pub const DRAW_MARGIN_CP: i32 = 25;

/// Nodes of a `hint` search: a short look, well under a second.
const HINT_NODES: u64 = 200_000;

/// The most moves an offer to claim "with" a move lists.
const MOVES_LISTED: usize = 6;

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// By a rule, with no claim: mate, stalemate, a dead position,
    /// fivefold repetition, the seventy-five-move rule.
    Rule(GameOver),
    /// A draw claimed by `by` under `claim`.
    Claimed {
        claim: Claim,
        by: Color,
    },
    /// A draw offered and accepted.
    Agreed,
    Resigned {
        loser: Color,
    },
    /// `loser`'s flag fell; a draw when the other side could not mate by
    /// any series of legal moves.
    Time {
        loser: Color,
        drawn: bool,
    },
    /// The player left (`quit`, end of input) before the end.
    Abandoned,
}

impl Outcome {
    /// The PGN result.
    pub fn result(self) -> &'static str {
        let win = |c: Color| c.fold_wb("1-0", "0-1");
        match self {
            Outcome::Rule(GameOver::Checkmate { winner }) => win(winner),
            Outcome::Resigned { loser }
            | Outcome::Time {
                loser,
                drawn: false,
            } => win(!loser),
            Outcome::Abandoned => "*",
            _ => "1/2-1/2",
        }
    }
}

/// What the session tells the player.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The board changed: draw it.
    Board,
    Moved {
        color: Color,
        san: String,
    },
    /// `color` is in check (and not mated).
    Check {
        color: Color,
    },
    /// The typed move breaks a rule; the reason is `rules_explain`'s text.
    Illegal {
        text: String,
        reason: String,
    },
    NotAMove {
        text: String,
    },
    Ambiguous {
        text: String,
        moves: Vec<String>,
    },
    /// The player may claim a draw: now (`with` empty) or by announcing
    /// one of the moves `with` (`total` of them) and playing it.
    ClaimAvailable {
        claim: Claim,
        with: Vec<String>,
        total: usize,
    },
    /// A claim that the rules do not allow here; the move announced with
    /// it (if any) stands.
    ClaimRefused {
        repetitions: usize,
        halfmoves: u32,
    },
    /// Qilin's answer to `draw`.
    DrawOffer {
        accepted: bool,
    },
    GameOver(Outcome),
    Hint {
        san: String,
        score: Score,
    },
    Fen(String),
    Pgn(String),
    Saved(String),
    Undone {
        plies: usize,
    },
    Clocks {
        white_ms: u64,
        black_ms: u64,
    },
    Help,
    /// Qilin is about to think.
    Thinking,
    /// A command that cannot be carried out now, in words.
    Refused(String),
    Bye,
}

/// A game against Qilin.
pub struct Session {
    game: Game,
    player: Color,
    engine: Engine,
    elo: Option<u32>,
    think: Think,
    /// Milliseconds left; `None` without clocks.
    clocks: Option<Clocks>,
    clock: Option<ClockSetting>,
    increment_ms: u64,
    outcome: Option<Outcome>,
    seed: u64,
    quit: bool,
}

/// Both clocks, in milliseconds left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clocks {
    pub white_ms: u64,
    pub black_ms: u64,
}

impl Clocks {
    fn of(&mut self, color: Color) -> &mut u64 {
        match color {
            Color::White => &mut self.white_ms,
            Color::Black => &mut self.black_ms,
        }
    }
}

/// How long Qilin thinks when there are no clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Think {
    MoveTime(u64),
    Nodes(u64),
}

/// Everything a session is set up with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub game: Game,
    pub player: Color,
    pub elo: Option<u32>,
    pub think: Think,
    pub clock: Option<ClockSetting>,
    /// Seeds the choice of a weakened Qilin.
    pub seed: u64,
}

impl Settings {
    pub fn from_args(args: &PlayArgs) -> Result<Settings, String> {
        let fen = args.fen.as_deref().unwrap_or_default();
        let game = Game::from_fen_words(fen, CastlingMode::Standard).map_err(|e| e.to_string())?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Ok(Settings {
            game,
            player: match args.color {
                Side::White => Color::White,
                Side::Black => Color::Black,
            },
            elo: args.elo,
            think: args
                .nodes
                .map_or(Think::MoveTime(args.movetime), Think::Nodes),
            clock: args.clock,
            seed,
        })
    }
}

impl Session {
    pub fn new(settings: Settings) -> Result<Session, String> {
        let engine = Engine::new(1, 16)?;
        Ok(Session {
            game: settings.game,
            player: settings.player,
            engine,
            elo: settings.elo,
            think: settings.think,
            clocks: settings.clock.map(|c| Clocks {
                white_ms: c.start_ms,
                black_ms: c.start_ms,
            }),
            clock: settings.clock,
            increment_ms: settings.clock.map_or(0, |c| c.increment_ms),
            outcome: None,
            seed: settings.seed,
            quit: false,
        })
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    pub fn player(&self) -> Color {
        self.player
    }

    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    pub fn elo(&self) -> Option<u32> {
        self.elo
    }

    /// The player has left: nothing more is read.
    pub fn has_quit(&self) -> bool {
        self.quit
    }

    /// It is Qilin's turn and the game goes on.
    pub fn engine_to_move(&self) -> bool {
        !self.quit && self.outcome.is_none() && self.game.position().turn() != self.player
    }

    /// The events of the start: the board, and what the position already
    /// says (a check, a game already over).
    pub fn start(&mut self) -> Vec<Event> {
        let mut events = vec![Event::Board];
        events.extend(self.after_move());
        events
    }

    /// Carries out one line the player typed; `thought` is the time they
    /// took, charged to their clock when there are clocks.
    pub fn handle(&mut self, line: &str, thought: Duration) -> Vec<Event> {
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match word.to_ascii_lowercase().as_str() {
            "" => Vec::new(),
            "help" | "?" => vec![Event::Help],
            "quit" | "exit" => self.leave(),
            "fen" => vec![Event::Fen(self.game.fen())],
            "pgn" if rest.is_empty() => vec![Event::Pgn(self.pgn())],
            "pgn" => match std::fs::write(rest, self.pgn()) {
                Ok(()) => vec![Event::Saved(rest.to_string())],
                Err(e) => vec![Event::Refused(format!("cannot write {rest}: {e}"))],
            },
            "undo" => self.undo(),
            "board" => vec![Event::Board],
            _ if self.outcome.is_some() => vec![Event::Refused(
                "the game is over: undo, pgn, fen or quit".to_string(),
            )],
            "hint" => self.hint(),
            "resign" => self.finish(Outcome::Resigned { loser: self.player }),
            "draw" => self.draw_offer(),
            "claim" => self.claim(rest, thought),
            _ => self.player_move(line, thought),
        }
    }

    /// The end of the input: the game is left as it stands.
    pub fn end_of_input(&mut self) -> Vec<Event> {
        if self.quit {
            return Vec::new();
        }
        self.leave()
    }

    fn leave(&mut self) -> Vec<Event> {
        self.quit = true;
        let mut events = Vec::new();
        if self.outcome.is_none() && !self.game.moves().is_empty() {
            events.extend(self.finish(Outcome::Abandoned));
        }
        events.push(Event::Bye);
        events
    }

    fn finish(&mut self, outcome: Outcome) -> Vec<Event> {
        self.outcome = Some(outcome);
        vec![Event::GameOver(outcome)]
    }

    fn player_move(&mut self, text: &str, thought: Duration) -> Vec<Event> {
        if self.game.position().turn() != self.player {
            return vec![Event::Refused("it is Qilin's turn".to_string())];
        }
        let m = match read_move(&self.game, text) {
            Ok(m) => m,
            Err(refusal) => return vec![refused(text, refusal)],
        };
        if let Some(events) = self.charge(self.player, thought) {
            return events;
        }
        self.play(m)
    }

    /// Takes `spent` off `color`'s clock and adds the increment; the
    /// events of a fallen flag.
    fn charge(&mut self, color: Color, spent: Duration) -> Option<Vec<Event>> {
        let clocks = self.clocks.as_mut()?;
        let left = clocks.of(color);
        let spent = spent.as_millis() as u64;
        if spent >= *left {
            *left = 0;
            // FIDE 6.9: the flag loses, unless the opponent cannot mate
            // by any series of legal moves.
            let drawn = self.game.position().has_insufficient_material(!color);
            return Some(self.finish(Outcome::Time {
                loser: color,
                drawn,
            }));
        }
        *left = left.saturating_sub(spent).saturating_add(self.increment_ms);
        None
    }

    /// Plays a legal move and tells what follows from it.
    fn play(&mut self, m: Move) -> Vec<Event> {
        let color = self.game.position().turn();
        let text = san(self.game.position(), m);
        self.game.play(m);
        let mut events = vec![Event::Board, Event::Moved { color, san: text }];
        if let Some(Clocks { white_ms, black_ms }) = self.clocks {
            events.push(Event::Clocks { white_ms, black_ms });
        }
        events.extend(self.after_move());
        events
    }

    /// The rules about the position reached: a game end, a check, and, on
    /// the player's turn, the draws they may claim.
    fn after_move(&mut self) -> Vec<Event> {
        let status = self.game.rule_status();
        if let Some(&end) = status.ended.first() {
            return self.finish(Outcome::Rule(end));
        }
        let mut events = Vec::new();
        let pos = self.game.position();
        if pos.is_check() {
            events.push(Event::Check { color: pos.turn() });
        }
        if pos.turn() == self.player {
            events.extend(self.claims_open());
        }
        events
    }

    /// The draws the player may claim now, and those they may claim by
    /// announcing a move.
    fn claims_open(&self) -> Vec<Event> {
        let now = self.game.rule_status().claims;
        let mut events: Vec<Event> = now
            .iter()
            .map(|&claim| Event::ClaimAvailable {
                claim,
                with: Vec::new(),
                total: 0,
            })
            .collect();
        let pos = self.game.position();
        let mut by_claim: Vec<(Claim, Vec<String>)> = Vec::new();
        for m in pos.legal_moves() {
            for claim in self.game.claims_after(m) {
                if now.contains(&claim) {
                    continue;
                }
                let text = san(pos, m);
                match by_claim.iter_mut().find(|(c, _)| *c == claim) {
                    Some((_, moves)) => moves.push(text),
                    None => by_claim.push((claim, vec![text])),
                }
            }
        }
        events.extend(by_claim.into_iter().map(|(claim, moves)| {
            let total = moves.len();
            Event::ClaimAvailable {
                claim,
                with: moves.into_iter().take(MOVES_LISTED).collect(),
                total,
            }
        }));
        events
    }

    /// `claim` or `claim MOVE` (FIDE 9.2, 9.3): a draw the position allows
    /// now, or one the announced move will allow; a claim the rules do not
    /// allow is refused and the announced move stands (FIDE 9.5.3, which
    /// also gives the opponent two more minutes).
    fn claim(&mut self, text: &str, thought: Duration) -> Vec<Event> {
        if self.game.position().turn() != self.player {
            return vec![Event::Refused("it is Qilin's turn".to_string())];
        }
        if let Some(&claim) = self.game.rule_status().claims.first() {
            return self.finish(Outcome::Claimed {
                claim,
                by: self.player,
            });
        }
        let refusal = |game: &Game| Event::ClaimRefused {
            repetitions: game.repetitions(),
            halfmoves: game.position().halfmoves(),
        };
        if text.is_empty() {
            let mut events = vec![refusal(&self.game)];
            events.extend(self.claims_open());
            return events;
        }
        let m = match read_move(&self.game, text) {
            Ok(m) => m,
            Err(refused_move) => return vec![refused(text, refused_move)],
        };
        if let Some(events) = self.charge(self.player, thought) {
            return events;
        }
        if let Some(&claim) = self.game.claims_after(m).first() {
            let mut events = self.play(m);
            // The move made the claim good unless it ended the game itself.
            if self.outcome.is_none() {
                events.extend(self.finish(Outcome::Claimed {
                    claim,
                    by: self.player,
                }));
            }
            return events;
        }
        let mut after = self.game.clone();
        after.play(m);
        let mut events = vec![refusal(&after)];
        if let Some(clocks) = self.clocks.as_mut() {
            let engine = clocks.of(!self.player);
            *engine = engine.saturating_add(120_000);
        }
        events.extend(self.play(m));
        events
    }

    fn undo(&mut self) -> Vec<Event> {
        let player_moved = |game: &Game, ply: usize| {
            // The side that made the move of `ply` (0-based).
            let first = game.start().turn();
            let mover = if ply.is_multiple_of(2) { first } else { !first };
            mover == self.player
        };
        let moves = self.game.moves().len();
        let Some(last_own) = (0..moves).rev().find(|&ply| player_moved(&self.game, ply)) else {
            return vec![Event::Refused("you have no move to take back".to_string())];
        };
        let plies = moves - last_own;
        for _ in 0..plies {
            self.game.take_back();
        }
        self.outcome = None;
        let mut events = vec![Event::Undone { plies }, Event::Board];
        events.extend(self.after_move());
        events
    }

    /// A search from the current position at Qilin's level and limits.
    fn search(&mut self, limits: SearchLimits, strength: bool) -> (Option<Move>, Option<i32>) {
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15).rotate_left(7);
        let strength = if strength {
            self.elo.and_then(|elo| Strength::limited(elo, self.seed))
        } else {
            None
        };
        let request = SearchRequest {
            strength,
            ..SearchRequest::new(self.game.clone(), limits)
        };
        let result = self.engine.search(&request, &Silent, &Signals::default());
        (result.best, result.score)
    }

    fn engine_limits(&self) -> SearchLimits {
        let turn = self.game.position().turn();
        let time = match (self.clocks, self.think) {
            (Some(mut clocks), _) => TimeLimit::Clock {
                remaining: *clocks.of(turn),
                increment: self.increment_ms,
                moves_to_go: None,
            },
            (None, Think::MoveTime(ms)) => TimeLimit::MoveTime(ms),
            (None, Think::Nodes(_)) => TimeLimit::None,
        };
        SearchLimits {
            nodes: match self.think {
                Think::Nodes(n) if self.clocks.is_none() => Some(n),
                _ => None,
            },
            time,
            move_overhead_ms: 10,
            ..SearchLimits::default()
        }
    }

    fn hint(&mut self) -> Vec<Event> {
        let limits = SearchLimits {
            nodes: Some(HINT_NODES),
            ..SearchLimits::default()
        };
        match self.search(limits, false) {
            (Some(best), Some(score)) => vec![Event::Hint {
                san: san(self.game.position(), best),
                score: Score::from_search(score),
            }],
            _ => vec![Event::Refused("there is no move to hint".to_string())],
        }
    }

    /// The player offers a draw: Qilin searches at its level and accepts
    /// when it finds the position level or worse for itself.
    fn draw_offer(&mut self) -> Vec<Event> {
        let (_, score) = self.search(self.engine_limits_at_player_turn(), true);
        // The score is the player's (they are to move); Qilin's is its negation.
        let accepted = score.is_some_and(|s| s.saturating_neg() <= DRAW_MARGIN_CP);
        let mut events = vec![Event::DrawOffer { accepted }];
        if accepted {
            events.extend(self.finish(Outcome::Agreed));
        }
        events
    }

    /// Qilin's limits for judging a position on the player's turn: its
    /// usual search, with a clock read as a second's thought.
    fn engine_limits_at_player_turn(&self) -> SearchLimits {
        let mut limits = self.engine_limits();
        if self.clocks.is_some() {
            limits.time = TimeLimit::MoveTime(1000);
        }
        limits
    }

    /// Qilin moves: it claims a draw the rules give it when its search
    /// finds nothing better, else plays its move.
    pub fn engine_move(&mut self) -> Vec<Event> {
        if !self.engine_to_move() {
            return Vec::new();
        }
        let engine = !self.player;
        let started = Instant::now();
        let (best, score) = self.search(self.engine_limits(), true);
        if let Some(events) = self.charge(engine, started.elapsed()) {
            return events;
        }
        let content = score.is_some_and(|s| s <= DRAW_MARGIN_CP);
        if let (Some(&claim), true) = (self.game.rule_status().claims.first(), content) {
            return self.finish(Outcome::Claimed { claim, by: engine });
        }
        let Some(best) = best else {
            // No legal move: the game ended by the rules already.
            return self.after_move();
        };
        let claim = self.game.claims_after(best).first().copied();
        let mut events = self.play(best);
        if let (Some(claim), true, None) = (claim, content, self.outcome) {
            events.extend(self.finish(Outcome::Claimed { claim, by: engine }));
        }
        events
    }

    /// The game in PGN.
    pub fn pgn(&self) -> String {
        let white_is_player = self.player == Color::White;
        let qilin = match self.elo {
            Some(elo) => format!("{} (UCI_Elo {elo})", crate::NAME),
            None => crate::NAME.to_string(),
        };
        let (white, black) = if white_is_player {
            ("Player".to_string(), qilin)
        } else {
            (qilin, "Player".to_string())
        };
        pgn::write(&pgn::Record {
            game: &self.game,
            white: &white,
            black: &black,
            outcome: self.outcome,
            // PGN's TimeControl: seconds, plus the increment in seconds.
            time_control: self
                .clock
                .map(|c| format!("{}+{}", c.start_ms / 1000, c.increment_ms / 1000)),
        })
    }
}

/// The event of a move that cannot be played.
fn refused(text: &str, refusal: Refusal) -> Event {
    let text = text.to_string();
    match refusal {
        Refusal::NotAMove => Event::NotAMove { text },
        Refusal::Ambiguous(moves) => Event::Ambiguous { text, moves },
        Refusal::Illegal(why) => Event::Illegal {
            text,
            reason: why.to_string(),
        },
        Refusal::NoSuchPiece { role, to } => Event::Illegal {
            text,
            reason: format!(
                "You have no {} that can go to {to}.",
                crate::rules_explain::role_name(role)
            ),
        },
    }
}

/// `qilin play`: the game on standard input and output. Ends at `quit` or
/// at the end of the input.
pub fn run(args: &PlayArgs) -> Result<(), String> {
    let mut session = Session::new(Settings::from_args(args)?)?;
    let style = view::Style { ascii: args.ascii };
    let show = |session: &Session, events: &[Event]| {
        for line in view::lines(session, events, style) {
            println!("{line}");
        }
    };
    let events = session.start();
    show(&session, &events);
    println!("{}", view::intro(&session));
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut buf = Vec::new();
    while !session.has_quit() {
        while session.engine_to_move() {
            show(&session, &[Event::Thinking]);
            let events = session.engine_move();
            show(&session, &events);
        }
        view::prompt(&session);
        let asked = Instant::now();
        buf.clear();
        let events = match input.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => session.end_of_input(),
            Ok(_) => session.handle(&String::from_utf8_lossy(&buf), asked.elapsed()),
        };
        show(&session, &events);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
