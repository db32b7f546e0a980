//! The UCI options: their declarations and the checked setting of values.

use crate::search::strength::Strength;

/// The values of every option, as the engine uses them. `Ponder` is
/// declared (GUIs look for it before they ponder) but needs no value here:
/// the engine ponders when told `go ponder`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub hash_mb: usize,
    pub threads: usize,
    pub multipv: usize,
    pub move_overhead_ms: u64,
    pub chess960: bool,
    pub show_wdl: bool,
    pub limit_strength: bool,
    pub elo: u32,
    /// Stockfish's `Skill Level`: 20 is full strength.
    pub skill_level: u32,
    /// Folders of Syzygy tables, as given (empty: no tables).
    pub syzygy_path: String,
    pub syzygy_probe_depth: i32,
    pub syzygy_50_move_rule: bool,
    pub syzygy_probe_limit: usize,
    /// The net file to evaluate with; empty: the embedded net.
    pub eval_file: String,
}

impl Default for Options {
    /// The declared defaults: `DECLARED` is the one place they are written.
    fn default() -> Self {
        let mut options = Options {
            hash_mb: 0,
            threads: 0,
            multipv: 0,
            move_overhead_ms: 0,
            chess960: false,
            show_wdl: false,
            limit_strength: false,
            elo: 0,
            skill_level: 0,
            syzygy_path: String::new(),
            syzygy_probe_depth: 0,
            syzygy_50_move_rule: false,
            syzygy_probe_limit: 0,
            eval_file: String::new(),
        };
        for (name, kind) in DECLARED {
            let value = match kind {
                Kind::Check { default, .. } => default.to_string(),
                Kind::Spin { default, .. } => default.to_string(),
                Kind::Text { default, .. } => default.to_string(),
                Kind::Button(_) => continue,
            };
            let set = options.set(name, Some(&value));
            debug_assert!(set.is_ok(), "{name}: {set:?}");
        }
        options
    }
}

/// How an option is declared and where its value goes: the kind (with its
/// default and range) and, for each kind, which option of that kind. Setting
/// a value matches on the option exhaustively, with no catch-all arm: a new
/// option that is declared but given no place to store its value does not
/// compile, and one given a place but never declared is a variant never
/// constructed (a warning, an error under `clippy -D warnings`).
#[derive(Clone, Copy, Debug)]
enum Kind {
    Check {
        option: CheckOption,
        default: bool,
    },
    Spin {
        option: SpinOption,
        default: u64,
        min: u64,
        max: u64,
    },
    /// A UCI `string` option; `<empty>` is the empty string.
    Text {
        option: TextOption,
        default: &'static str,
    },
    Button(ButtonOption),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CheckOption {
    Ponder,
    Chess960,
    ShowWdl,
    LimitStrength,
    Syzygy50MoveRule,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpinOption {
    Hash,
    Threads,
    MultiPv,
    SkillLevel,
    MoveOverhead,
    Elo,
    SyzygyProbeDepth,
    SyzygyProbeLimit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TextOption {
    SyzygyPath,
    EvalFile,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ButtonOption {
    ClearHash,
}

/// How UCI writes an empty string value.
const EMPTY: &str = "<empty>";

/// Option names as declared; `setoption` matches them case-insensitively.
const DECLARED: [(&str, Kind); 16] = [
    (
        "Hash",
        Kind::Spin {
            option: SpinOption::Hash,
            default: 16,
            min: 1,
            max: 65536,
        },
    ),
    (
        "Threads",
        Kind::Spin {
            option: SpinOption::Threads,
            default: 1,
            min: 1,
            max: 256,
        },
    ),
    (
        "MultiPV",
        Kind::Spin {
            option: SpinOption::MultiPv,
            default: 1,
            min: 1,
            max: 256,
        },
    ),
    // Stockfish's declaration: 0..20, 20 (full strength) by default. A
    // level below 20 plays at the Elo Stockfish gives that level
    // (`Strength::elo_of_skill`); `UCI_LimitStrength` wins when both are
    // set, as in Stockfish.
    (
        "Skill Level",
        Kind::Spin {
            option: SpinOption::SkillLevel,
            default: Strength::MAX_SKILL as u64,
            min: 0,
            max: Strength::MAX_SKILL as u64,
        },
    ),
    (
        "Ponder",
        Kind::Check {
            option: CheckOption::Ponder,
            default: false,
        },
    ),
    (
        "Move Overhead",
        Kind::Spin {
            option: SpinOption::MoveOverhead,
            default: 10,
            min: 0,
            max: 5000,
        },
    ),
    ("Clear Hash", Kind::Button(ButtonOption::ClearHash)),
    (
        "UCI_Chess960",
        Kind::Check {
            option: CheckOption::Chess960,
            default: false,
        },
    ),
    (
        "UCI_ShowWDL",
        Kind::Check {
            option: CheckOption::ShowWdl,
            default: false,
        },
    ),
    (
        "UCI_LimitStrength",
        Kind::Check {
            option: CheckOption::LimitStrength,
            default: false,
        },
    ),
    // Stockfish 15.1's range, so that its configurations are accepted; only
    // up to `Strength::MAX_ELO` is calibrated, and a level above it plays
    // at full strength (`Strength::limited`).
    (
        "UCI_Elo",
        Kind::Spin {
            option: SpinOption::Elo,
            default: Strength::MIN_ELO as u64,
            min: Strength::MIN_ELO as u64,
            max: Strength::DECLARED_MAX_ELO as u64,
        },
    ),
    // The Syzygy options as Stockfish names them (lichess-bot and GUIs set
    // them by these names).
    (
        "SyzygyPath",
        Kind::Text {
            option: TextOption::SyzygyPath,
            default: EMPTY,
        },
    ),
    (
        "SyzygyProbeDepth",
        Kind::Spin {
            option: SpinOption::SyzygyProbeDepth,
            default: 1,
            min: 1,
            max: 100,
        },
    ),
    (
        "Syzygy50MoveRule",
        Kind::Check {
            option: CheckOption::Syzygy50MoveRule,
            default: true,
        },
    ),
    (
        "SyzygyProbeLimit",
        Kind::Spin {
            option: SpinOption::SyzygyProbeLimit,
            default: 7,
            min: 0,
            max: 7,
        },
    ),
    (
        "EvalFile",
        Kind::Text {
            option: TextOption::EvalFile,
            default: EMPTY,
        },
    ),
];

/// What a successful `setoption` asks the engine to do besides storing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Hash,
    Threads,
    ClearHash,
    Chess960,
    /// New folders of Syzygy tables to load.
    SyzygyPath,
    /// A new way of probing the tables.
    SyzygyConfig,
    /// The net to evaluate with: `EvalFile` changed.
    EvalFile,
    Other,
}

impl Options {
    /// The Elo the engine is asked to play at, or `None` for full strength:
    /// `UCI_Elo` when `UCI_LimitStrength` is on (it wins over `Skill
    /// Level`, as in Stockfish), else the Elo of a `Skill Level` below 20.
    pub fn strength_elo(&self) -> Option<u32> {
        if self.limit_strength {
            Some(self.elo)
        } else {
            Strength::elo_of_skill(self.skill_level)
        }
    }

    /// The strength of the next search, seeded with `seed`; `None` plays
    /// at full strength (no level asked, or one above the calibrated range).
    pub fn strength(&self, seed: u64) -> Option<Strength> {
        self.strength_elo()
            .and_then(|elo| Strength::limited(elo, seed))
    }

    /// The `option …` lines of the `uci` handshake.
    pub fn declarations() -> Vec<String> {
        DECLARED
            .iter()
            .map(|(name, kind)| match kind {
                Kind::Check { default, .. } => {
                    format!("option name {name} type check default {default}")
                }
                Kind::Spin {
                    default, min, max, ..
                } => {
                    format!("option name {name} type spin default {default} min {min} max {max}")
                }
                Kind::Text { default, .. } => {
                    format!("option name {name} type string default {default}")
                }
                Kind::Button(_) => format!("option name {name} type button"),
            })
            .chain(Self::tune_declarations())
            .collect()
    }

    /// In a `tune` build, every search parameter as a spin option.
    #[cfg(feature = "tune")]
    fn tune_declarations() -> impl Iterator<Item = String> {
        crate::search::params::ALL.iter().map(|p| {
            format!(
                "option name {} type spin default {} min {} max {}",
                p.name, p.default, p.min, p.max
            )
        })
    }

    #[cfg(not(feature = "tune"))]
    fn tune_declarations() -> impl Iterator<Item = String> {
        std::iter::empty()
    }

    /// Sets an option from `setoption`; on error nothing changes and the
    /// message names the problem.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<Change, String> {
        let Some((declared, kind)) = DECLARED.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))
        else {
            #[cfg(feature = "tune")]
            if crate::search::params::ALL
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(name))
            {
                let value = value.unwrap_or("").trim();
                let v = value.parse::<i32>().map_err(|_| {
                    format!("invalid value for {name}: '{value}' (expected an integer)")
                })?;
                crate::search::params::set(name, v)?;
                return Ok(Change::Other);
            }
            return Err(format!("no such option: {name}"));
        };
        let value = value.unwrap_or("").trim();
        match *kind {
            Kind::Button(option) => Ok(self.press(option)),
            Kind::Text { option, .. } => {
                let text = if value == EMPTY {
                    String::new()
                } else {
                    value.to_string()
                };
                Ok(self.set_text(option, text))
            }
            Kind::Check { option, .. } => {
                let on = match value.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(format!(
                            "invalid value for {declared}: '{value}' (expected true or false)"
                        ));
                    }
                };
                Ok(self.set_check(option, on))
            }
            Kind::Spin {
                option, min, max, ..
            } => {
                let v = match value.parse::<u64>() {
                    Ok(v) if (min..=max).contains(&v) => v,
                    _ => {
                        return Err(format!(
                            "invalid value for {declared}: '{value}' (expected an integer {min}..{max})"
                        ));
                    }
                };
                Ok(self.set_spin(option, v))
            }
        }
    }

    fn press(&mut self, option: ButtonOption) -> Change {
        match option {
            ButtonOption::ClearHash => Change::ClearHash,
        }
    }

    fn set_text(&mut self, option: TextOption, text: String) -> Change {
        match option {
            TextOption::EvalFile => {
                self.eval_file = text;
                Change::EvalFile
            }
            TextOption::SyzygyPath => {
                self.syzygy_path = text;
                Change::SyzygyPath
            }
        }
    }

    fn set_check(&mut self, option: CheckOption, on: bool) -> Change {
        match option {
            // Declared only: the engine ponders when told `go ponder`.
            CheckOption::Ponder => Change::Other,
            CheckOption::Chess960 => {
                self.chess960 = on;
                Change::Chess960
            }
            CheckOption::ShowWdl => {
                self.show_wdl = on;
                Change::Other
            }
            CheckOption::LimitStrength => {
                self.limit_strength = on;
                Change::Other
            }
            CheckOption::Syzygy50MoveRule => {
                self.syzygy_50_move_rule = on;
                Change::SyzygyConfig
            }
        }
    }

    /// `v` is within the option's declared range, checked by `set`; every
    /// range fits the field's type (and usize on the platforms Rust supports).
    fn set_spin(&mut self, option: SpinOption, v: u64) -> Change {
        let n = v as usize;
        match option {
            SpinOption::Hash => {
                self.hash_mb = n;
                Change::Hash
            }
            SpinOption::Threads => {
                self.threads = n;
                Change::Threads
            }
            SpinOption::MultiPv => {
                self.multipv = n;
                Change::Other
            }
            SpinOption::Elo => {
                self.elo = v as u32;
                Change::Other
            }
            SpinOption::SkillLevel => {
                self.skill_level = v as u32;
                Change::Other
            }
            SpinOption::SyzygyProbeDepth => {
                self.syzygy_probe_depth = n as i32;
                Change::SyzygyConfig
            }
            SpinOption::SyzygyProbeLimit => {
                self.syzygy_probe_limit = n;
                Change::SyzygyConfig
            }
            SpinOption::MoveOverhead => {
                self.move_overhead_ms = v;
                Change::Other
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_defaults_match_the_values() {
        let d = Options::default();
        let lines = Options::declarations();
        assert!(lines.contains(&"option name Hash type spin default 16 min 1 max 65536".into()));
        assert!(
            lines.contains(&"option name Move Overhead type spin default 10 min 0 max 5000".into())
        );
        assert!(lines.contains(&"option name EvalFile type string default <empty>".into()));
        assert_eq!(d.eval_file, "");
        assert_eq!(d.hash_mb, 16);
        assert_eq!(d.move_overhead_ms, 10);
        assert!(lines.contains(&"option name UCI_LimitStrength type check default false".into()));
        assert!(
            lines.contains(&"option name UCI_Elo type spin default 1350 min 1350 max 2850".into())
        );
        assert!(
            lines.contains(&"option name Skill Level type spin default 20 min 0 max 20".into())
        );
        assert!(!d.limit_strength);
        assert_eq!(d.elo, 1350);
        assert_eq!(d.skill_level, 20);
        assert_eq!(d.strength(0), None, "full strength by default");
    }

    /// Every declared option, set to a value other than its default,
    /// changes its own field and no other option's: a value sent to the
    /// wrong field (two options alike) or nowhere (nothing changed) fails
    /// here. `Ponder` and `Clear Hash` store nothing, by design.
    #[test]
    fn every_declared_option_takes_effect_on_its_own() {
        let default = Options::default();
        let mut seen: Vec<(&str, Options)> = Vec::new();
        for (name, kind) in DECLARED {
            let value = match kind {
                Kind::Check { default, .. } => (!default).to_string(),
                Kind::Spin {
                    default, min, max, ..
                } => if default == max { min } else { max }.to_string(),
                Kind::Text { .. } => "x".to_string(),
                Kind::Button(_) => String::new(),
            };
            let mut o = Options::default();
            let set = o.set(name, Some(&value));
            assert!(set.is_ok(), "{name} {value}: {set:?}");
            let stores_nothing = matches!(
                kind,
                Kind::Button(_)
                    | Kind::Check {
                        option: CheckOption::Ponder,
                        ..
                    }
            );
            if stores_nothing {
                assert_eq!(o, default, "{name}");
                continue;
            }
            assert_ne!(o, default, "{name} {value} changed nothing");
            for (other, options) in &seen {
                assert_ne!(&o, options, "{name} and {other} set the same value");
            }
            seen.push((name, o));
        }
        assert_eq!(seen.len(), DECLARED.len() - 2);
    }

    #[test]
    fn skill_level_and_uci_elo_set_the_strength() {
        let mut o = Options::default();
        assert_eq!(o.set("skill level", Some("0")), Ok(Change::Other));
        // Skill 0 is Stockfish's 1347, played at the lowest level: its cap.
        assert_eq!(o.strength_elo(), Some(1347));
        assert_eq!(o.strength(0).map(Strength::node_cap), Some(1_030));
        assert_eq!(o.set("Skill Level", Some("4")), Ok(Change::Other));
        assert_eq!(o.strength(0).map(Strength::elo), Some(1785));
        // 8 (2113) is in the single-line band; from 10 (2264) up the Elo is
        // above the calibrated range: full strength.
        assert_eq!(o.set("Skill Level", Some("8")), Ok(Change::Other));
        assert_eq!(o.strength_elo(), Some(2113));
        assert_eq!(o.strength(0).map(Strength::lines), Some(1));
        assert_eq!(o.set("Skill Level", Some("10")), Ok(Change::Other));
        assert_eq!(o.strength_elo(), Some(2264));
        assert_eq!(o.strength(0), None);
        assert!(o.set("Skill Level", Some("21")).is_err());
        assert!(o.set("Skill Level", Some("-1")).is_err());
        assert_eq!(o.skill_level, 10, "a bad value changes nothing");
        // UCI_LimitStrength wins over Skill Level, as in Stockfish.
        o.set("Skill Level", Some("0")).expect("valid");
        o.set("UCI_LimitStrength", Some("true")).expect("valid");
        o.set("UCI_Elo", Some("2000")).expect("valid");
        assert_eq!(o.strength(0).map(Strength::node_cap), Some(100_000));
        // Stockfish's top is accepted and played at full strength.
        assert_eq!(o.set("UCI_Elo", Some("2850")), Ok(Change::Other));
        assert_eq!(o.strength(0), None);
        assert!(o.set("UCI_Elo", Some("2851")).is_err());
        assert!(o.set("UCI_Elo", Some("1349")).is_err());
    }

    #[test]
    fn names_are_case_insensitive_and_bad_values_change_nothing() {
        let mut o = Options::default();
        assert_eq!(o.set("hash", Some("128")), Ok(Change::Hash));
        assert_eq!(o.hash_mb, 128);
        assert!(o.set("Hash", Some("0")).is_err());
        assert!(o.set("Hash", Some("12x")).is_err());
        assert!(o.set("Hash", None).is_err());
        assert_eq!(o.hash_mb, 128);
        assert_eq!(o.set("move overhead", Some("100")), Ok(Change::Other));
        assert_eq!(o.move_overhead_ms, 100);
        assert_eq!(o.set("uci_chess960", Some("TRUE")), Ok(Change::Chess960));
        assert_eq!(
            o.set("evalfile", Some("nets/a b.nnue")),
            Ok(Change::EvalFile)
        );
        assert_eq!(o.eval_file, "nets/a b.nnue");
        assert_eq!(o.set("EvalFile", Some("<empty>")), Ok(Change::EvalFile));
        assert_eq!(o.eval_file, "");
        assert_eq!(
            o.set("Use NNUE", Some("false")),
            Err("no such option: Use NNUE".to_string())
        );
        assert!(o.chess960);
        assert_eq!(
            o.set("Syzygy", Some("x")),
            Err("no such option: Syzygy".to_string())
        );
    }

    #[test]
    fn search_parameters_are_options_only_in_a_tune_build() {
        let lines = Options::declarations();
        let tunable = "option name rfp_margin type spin default 80 min 30 max 160";
        assert_eq!(lines.contains(&tunable.to_string()), cfg!(feature = "tune"));
        let mut o = Options::default();
        let set = o.set("rfp_margin", Some("80"));
        if cfg!(feature = "tune") {
            assert_eq!(set, Ok(Change::Other));
            assert!(o.set("rfp_margin", Some("5000")).is_err());
        } else {
            assert_eq!(set, Err("no such option: rfp_margin".to_string()));
        }
    }

    #[test]
    fn syzygy_options() {
        let lines = Options::declarations();
        for line in [
            "option name SyzygyPath type string default <empty>",
            "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
            "option name Syzygy50MoveRule type check default true",
            "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
        ] {
            assert!(lines.contains(&line.to_string()), "{line}");
        }
        let mut o = Options::default();
        assert_eq!(o.syzygy_path, "");
        assert_eq!(
            (
                o.syzygy_probe_depth,
                o.syzygy_50_move_rule,
                o.syzygy_probe_limit
            ),
            (1, true, 7)
        );
        assert_eq!(o.set("syzygypath", Some("/a b:/c")), Ok(Change::SyzygyPath));
        assert_eq!(o.syzygy_path, "/a b:/c");
        assert_eq!(o.set("SyzygyPath", Some("<empty>")), Ok(Change::SyzygyPath));
        assert_eq!(o.syzygy_path, "");
        assert_eq!(o.set("SyzygyPath", None), Ok(Change::SyzygyPath));
        assert_eq!(
            o.set("Syzygy50MoveRule", Some("false")),
            Ok(Change::SyzygyConfig)
        );
        assert!(!o.syzygy_50_move_rule);
        assert!(o.set("SyzygyProbeLimit", Some("8")).is_err());
        assert!(o.set("SyzygyProbeDepth", Some("0")).is_err());
        assert_eq!(
            o.set("SyzygyProbeLimit", Some("0")),
            Ok(Change::SyzygyConfig)
        );
        assert_eq!(o.syzygy_probe_limit, 0);
    }
}
