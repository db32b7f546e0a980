//! Switches for the strength lab: each pruning and ordering feature can be
//! turned off with `QILIN_DISABLE=nmp,lmr,…` in the environment, so that a
//! match of the engine against itself without the feature measures what the
//! feature is worth. Not a UCI option: GUIs never see it.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    Aspiration,
    NullMove,
    ReverseFutility,
    Futility,
    Lmp,
    Lmr,
    SeePruning,
    Iir,
    Killers,
    History,
    Singular,
    Correction,
    ProbCut,
}

const NAMES: [(Feature, &str); 13] = [
    (Feature::Aspiration, "aspiration"),
    (Feature::NullMove, "nmp"),
    (Feature::ReverseFutility, "rfp"),
    (Feature::Futility, "futility"),
    (Feature::Lmp, "lmp"),
    (Feature::Lmr, "lmr"),
    (Feature::SeePruning, "see"),
    (Feature::Iir, "iir"),
    (Feature::Killers, "killers"),
    (Feature::History, "history"),
    (Feature::Singular, "singular"),
    (Feature::Correction, "correction"),
    (Feature::ProbCut, "probcut"),
];

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    disabled: u32,
}

impl Features {
    /// Reads `QILIN_DISABLE` (comma-separated names); unknown names are ignored.
    pub fn from_env() -> Features {
        std::env::var("QILIN_DISABLE").map_or_else(|_| Features::default(), |v| Features::parse(&v))
    }

    pub fn parse(list: &str) -> Features {
        let disabled = list
            .split(',')
            .filter_map(|name| NAMES.iter().find(|(_, n)| *n == name.trim()))
            .fold(0, |bits, (f, _)| bits | 1 << *f as u32);
        Features { disabled }
    }

    pub fn on(self, feature: Feature) -> bool {
        self.disabled & (1 << feature as u32) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_switch_features_off() {
        let f = Features::parse("nmp, lmr,bogus");
        assert!(!f.on(Feature::NullMove));
        assert!(!f.on(Feature::Lmr));
        assert!(f.on(Feature::Futility));
        assert!(Features::default().on(Feature::NullMove));
    }
}
