//! Evaluation: a score in centipawns from the side to move's point of view.
//!
//! Every term is linear in one weight of `params` (a middlegame and an
//! endgame value), added through a `Sink`: the search adds weights
//! (`ScoreSink`), the tuner records how often each weight applies (`Trace`),
//! and `eval` breaks the score down by term and colour (`Breakdown`). The
//! middlegame and endgame sums are blended by game phase, the endgame part
//! first scaled down in drawish material (`scale`). A few endgames are known
//! outright (`special`): KPK from a bitbase, a lone king against mating
//! material driven to the edge (to the right corner in KBNK).

mod kpk;
pub mod params;
pub mod pawns;
mod weights;

use params::*;
use pawns::{PawnInfo, pawn_attacks, ranks_ahead, relative_rank};
use shakmaty::attacks::{
    bishop_attacks, king_attacks, knight_attacks, queen_attacks, rook_attacks,
};
use shakmaty::{Bitboard, Board, Chess, Color, File, Position, Rank, Role, Square};
use weights::WEIGHTS;

pub use kpk::prepare;
pub use pawns::PawnCache;

pub const PHASE_MAX: i32 = 24;
/// The endgame scale of a normal position; `scale` returns 0..=SCALE_MAX.
pub const SCALE_MAX: i32 = 128;

/// Receives each term: `count` times weight `index`, for `color`.
pub trait Sink {
    fn add(&mut self, color: Color, index: usize, count: i32);

    /// A piece of role index `role` (pawn 0 .. king 5) on `square`, seen
    /// from its owner's side: its material and piece-square terms.
    fn add_piece(&mut self, color: Color, role: usize, square: usize) {
        self.add(color, PST + role * 64 + square, 1);
        if role < 5 {
            self.add(color, MATERIAL + role, 1);
        }
    }
}

/// The square as seen from `color`'s side of the board (a1 = its queen's rook square).
pub fn relative_square(color: Color, square: Square) -> usize {
    match color {
        Color::White => square as usize,
        Color::Black => square as usize ^ 56,
    }
}

/// Material and piece-square weight together, [role][square]: one lookup
/// per piece in the search's evaluation.
const PIECE_SQUARE: [[(i32, i32); 64]; 6] = {
    let mut t = [[(0, 0); 64]; 6];
    let mut role = 0;
    while role < 6 {
        let mut sq = 0;
        while sq < 64 {
            let (pm, pe) = WEIGHTS[PST + role * 64 + sq];
            let (mm, me) = if role < 5 {
                WEIGHTS[MATERIAL + role]
            } else {
                (0, 0)
            };
            t[role][sq] = (pm + mm, pe + me);
            sq += 1;
        }
        role += 1;
    }
    t
};

/// Sums the weights, White minus Black.
#[derive(Clone, Copy, Default, Debug)]
pub struct ScoreSink {
    pub mg: i32,
    pub eg: i32,
}

impl Sink for ScoreSink {
    #[inline(always)]
    fn add(&mut self, color: Color, index: usize, count: i32) {
        let (mg, eg) = WEIGHTS[index];
        let n = if color == Color::White { count } else { -count };
        self.mg += mg * n;
        self.eg += eg * n;
    }

    #[inline(always)]
    fn add_piece(&mut self, color: Color, role: usize, square: usize) {
        let (mg, eg) = PIECE_SQUARE[role][square];
        if color == Color::White {
            self.mg += mg;
            self.eg += eg;
        } else {
            self.mg -= mg;
            self.eg -= eg;
        }
    }
}

/// How many times each weight applies, White minus Black: the gradient of
/// the evaluation with respect to the weights.
pub struct Trace {
    pub coeffs: [i16; COUNT],
}

impl Sink for Trace {
    fn add(&mut self, color: Color, index: usize, count: i32) {
        let n = if color == Color::White { count } else { -count };
        self.coeffs[index] += n as i16;
    }
}

/// Per section, per colour: (middlegame, endgame) in centipawns.
pub struct Breakdown {
    pub terms: Vec<[(i32, i32); 2]>,
}

impl Sink for Breakdown {
    fn add(&mut self, color: Color, index: usize, count: i32) {
        let section = SECTIONS
            .iter()
            .position(|&(_, at, len)| (at..at + len).contains(&index));
        if let Some(s) = section {
            let (mg, eg) = WEIGHTS[index];
            let slot = &mut self.terms[s][usize::from(color == Color::Black)];
            slot.0 += mg * count;
            slot.1 += eg * count;
        }
    }
}

/// The compiled-in weights.
pub fn weights() -> [(i32, i32); COUNT] {
    WEIGHTS
}

/// What the compiled-in weights were fitted on.
pub fn weights_note() -> &'static str {
    weights::NOTE
}

/// The evaluation of one position, with the pawn cache of the calling thread.
pub fn evaluate_cached(pos: &Chess, cache: &mut PawnCache) -> i32 {
    if let Some(score) = special(pos) {
        return score;
    }
    let (mg, eg, info) = cache.probe(pos);
    let mut sink = ScoreSink { mg, eg };
    terms(pos, &mut sink, &info);
    let white = blend(
        sink.mg,
        sink.eg,
        phase(pos.board()),
        scale(pos.board(), sink.eg),
    );
    if pos.turn() == Color::White {
        white
    } else {
        -white
    }
}

/// The evaluation without a cache (tests, tools).
pub fn evaluate(pos: &Chess) -> i32 {
    evaluate_cached(pos, &mut PawnCache::default())
}

pub fn blend(mg: i32, eg: i32, phase: i32, scale: i32) -> i32 {
    (mg * phase + eg * scale / SCALE_MAX * (PHASE_MAX - phase)) / PHASE_MAX
}

/// The linear model's view of a position: coefficients, phase and endgame
/// scale; `None` for the endgames `special` decides.
pub fn trace(pos: &Chess) -> Option<(Trace, i32, i32)> {
    if special(pos).is_some() {
        return None;
    }
    let mut t = Trace { coeffs: [0; COUNT] };
    let info = pawns::evaluate(pos, &mut t);
    terms(pos, &mut t, &info);
    let eg: i32 = t
        .coeffs
        .iter()
        .zip(WEIGHTS)
        .map(|(&c, (_, e))| i32::from(c) * e)
        .sum();
    Some((t, phase(pos.board()), scale(pos.board(), eg)))
}

/// `eval`: each term for both colours, the phase, the scale and the total.
pub fn describe(pos: &Chess) -> Vec<String> {
    let mut b = Breakdown {
        terms: vec![[(0, 0); 2]; SECTIONS.len()],
    };
    let info = pawns::evaluate(pos, &mut b);
    terms(pos, &mut b, &info);
    let board = pos.board();
    let (mg, eg) = b
        .terms
        .iter()
        .fold((0, 0), |(m, e), [w, k]| (m + w.0 - k.0, e + w.1 - k.1));
    let (phase, scale) = (phase(board), scale(board, eg));
    let mut lines = vec![format!(
        "{:<20} {:>13} {:>13} {:>13}",
        "term", "white mg eg", "black mg eg", "total mg eg"
    )];
    for (i, &(name, _, _)) in SECTIONS.iter().enumerate() {
        let [w, k] = b.terms[i];
        if w == (0, 0) && k == (0, 0) {
            continue;
        }
        lines.push(format!(
            "{:<20} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            name.to_lowercase(),
            w.0,
            w.1,
            k.0,
            k.1,
            w.0 - k.0,
            w.1 - k.1
        ));
    }
    lines.push(format!(
        "phase {phase}/{PHASE_MAX} (middlegame weight), endgame scale {scale}/{SCALE_MAX}"
    ));
    let white = blend(mg, eg, phase, scale);
    match special(pos) {
        Some(s) => {
            let w = if pos.turn() == Color::White { s } else { -s };
            lines.push(format!(
                "known endgame: {w} cp for White (the terms above do not apply)"
            ));
        }
        None => lines.push(format!("total: {white} cp for White")),
    }
    lines
}

pub fn phase(board: &Board) -> i32 {
    let p = board.knights().count()
        + board.bishops().count()
        + 2 * board.rooks().count()
        + 4 * board.queens().count();
    (p as i32).min(PHASE_MAX)
}

/// Non-pawn material in pawn units (minor 3, rook 5, queen 9).
fn non_pawn(board: &Board, c: Color) -> i32 {
    let ours = board.by_color(c);
    (3 * (board.knights() & ours).count()
        + 3 * (board.bishops() & ours).count()
        + 5 * (board.rooks() & ours).count()
        + 9 * (board.queens() & ours).count()) as i32
}

/// Files a to d.
const QUEENSIDE: Bitboard = Bitboard(0x0f0f_0f0f_0f0f_0f0f);

/// How much of the endgame score the leading side can hope to keep, out of
/// `SCALE_MAX`: none with a lone minor or two knights and no pawns, or with
/// a bishop and rook pawns whose corner the bishop does not cover while the
/// defending king holds it; little when a minor up at most and without
/// pawns; half with opposite-coloured bishops alone; less than all when the
/// pieces are equal and the extra pawn is the only one, or all the pawns
/// are on one wing with at most one more for the leading side.
pub fn scale(board: &Board, eg: i32) -> i32 {
    let strong = if eg >= 0 { Color::White } else { Color::Black };
    let weak = !strong;
    let strong_pawns_bb = board.pawns() & board.by_color(strong);
    let strong_pawns = strong_pawns_bb.count();
    let weak_pawns = (board.pawns() & board.by_color(weak)).count();
    let (s, w) = (non_pawn(board, strong), non_pawn(board, weak));
    if strong_pawns == 0 {
        let knights = (board.knights() & board.by_color(strong)).count();
        if s <= 3 || (s == 6 && knights == 2 && w == 0) {
            return 0;
        }
        if s - w <= 3 {
            return 16;
        }
    }
    if s == 3 && wrong_rook_pawn_fortress(board, strong, strong_pawns_bb) {
        return 0;
    }
    let (wb, bb) = (
        board.bishops() & board.by_color(Color::White),
        board.bishops() & board.by_color(Color::Black),
    );
    let dark = Bitboard::DARK_SQUARES;
    if wb.count() == 1 && bb.count() == 1 && (wb & dark).any() != (bb & dark).any() {
        return if s == 3 && w == 3 { 64 } else { 96 };
    }
    if s == w && s > 0 {
        if strong_pawns == 1 {
            return 64;
        }
        let pawns = board.pawns();
        let queenside = pawns & QUEENSIDE;
        let one_wing = queenside.is_empty() || queenside == pawns;
        if one_wing && strong_pawns <= weak_pawns + 1 {
            return 96;
        }
    }
    SCALE_MAX
}

/// A bishop (the only piece of the leading side, `strong_pawns` all on the
/// a- or all on the h-file) that does not control the queening corner, with
/// the defending king on or next to that corner: a draw however many pawns.
fn wrong_rook_pawn_fortress(board: &Board, strong: Color, strong_pawns: Bitboard) -> bool {
    let bishops = board.bishops() & board.by_color(strong);
    if bishops.count() != 1 || strong_pawns.is_empty() {
        return false;
    }
    let file = if (strong_pawns & Bitboard::from(File::A)) == strong_pawns {
        File::A
    } else if (strong_pawns & Bitboard::from(File::H)) == strong_pawns {
        File::H
    } else {
        return false;
    };
    let corner = Square::from_coords(file, strong.fold_wb(Rank::Eighth, Rank::First));
    let dark = Bitboard::DARK_SQUARES;
    if (bishops & dark).any() == dark.contains(corner) {
        return false;
    }
    board
        .king_of(!strong)
        .is_some_and(|k| k.distance(corner) <= 1)
}

/// A known endgame's score from the side to move's view (KPK, a lone king
/// against pieces): the rule every evaluation, net or hand-written, applies
/// before its own terms.
pub fn known_endgame(pos: &Chess) -> Option<i32> {
    special(pos)
}

/// Known endgames, scored outright from the side to move's point of view.
fn special(pos: &Chess) -> Option<i32> {
    let board = pos.board();
    if board.occupied().count() > 5 {
        return None;
    }
    let white_score = special_white(pos)?;
    Some(if pos.turn() == Color::White {
        white_score
    } else {
        -white_score
    })
}

fn special_white(pos: &Chess) -> Option<i32> {
    let board = pos.board();
    let sign = |c: Color| if c == Color::White { 1 } else { -1 };
    // KPK.
    if board.occupied().count() == 3 && board.pawns().count() == 1 {
        let pawn = board.pawns().first()?;
        let strong = board.color_at(pawn)?;
        let (sk, wk) = (board.king_of(strong)?, board.king_of(!strong)?);
        if !kpk::wins(strong, sk, wk, pawn, pos.turn() == strong) {
            return Some(0);
        }
        let rank = relative_rank(strong, pawn as u32) as i32;
        return Some(sign(strong) * (700 + 20 * rank));
    }
    // A lone king against pieces and no pawns.
    if board.pawns().any() {
        return None;
    }
    let lone = [Color::White, Color::Black]
        .into_iter()
        .find(|&c| board.by_color(c).count() == 1)?;
    let strong = !lone;
    if board.by_color(strong).count() == 1 {
        return None;
    }
    let (sk, wk) = (board.king_of(strong)?, board.king_of(lone)?);
    let npm = non_pawn(board, strong);
    let ours = board.by_color(strong);
    let knights = (board.knights() & ours).count();
    let bishops = board.bishops() & ours;
    let closeness = 7 - sk.distance(wk) as i32;
    let score = if npm == 6 && knights == 1 && bishops.count() == 1 {
        // KBNK: only the corners of the bishop's colour are mating corners.
        let dark_bishop = (bishops & Bitboard::DARK_SQUARES).any();
        let corners = if dark_bishop {
            [Square::A1, Square::H8]
        } else {
            [Square::A8, Square::H1]
        };
        let to_corner = corners
            .iter()
            .map(|c| wk.distance(*c) as i32)
            .min()
            .unwrap_or(7);
        1000 + 40 * (7 - to_corner) + 10 * closeness
    } else if npm <= 3 || (npm == 6 && knights == 2) {
        return Some(0);
    } else {
        let edge = |i: i32| if i < 4 { 3 - i } else { i - 4 };
        let centre_distance = edge(wk.file() as i32) + edge(wk.rank() as i32);
        1000 + 100 * npm + 30 * centre_distance + 10 * closeness
    };
    Some(sign(strong) * score)
}

/// Every term except the pawn structure, added to `sink`.
fn terms<S: Sink>(pos: &Chess, sink: &mut S, info: &PawnInfo) {
    let board = pos.board();
    let occupied = board.occupied();
    let colors = [Color::White, Color::Black];
    let pawns_of = |c: Color| u64::from(board.pawns() & board.by_color(c));
    let pawn_att = [
        pawn_attacks(Color::White, pawns_of(Color::White)),
        pawn_attacks(Color::Black, pawns_of(Color::Black)),
    ];
    let kings = [board.king_of(Color::White), board.king_of(Color::Black)];
    let zones = kings.map(|k| {
        k.map_or(Bitboard::EMPTY, |k| {
            king_attacks(k) | Bitboard::from_square(k)
        })
    });
    let rings = [
        king_ring(zones[0], Color::White),
        king_ring(zones[1], Color::Black),
    ];
    // attacked_by[color][role index 0..6]; attacked[color]: by anything.
    let mut attacked_by = [[Bitboard::EMPTY; 6]; 2];
    let mut attacked = [Bitboard::EMPTY; 2];
    let mut attackers = [0i32; 2];
    // For `king_danger`: pieces attacking the king's ring, and their units.
    let mut ring_attackers = [0i32; 2];
    let mut danger = [0i32; 2];

    for (ci, &us) in colors.iter().enumerate() {
        let ours = board.by_color(us);
        let them = 1 - ci;
        attacked_by[ci][0] = Bitboard(pawn_att[ci]);
        attacked[ci] = Bitboard(pawn_att[ci]);
        if let Some(k) = kings[ci] {
            attacked_by[ci][5] = king_attacks(k);
            attacked[ci] |= king_attacks(k);
            sink.add_piece(us, 5, relative_square(us, k));
        }
        let mobility_area =
            !(Bitboard(pawns_of(us)) | board.kings() & ours) & !Bitboard(pawn_att[them]);
        for (sq, piece_role) in pieces(board, ours) {
            let role = piece_role as usize - 1;
            sink.add_piece(us, role, relative_square(us, sq));
            let attacks = match piece_role {
                Role::Knight => knight_attacks(sq),
                Role::Bishop => bishop_attacks(sq, occupied),
                Role::Rook => rook_attacks(sq, occupied),
                _ => queen_attacks(sq, occupied),
            };
            attacked_by[ci][role] |= attacks;
            attacked[ci] |= attacks;
            let mobility = (attacks & mobility_area).count();
            let (table, len) = match piece_role {
                Role::Knight => (MOBILITY_KNIGHT, 9),
                Role::Bishop => (MOBILITY_BISHOP, 14),
                Role::Rook => (MOBILITY_ROOK, 15),
                _ => (MOBILITY_QUEEN, 28),
            };
            sink.add(us, table + mobility.min(len - 1), 1);
            let on_zone = (attacks & zones[them]).count();
            if on_zone > 0 {
                attackers[ci] += 1;
                sink.add(us, KING_ZONE_ATTACKS + role - 1, on_zone as i32);
            }
            let on_ring = (attacks & rings[them]).count();
            if on_ring > 0 {
                ring_attackers[ci] += 1;
                danger[ci] += RING_UNITS[role - 1] * on_ring as i32;
            }
            let rr = relative_rank(us, sq as u32);
            let file = Bitboard::from_file(sq.file());
            match piece_role {
                Role::Rook => {
                    if (board.pawns() & file).is_empty() {
                        sink.add(us, ROOK_OPEN_FILE, 1);
                    } else if (board.pawns() & ours & file).is_empty() {
                        sink.add(us, ROOK_SEMI_OPEN_FILE, 1);
                    }
                    if rr == 6 {
                        sink.add(us, ROOK_SEVENTH, 1);
                    }
                }
                Role::Knight | Role::Bishop if (3..=5).contains(&rr) => {
                    // Supported by a pawn, and no enemy pawn can ever chase it.
                    let adjacent = pawns::adjacent_files(sq.file() as u32);
                    let chasers = pawns_of(!us) & adjacent & ranks_ahead(us, sq.rank() as u32);
                    if pawn_att[ci] & (1u64 << sq as u32) != 0 && chasers == 0 {
                        let index = if piece_role == Role::Knight {
                            KNIGHT_OUTPOST
                        } else {
                            BISHOP_OUTPOST
                        };
                        sink.add(us, index, 1);
                    }
                }
                _ => {}
            }
        }
        if (board.bishops() & ours).count() >= 2 {
            sink.add(us, BISHOP_PAIR, 1);
        }
    }

    for (ci, &us) in colors.iter().enumerate() {
        let them = 1 - ci;
        let ours = board.by_color(us);
        let theirs = board.by_color(!us);
        sink.add(us, KING_ATTACKERS + attackers[ci].min(7) as usize, 1);
        // Safe checks against their king: squares we attack with the
        // checking role, not occupied by us, not defended by them.
        if let Some(k) = kings[them] {
            let safe = !ours & !attacked[them];
            let knight_checks = knight_attacks(k);
            let bishop_checks = bishop_attacks(k, occupied);
            let rook_checks = rook_attacks(k, occupied);
            let checks = [
                knight_checks,
                bishop_checks,
                rook_checks,
                bishop_checks | rook_checks,
            ];
            for (i, check) in checks.into_iter().enumerate() {
                let n = (attacked_by[ci][i + 1] & check & safe).count();
                if n > 0 {
                    danger[ci] += CHECK_UNITS[i] * n as i32;
                    sink.add(us, SAFE_CHECK + i, n as i32);
                }
            }
        }
        let units = king_danger(ring_attackers[ci], danger[ci]);
        if units > 0 {
            sink.add(us, KING_DANGER, units);
        }
        // Threats on their pieces.
        for (i, role) in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .into_iter()
            .enumerate()
        {
            let targets = board.by_role(role) & theirs;
            if targets.is_empty() {
                continue;
            }
            let by_pawn = (attacked_by[ci][0] & targets).count();
            let by_minor = ((attacked_by[ci][1] | attacked_by[ci][2]) & targets).count();
            let by_rook = (attacked_by[ci][3] & targets).count();
            for (index, n) in [
                (THREAT_BY_PAWN, by_pawn),
                (THREAT_BY_MINOR, by_minor),
                (THREAT_BY_ROOK, by_rook),
            ] {
                if n > 0 {
                    sink.add(us, index + i, n as i32);
                }
            }
        }
        let hanging = (theirs & !board.kings() & attacked[ci] & !attacked[them]).count();
        if hanging > 0 {
            sink.add(us, HANGING, hanging as i32);
        }
        // Our king's shelter and the storm against it.
        if let Some(k) = kings[ci] {
            king_shelter(board, us, k, sink);
        }
        // Passed pawns: free path and king distances.
        let mut passed = info.passed[ci];
        while passed != 0 {
            let sq = Square::new(passed.trailing_zeros());
            passed &= passed - 1;
            let rr = relative_rank(us, sq as u32);
            let path = pawns::file_mask(sq.file() as u32) & ranks_ahead(us, sq.rank() as u32);
            if u64::from(occupied) & path == 0 {
                sink.add(us, PASSED_FREE + rr, 1);
            }
            let front = sq
                .offset(if us == Color::White { 8 } else { -8 })
                .unwrap_or(sq);
            if let (Some(own), Some(their)) = (kings[ci], kings[them]) {
                sink.add(us, PASSED_OWN_KING + rr, own.distance(front) as i32);
                sink.add(us, PASSED_THEIR_KING + rr, their.distance(front) as i32);
            }
        }
    }
    sink.add(pos.turn(), TEMPO, 1);
}

/// The squares a king attack aims at, for `king_danger`: `color`'s king
/// zone and the rank beyond it, towards the enemy (where a queen or bishop
/// lines up against the pawn shield).
fn king_ring(zone: Bitboard, color: Color) -> Bitboard {
    let beyond = match color {
        Color::White => zone.0 << 8,
        Color::Black => zone.0 >> 8,
    };
    zone | Bitboard(beyond)
}

/// Attack units per king-ring square a knight, bishop, rook or queen attacks.
const RING_UNITS: [i32; 4] = [2, 2, 3, 4];
/// Attack units per safe checking square, by the same roles.
const CHECK_UNITS: [i32; 4] = [4, 3, 4, 3];
/// Attack units beyond this count as this many.
const DANGER_CAP: i32 = 64;

/// The KING_DANGER count of an attack: nothing from one piece alone, then
/// the attack units squared (over the cap), so that an attack grows faster
/// than the sum of its parts.
pub fn king_danger(attackers: i32, units: i32) -> i32 {
    if attackers < 2 {
        return 0;
    }
    let u = units.min(DANGER_CAP);
    u * u / DANGER_CAP
}

/// The knights, bishops, rooks and queens among `ours`, with their roles.
fn pieces(board: &Board, ours: Bitboard) -> impl Iterator<Item = (Square, Role)> + '_ {
    let minors_and_majors = ours & !board.pawns() & !board.kings();
    minors_and_majors
        .into_iter()
        .filter_map(|sq| Some((sq, board.role_at(sq)?)))
}

/// Pawn shield and storm on the king's three files, and open files by the king.
fn king_shelter<S: Sink>(board: &Board, us: Color, king: Square, sink: &mut S) {
    let own = u64::from(board.pawns() & board.by_color(us));
    let their = u64::from(board.pawns() & board.by_color(!us));
    let centre = (king.file() as u32).clamp(1, 6);
    // From the king's rank forward, the king's rank included.
    let ahead = ranks_ahead(us, king.rank() as u32) | (0xffu64 << (8 * king.rank() as u32));
    let nearest = |pawns: u64| -> usize {
        if pawns == 0 {
            return 0;
        }
        let sq = if us == Color::White {
            pawns.trailing_zeros()
        } else {
            63 - pawns.leading_zeros()
        };
        relative_rank(us, sq)
    };
    for file in centre - 1..=centre + 1 {
        let mask = pawns::file_mask(file) & ahead;
        sink.add(us, PAWN_SHIELD + nearest(own & mask), 1);
        sink.add(us, PAWN_STORM + nearest(their & mask), 1);
    }
    let file = pawns::file_mask(king.file() as u32);
    if (own | their) & file == 0 {
        sink.add(us, KING_OPEN_FILE, 1);
    } else if own & file == 0 {
        sink.add(us, KING_SEMI_OPEN_FILE, 1);
    }
}

/// Material on the board in pawn units (queens 9, rooks 5, minors 3), for
/// the WDL model.
pub fn material_count(pos: &Chess) -> i32 {
    let b = pos.board();
    b.pawns().count() as i32 + non_pawn(b, Color::White) + non_pawn(b, Color::Black)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        let fen: Fen = fen.parse().expect("fen");
        fen.into_position(CastlingMode::Standard).expect("position")
    }

    /// The same position with colours swapped evaluates the same for the
    /// side to move.
    fn mirrored(fen: &str) -> String {
        let p = pos(fen);
        let mut board = Board::empty();
        for (sq, piece) in p.board().iter() {
            let piece = shakmaty::Piece {
                color: !piece.color,
                role: piece.role,
            };
            board.set_piece_at(sq.flip_vertical(), piece);
        }
        let turn = if p.turn() == Color::White { "b" } else { "w" };
        format!("{board} {turn} - - 0 1")
    }

    #[test]
    fn colour_symmetry() {
        for fen in [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w - - 4 4",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w - - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1",
            "2r3k1/1q3ppp/p3p3/1p1nP3/3P4/P2B1Q2/1P3PPP/2R3K1 w - - 0 1",
            "8/8/4kb2/8/3B4/4K3/5P2/8 w - - 0 1",
        ] {
            assert_eq!(evaluate(&pos(fen)), evaluate(&pos(&mirrored(fen))), "{fen}");
        }
    }

    #[test]
    fn an_extra_queen_is_winning() {
        assert!(evaluate(&pos("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")) > 900);
        assert!(evaluate(&pos("4k3/pppppppp/8/8/8/8/PPPPPPPP/3QK3 w - - 0 1")) > 600);
    }

    #[test]
    fn kpk_draws_and_wins_are_scored_as_such() {
        assert_eq!(evaluate(&pos("k7/8/1K6/P7/8/8/8/8 w - - 0 1")), 0);
        assert!(evaluate(&pos("4k3/8/4K3/4P3/8/8/8/8 b - - 0 1")) < -500);
    }

    #[test]
    fn lone_minor_and_two_knights_are_draws() {
        assert_eq!(evaluate(&pos("4k3/8/8/8/8/8/8/3NK3 w - - 0 1")), 0);
        assert_eq!(evaluate(&pos("4k3/8/8/8/8/8/8/2NNK3 w - - 0 1")), 0);
    }

    #[test]
    fn kbnk_prefers_the_bishops_corner() {
        // Light-squared bishop (f1): a8 and h1 are the mating corners.
        let right = evaluate(&pos("8/8/8/8/8/8/5K1k/5BN1 w - - 0 1"));
        let wrong = evaluate(&pos("7k/8/6K1/8/8/8/8/5BN1 w - - 0 1"));
        assert!(right > wrong, "{right} {wrong}");
    }

    #[test]
    fn krk_drives_the_lone_king_to_the_edge() {
        let centre = evaluate(&pos("8/8/8/3k4/8/8/8/R3K3 w - - 0 1"));
        let edge = evaluate(&pos("3k4/8/8/8/8/8/8/R3K3 w - - 0 1"));
        assert!(centre > 1000 && edge > centre, "{centre} {edge}");
        // A rook against a bishop without pawns is scaled towards a draw.
        let p = pos("3k4/8/8/3b4/8/8/8/R3K3 w - - 0 1");
        assert_eq!(scale(p.board(), 100), 16);
    }

    #[test]
    fn opposite_bishops_scale_down() {
        let b = pos("8/8/4k3/5b2/3B4/4K3/5P2/8 w - - 0 1");
        assert_eq!(scale(b.board(), 100), 64);
        // Same-coloured bishops: only the pawns decide (one pawn: half).
        let same = pos("8/8/4k3/4b3/3B4/4K3/5P2/8 w - - 0 1");
        assert_eq!(scale(same.board(), 100), 64);
        let same = pos("8/8/4k3/4b3/3B4/4K3/P4P2/8 w - - 0 1");
        assert_eq!(scale(same.board(), 100), SCALE_MAX);
    }

    #[test]
    fn a_rook_pawn_with_the_wrong_bishop_is_a_fortress() {
        // The light-squared bishop cannot drive the king out of dark h8.
        let wrong = pos("7k/7P/6K1/8/8/8/8/1B6 b - - 0 1");
        assert_eq!(scale(wrong.board(), 100), 0);
        assert_eq!(
            scale(
                pos(&mirrored("7k/7P/6K1/8/8/8/8/1B6 b - - 0 1")).board(),
                -100
            ),
            0
        );
        // Two h-pawns do not help; the a-file's corner a8 is light.
        assert_eq!(
            scale(pos("7k/7P/6K1/7P/8/8/8/1B6 b - - 0 1").board(), 100),
            0
        );
        assert_eq!(
            scale(pos("1k6/8/P7/8/3K4/8/8/2B5 w - - 0 1").board(), 100),
            0
        );
        // The right bishop, or the king kept away from the corner, wins.
        assert_eq!(
            scale(pos("7k/7P/6K1/8/8/8/8/2B5 b - - 0 1").board(), 100),
            SCALE_MAX
        );
        assert_eq!(
            scale(pos("8/4k3/8/7P/8/5K2/8/1B6 w - - 0 1").board(), 100),
            SCALE_MAX
        );
    }

    #[test]
    fn equal_pieces_with_few_pawns_scale_down() {
        // Rook and pawn against rook.
        assert_eq!(
            scale(pos("8/8/4k3/8/4P3/4K3/8/R6r w - - 0 1").board(), 100),
            64
        );
        // Four pawns against three on one wing, rooks on.
        let wing = pos("6k1/5pp1/7p/8/5PPP/4P3/6K1/R6r w - - 0 1");
        assert_eq!(scale(wing.board(), 100), 96);
        // The same pawns with one more on the other wing: all to play for.
        let both = pos("6k1/5pp1/7p/8/P4PPP/4P3/6K1/R6r w - - 0 1");
        assert_eq!(scale(both.board(), 100), SCALE_MAX);
    }

    #[test]
    fn the_eval_table_adds_up_to_the_evaluation() {
        let p = pos("2r3k1/1q3ppp/p3p3/1p1nP3/3P4/P2B1Q2/1P3PPP/2R3K1 b - - 0 1");
        let lines = describe(&p);
        assert_eq!(
            lines.last(),
            Some(&format!("total: {} cp for White", -evaluate(&p)))
        );
    }

    #[test]
    fn king_danger_grows_faster_than_the_attack() {
        assert_eq!(king_danger(1, 40), 0, "one piece alone is no attack");
        assert_eq!(king_danger(2, 16), 4);
        assert_eq!(king_danger(3, 32), 16);
        assert_eq!(king_danger(5, 200), DANGER_CAP);
    }

    #[test]
    fn king_danger_counts_the_ring_by_hand() {
        // White's Qh4 hits f6, h6 and h7 (3 × 4 units), Bd3 g6 and h7
        // (2 × 2), Bc1 h6 (2): three pieces on the ring f6-h8 of the king
        // on g8, 18 units, no safe check: 18² / 64 = 5. Black has nothing
        // on White's ring.
        let p = pos("rqb2rk1/1p2bppp/p3pn2/8/3N3Q/2PB4/PP3PPP/R1B1R1K1 b - - 2 10");
        let (t, _, _) = trace(&p).expect("not special");
        assert_eq!(t.coeffs[KING_DANGER], 5);
    }

    #[test]
    fn trace_reproduces_the_evaluation() {
        for fen in [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1",
        ] {
            let p = pos(fen);
            let (t, phase, scale) = trace(&p).expect("not special");
            let (mut mg, mut eg) = (0, 0);
            for (i, &c) in t.coeffs.iter().enumerate() {
                mg += WEIGHTS[i].0 * i32::from(c);
                eg += WEIGHTS[i].1 * i32::from(c);
            }
            let white = blend(mg, eg, phase, scale);
            let stm = if p.turn() == Color::White {
                white
            } else {
                -white
            };
            assert_eq!(stm, evaluate(&p), "{fen}");
        }
    }
}
