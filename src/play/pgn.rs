//! A game as PGN (the export format of the PGN standard: the seven tag
//! roster, `SetUp`/`FEN` for a game from a position, SAN moves numbered,
//! lines under 80 characters, the result last).

use super::Outcome;
use crate::game::{Claim, Game, GameOver};
use shakmaty::Position;
use shakmaty::san::SanPlus;

/// What goes into one PGN game.
pub struct Record<'a> {
    pub game: &'a Game,
    pub white: &'a str,
    pub black: &'a str,
    pub outcome: Option<Outcome>,
    /// PGN's TimeControl tag value, as `300+3`.
    pub time_control: Option<String>,
}

/// The PGN text of `record`, ending with a newline.
pub fn write(record: &Record<'_>) -> String {
    let result = record.outcome.map_or("*", Outcome::result);
    let mut tags = vec![
        ("Event", "Casual game".to_string()),
        ("Site", "qilin play".to_string()),
        ("Date", today()),
        ("Round", "-".to_string()),
        ("White", record.white.to_string()),
        ("Black", record.black.to_string()),
        ("Result", result.to_string()),
    ];
    let start = record.game.start();
    let start_fen = shakmaty::fen::Fen::from_position(start, shakmaty::EnPassantMode::Legal);
    if *start != shakmaty::Chess::default() {
        tags.push(("SetUp", "1".to_string()));
        tags.push(("FEN", start_fen.to_string()));
    }
    if let Some(tc) = &record.time_control {
        tags.push(("TimeControl", tc.clone()));
    }
    if let Some(outcome) = record.outcome {
        tags.push(("Termination", termination(outcome).to_string()));
    }
    let mut text = String::new();
    for (name, value) in tags {
        let value = value.replace('\\', "\\\\").replace('"', "\\\"");
        text.push_str(&format!("[{name} \"{value}\"]\n"));
    }
    text.push('\n');
    let mut tokens = Vec::new();
    let mut pos = start.clone();
    for (i, &m) in record.game.moves().iter().enumerate() {
        let number = pos.fullmoves().get();
        if pos.turn().is_white() {
            tokens.push(format!("{number}."));
        } else if i == 0 {
            tokens.push(format!("{number}..."));
        }
        tokens.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
    }
    if let Some(outcome) = record.outcome {
        tokens.push(format!("{{{}}}", comment(outcome)));
    }
    tokens.push(result.to_string());
    let mut line = String::new();
    for token in tokens {
        if !line.is_empty() && line.len() + 1 + token.len() > 79 {
            text.push_str(&line);
            text.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
    }
    text.push_str(&line);
    text.push('\n');
    text
}

/// The PGN standard's Termination values.
fn termination(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Time { .. } => "time forfeit",
        Outcome::Abandoned => "unterminated",
        _ => "normal",
    }
}

/// How the game ended, in words, for the comment before the result.
pub fn comment(outcome: Outcome) -> String {
    let name = |c: shakmaty::Color| c.fold_wb("White", "Black");
    match outcome {
        Outcome::Rule(GameOver::Checkmate { winner }) => {
            format!("{} wins by checkmate", name(winner))
        }
        Outcome::Rule(GameOver::InsufficientMaterial) => {
            "Draw: dead position (neither side can checkmate)".to_string()
        }
        Outcome::Rule(end) => format!("Draw by the {end} rule"),
        Outcome::Claimed { claim, by } => {
            let rule = match claim {
                Claim::FiftyMoves => "the fifty-move rule".to_string(),
                Claim::ThreefoldRepetition { .. } => format!("{claim}"),
            };
            format!("Draw claimed by {} under {rule}", name(by))
        }
        Outcome::Agreed => "Draw agreed".to_string(),
        Outcome::Resigned { loser } => format!("{} resigns", name(loser)),
        Outcome::Time {
            loser,
            drawn: false,
        } => format!("{} loses on time", name(loser)),
        Outcome::Time { loser, drawn: true } => format!(
            "{}'s flag fell, but {} cannot checkmate: draw",
            name(loser),
            name(!loser)
        ),
        Outcome::Abandoned => "Game left unfinished".to_string(),
    }
}

/// Today's date as PGN writes it (YYYY.MM.DD), from the system clock in
/// UTC; `????.??.??` (PGN's unknown date) if the clock is before 1970.
fn today() -> String {
    let Ok(since) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) else {
        return "????.??.??".to_string();
    };
    let (y, m, d) = civil_from_days((since.as_secs() / 86_400) as i64);
    format!("{y:04}.{m:02}.{d:02}")
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (the
/// well-known days-to-civil conversion by eras of 400 years).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_790), (2026, 12, 3));
    }
}
