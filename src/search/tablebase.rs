//! Syzygy endgame tablebases: the tables of one or more folders, the probes
//! the search makes (WDL after a capture or pawn move) and the ranking of
//! root moves by DTZ. Built on shakmaty-syzygy, which reads the files; what
//! a result is worth to the search (scores, bounds, which moves to search)
//! is decided here. Nothing here knows UCI: load problems are returned as
//! text for the caller to report.

use crate::game::{Game, child_key};
use crate::score::TB_WIN;
use shakmaty::{Chess, Move, Position};
use shakmaty_syzygy::{Dtz, ProbeError, SyzygyError, Tablebase, Wdl};
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;

/// The first bytes of a WDL and a DTZ file of standard chess (the Syzygy
/// format's magic numbers): a file that does not start with them is damaged.
const WDL_MAGIC: [u8; 4] = [0x71, 0xe8, 0x23, 0x5d];
const DTZ_MAGIC: [u8; 4] = [0xd7, 0x66, 0x0c, 0xa5];

/// The separator of several folders in one `SyzygyPath`, as Stockfish reads it.
pub const PATH_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// How the search uses the tables (the UCI options `SyzygyProbeDepth`,
/// `Syzygy50MoveRule` and `SyzygyProbeLimit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TbConfig {
    /// The least remaining depth at which the search probes (positions with
    /// fewer pieces than the largest table are probed at any depth).
    pub probe_depth: i32,
    /// Whether wins and losses that the fifty-move rule turns into draws
    /// (cursed wins, blessed losses) count as draws.
    pub fifty_move_rule: bool,
    /// Positions with more pieces than this are never probed.
    pub probe_limit: usize,
}

impl Default for TbConfig {
    fn default() -> TbConfig {
        TbConfig {
            probe_depth: 1,
            fifty_move_rule: true,
            probe_limit: 7,
        }
    }
}

/// The tables of the folders of one `SyzygyPath`.
pub struct Tablebases {
    tables: Tablebase<Chess>,
    /// Materials with a WDL table.
    wdl_tables: usize,
    dtz_tables: usize,
    /// Tables that failed a probe: each is told once (a file with a good
    /// header can be damaged further in, which only a probe finds).
    failures: Mutex<Failures>,
}

/// A table that a probe could not read: the search goes on without it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeFailure {
    /// The table's material, as its file is named (`KQvK`).
    pub material: String,
    /// `WDL` or `DTZ`.
    pub table: &'static str,
    /// What went wrong, in a few words.
    pub reason: String,
}

#[derive(Default)]
struct Failures {
    /// Every table that has failed, as (material, table).
    seen: Vec<(String, &'static str)>,
    /// Those not yet taken by [`Tablebases::take_failures`].
    untold: Vec<ProbeFailure>,
}

/// What loading a `SyzygyPath` found.
pub struct Loaded {
    /// `None` when no table was found (or the path was empty).
    pub tables: Option<Tablebases>,
    /// One sentence per folder or file that could not be used.
    pub problems: Vec<String>,
}

impl Tablebases {
    /// The tables of every folder in `paths` (separated by
    /// [`PATH_SEPARATOR`]; empty or `<empty>` is none). A folder that cannot
    /// be read and a file that is damaged are named in `problems` and left
    /// out; the other tables are used.
    pub fn load(paths: &str) -> Loaded {
        let mut tables = Tablebase::new();
        let mut problems = Vec::new();
        let (mut wdl_tables, mut dtz_tables) = (0, 0);
        for folder in paths.split(PATH_SEPARATOR).map(str::trim) {
            if folder.is_empty() || folder == "<empty>" {
                continue;
            }
            let entries = match std::fs::read_dir(folder) {
                Ok(entries) => entries,
                Err(e) => {
                    problems.push(format!("cannot read folder {folder}: {}", io_reason(&e)));
                    continue;
                }
            };
            let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            files.sort();
            for file in files {
                let Some(kind) = table_kind(&file) else {
                    continue;
                };
                match check_file(&file, kind).and_then(|()| {
                    tables
                        .add_file(&file)
                        .map_err(|e| format!("damaged table {}: {e}", file.display()))
                }) {
                    Ok(()) => match kind {
                        TableKind::Wdl => wdl_tables += 1,
                        TableKind::Dtz => dtz_tables += 1,
                    },
                    Err(problem) => problems.push(problem),
                }
            }
        }
        let found = wdl_tables + dtz_tables > 0;
        Loaded {
            tables: found.then_some(Tablebases {
                tables,
                wdl_tables,
                dtz_tables,
                failures: Mutex::default(),
            }),
            problems,
        }
    }

    /// How many materials have a WDL table, and how many a DTZ table.
    pub fn counts(&self) -> (usize, usize) {
        (self.wdl_tables, self.dtz_tables)
    }

    /// The most pieces of any table found.
    pub fn max_pieces(&self) -> usize {
        self.tables.max_pieces()
    }

    /// The outcome for the side to move of a position reached by a capture
    /// or a pawn move (halfmove clock 0); `None` when no table answers (too
    /// many pieces, castling rights, a table missing or damaged).
    pub fn probe_wdl(&self, pos: &Chess) -> Option<Wdl> {
        // The tables hold no position with castling rights (shakmaty-syzygy
        // would answer as if there were none).
        if !pos.castles().is_empty() {
            return None;
        }
        self.tables
            .probe_wdl_after_zeroing(pos)
            .map_err(|e| self.note(&e))
            .ok()
    }

    /// Plies to the next capture or pawn move on the best line, signed
    /// for the side to move (beyond ±100: cursed win, blessed loss);
    /// `None` when no table answers.
    pub fn probe_dtz(&self, pos: &Chess) -> Option<i32> {
        if !pos.castles().is_empty() {
            return None;
        }
        self.tables
            .probe_dtz(pos)
            .map_err(|e| self.note(&e))
            .ok()
            .map(|d| d.ignore_rounding().0)
    }

    /// Keeps a failed probe to be told, once per table. A table that is
    /// missing, a position with castling rights or too many pieces is no
    /// failure: the tables simply do not answer there.
    fn note(&self, error: &SyzygyError) {
        let SyzygyError::ProbeFailed {
            metric,
            material,
            error,
        } = error
        else {
            return;
        };
        let table = match metric {
            shakmaty_syzygy::Metric::Wdl => "WDL",
            shakmaty_syzygy::Metric::Dtz => "DTZ",
        };
        let material = material.to_string();
        let mut failures = self
            .failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if failures
            .seen
            .iter()
            .any(|(m, t)| *m == material && *t == table)
        {
            return;
        }
        failures.seen.push((material.clone(), table));
        let reason = match &**error {
            ProbeError::Read { error } => format!("cannot read the file: {}", io_reason(error)),
            ProbeError::Magic { .. } => "not a Syzygy file".to_string(),
            ProbeError::CorruptedTable { .. } => "the file is damaged".to_string(),
        };
        failures.untold.push(ProbeFailure {
            material,
            table,
            reason,
        });
    }

    /// The tables that failed a probe since the last call, each table once
    /// for as long as these tables are loaded.
    pub fn take_failures(&self) -> Vec<ProbeFailure> {
        let mut failures = self
            .failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut failures.untold)
    }
}

#[derive(Clone, Copy)]
enum TableKind {
    Wdl,
    Dtz,
}

/// WDL or DTZ file of standard chess, by its extension; other files are
/// no tables and are passed over.
fn table_kind(file: &Path) -> Option<TableKind> {
    match file.extension()?.to_str()? {
        "rtbw" => Some(TableKind::Wdl),
        "rtbz" => Some(TableKind::Dtz),
        _ => None,
    }
}

/// A table file whose first bytes are not the format's magic number is
/// damaged (shakmaty-syzygy would only find out when probing it).
fn check_file(file: &Path, kind: TableKind) -> Result<(), String> {
    let mut magic = [0u8; 4];
    // Only a regular file is opened: opening a FIFO would block for ever.
    let read = crate::files::regular_file_len(file)
        .and_then(|_| std::fs::File::open(file))
        .and_then(|mut f| f.read_exact(&mut magic));
    let expected = match kind {
        TableKind::Wdl => WDL_MAGIC,
        TableKind::Dtz => DTZ_MAGIC,
    };
    match read {
        Err(e) => Err(format!(
            "cannot read table {}: {}",
            file.display(),
            io_reason(&e)
        )),
        Ok(()) if magic != expected => Err(format!(
            "damaged table {}: not a Syzygy file",
            file.display()
        )),
        Ok(()) => Ok(()),
    }
}

/// An I/O error in a few words, without the OS error number.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such folder or file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::NotADirectory => "not a folder".to_string(),
        std::io::ErrorKind::UnexpectedEof => "too short".to_string(),
        _ => e.to_string(),
    }
}

/// The search's score and bound for a WDL probe at `ply`: wins and
/// losses are exact as to outcome but only bounds as to score (a mate
/// may come sooner), draws are exact. With the fifty-move rule, cursed wins
/// and blessed losses are draws.
pub fn wdl_score(wdl: Wdl, ply: usize, fifty_move_rule: bool) -> (i32, super::tt::Bound) {
    use super::tt::Bound;
    let win = TB_WIN - ply as i32;
    match wdl {
        Wdl::Win => (win, Bound::Lower),
        Wdl::CursedWin if !fifty_move_rule => (win, Bound::Lower),
        Wdl::Loss => (-win, Bound::Upper),
        Wdl::BlessedLoss if !fifty_move_rule => (-win, Bound::Upper),
        _ => (0, Bound::Exact),
    }
}

/// Larger than any DTZ: the rank of a win that the fifty-move rule cannot spoil.
const CERTAIN: i32 = 1 << 18;

/// How a root move ranks by its DTZ (plies to a zeroing move, signed for
/// the side to move at the root): every win the fifty-move rule cannot
/// spoil ranks the same (the search then picks the fastest mate among
/// them); a win that the rule might spoil (or at all, after a repetition)
/// ranks by how soon it zeroes; losses rank the same unless the rule might
/// save them, the longer the better; draws rank 0.
pub fn dtz_rank(dtz: i32, halfmoves: u32, repeated: bool) -> i32 {
    let clock = halfmoves.min(1000) as i32;
    if dtz > 0 {
        if dtz + clock <= 99 && !repeated {
            CERTAIN
        } else {
            CERTAIN - (dtz + clock)
        }
    } else if dtz < 0 {
        if -dtz * 2 + clock < 100 {
            -CERTAIN
        } else {
            -CERTAIN + (-dtz + clock)
        }
    } else {
        0
    }
}

/// The rank of a root move known only by its WDL (no DTZ table).
fn wdl_rank(wdl: Wdl) -> i32 {
    match wdl {
        Wdl::Win => CERTAIN,
        Wdl::CursedWin => CERTAIN - 101,
        Wdl::Draw => 0,
        Wdl::BlessedLoss => -CERTAIN + 101,
        Wdl::Loss => -CERTAIN,
    }
}

/// The score the root shows for a rank (the search's own score replaces
/// it when the search finds a mate): a win, a draw or a loss.
fn rank_score(rank: i32, fifty_move_rule: bool) -> i32 {
    let decisive = if fifty_move_rule { CERTAIN - 100 } else { 1 };
    if rank >= decisive {
        TB_WIN - 1
    } else if rank <= -decisive {
        -(TB_WIN - 1)
    } else {
        0
    }
}

/// The root moves the tables keep: those of the best rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootRanking {
    /// The moves to search, in the order given.
    pub moves: Vec<Move>,
    /// What the root is worth by the tables (from the side to move).
    pub score: i32,
    /// Ranked by DTZ (else by WDL alone: the search then keeps probing to
    /// make progress).
    pub by_dtz: bool,
    /// Probes made.
    pub probes: u64,
}

impl Tablebases {
    /// Ranks the root moves `moves` of `game` by the tables, DTZ where it
    /// can, WDL otherwise, and keeps the best. `None` when the root is not
    /// in the tables (castling rights, too many pieces, a table missing).
    pub fn rank_root(&self, game: &Game, moves: &[Move], config: &TbConfig) -> Option<RootRanking> {
        let pos = game.position();
        let pieces = pos.board().occupied().count();
        if moves.is_empty()
            || pieces > config.probe_limit.min(self.max_pieces())
            || !pos.castles().is_empty()
        {
            return None;
        }
        let keys: Vec<u64> = game.reversible_keys().collect();
        let repeated = (1..keys.len()).any(|i| keys[..i].contains(&keys[i]));
        let halfmoves = pos.halfmoves();
        let mut probes = 0;
        let by_dtz = self.rank_moves(pos, game.key(), &keys, moves, &mut probes, |child| {
            let dtz = if child.halfmoves() == 0 {
                Dtz::before_zeroing(-self.probe_wdl(child)?).0
            } else {
                let d = -self.probe_dtz(child)?;
                d + d.signum()
            };
            Some(dtz_rank(dtz, halfmoves, repeated))
        });
        let (ranks, by_dtz) = match by_dtz {
            Some(ranks) => (ranks, true),
            None => (
                self.rank_moves(pos, game.key(), &keys, moves, &mut probes, |child| {
                    let wdl = -self.probe_wdl(child)?;
                    // Without the fifty-move rule a cursed win is a win and
                    // a blessed loss a loss.
                    Some(wdl_rank(match wdl {
                        Wdl::CursedWin if !config.fifty_move_rule => Wdl::Win,
                        Wdl::BlessedLoss if !config.fifty_move_rule => Wdl::Loss,
                        wdl => wdl,
                    }))
                })?,
                false,
            ),
        };
        let best = ranks.iter().copied().max()?;
        Some(RootRanking {
            moves: moves
                .iter()
                .zip(&ranks)
                .filter(|&(_, &r)| r == best)
                .map(|(&m, _)| m)
                .collect(),
            score: rank_score(best, config.fifty_move_rule),
            by_dtz,
            probes,
        })
    }

    /// Each move's rank by `rank` of the position after it; moves that end
    /// the game are ranked here (mate best of all, a stalemate or a draw by
    /// threefold repetition or the fifty-move rule 0). `None` when a probe
    /// fails.
    fn rank_moves(
        &self,
        pos: &Chess,
        key: u64,
        keys: &[u64],
        moves: &[Move],
        probes: &mut u64,
        rank: impl Fn(&Chess) -> Option<i32>,
    ) -> Option<Vec<i32>> {
        moves
            .iter()
            .map(|&m| {
                let mut child = pos.clone();
                child.play_unchecked(m);
                if child.is_checkmate() {
                    return Some(CERTAIN);
                }
                let threefold = child.halfmoves() > 0
                    && keys
                        .iter()
                        .filter(|&&k| k == child_key(pos, key, m, &child))
                        .count()
                        >= 2;
                if child.is_stalemate() || threefold || child.halfmoves() >= 100 {
                    return Some(0);
                }
                *probes += 1;
                rank(&child)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::{MATE, MATE_BOUND, TB_WIN_BOUND};

    /// Whether a search score is a tablebase result rather than a mate or an
    /// evaluation.
    fn is_tb_score(score: i32) -> bool {
        score.abs() >= TB_WIN_BOUND && score.abs() < MATE_BOUND
    }

    #[test]
    fn certain_wins_rank_alike_and_the_fifty_move_rule_ranks_the_rest() {
        assert_eq!(dtz_rank(1, 0, false), dtz_rank(99, 0, false));
        assert_eq!(dtz_rank(20, 79, false), CERTAIN);
        // 20 plies to zero with 80 already gone: the rule may spoil it.
        assert_eq!(dtz_rank(20, 80, false), CERTAIN - 100);
        assert!(dtz_rank(10, 95, false) > dtz_rank(20, 95, false));
        // After a repetition no win is certain: the shorter the better.
        assert!(dtz_rank(3, 0, true) > dtz_rank(5, 0, true));
        assert_eq!(dtz_rank(0, 50, false), 0);
        assert_eq!(dtz_rank(-30, 0, false), -CERTAIN);
        // A loss the rule may save is better than a certain one.
        assert!(dtz_rank(-60, 0, false) > dtz_rank(-30, 0, false));
        assert!(dtz_rank(-60, 0, false) < 0);
    }

    #[test]
    fn ranks_score_as_wins_draws_and_losses() {
        assert_eq!(rank_score(CERTAIN, true), TB_WIN - 1);
        // A win the rule spoils is a draw with the rule, a win without.
        assert_eq!(rank_score(CERTAIN - 101, true), 0);
        assert_eq!(rank_score(CERTAIN - 101, false), TB_WIN - 1);
        assert_eq!(rank_score(-CERTAIN + 101, true), 0);
        assert_eq!(rank_score(-CERTAIN + 101, false), -(TB_WIN - 1));
        assert_eq!(rank_score(0, false), 0);
        assert!(is_tb_score(TB_WIN - 5) && is_tb_score(-(TB_WIN - 5)));
        assert!(!is_tb_score(MATE - 5) && !is_tb_score(900));
    }

    #[test]
    fn wdl_scores_and_bounds() {
        use super::super::tt::Bound;
        assert_eq!(wdl_score(Wdl::Win, 3, true), (TB_WIN - 3, Bound::Lower));
        assert_eq!(wdl_score(Wdl::CursedWin, 3, true), (0, Bound::Exact));
        assert_eq!(
            wdl_score(Wdl::CursedWin, 3, false),
            (TB_WIN - 3, Bound::Lower)
        );
        assert_eq!(wdl_score(Wdl::BlessedLoss, 2, true), (0, Bound::Exact));
        assert_eq!(
            wdl_score(Wdl::BlessedLoss, 2, false),
            (-(TB_WIN - 2), Bound::Upper)
        );
        assert_eq!(wdl_score(Wdl::Loss, 2, true), (-(TB_WIN - 2), Bound::Upper));
        assert_eq!(wdl_score(Wdl::Draw, 2, false), (0, Bound::Exact));
    }
}
