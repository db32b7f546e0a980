//! What `qilin play` shows: the board and the events of a [`Session`] as
//! lines of text. Nothing here changes the game.

use super::pgn::comment;
use super::{Event, Session};
use crate::game::Claim;
use crate::search::report::Score;
use shakmaty::{Color, File, Move, Piece, Position, Rank, Role, Square};
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Letters instead of chess symbols.
    pub ascii: bool,
}

/// The board from the player's side, the squares of the last move in
/// brackets, files and ranks around it.
pub fn board(session: &Session, style: Style) -> Vec<String> {
    let pos = session.game().position();
    let last = session.game().moves().last().copied();
    let marked = |sq: Square| last.is_some_and(|m| last_move_squares(m).contains(&sq));
    let flipped = session.player() == Color::Black;
    let files: Vec<File> = if flipped {
        File::ALL.iter().rev().copied().collect()
    } else {
        File::ALL.to_vec()
    };
    let ranks: Vec<Rank> = if flipped {
        Rank::ALL.to_vec()
    } else {
        Rank::ALL.iter().rev().copied().collect()
    };
    let header = format!(
        "    {}",
        files
            .iter()
            .map(|f| format!(" {} ", f.char()))
            .collect::<String>()
    );
    let mut lines = vec![header.clone()];
    for &rank in &ranks {
        let mut line = format!("  {} ", rank.char());
        for &file in &files {
            let sq = Square::from_coords(file, rank);
            let glyph = pos
                .board()
                .piece_at(sq)
                .map_or(empty(style), |p| glyph(p, style));
            if marked(sq) {
                line.push_str(&format!("[{glyph}]"));
            } else {
                line.push_str(&format!(" {glyph} "));
            }
        }
        line.push_str(&format!(" {}", rank.char()));
        lines.push(line);
    }
    lines.push(header);
    lines
}

/// The from- and to-squares a move is shown by (castling: the king's).
fn last_move_squares(m: Move) -> [Square; 2] {
    match m {
        Move::Castle { king, rook } => {
            let to_file = if rook.file() > king.file() {
                File::G
            } else {
                File::C
            };
            [king, Square::from_coords(to_file, king.rank())]
        }
        other => [other.from().unwrap_or(other.to()), other.to()],
    }
}

fn empty(style: Style) -> char {
    if style.ascii { '.' } else { '·' }
}

fn glyph(piece: Piece, style: Style) -> char {
    if style.ascii {
        return piece.char();
    }
    match (piece.color, piece.role) {
        (Color::White, Role::King) => '♔',
        (Color::White, Role::Queen) => '♕',
        (Color::White, Role::Rook) => '♖',
        (Color::White, Role::Bishop) => '♗',
        (Color::White, Role::Knight) => '♘',
        (Color::White, Role::Pawn) => '♙',
        (Color::Black, Role::King) => '♚',
        (Color::Black, Role::Queen) => '♛',
        (Color::Black, Role::Rook) => '♜',
        (Color::Black, Role::Bishop) => '♝',
        (Color::Black, Role::Knight) => '♞',
        (Color::Black, Role::Pawn) => '♟',
    }
}

fn side(session: &Session, color: Color) -> &'static str {
    if color == session.player() {
        "You"
    } else {
        "Qilin"
    }
}

/// The lines that show `events`.
pub fn lines(session: &Session, events: &[Event], style: Style) -> Vec<String> {
    let mut out = Vec::new();
    for event in events {
        match event {
            Event::Board => {
                out.push(String::new());
                out.extend(board(session, style));
            }
            Event::Moved { color, san } => {
                out.push(format!("{} played {san}.", side(session, *color)));
            }
            Event::Check { color } => out.push(if *color == session.player() {
                "Check! Your king is attacked: you must get it out of check.".to_string()
            } else {
                "Check to Qilin's king.".to_string()
            }),
            Event::Illegal { text, reason } => {
                out.push(format!("Illegal move '{text}':"));
                out.extend(reason.lines().map(|l| format!("  {l}")));
            }
            Event::NotAMove { text } => out.push(format!(
                "'{text}' is not a move or a command. Write a move in SAN (Nf3, exd5, O-O, \
                 e8=Q) or UCI (g1f3); type help for the commands."
            )),
            Event::Ambiguous { text, moves } => out.push(format!(
                "'{text}' could be {}: say which piece moves.",
                moves.join(" or ")
            )),
            Event::ClaimAvailable { claim, with, total } => {
                out.push(claim_offer(*claim, with, *total))
            }
            Event::ClaimRefused {
                repetitions,
                halfmoves,
            } => out.push(format!(
                "No draw can be claimed: the position has stood {repetitions} time{} (a claim \
                 needs 3), and {} move{} by each side have passed without a capture or a pawn \
                 move (a claim needs 50).",
                plural(*repetitions),
                halfmoves / 2,
                plural((halfmoves / 2) as usize)
            )),
            Event::DrawOffer { accepted: true } => {
                out.push("Qilin accepts your draw offer.".to_string())
            }
            Event::DrawOffer { accepted: false } => out.push(
                "Qilin declines your draw offer: it thinks it stands better. Play on.".to_string(),
            ),
            Event::GameOver(outcome) => {
                out.push(format!(
                    "Game over: {}. Result {}.",
                    comment(*outcome),
                    outcome.result()
                ));
                out.push(
                    "Type pgn FILE to save the game, undo to take back, quit to leave.".into(),
                );
            }
            Event::Hint { san, score } => {
                out.push(format!("Hint: {san} ({}).", score_words(*score)))
            }
            Event::Fen(fen) => out.push(fen.clone()),
            Event::Pgn(pgn) => out.extend(pgn.lines().map(str::to_string)),
            Event::Saved(path) => out.push(format!("Game saved to {path}.")),
            Event::Undone { plies } => {
                out.push(format!("Took back {plies} move{}.", plural(*plies)))
            }
            Event::Clocks { white_ms, black_ms } => out.push(format!(
                "Clocks: White {}, Black {}.",
                clock(*white_ms),
                clock(*black_ms)
            )),
            Event::Help => out.extend(HELP.lines().map(str::to_string)),
            Event::Thinking => out.push("Qilin is thinking...".to_string()),
            Event::Refused(why) => out.push(format!("Cannot do that: {why}.")),
            Event::Bye => out.push("Goodbye.".to_string()),
        }
    }
    out
}

fn claim_offer(claim: Claim, with: &[String], total: usize) -> String {
    let rule = match claim {
        Claim::FiftyMoves => "the fifty-move rule".to_string(),
        Claim::ThreefoldRepetition { .. } => claim.to_string(),
    };
    match with.first() {
        None => format!("You may claim a draw by {rule}: type claim."),
        Some(first) => {
            let more = total.saturating_sub(with.len());
            let list = if more > 0 {
                format!("{} (and {more} more)", with.join(", "))
            } else {
                with.join(", ")
            };
            format!(
                "You may claim a draw by {rule} with your move {list}: type claim and the move \
                 (claim {first}) before you play it."
            )
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A score for the side to move, as a person reads it.
fn score_words(score: Score) -> String {
    match score {
        Score::Centipawns(cp) => format!("{:+.2} pawns for you", f64::from(cp) / 100.0),
        Score::Mate(n) if n > 0 => format!("you mate in {n}"),
        Score::Mate(n) => format!("Qilin mates in {}", n.saturating_neg()),
    }
}

fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}", s / 60, s % 60)
}

/// The first words of a game.
pub fn intro(session: &Session) -> String {
    let level = match session.elo() {
        Some(elo) => format!("at UCI_Elo {elo}"),
        None => "at full strength".to_string(),
    };
    let colour = session.player().fold_wb("White", "Black");
    format!("You play {colour}; Qilin plays {level}. Type help for the commands.")
}

/// Asks for the next line.
pub fn prompt(session: &Session) {
    // Only a person at a terminal needs asking; piped input gets clean lines.
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return;
    }
    let text = if session.outcome().is_some() {
        "> ".to_string()
    } else {
        let pos = session.game().position();
        let number = pos.fullmoves().get();
        let dots = if pos.turn().is_white() { "." } else { "..." };
        format!("{number}{dots} your move> ")
    };
    let mut out = std::io::stdout();
    let _ = write!(out, "{text}");
    let _ = out.flush();
}

const HELP: &str = "\
Moves: SAN (e4, Nf3, exd5, O-O, e8=Q) or UCI (e2e4, g1f3, e7e8q).
Commands:
  claim        claim a draw the rules give you now (threefold repetition, fifty moves)
  claim MOVE   announce a move that gives you the draw, and play it
  draw         offer a draw; Qilin accepts when it sees the position as level
  undo         take back your last move (and Qilin's reply)
  hint         a move Qilin would suggest (a short search)
  fen          the position as FEN
  pgn [FILE]   the game as PGN, or saved to FILE
  board        draw the board again
  resign       give up the game
  quit         leave";
