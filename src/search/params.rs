//! Every tunable constant of the search in one table: pruning margins,
//! reduction terms, history bonuses, the aspiration window, extensions and
//! time management. Each has its value and the range a tuner may move it in.
//!
//! In a normal build each parameter is a `const fn` that returns its value,
//! so the search compiles exactly as if the literal were written in place.
//! In a build with `--features tune` each is an atomic that `setoption`
//! changes (every parameter is then also a UCI `spin` option, by its name),
//! so that an SPSA tuner can move them between games.

/// One parameter as a tuner sees it. `step` is the perturbation an SPSA
/// run starts from (OpenBench's `c`, about a twentieth of the range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    pub step: i32,
}

macro_rules! search_params {
    ($($(#[doc = $doc:literal])* $name:ident = $value:literal, $min:literal..=$max:literal, $step:literal;)*) => {
        /// The whole table, in declaration order.
        pub const ALL: &[Param] = &[
            $(Param { name: stringify!($name), default: $value, min: $min, max: $max, step: $step },)*
        ];

        $(
            $(#[doc = $doc])*
            #[cfg(not(feature = "tune"))]
            #[inline(always)]
            pub const fn $name() -> i32 {
                $value
            }

            $(#[doc = $doc])*
            #[cfg(feature = "tune")]
            #[inline]
            pub fn $name() -> i32 {
                tuned::$name.load(std::sync::atomic::Ordering::Relaxed)
            }
        )*

        #[cfg(feature = "tune")]
        #[allow(non_upper_case_globals)]
        mod tuned {
            use std::sync::atomic::AtomicI32;
            $(pub static $name: AtomicI32 = AtomicI32::new($value);)*
        }

        /// Sets a parameter by its name (exact, as in `ALL`); out-of-range
        /// values are refused and nothing changes.
        #[cfg(feature = "tune")]
        pub fn set(name: &str, value: i32) -> Result<(), String> {
            use std::sync::atomic::Ordering;
            let Some(p) = ALL.iter().find(|p| p.name.eq_ignore_ascii_case(name)) else {
                return Err(format!("no such search parameter: {name}"));
            };
            if !(p.min..=p.max).contains(&value) {
                return Err(format!(
                    "invalid value for {}: {value} (expected an integer {}..{})",
                    p.name, p.min, p.max
                ));
            }
            match p.name {
                $(stringify!($name) => tuned::$name.store(value, Ordering::Relaxed),)*
                _ => unreachable!("every name in ALL has a static"),
            }
            Ok(())
        }
    };
}

search_params! {
    /// Aspiration windows start at this depth.
    aspiration_min_depth = 4, 2..=10, 1;
    /// The first half-width of the aspiration window, in centipawns.
    aspiration_delta = 20, 5..=60, 3;
    /// Added to the window's growth (half its width) after each fail.
    aspiration_growth = 10, 0..=40, 2;
    /// A half-width past this opens the window fully.
    aspiration_full = 1029, 300..=3000, 100;

    /// Reverse futility pruning up to this depth.
    rfp_depth = 8, 4..=14, 1;
    /// Reverse futility margin per ply of depth.
    rfp_margin = 77, 30..=160, 6;

    /// Null-move pruning from this depth.
    nmp_min_depth = 2, 1..=6, 1;
    /// The null-move reduction's constant part.
    nmp_base = 5, 1..=6, 1;
    /// One more ply of null-move reduction per this many plies of depth.
    nmp_depth_divisor = 3, 2..=8, 1;
    /// One more ply of null-move reduction per this many centipawns above beta.
    nmp_eval_divisor = 202, 80..=400, 15;
    /// At most this many plies of reduction for the eval's margin.
    nmp_eval_max = 3, 0..=6, 1;
    /// From this depth a null-move cutoff is verified by a real search.
    nmp_verify_depth = 10, 6..=20, 1;

    /// ProbCut from this depth.
    probcut_min_depth = 4, 3..=9, 1;
    /// ProbCut's bound above beta, in centipawns.
    probcut_margin = 196, 80..=400, 15;
    /// ProbCut's search is this many plies shallower.
    probcut_reduction = 4, 2..=6, 1;

    /// Internal iterative reduction from this depth.
    iir_min_depth = 2, 2..=8, 1;

    /// Late move pruning up to this depth.
    lmp_depth = 8, 4..=14, 1;
    /// Quiet moves allowed before late move pruning: this plus depth².
    lmp_base = 7, 0..=10, 1;

    /// Futility pruning up to this reduced depth.
    futility_depth = 8, 4..=14, 1;
    /// Futility margin's constant part, in centipawns.
    futility_base = 103, 20..=250, 10;
    /// Futility margin per ply of reduced depth.
    futility_margin = 100, 30..=200, 8;

    /// SEE pruning of quiet moves up to this reduced depth.
    see_quiet_depth = 8, 4..=14, 1;
    /// Quiet SEE threshold: minus this times the reduced depth squared.
    see_quiet_margin = 29, 5..=80, 3;
    /// SEE pruning of captures up to this depth.
    see_noisy_depth = 6, 3..=12, 1;
    /// Capture SEE threshold: minus this times the depth.
    see_noisy_margin = 92, 30..=200, 8;

    /// The LMR table's constant, in thousandths of a ply.
    lmr_base = 858, 0..=1500, 60;
    /// The LMR table's divisor of ln(depth)·ln(moves), in hundredths.
    lmr_divisor = 194, 150..=400, 12;
    /// Late move reductions from this depth.
    lmr_min_depth = 2, 2..=6, 1;
    /// Less reduction at PV nodes, in 1/1024 of a ply.
    lmr_pv = 969, 0..=2048, 100;
    /// More reduction at expected cut nodes, in 1/1024 of a ply.
    lmr_cut_node = 1083, 0..=2048, 100;
    /// More reduction when the eval is not improving, in 1/1024 of a ply.
    lmr_not_improving = 1099, 0..=2048, 100;
    /// Less reduction for a move that gives check, in 1/1024 of a ply.
    lmr_gives_check = 1007, 0..=2048, 100;
    /// A ply less (or more) reduction for every this much quiet history.
    lmr_history_divisor = 12034, 4096..=32768, 1024;
    /// Less reduction for killers and the counter move, in 1/1024 of a ply.
    lmr_special = 1008, 0..=2048, 100;
    /// More reduction for quiets when the TT move is a capture, in 1/1024 of a ply.
    lmr_tt_capture = 1038, 0..=2048, 100;
    /// Less reduction for captures, in 1/1024 of a ply.
    lmr_noisy = 981, 0..=2048, 100;
    /// Less reduction, in 1/1024 plies, at a non-PV node whose position was
    /// on a principal variation when the TT stored it (0: off).
    lmr_tt_pv = 0, 0..=2048, 100;

    /// Singular extension from this depth.
    singular_min_depth = 6, 4..=12, 1;
    /// The TT entry may be at most this many plies shallower than the node.
    singular_tt_depth = 2, 1..=6, 1;
    /// The singular bound: the TT score less this times the depth.
    singular_margin = 2, 1..=6, 1;

    /// Delta pruning in quiescence: a capture's gain plus this margin.
    qsearch_delta = 205, 50..=400, 15;

    /// The history bonus per depth², capped by `history_bonus_max`.
    history_bonus = 16, 4..=48, 2;
    /// The largest history bonus.
    history_bonus_max = 1550, 400..=4000, 150;

    /// The largest correction of the static eval, in centipawns.
    correction_limit = 118, 32..=400, 16;
    /// The heaviest weight (of 256) a search result gets in the correction.
    correction_max_weight = 15, 4..=64, 2;
    /// Each correction table's weight in the sum, out of 1024: the pawns;
    /// the knights, bishops and kings; each side's pieces (0: not used).
    correction_pawn_weight = 1024, 256..=2048, 64;
    correction_minor_weight = 0, 0..=1024, 64;
    correction_pieces_weight = 0, 0..=1024, 64;

    /// Moves planned for when the GUI gives no `movestogo`.
    time_moves_to_go = 25, 10..=60, 2;
    /// The hard bound is this many times a move's share at the start of a
    /// game,
    time_hard_factor = 4, 2..=8, 1;
    /// one more every this many plies of the game,
    time_hard_plies = 12, 4..=40, 2;
    /// up to this many times (at most `time_hard_factor`: no growth).
    time_hard_max = 4, 2..=10, 1;
    /// Soft and hard caps on the clock, in tenths of it, with moves to go.
    time_soft_cap = 4, 1..=7, 1;
    time_hard_cap = 7, 3..=9, 1;
    /// The soft bound's factor with a new best move, in hundredths.
    time_unstable = 130, 80..=200, 5;
    /// Less of the soft bound for each iteration the best move kept, in hundredths.
    time_stability_step = 15, 0..=40, 2;
    /// The smallest factor of the soft bound, in hundredths.
    time_stable_min = 55, 20..=100, 4;
    /// The soft bound's factor from the best move's share of the last
    /// iteration's root nodes, in hundredths: offset − slope × share
    /// (100 and 0: no effect), from this depth on.
    time_nodes_offset = 100, 50..=300, 8;
    time_nodes_slope = 0, 0..=250, 8;
    time_nodes_min_depth = 6, 1..=16, 1;
    /// The soft bound's factor from a falling score: this many hundredths
    /// more per 100 cp the best score fell since the last iteration (less
    /// when it rose; 0: no effect), kept within min..max hundredths.
    time_falling = 0, 0..=100, 4;
    time_falling_min = 85, 50..=100, 4;
    time_falling_max = 150, 100..=250, 8;
}

/// OpenBench's default learning rate at the end of an SPSA run (`r_end`):
/// a game won then moves a parameter by this many of its steps.
pub const SPSA_R_END: f64 = 0.002;

/// The table as OpenBench's SPSA input, one parameter a line:
/// `name, int, default, min, max, c_end, r_end`, with the step as `c_end`.
/// `qilin spsa-params` (tune builds) prints it for OpenBench and for the
/// lab's tuner (engine-tests/lab/spsa.py), so the steps are written once.
pub fn spsa_input() -> String {
    ALL.iter()
        .map(|p| {
            format!(
                "{}, int, {}, {}, {}, {}, {SPSA_R_END}\n",
                p.name, p.default, p.min, p.max, p.step
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_has_a_sane_unique_entry() {
        for (i, p) in ALL.iter().enumerate() {
            assert!(p.min <= p.default && p.default <= p.max, "{p:?}");
            assert!(p.step > 0 && p.step <= p.max - p.min, "{p:?}");
            assert!(
                ALL[..i]
                    .iter()
                    .all(|q| !q.name.eq_ignore_ascii_case(p.name)),
                "{} twice",
                p.name
            );
        }
    }

    #[test]
    fn the_functions_return_the_table() {
        // Spot checks that the function and the table come from one line.
        let value = |name: &str| ALL.iter().find(|p| p.name == name).map(|p| p.default);
        assert_eq!(value("rfp_margin"), Some(rfp_margin()));
        assert_eq!(value("lmr_history_divisor"), Some(lmr_history_divisor()));
        assert_eq!(value("time_stable_min"), Some(time_stable_min()));
    }

    #[cfg(feature = "tune")]
    #[test]
    fn set_checks_name_and_range() {
        assert!(set("no_such_thing", 1).is_err());
        assert!(set("rfp_margin", 10_000).is_err());
        assert_eq!(rfp_margin(), 80);
        assert_eq!(set("RFP_MARGIN", 81), Ok(()));
        assert_eq!(rfp_margin(), 81);
        assert_eq!(set("rfp_margin", 80), Ok(()));
    }

    #[test]
    fn the_spsa_input_is_the_table() {
        let input = spsa_input();
        let lines: Vec<&str> = input.lines().collect();
        assert_eq!(lines.len(), ALL.len());
        assert!(lines.contains(&"rfp_margin, int, 77, 30, 160, 6, 0.002"));
        for (line, p) in lines.iter().zip(ALL) {
            let fields: Vec<&str> = line.split(", ").collect();
            assert_eq!(fields.len(), 7, "{line}");
            assert_eq!((fields[0], fields[1]), (p.name, "int"));
            assert_eq!(fields[5].parse::<i32>(), Ok(p.step));
        }
    }
}
