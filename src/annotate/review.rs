//! The judgement of a game: each move's evaluation, how much it lost
//! against the engine's best move, missed and allowed mates, and the rule
//! events of RULES.md that the players let pass. No search and no text
//! here: the scores come in as [`Verdict`]s, the review goes out as data.

use crate::game::{Claim, Game, GameOver, RuleStatus};
use crate::search::report::Score;
use shakmaty::san::SanPlus;
use shakmaty::{Color, Move, Position};

/// What a search says about one position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// From the side to move's point of view; `None` when the search gave
    /// no score.
    pub score: Option<Score>,
    /// The move the search prefers; `None` without a legal move.
    pub best: Option<Move>,
}

/// Gives the verdict on a position that has legal moves.
pub trait Evaluator {
    fn evaluate(&mut self, game: &Game) -> Verdict;
}

/// The verdict on `game`: the rules' own for a position without a legal
/// move (mated, or stalemate), else the evaluator's.
pub fn verdict(game: &Game, evaluator: &mut dyn Evaluator) -> Verdict {
    let pos = game.position();
    if pos.legal_moves().is_empty() {
        let score = if pos.is_check() {
            Score::Mate(0)
        } else {
            Score::Centipawns(0)
        };
        return Verdict {
            score: Some(score),
            best: None,
        };
    }
    evaluator.evaluate(game)
}

/// Scores beyond ten pawns count as ten pawns, and a mate as ten pawns:
/// past that the game is decided, and a loss there says nothing about the
/// move (the convention of the analysis sites' average centipawn loss).
pub const CLAMP_CP: i32 = 1000;

/// An evaluation from White's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhiteEval {
    Centipawns(i32),
    /// `winner` mates in `moves` (0: mate on the board).
    Mate {
        winner: Color,
        moves: i32,
    },
}

impl WhiteEval {
    /// `score` of a position with `turn` to move, turned to White's view.
    pub fn new(score: Score, turn: Color) -> WhiteEval {
        match score {
            Score::Centipawns(cp) => WhiteEval::Centipawns(turn.fold_wb(cp, cp.saturating_neg())),
            Score::Mate(n) if n > 0 => WhiteEval::Mate {
                winner: turn,
                moves: n,
            },
            Score::Mate(n) => WhiteEval::Mate {
                winner: !turn,
                moves: n.saturating_neg(),
            },
        }
    }

    /// Centipawns for `side`, clamped to ±[`CLAMP_CP`].
    pub fn clamped_for(self, side: Color) -> i32 {
        match self {
            WhiteEval::Centipawns(cp) => {
                let cp = cp.clamp(-CLAMP_CP, CLAMP_CP);
                side.fold_wb(cp, -cp)
            }
            WhiteEval::Mate { winner, .. } if winner == side => CLAMP_CP,
            WhiteEval::Mate { .. } => -CLAMP_CP,
        }
    }

    /// The mate `side` has, if any.
    fn mate_for(self, side: Color) -> Option<i32> {
        match self {
            WhiteEval::Mate { winner, moves } if winner == side => Some(moves),
            _ => None,
        }
    }
}

/// How much a move may lose before it is marked, in centipawns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    pub inaccuracy: i32,
    pub mistake: i32,
    pub blunder: i32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            inaccuracy: 50,
            mistake: 100,
            blunder: 300,
        }
    }
}

/// A move that lost more than a threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Judgement {
    Inaccuracy,
    Mistake,
    Blunder,
}

impl Judgement {
    /// The PGN numeric annotation glyph: `$6` (?!), `$2` (?), `$4` (??).
    pub fn nag(self) -> u8 {
        match self {
            Judgement::Inaccuracy => 6,
            Judgement::Mistake => 2,
            Judgement::Blunder => 4,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Judgement::Inaccuracy => "Inaccuracy",
            Judgement::Mistake => "Mistake",
            Judgement::Blunder => "Blunder",
        }
    }

    fn of_loss(loss: i32, t: &Thresholds) -> Option<Judgement> {
        if loss >= t.blunder {
            Some(Judgement::Blunder)
        } else if loss >= t.mistake {
            Some(Judgement::Mistake)
        } else if loss >= t.inaccuracy {
            Some(Judgement::Inaccuracy)
        } else {
            None
        }
    }
}

/// Something the rulebook says about the game at one point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleEvent {
    /// The position reached may be claimed a draw (the player who made the
    /// move by announcing it, the other before moving); `went_on`: moves
    /// follow in the record, so nobody claimed.
    ClaimReached { claim: Claim, went_on: bool },
    /// The player to move could have claimed by announcing `by` and played
    /// another move.
    ClaimByMove { claim: Claim, by: SanPlus },
    /// The rules ended the game here; `went_on`: moves follow in the record.
    GameOver { end: GameOver, went_on: bool },
}

/// One move of the game, judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveReview {
    pub san: SanPlus,
    pub mover: Color,
    /// The move number of the position the move was made in.
    pub number: u32,
    /// The evaluation before the move and after it.
    pub before: Option<WhiteEval>,
    pub after: Option<WhiteEval>,
    /// Centipawns the move lost for the mover (0 for the engine's own
    /// choice), when both evaluations are known.
    pub loss: Option<i32>,
    pub judgement: Option<Judgement>,
    /// The mate in this many moves the mover had and let go.
    pub missed_mate: Option<i32>,
    /// The mate in this many moves the move gave the opponent.
    pub allowed_mate: Option<i32>,
    /// The engine's move, given for a judged move.
    pub best: Option<SanPlus>,
    pub events: Vec<RuleEvent>,
}

/// One player's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlayerSummary {
    /// Moves with a known loss.
    pub moves: u32,
    pub total_loss: i64,
    pub inaccuracies: u32,
    pub mistakes: u32,
    pub blunders: u32,
    pub missed_mates: u32,
}

impl PlayerSummary {
    /// Average centipawn loss; `None` without a judged move.
    pub fn acpl(&self) -> Option<f64> {
        (self.moves > 0).then(|| self.total_loss as f64 / f64::from(self.moves))
    }

    fn add(&mut self, review: &MoveReview) {
        let Some(loss) = review.loss else { return };
        self.moves += 1;
        self.total_loss += i64::from(loss);
        match review.judgement {
            Some(Judgement::Inaccuracy) => self.inaccuracies += 1,
            Some(Judgement::Mistake) => self.mistakes += 1,
            Some(Judgement::Blunder) => self.blunders += 1,
            None => {}
        }
        if review.missed_mate.is_some() {
            self.missed_mates += 1;
        }
    }
}

/// A whole game judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Review {
    /// The evaluation of the start position.
    pub start: Option<WhiteEval>,
    /// What the rules say of the start position itself (a FEN can start a
    /// game that is already over or claimable).
    pub start_events: Vec<RuleEvent>,
    pub moves: Vec<MoveReview>,
    pub white: PlayerSummary,
    pub black: PlayerSummary,
}

impl Review {
    /// Judges the game of `positions` (the start and the position after
    /// each move of `moves`), given one verdict per position.
    pub fn new(
        positions: &[Game],
        moves: &[Move],
        verdicts: &[Verdict],
        thresholds: &Thresholds,
    ) -> Review {
        let eval_of = |i: usize| -> Option<WhiteEval> {
            let game = positions.get(i)?;
            let score = verdicts.get(i)?.score?;
            Some(WhiteEval::new(score, game.position().turn()))
        };
        let statuses: Vec<RuleStatus> = positions.iter().map(Game::rule_status).collect();
        let went_on = |i: usize| i < moves.len();
        let mut review = Review {
            start: eval_of(0),
            start_events: position_events(None, statuses.first(), went_on(0)),
            moves: Vec::with_capacity(moves.len()),
            white: PlayerSummary::default(),
            black: PlayerSummary::default(),
        };
        for (i, &m) in moves.iter().enumerate() {
            let Some(game) = positions.get(i) else { break };
            let pos = game.position();
            let mover = pos.turn();
            let before = eval_of(i);
            let after = eval_of(i + 1);
            let best = verdicts.get(i).and_then(|v| v.best);
            let loss = match (before, after) {
                _ if best == Some(m) => Some(0),
                (Some(b), Some(a)) => Some((b.clamped_for(mover) - a.clamped_for(mover)).max(0)),
                _ => None,
            };
            let missed_mate = before
                .and_then(|b| b.mate_for(mover))
                .filter(|_| best != Some(m) && after.and_then(|a| a.mate_for(mover)).is_none());
            let allowed_mate = after
                .and_then(|a| a.mate_for(!mover))
                .filter(|_| before.and_then(|b| b.mate_for(!mover)).is_none());
            let by_loss = loss.and_then(|l| Judgement::of_loss(l, thresholds));
            let judgement = match missed_mate {
                Some(_) => by_loss.max(Some(Judgement::Inaccuracy)),
                None => by_loss,
            };
            let best = best
                .filter(|_| judgement.is_some())
                .map(|b| SanPlus::from_move(pos.clone(), b));
            let mut events = claim_by_move_events(game, m, statuses.get(i));
            events.extend(position_events(
                statuses.get(i),
                statuses.get(i + 1),
                went_on(i + 1),
            ));
            let reviewed = MoveReview {
                san: SanPlus::from_move(pos.clone(), m),
                mover,
                number: pos.fullmoves().get(),
                before,
                after,
                loss,
                judgement,
                missed_mate,
                allowed_mate,
                best,
                events,
            };
            match mover {
                Color::White => review.white.add(&reviewed),
                Color::Black => review.black.add(&reviewed),
            }
            review.moves.push(reviewed);
        }
        review
    }

    pub fn player(&self, color: Color) -> &PlayerSummary {
        color.fold_wb(&self.white, &self.black)
    }
}

/// Two claims of the same rule (the perpetual-check flag aside).
fn same_rule(a: &Claim, b: &Claim) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// The claims and game ends that begin at a position: those its
/// predecessor did not already have, so that a repetition cycle or a long
/// stretch past the fifty moves is reported once; and every claim of the
/// last position, where the game stopped (most likely by that claim).
fn position_events(
    previous: Option<&RuleStatus>,
    now: Option<&RuleStatus>,
    went_on: bool,
) -> Vec<RuleEvent> {
    let Some(now) = now else {
        return Vec::new();
    };
    let ends = now
        .ended
        .iter()
        .filter(|end| previous.is_none_or(|p| !p.ended.contains(end)))
        .map(|&end| RuleEvent::GameOver { end, went_on });
    let claims = now
        .claims
        .iter()
        .filter(|c| {
            !went_on || previous.is_none_or(|p| !p.claims.iter().any(|pc| same_rule(pc, c)))
        })
        .map(|&claim| RuleEvent::ClaimReached { claim, went_on });
    ends.chain(claims).collect()
}

/// The claims the mover could have made by announcing another move, when
/// neither the position (a claim on the board) nor the move played gives
/// that claim: the first such move in move-generation order is named.
fn claim_by_move_events(game: &Game, played: Move, status: Option<&RuleStatus>) -> Vec<RuleEvent> {
    let pos = game.position();
    let on_board: &[Claim] = status.map_or(&[], |s| &s.claims);
    if status.is_some_and(RuleStatus::is_over) {
        return Vec::new();
    }
    let by_played = game.claims_after(played);
    let mut events: Vec<RuleEvent> = Vec::new();
    for m in pos.legal_moves() {
        if m == played {
            continue;
        }
        for claim in game.claims_after(m) {
            let known = on_board
                .iter()
                .chain(&by_played)
                .any(|c| same_rule(c, &claim))
                || events.iter().any(|e| match e {
                    RuleEvent::ClaimByMove { claim: c, .. } => same_rule(c, &claim),
                    _ => false,
                });
            if !known {
                events.push(RuleEvent::ClaimByMove {
                    claim,
                    by: SanPlus::from_move(pos.clone(), m),
                });
            }
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;

    fn game_of(fen: Option<&str>, moves: &str) -> (Vec<Game>, Vec<Move>) {
        let mut game = Game::setup(fen, CastlingMode::Standard).expect("fen");
        let mut positions = vec![game.clone()];
        let mut played = Vec::new();
        for text in moves.split_whitespace() {
            let m = game.parse_move(text).expect("legal");
            game.play(m);
            played.push(m);
            positions.push(game.clone());
        }
        (positions, played)
    }

    /// A verdict for each position, from White's view in centipawns (a
    /// string "#n" / "#-n" for mates), best move given as UCI.
    fn verdicts(positions: &[Game], scores: &[(&str, Option<&str>)]) -> Vec<Verdict> {
        positions
            .iter()
            .zip(scores)
            .map(|(g, (score, best))| {
                let turn = g.position().turn();
                let white = match score.strip_prefix('#') {
                    Some(n) => {
                        let n: i32 = n.parse().expect("mate");
                        Score::Mate(turn.fold_wb(n, -n))
                    }
                    None => {
                        let cp: i32 = score.parse().expect("cp");
                        Score::Centipawns(turn.fold_wb(cp, -cp))
                    }
                };
                Verdict {
                    score: Some(white),
                    best: best.map(|b| g.parse_move(b).expect("best legal")),
                }
            })
            .collect()
    }

    #[test]
    fn losses_are_judged_by_size_and_clamped() {
        let (positions, moves) = game_of(None, "e2e4 e7e5 g1f3 d8h4");
        let v = verdicts(
            &positions,
            &[
                ("20", Some("e2e4")),  // e4, the best: no loss
                ("30", Some("e7e5")),  // ...e5, the best: no loss
                ("30", Some("d2d4")),  // Nf3 loses 70 for White: inaccuracy
                ("-40", Some("b8c6")), // ...Qh4 loses the queen: 850 for Black
                ("810", None),
            ],
        );
        let review = Review::new(&positions, &moves, &v, &Thresholds::default());
        let judged: Vec<(Option<i32>, Option<Judgement>)> =
            review.moves.iter().map(|m| (m.loss, m.judgement)).collect();
        assert_eq!(
            judged,
            [
                (Some(0), None),
                (Some(0), None),
                (Some(70), Some(Judgement::Inaccuracy)),
                (Some(850), Some(Judgement::Blunder)),
            ]
        );
        assert_eq!(
            review.moves[3].best.map(|b| b.to_string()),
            Some("Nc6".into())
        );
        assert_eq!(
            review.moves[2].best.map(|b| b.to_string()),
            Some("d4".into())
        );
        assert!(review.moves[0].best.is_none(), "a good move names no best");
        assert_eq!(review.white.acpl(), Some(35.0));
        assert_eq!(review.black.acpl(), Some(425.0));
        assert_eq!((review.black.blunders, review.white.inaccuracies), (1, 1));
    }

    #[test]
    fn a_won_game_stays_won_without_blame_and_a_missed_mate_is_named() {
        // Scholar's mate position: White mates with Qxf7 and plays Qe2.
        let (positions, moves) = game_of(
            Some("r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 0 4"),
            "h5e2 g8f6",
        );
        let v = verdicts(
            &positions,
            &[("#1", Some("h5f7")), ("1500", None), ("1400", None)],
        );
        let review = Review::new(&positions, &moves, &v, &Thresholds::default());
        let qe2 = &review.moves[0];
        assert_eq!(qe2.missed_mate, Some(1));
        assert_eq!(qe2.loss, Some(0), "ten pawns up is as good as mate");
        assert_eq!(qe2.judgement, Some(Judgement::Inaccuracy));
        assert_eq!(qe2.best.map(|b| b.to_string()), Some("Qxf7#".into()));
        assert_eq!(review.white.missed_mates, 1);
    }

    #[test]
    fn allowing_a_mate_is_named() {
        let (positions, moves) = game_of(None, "f2f3 e7e5 g2g4");
        let v = verdicts(
            &positions,
            &[
                ("20", Some("e2e4")),
                ("-60", Some("e7e5")),
                ("-80", Some("d2d4")),
                ("#-1", Some("d8h4")),
            ],
        );
        let review = Review::new(&positions, &moves, &v, &Thresholds::default());
        let g4 = &review.moves[2];
        assert_eq!(g4.allowed_mate, Some(1));
        assert_eq!(g4.judgement, Some(Judgement::Blunder));
        assert_eq!(g4.loss, Some(920));
    }

    #[test]
    fn a_threefold_repetition_played_through_is_reported_once() {
        let shuffle = "g1f3 g8f6 f3g1 f6g8";
        let (positions, moves) = game_of(None, &format!("{shuffle} {shuffle} g1f3 e7e5"));
        let v = vec![Verdict::default(); positions.len()];
        let review = Review::new(&positions, &moves, &v, &Thresholds::default());
        let events: Vec<(usize, &RuleEvent)> = review
            .moves
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.events.iter().map(move |e| (i, e)))
            .collect();
        let threefold = Claim::ThreefoldRepetition {
            perpetual_check: false,
        };
        assert_eq!(
            events,
            [
                // 4... Ng8 makes the start position stand for the third time.
                (
                    7,
                    &RuleEvent::ClaimReached {
                        claim: threefold,
                        went_on: true
                    }
                ),
                // 5. Nf3 stands a third time too, and 5... e5 leaves a
                // position claimable on the board: the same claim, not
                // reported again.
            ]
        );
        assert!(review.moves.iter().all(|m| m.loss.is_none()));
        // 4... e5 instead of 4... Ng8: Black could have announced Ng8.
        let (positions, moves) = game_of(None, &format!("{shuffle} g1f3 g8f6 f3g1 e7e5"));
        let review = Review::new(&positions, &moves, &v, &Thresholds::default());
        let events: Vec<(usize, &RuleEvent)> = review
            .moves
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.events.iter().map(move |e| (i, e)))
            .collect();
        assert_eq!(
            events,
            [(
                7,
                &RuleEvent::ClaimByMove {
                    claim: threefold,
                    by: "Ng8".parse().expect("san"),
                }
            )]
        );
    }

    #[test]
    fn a_fivefold_repetition_played_on_ends_the_game_there() {
        let shuffle = "g1f3 g8f6 f3g1 f6g8";
        let (positions, moves) = game_of(None, &format!("{0} {0} {0} {0} e2e4", shuffle));
        let v = vec![Verdict::default(); positions.len()];
        let review = Review::new(&positions, &moves, &v, &Thresholds::default());
        let ends: Vec<(usize, &RuleEvent)> = review
            .moves
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.events.iter().map(move |e| (i, e)))
            .filter(|(_, e)| matches!(e, RuleEvent::GameOver { .. }))
            .collect();
        assert_eq!(
            ends,
            [(
                15,
                &RuleEvent::GameOver {
                    end: GameOver::FivefoldRepetition,
                    went_on: true
                }
            )]
        );
    }

    #[test]
    fn fifty_moves_and_the_mate_at_the_end() {
        // The clock stands at 99: any quiet move completes the fifty moves.
        let (positions, moves) =
            game_of(Some("7k/8/5K2/8/8/8/8/6Q1 w - - 98 80"), "g1g2 h8h7 g2g7");
        let v = vec![Verdict::default(); positions.len()];
        let review = Review::new(&positions, &moves, &v, &Thresholds::default());
        assert_eq!(review.moves[0].events, []);
        assert_eq!(
            review.moves[1].events,
            [RuleEvent::ClaimReached {
                claim: Claim::FiftyMoves,
                went_on: true
            }]
        );
        assert_eq!(
            review.moves[2].events,
            [RuleEvent::GameOver {
                end: GameOver::Checkmate {
                    winner: Color::White
                },
                went_on: false
            }]
        );
    }

    #[test]
    fn terminal_positions_need_no_search() {
        struct Never;
        impl Evaluator for Never {
            fn evaluate(&mut self, _: &Game) -> Verdict {
                panic!("searched a position without moves")
            }
        }
        let (positions, _) = game_of(None, "f2f3 e7e5 g2g4 d8h4");
        let mated = verdict(&positions[4], &mut Never);
        assert_eq!(mated.score, Some(Score::Mate(0)));
        assert_eq!(
            WhiteEval::new(Score::Mate(0), Color::White),
            WhiteEval::Mate {
                winner: Color::Black,
                moves: 0
            }
        );
    }
}
