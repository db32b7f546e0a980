//! Switches for the strength lab: each pruning and ordering feature can be
//! turned off, so that a match of the engine against itself without the
//! feature measures what the feature is worth. A search takes its switches
//! from its request (`SearchRequest::ablation`, nothing off by default) and
//! reads no environment: the UCI engine reads `QILIN_DISABLE=nmp,lmr,…` once
//! at start-up and hands the switches to every search. Not a UCI option:
//! GUIs never see it.

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

/// The features switched off for a search; the default switches off none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ablation {
    disabled: u32,
}

impl Ablation {
    /// The features a comma-separated list of names switches off (the
    /// value of `QILIN_DISABLE`); unknown names are ignored.
    pub fn parse(list: &str) -> Ablation {
        let disabled = list
            .split(',')
            .filter_map(|name| NAMES.iter().find(|(_, n)| *n == name.trim()))
            .fold(0, |bits, (f, _)| bits | 1 << *f as u32);
        Ablation { disabled }
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
        let f = Ablation::parse("nmp, lmr,bogus");
        assert!(!f.on(Feature::NullMove));
        assert!(!f.on(Feature::Lmr));
        assert!(f.on(Feature::Futility));
        assert!(Ablation::default().on(Feature::NullMove));
    }
}
