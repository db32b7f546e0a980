use super::*;
use shakmaty::san::San;

/// A session with a small fixed search: fast, and the same game each run.
fn session(fen: Option<&str>, player: Color) -> Session {
    let game = Game::setup(fen, CastlingMode::Standard).expect("test FEN");
    Session::new(Settings {
        game,
        player,
        elo: None,
        think: Think::Nodes(2_000),
        clock: None,
        seed: 1,
    })
    .expect("session")
}

fn handle(s: &mut Session, line: &str) -> Vec<Event> {
    s.handle(line, Duration::ZERO)
}

fn game_over(events: &[Event]) -> Option<Outcome> {
    events.iter().find_map(|e| match e {
        Event::GameOver(o) => Some(*o),
        _ => None,
    })
}

#[test]
fn an_illegal_move_is_explained_with_the_rule_it_breaks() {
    let mut s = session(None, Color::White);
    assert_eq!(
        handle(&mut s, "Bc4"),
        vec![Event::Illegal {
            text: "Bc4".into(),
            reason: "The white bishop on f1 cannot get to c4: the white pawn on e2 is in the \
                     way, and only a knight can jump over pieces."
                .into()
        }]
    );
    // UCI text: the same words as the UCI loop's `info string reason:`.
    assert_eq!(
        handle(&mut s, "e2e5"),
        vec![Event::Illegal {
            text: "e2e5".into(),
            reason: crate::rules_explain::explain_illegal(s.game(), "e2e5")
                .expect("illegal")
                .to_string()
        }]
    );
    assert_eq!(
        handle(&mut s, "castle"),
        vec![Event::NotAMove {
            text: "castle".into()
        }]
    );
    assert!(s.game().moves().is_empty(), "nothing was played");
}

/// White's king may only go between g1 and h1 (the knight on d2 takes f1,
/// the rook on e2 the second rank); the player, Black, moves a king
/// between a8 and b8. The start position stands again after every four
/// plies.
const SHUFFLE: &str = "k7/8/8/8/8/8/3nr3/6K1 w - - 0 1";

#[test]
fn a_threefold_claim_is_accepted_only_when_the_rule_allows_it() {
    let mut s = session(Some(SHUFFLE), Color::Black);
    assert!(s.engine_to_move());
    for reply in ["Kb8", "Ka8", "Kb8"] {
        s.engine_move();
        let events = handle(&mut s, reply);
        assert!(game_over(&events).is_none(), "{events:?}");
    }
    // Qilin plays Kg1; the start position would stand for the third time
    // after Ka8, and only then.
    s.engine_move();
    assert_eq!(
        s.game().to_uci(*s.game().moves().last().expect("a move")),
        "h1g1"
    );
    // A claim now, on the board: the position after Kg1 stood twice.
    assert_eq!(
        handle(&mut s, "claim"),
        vec![
            Event::ClaimRefused {
                repetitions: 2,
                halfmoves: 7
            },
            Event::ClaimAvailable {
                claim: Claim::ThreefoldRepetition {
                    perpetual_check: false
                },
                with: vec!["Ka8".into()],
                total: 1
            }
        ]
    );
    assert_eq!(s.outcome(), None);
    // An announced move that does not repeat: refused, and the move stands.
    let mut wrong = s.game().clone();
    let mut refused = session(Some(SHUFFLE), Color::Black);
    std::mem::swap(&mut refused.game, &mut wrong);
    let events = handle(&mut refused, "claim Kb7");
    assert_eq!(
        events.first(),
        Some(&Event::ClaimRefused {
            repetitions: 1,
            halfmoves: 8
        })
    );
    assert_eq!(refused.outcome(), None);
    assert_eq!(refused.game().moves().len(), 8, "Kb7 was played");
    // Announcing Ka8: the draw.
    let events = handle(&mut s, "claim Ka8");
    assert_eq!(
        game_over(&events),
        Some(Outcome::Claimed {
            claim: Claim::ThreefoldRepetition {
                perpetual_check: false
            },
            by: Color::Black
        })
    );
    assert_eq!(s.game().repetitions(), 3);
    assert_eq!(s.outcome().map(Outcome::result), Some("1/2-1/2"));
}

#[test]
fn the_offer_to_claim_comes_after_qilin_s_move() {
    let mut s = session(Some(SHUFFLE), Color::Black);
    s.engine_move();
    handle(&mut s, "Kb8");
    s.engine_move();
    handle(&mut s, "Ka8");
    s.engine_move();
    handle(&mut s, "Kb8");
    let events = s.engine_move();
    assert!(
        events.contains(&Event::ClaimAvailable {
            claim: Claim::ThreefoldRepetition {
                perpetual_check: false
            },
            with: vec!["Ka8".into()],
            total: 1
        }),
        "{events:?}"
    );
}

#[test]
fn undo_takes_back_the_player_s_move_and_the_reply() {
    let mut s = session(None, Color::White);
    assert_eq!(
        handle(&mut s, "undo"),
        vec![Event::Refused("you have no move to take back".into())]
    );
    handle(&mut s, "e4");
    s.engine_move();
    assert_eq!(s.game().moves().len(), 2);
    let events = handle(&mut s, "undo");
    assert_eq!(events.first(), Some(&Event::Undone { plies: 2 }));
    assert_eq!(s.game().fen(), Game::default().fen());
    assert!(!s.engine_to_move());
    // Playing Black, Qilin's first move cannot be taken back.
    let mut s = session(None, Color::Black);
    s.engine_move();
    assert_eq!(
        handle(&mut s, "undo"),
        vec![Event::Refused("you have no move to take back".into())]
    );
}

#[test]
fn mate_and_stalemate_end_the_game_with_the_rule_named() {
    let mut s = session(Some("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"), Color::White);
    let events = handle(&mut s, "Ra8");
    assert_eq!(
        game_over(&events),
        Some(Outcome::Rule(GameOver::Checkmate {
            winner: Color::White
        }))
    );
    assert!(!s.engine_to_move());
    assert!(matches!(
        handle(&mut s, "Kf1").as_slice(),
        [Event::Refused(_)]
    ));
    let mut s = session(Some("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1"), Color::White);
    let events = handle(&mut s, "Qg6");
    assert_eq!(game_over(&events), Some(Outcome::Rule(GameOver::Stalemate)));
    // A check is announced.
    let mut s = session(Some("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"), Color::White);
    let events = handle(&mut s, "Ra8+");
    assert!(events.contains(&Event::Check {
        color: Color::Black
    }));
}

#[test]
fn draw_offers_are_judged_by_qilin_s_search() {
    // Qilin (Black) has an extra queen: declined.
    let mut s = session(Some("3qk3/8/8/8/8/8/8/4K3 w - - 0 1"), Color::White);
    assert_eq!(
        handle(&mut s, "draw"),
        vec![Event::DrawOffer { accepted: false }]
    );
    // A dead-level blocked pawn ending: accepted.
    let mut s = session(Some("4k3/8/8/3p4/3P4/8/8/4K3 w - - 0 1"), Color::White);
    let events = handle(&mut s, "draw");
    assert_eq!(events.first(), Some(&Event::DrawOffer { accepted: true }));
    assert_eq!(game_over(&events), Some(Outcome::Agreed));
}

#[test]
fn resigning_and_leaving() {
    let mut s = session(None, Color::White);
    let events = handle(&mut s, "resign");
    assert_eq!(
        game_over(&events),
        Some(Outcome::Resigned {
            loser: Color::White
        })
    );
    assert_eq!(s.outcome().map(Outcome::result), Some("0-1"));
    let mut s = session(None, Color::White);
    handle(&mut s, "d4");
    assert_eq!(
        s.end_of_input(),
        vec![Event::GameOver(Outcome::Abandoned), Event::Bye]
    );
    assert!(s.has_quit());
}

/// The moves of a PGN's movetext, read back as SAN from its start.
fn replay(pgn: &str) -> Vec<String> {
    let movetext: String = pgn
        .lines()
        .skip_while(|l| l.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let mut game = Game::default();
    let mut played = Vec::new();
    let mut in_comment = false;
    for token in movetext.split_whitespace() {
        if token.starts_with('{') || in_comment {
            in_comment = !token.ends_with('}');
            continue;
        }
        if token.ends_with('.') || ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            continue;
        }
        let san: San = token.parse().expect("SAN");
        let m = san.to_move(game.position()).expect("legal");
        played.push(game.to_uci(m));
        game.play(m);
    }
    played
}

#[test]
fn the_pgn_reads_back_as_the_game() {
    let mut s = session(None, Color::White);
    for reply in ["e4", "Nf3", "Bc4"] {
        handle(&mut s, reply);
        s.engine_move();
    }
    handle(&mut s, "resign");
    let pgn = s.pgn();
    let played: Vec<String> = s
        .game()
        .moves()
        .iter()
        .map(|&m| s.game().to_uci(m))
        .collect();
    assert_eq!(played.len(), 6);
    assert_eq!(replay(&pgn), played);
    assert!(pgn.contains("[White \"Player\"]\n"), "{pgn}");
    assert!(pgn.contains("[Result \"0-1\"]\n"), "{pgn}");
    assert!(pgn.starts_with("[Event \"Casual game\"]\n"), "{pgn}");
    assert!(pgn.trim_end().ends_with("{White resigns} 0-1"), "{pgn}");
    assert!(pgn.contains("\n\n1. e4 "), "{pgn}");
    assert!(pgn.lines().all(|l| l.len() < 80), "{pgn}");
}

#[test]
fn a_pgn_from_a_position_names_it() {
    let mut s = session(Some("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"), Color::White);
    handle(&mut s, "Ra8");
    let pgn = s.pgn();
    assert!(pgn.contains("[SetUp \"1\"]\n[FEN \"6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\"]\n"));
    assert!(
        pgn.contains("\n\n1. Ra8# {White wins by checkmate} 1-0\n"),
        "{pgn}"
    );
}

#[test]
fn clocks_are_read_as_minutes_and_seconds() {
    assert_eq!(
        parse_clock("5+3"),
        Ok(ClockSetting {
            start_ms: 300_000,
            increment_ms: 3_000
        })
    );
    assert_eq!(
        parse_clock("0.5").map(|c| c.start_ms),
        Ok(30_000),
        "no increment"
    );
    assert!(parse_clock("0+1").is_err());
    assert!(parse_clock("x+1").is_err());
    assert!(parse_clock("5+1.5").is_err());
}

#[test]
fn a_fallen_flag_loses() {
    let game = Game::default();
    let mut s = Session::new(Settings {
        game,
        player: Color::White,
        elo: None,
        think: Think::Nodes(1000),
        clock: Some(ClockSetting {
            start_ms: 1_000,
            increment_ms: 0,
        }),
        seed: 0,
    })
    .expect("session");
    let events = s.handle("e4", Duration::from_secs(2));
    assert_eq!(
        game_over(&events),
        Some(Outcome::Time {
            loser: Color::White,
            drawn: false
        })
    );
    assert!(s.game().moves().is_empty(), "the move came too late");
}
