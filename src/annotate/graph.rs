//! The evaluation graph: the picture analysis sites show under a game. The
//! evaluation after each move is turned into White's winning chances (the
//! logistic curve lichess uses, ±10 pawns and mates at the ends), White's
//! share drawn light from the bottom, Black's dark above it; inaccuracies,
//! mistakes and blunders are dots on the curve, rule events and an illegal
//! move in the record are vertical lines. Each mark has a `<title>`, shown
//! when the pointer rests on it. Written with plain string formatting.

use super::review::{Judgement, Review, RuleEvent, WhiteEval};
use super::write::eval_text;
use crate::game::{Claim, GameOver};
use shakmaty::Color;
use std::fmt::Write;

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 340.0;
const LEFT: f64 = 40.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 46.0;

/// White's winning chances in [-1, 1] (0: even): lichess's curve, on the
/// evaluation clamped to ±10 pawns; a mate is ±1.
pub fn winning_chances(eval: WhiteEval) -> f64 {
    match eval {
        WhiteEval::Centipawns(cp) => {
            let cp = f64::from(cp.clamp(-1000, 1000));
            2.0 / (1.0 + (-0.003_682_08 * cp).exp()) - 1.0
        }
        WhiteEval::Mate { winner, .. } => winner.fold_wb(1.0, -1.0),
    }
}

fn x_of(index: usize, positions: usize) -> f64 {
    let span = positions.saturating_sub(1).max(1) as f64;
    LEFT + (WIDTH - LEFT - RIGHT) * index as f64 / span
}

fn y_of(chances: f64) -> f64 {
    TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - chances) / 2.0
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A short label for a rule event line.
fn event_label(event: &RuleEvent) -> &'static str {
    match event {
        RuleEvent::ClaimReached {
            claim: Claim::ThreefoldRepetition { .. },
            ..
        }
        | RuleEvent::ClaimByMove {
            claim: Claim::ThreefoldRepetition { .. },
            ..
        } => "3-fold",
        RuleEvent::ClaimReached {
            claim: Claim::FiftyMoves,
            ..
        }
        | RuleEvent::ClaimByMove {
            claim: Claim::FiftyMoves,
            ..
        } => "50 moves",
        RuleEvent::GameOver { end, .. } => match end {
            GameOver::Checkmate { .. } => "mate",
            GameOver::Stalemate => "stalemate",
            GameOver::InsufficientMaterial => "dead position",
            GameOver::FivefoldRepetition => "5-fold",
            GameOver::SeventyFiveMoves => "75 moves",
        },
    }
}

fn judgement_colour(j: Judgement) -> &'static str {
    match j {
        Judgement::Inaccuracy => "#e6b800",
        Judgement::Mistake => "#f08000",
        Judgement::Blunder => "#d62728",
    }
}

/// The SVG picture of `review`; `title` heads it, `invalid_at` is the
/// position index where an invalid move of the record stands.
pub fn svg(review: &Review, title: &str, invalid_at: Option<usize>) -> String {
    let positions = review.moves.len() + 1;
    let evals: Vec<Option<WhiteEval>> = std::iter::once(review.start)
        .chain(review.moves.iter().map(|m| m.after))
        .collect();
    let points: Vec<(f64, f64)> = evals
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.map(|e| (x_of(i, positions), y_of(winning_chances(e)))))
        .collect();
    let (plot_left, plot_right) = (LEFT, WIDTH - RIGHT);
    let (plot_top, plot_bottom) = (TOP, HEIGHT - BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, "<title>{}</title>", xml(title));
    let _ = writeln!(
        s,
        r##"<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="18" font-size="13" fill="#222222">{}</text>"##,
        xml(title)
    );
    // Black's share: the whole plot, dark; White's is drawn over it.
    let _ = writeln!(
        s,
        r##"<rect x="{plot_left}" y="{plot_top}" width="{:.1}" height="{:.1}" fill="#403d39"/>"##,
        plot_right - plot_left,
        plot_bottom - plot_top
    );
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let mut area = format!("{:.1},{plot_bottom:.1}", first.0);
        for (x, y) in &points {
            let _ = write!(area, " {x:.1},{y:.1}");
        }
        let _ = write!(area, " {:.1},{plot_bottom:.1}", last.0);
        let _ = writeln!(
            s,
            r##"<polygon points="{area}" fill="#f2f2f2" stroke="#9a9a9a" stroke-width="1"/>"##
        );
    }
    // The even line and the ±1, ±3, ±10 pawn levels.
    for (cp, label) in [
        (1000, "+10"),
        (300, "+3"),
        (100, "+1"),
        (0, "0"),
        (-100, "-1"),
        (-300, "-3"),
        (-1000, "-10"),
    ] {
        let y = y_of(winning_chances(WhiteEval::Centipawns(cp)));
        let dash = if cp == 0 {
            ""
        } else {
            r#" stroke-dasharray="2,3""#
        };
        let _ = writeln!(
            s,
            r##"<line x1="{plot_left}" y1="{y:.1}" x2="{plot_right}" y2="{y:.1}" stroke="#888888" stroke-width="0.7"{dash}/>"##
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444444">{label}</text>"##,
            plot_left - 4.0,
            y + 4.0
        );
    }
    // Move numbers along the bottom.
    let step = match review.moves.len() / 2 {
        0..=30 => 5,
        31..=80 => 10,
        _ => 20,
    };
    for (i, m) in review.moves.iter().enumerate() {
        if m.mover == Color::White && m.number % step == 0 {
            let x = x_of(i + 1, positions);
            let _ = writeln!(
                s,
                r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#444444">{}</text>"##,
                plot_bottom + 16.0,
                m.number
            );
        }
    }
    // Rule events and the end of a valid record: vertical lines.
    // Labels near the right edge read leftwards; successive labels take
    // three rows in turn, so that close events stay legible.
    let mut labels = 0;
    let mut line = |s: &mut String, x: f64, colour: &str, label: &str, tip: &str| {
        let (label_x, anchor) = if x > WIDTH - 90.0 {
            (x - 3.0, "end")
        } else {
            (x + 3.0, "start")
        };
        let label_y = plot_top + 11.0 + 12.0 * f64::from(labels % 3);
        labels += 1;
        let _ = writeln!(
            s,
            r##"<g><title>{}</title><line x1="{x:.1}" y1="{plot_top}" x2="{x:.1}" y2="{plot_bottom}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="4,3"/><text x="{label_x:.1}" y="{label_y:.1}" text-anchor="{anchor}" fill="{colour}" stroke="#ffffff" stroke-width="3" paint-order="stroke" font-size="10">{}</text></g>"##,
            xml(tip),
            xml(label)
        );
    };
    for (i, m) in review.moves.iter().enumerate() {
        for event in &m.events {
            let colour = match event {
                RuleEvent::GameOver { .. } => "#9b59b6",
                _ => "#2e86de",
            };
            let tip = format!(
                "{}{} {}: {}",
                m.number,
                m.mover.fold_wb(".", "..."),
                m.san,
                super::write::event_text(event, Some(m.mover))
            );
            line(
                &mut s,
                x_of(i + 1, positions),
                colour,
                event_label(event),
                &tip,
            );
        }
    }
    if let Some(at) = invalid_at {
        line(
            &mut s,
            x_of(at, positions),
            "#d62728",
            "illegal move",
            "The record is not a legal game from here on",
        );
    }
    // The curve's points where a move was judged.
    for (i, m) in review.moves.iter().enumerate() {
        let (Some(j), Some(after)) = (m.judgement, m.after) else {
            continue;
        };
        let tip = format!(
            "{}{} {}: {} {}",
            m.number,
            m.mover.fold_wb(".", "..."),
            m.san,
            j.word(),
            eval_text(after)
        );
        let _ = writeln!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="4.5" fill="{}" stroke="#222222" stroke-width="0.8"><title>{}</title></circle>"##,
            x_of(i + 1, positions),
            y_of(winning_chances(after)),
            judgement_colour(j),
            xml(&tip)
        );
    }
    // The legend of the dots, bottom right.
    let mut x = WIDTH - RIGHT - 250.0;
    for j in [
        Judgement::Inaccuracy,
        Judgement::Mistake,
        Judgement::Blunder,
    ] {
        let _ = writeln!(
            s,
            r##"<circle cx="{x:.1}" cy="{:.1}" r="4" fill="{}" stroke="#222222" stroke-width="0.8"/><text x="{:.1}" y="{:.1}" fill="#444444">{}</text>"##,
            HEIGHT - 8.0,
            judgement_colour(j),
            x + 7.0,
            HEIGHT - 4.0,
            j.word().to_lowercase()
        );
        x += 85.0;
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chances_are_symmetric_and_clamped() {
        assert_eq!(winning_chances(WhiteEval::Centipawns(0)), 0.0);
        let plus = winning_chances(WhiteEval::Centipawns(300));
        let minus = winning_chances(WhiteEval::Centipawns(-300));
        assert!(
            (plus + minus).abs() < 1e-12 && plus > 0.5 && plus < 0.6,
            "{plus}"
        );
        assert_eq!(
            winning_chances(WhiteEval::Centipawns(5000)),
            winning_chances(WhiteEval::Centipawns(1000))
        );
        let mate = WhiteEval::Mate {
            winner: Color::Black,
            moves: 2,
        };
        assert_eq!(winning_chances(mate), -1.0);
        // White's advantage is drawn up: a higher chance, a smaller y.
        assert!(y_of(plus) < y_of(0.0) && y_of(0.0) < y_of(minus));
    }

    #[test]
    fn an_empty_review_is_still_a_picture() {
        let review = Review {
            start: None,
            start_events: Vec::new(),
            moves: Vec::new(),
            white: Default::default(),
            black: Default::default(),
        };
        let svg = svg(&review, "A <b> & c", Some(0));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("A &lt;b&gt; &amp; c"));
        assert!(svg.contains("illegal move"));
    }
}
