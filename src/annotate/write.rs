//! The annotated game as PGN text: the file's tags (and an `Annotator`
//! tag), the summary as the game's first comment, each move with its NAG and
//! one comment holding `[%eval …]` (the form python-chess, lichess and the
//! GUIs read) and the words of the review, the result. Plain text building:
//! nothing here searches or reads files.

use super::record::{InvalidMove, Record};
use super::review::{MoveReview, PlayerSummary, Review, RuleEvent, WhiteEval};
use crate::game::{Claim, Game};
use shakmaty::{Color, Position};

/// PGN export lines stay within 80 characters.
const LINE_WIDTH: usize = 80;

/// `+0.34`, `-1.20`, `#3` (White mates in 3), `#-3` (Black mates in 3).
pub fn eval_text(eval: WhiteEval) -> String {
    match eval {
        WhiteEval::Centipawns(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
        WhiteEval::Mate { winner, moves } => {
            winner.fold_wb(format!("#{moves}"), format!("#-{moves}"))
        }
    }
}

/// The `[%eval …]` command of a comment: pawns with two decimals or `#n`,
/// from White's point of view; none for a mate on the board (there is
/// nothing left to evaluate, and `#0` has no sign to say who won).
pub fn eval_command(eval: WhiteEval) -> Option<String> {
    match eval {
        WhiteEval::Centipawns(cp) => Some(format!("[%eval {:.2}]", f64::from(cp) / 100.0)),
        WhiteEval::Mate { moves: 0, .. } => None,
        WhiteEval::Mate { .. } => Some(format!("[%eval {}]", eval_text(eval))),
    }
}

fn player(color: Color) -> &'static str {
    color.fold_wb("White", "Black")
}

/// What the rule of a claim says happened.
fn claim_condition(claim: Claim) -> &'static str {
    match claim {
        Claim::ThreefoldRepetition { .. } => "the position stands for the third time",
        Claim::FiftyMoves => "fifty moves by each side without a capture or a pawn move",
    }
}

/// One sentence (or two) for a rule event at a move made by `mover`
/// (`None`: the start position, before any move).
pub fn event_text(event: &RuleEvent, mover: Option<Color>) -> String {
    match event {
        RuleEvent::ClaimReached { claim, went_on } => {
            let mut text = format!("Draw claim: {claim}: {}.", claim_condition(*claim));
            if *went_on {
                text.push_str(" Not claimed: ");
                if let Some(mover) = mover {
                    text.push_str(&format!(
                        "{} could claim by announcing this move, {} before moving, and ",
                        player(mover),
                        player(!mover)
                    ));
                }
                text.push_str("the game went on.");
            }
            text
        }
        RuleEvent::ClaimByMove { claim, by } => format!(
            "{} could have claimed a draw ({claim}) by announcing {by}.",
            mover.map_or("The player to move", player)
        ),
        RuleEvent::GameOver { end, went_on } => {
            let mut text = format!("Game over: {end}.");
            if *went_on {
                text.push_str(
                    " The rules ended the game here; the players played on, and the moves after \
                     this one do not count.",
                );
            }
            text
        }
    }
}

/// `12.` or `12...`: the number a move is written with.
fn move_number(number: u32, mover: Color) -> String {
    mover.fold_wb(format!("{number}."), format!("{number}..."))
}

/// The words of the review of one move, after its `[%eval]`.
pub fn judgement_text(m: &MoveReview) -> Option<String> {
    let mut labels: Vec<String> = Vec::new();
    if let Some(j) = m.judgement {
        labels.push(j.word().to_string());
    }
    if let Some(n) = m.missed_mate {
        labels.push(format!("missed mate in {n}"));
    }
    if let Some(n) = m.allowed_mate {
        labels.push(format!("allows mate in {n}"));
    }
    let (first, rest) = labels.split_first()?;
    let mut first = first.clone();
    if let Some(c) = first.get(..1) {
        first = format!("{}{}", c.to_uppercase(), first.get(1..).unwrap_or_default());
    }
    let mut text = std::iter::once(first)
        .chain(rest.iter().cloned())
        .collect::<Vec<_>>()
        .join(", ");
    if let (Some(before), Some(after)) = (m.before, m.after) {
        text.push_str(&format!(": {} -> {}", eval_text(before), eval_text(after)));
    }
    text.push('.');
    if let Some(best) = &m.best {
        text.push_str(&format!(" Best was {best}."));
    }
    Some(text)
}

/// The sentence for a record that stops being a game; `at` is the game
/// after the moves before it.
pub fn invalid_text(invalid: &InvalidMove, record: &Record, at: &Game) -> String {
    if invalid.written.is_empty() {
        return format!("Not annotated: {}.", invalid.problem);
    }
    let pos = at.position();
    let kind = if invalid.problem.is_illegal_move() {
        "Illegal move"
    } else {
        "Invalid move"
    };
    let rest = written_moves(record, invalid.index, pos.fullmoves().get(), pos.turn());
    format!(
        "{kind} {} {}: {} The record is not a legal game from here on; not played: {rest}.",
        move_number(pos.fullmoves().get(), pos.turn()),
        invalid.written,
        invalid.problem
    )
}

/// The record's moves from `index` on, numbered on from `number`/`turn`
/// as they are written (they are not played).
fn written_moves(record: &Record, index: usize, number: u32, turn: Color) -> String {
    let mut words = Vec::new();
    let (mut number, mut turn) = (number, turn);
    for (i, san) in record.moves.iter().skip(index).enumerate() {
        if turn.is_white() || i == 0 {
            words.push(move_number(number, turn));
        }
        words.push(san.to_string());
        if turn.is_black() {
            number = number.saturating_add(1);
        }
        turn = !turn;
    }
    words.join(" ")
}

/// `1 inaccuracy`, `2 mistakes`.
fn count(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One player's line of the summary.
pub fn player_line(color: Color, name: Option<&str>, s: &PlayerSummary) -> String {
    let who = match name {
        Some(n) if !n.is_empty() && n != "?" => format!("{} ({n})", player(color)),
        _ => player(color).to_string(),
    };
    let acpl = s.acpl().map_or("no move judged".to_string(), |a| {
        format!("average centipawn loss {a:.0}")
    });
    let mut line = format!(
        "{who}: {acpl}, {}, {}, {}",
        count(s.inaccuracies, "inaccuracy", "inaccuracies"),
        count(s.mistakes, "mistake", "mistakes"),
        count(s.blunders, "blunder", "blunders")
    );
    if s.missed_mates > 0 {
        line.push_str(&format!(
            ", {}",
            count(s.missed_mates, "missed mate", "missed mates")
        ));
    }
    line.push('.');
    line
}

/// The summary of a game: who annotated with what, one line per player,
/// the rule events, and where the record stops being a game.
/// `end` is the game after the last legal move.
pub fn summary_lines(
    record: &Record,
    review: &Review,
    invalid: Option<&InvalidMove>,
    end: &Game,
    annotator: &str,
) -> Vec<String> {
    let mut lines = vec![format!("{annotator}.")];
    for color in [Color::White, Color::Black] {
        let name = record.tag(color.fold_wb("White", "Black"));
        lines.push(player_line(color, name, review.player(color)));
    }
    let events: Vec<String> = review
        .moves
        .iter()
        .flat_map(|m| {
            m.events.iter().map(move |e| {
                format!(
                    "{} {}: {}",
                    move_number(m.number, m.mover),
                    m.san,
                    event_brief(e)
                )
            })
        })
        .collect();
    if !events.is_empty() {
        lines.push(format!("Rule events: {}.", events.join("; ")));
    }
    if let Some(invalid) = invalid.filter(|i| i.written.is_empty()) {
        lines.push(format!("Not annotated: {}.", invalid.problem));
    } else if let Some(invalid) = invalid {
        let what = {
            let pos = end.position();
            format!(
                "The record has an {} move: {} {}",
                if invalid.problem.is_illegal_move() {
                    "illegal"
                } else {
                    "invalid"
                },
                move_number(pos.fullmoves().get(), pos.turn()),
                invalid.written
            )
        };
        lines.push(format!("{what}; it is not a legal game from there on."));
    }
    lines
}

/// A few words for the summary's list of rule events.
fn event_brief(event: &RuleEvent) -> String {
    match event {
        RuleEvent::ClaimReached {
            claim,
            went_on: true,
        } => format!("{claim} could be claimed, and was not"),
        RuleEvent::ClaimReached { claim, .. } => format!("{claim} may be claimed"),
        RuleEvent::ClaimByMove { claim, by } => format!("{claim} could be claimed with {by}"),
        RuleEvent::GameOver { end, went_on: true } => format!("{end}, played on"),
        RuleEvent::GameOver { end, .. } => format!("{end}"),
    }
}

/// A tag value inside its quotes.
fn escape_tag(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Comment text never closes the comment early.
fn comment_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace().map(|w| w.replace('}', ")"))
}

/// The tokens of one `{ … }` comment: `{` with the first item, so that no
/// line starts with a `[%` command or a lone brace matters.
fn comment_tokens(eval: Option<String>, texts: &[String]) -> Vec<String> {
    let mut words: Vec<String> = eval.into_iter().collect();
    for text in texts {
        words.extend(comment_words(text));
    }
    if words.is_empty() {
        return Vec::new();
    }
    let mut tokens = Vec::with_capacity(words.len() + 1);
    let mut iter = words.into_iter();
    if let Some(first) = iter.next() {
        tokens.push(format!("{{ {first}"));
    }
    tokens.extend(iter);
    tokens.push("}".to_string());
    tokens
}

/// Joins tokens into lines of at most [`LINE_WIDTH`] characters (a longer
/// token stands alone).
fn wrap(tokens: &[String]) -> String {
    let mut text = String::new();
    let mut line_len = 0;
    for token in tokens {
        let len = token.chars().count();
        if line_len > 0 && line_len + 1 + len > LINE_WIDTH {
            text.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            text.push(' ');
            line_len += 1;
        }
        text.push_str(token);
        line_len += len;
    }
    text.push('\n');
    text
}

/// The annotated game. `end` is the game after the last legal move (where
/// an invalid move of the record stands).
pub fn write_game(
    record: &Record,
    review: &Review,
    invalid: Option<&InvalidMove>,
    end: &Game,
    summary: &[String],
    annotator: &str,
) -> String {
    let mut text = String::new();
    for (name, value) in record.tags.iter().filter(|(n, _)| n != "Annotator") {
        text.push_str(&format!("[{name} \"{}\"]\n", escape_tag(value)));
    }
    text.push_str(&format!("[Annotator \"{}\"]\n\n", escape_tag(annotator)));

    let invalid_sentence = invalid.map(|i| invalid_text(i, record, end));
    let mut tokens: Vec<String> = Vec::new();
    let mut game_comment: Vec<String> = summary.to_vec();
    game_comment.extend(review.start_events.iter().map(|e| event_text(e, None)));
    // A game that cannot start is said so by the summary already.
    if review.moves.is_empty()
        && invalid.is_some_and(|i| !i.written.is_empty())
        && let Some(sentence) = &invalid_sentence
    {
        game_comment.push(sentence.clone());
    }
    tokens.extend(comment_tokens(None, &game_comment));

    let mut numbered = tokens.is_empty();
    let last = review.moves.len().saturating_sub(1);
    for (i, m) in review.moves.iter().enumerate() {
        if m.mover.is_white() || !numbered {
            tokens.push(move_number(m.number, m.mover));
        }
        tokens.push(m.san.to_string());
        if let Some(j) = m.judgement {
            tokens.push(format!("${}", j.nag()));
        }
        let mut texts: Vec<String> = judgement_text(m).into_iter().collect();
        texts.extend(m.events.iter().map(|e| event_text(e, Some(m.mover))));
        if i == last
            && let Some(sentence) = &invalid_sentence
        {
            texts.push(sentence.clone());
        }
        let comment = comment_tokens(m.after.and_then(eval_command), &texts);
        numbered = comment.is_empty();
        tokens.extend(comment);
    }
    tokens.push(record.result().as_str().to_string());
    text.push_str(&wrap(&tokens));
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotate::review::Judgement;

    #[test]
    fn evaluations_in_the_common_comment_form() {
        assert_eq!(
            eval_command(WhiteEval::Centipawns(34)).as_deref(),
            Some("[%eval 0.34]")
        );
        assert_eq!(
            eval_command(WhiteEval::Centipawns(-120)).as_deref(),
            Some("[%eval -1.20]")
        );
        let black_mates = WhiteEval::Mate {
            winner: Color::Black,
            moves: 3,
        };
        assert_eq!(eval_command(black_mates).as_deref(), Some("[%eval #-3]"));
        assert_eq!(eval_text(black_mates), "#-3");
        let mated = WhiteEval::Mate {
            winner: Color::White,
            moves: 0,
        };
        assert_eq!(eval_command(mated), None);
        assert_eq!(Judgement::Blunder.nag(), 4);
    }

    #[test]
    fn lines_are_wrapped_and_comments_stay_closed() {
        let words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
        let text = wrap(&words);
        assert!(text.lines().all(|l| l.len() <= LINE_WIDTH), "{text}");
        assert_eq!(text.split_whitespace().count(), 40);
        let tokens = comment_tokens(Some("[%eval 0.10]".into()), &["a } b".into()]);
        assert_eq!(tokens, ["{ [%eval 0.10]", "a", ")", "b", "}"]);
        assert_eq!(escape_tag("a \"b\" \\"), "a \\\"b\\\" \\\\");
    }
}
