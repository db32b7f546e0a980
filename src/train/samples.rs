//! Training positions in a compact form: the feature lists of both
//! perspectives as u16, the search score and the result from the side to
//! move's view; loaded from self-play data through `data::open_training`.

use crate::data::{self, Filter};
use rayon::prelude::*;
use shakmaty::{Chess, Color, Position};
use std::path::{Path, PathBuf};

/// The spec's features of `position` from `perspective`'s view, as the
/// engine indexes them (`nnue::features`), narrowed to u16 (all < 768).
pub fn features(position: &Chess, perspective: Color) -> Vec<u16> {
    crate::nnue::features::active(position.board(), perspective)
        .map(|f| f as u16)
        .collect()
}

/// The most features a position has: one per piece.
pub const MAX_FEATURES: usize = 32;

/// `features` with every piece on the square of the other wing (file a to
/// h, b to g, …), written into `out`: the square is a feature's low six
/// bits and its file the low three (every block of the layout is a
/// multiple of 64). The net sees no castling rights, and without them
/// chess is the same game in the mirror, so the image is a position of
/// the same worth.
pub fn mirror_into<'a>(features: &[u16], out: &'a mut [u16; MAX_FEATURES]) -> &'a [u16] {
    let n = features.len().min(MAX_FEATURES);
    for (o, &f) in out.iter_mut().zip(&features[..n]) {
        *o = f ^ 7;
    }
    &out[..n]
}

/// Positions, one after another.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Samples {
    /// Each position's two feature lists back to back: the side to move's,
    /// then the other side's (the same length).
    features: Vec<u16>,
    /// Where each position's lists start in `features`, plus the end (u64:
    /// u32 would overflow past about 60 million positions).
    starts: Vec<u64>,
    /// Centipawns, side to move's view.
    scores: Vec<i16>,
    /// Side to move's view: 0 loss, 1 draw, 2 win.
    results: Vec<u8>,
}

/// One position's view.
pub struct Sample<'a> {
    pub us: &'a [u16],
    pub them: &'a [u16],
    /// Centipawns, side to move's view.
    pub score: i16,
    /// Side to move's view: 0 loss, 1 draw, 2 win.
    pub result: u8,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    pub fn get(&self, i: usize) -> Sample<'_> {
        let (start, end) = (self.starts[i] as usize, self.starts[i + 1] as usize);
        let half = start + (end - start) / 2;
        Sample {
            us: &self.features[start..half],
            them: &self.features[half..end],
            score: self.scores[i],
            result: self.results[i],
        }
    }

    /// Adds a position given by its lists (same length), its score and its
    /// result (side to move's view).
    pub fn push(&mut self, us: &[u16], them: &[u16], score: i16, result: u8) {
        debug_assert_eq!(us.len(), them.len());
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        self.features.extend_from_slice(us);
        self.features.extend_from_slice(them);
        self.starts.push(self.features.len() as u64);
        self.scores.push(score);
        self.results.push(result);
    }

    /// Adds a position whose score and result are from White's view.
    pub fn push_position(&mut self, position: &Chess, white_score: i16, white_result: u8) {
        let stm = position.turn();
        let (score, result) = match stm {
            Color::White => (white_score, white_result),
            Color::Black => (white_score.saturating_neg(), 2 - white_result.min(2)),
        };
        self.push(
            &features(position, stm),
            &features(position, !stm),
            score,
            result,
        );
    }

    fn append(&mut self, other: Samples) {
        for i in 0..other.len() {
            let s = other.get(i);
            self.push(s.us, s.them, s.score, s.result);
        }
    }
}

/// Every position of the data (run folders, game files, legacy record
/// files) that passes the filter, files read in parallel and joined in
/// their order. A damaged or cut-short file keeps what came before the
/// damage (reported through `note`).
pub fn load(
    paths: &[String],
    filter: Filter,
    note: &(dyn Fn(&str) + Sync),
) -> Result<Samples, String> {
    let mut files: Vec<PathBuf> = Vec::new();
    for path in paths {
        let found = data::training_files(Path::new(path)).map_err(|e| format!("{path}: {e}"))?;
        if found.is_empty() {
            return Err(format!("{path}: no training file"));
        }
        files.extend(found);
    }
    let parts: Vec<Result<Samples, String>> = files
        .par_iter()
        .map(|file| {
            let reader = data::open_training(file, filter).map_err(|e| e.to_string())?;
            let mut part = Samples::default();
            for item in reader {
                match item {
                    Ok(p) => part.push_position(&p.position, p.score, p.result),
                    Err(e) => {
                        note(&format!(
                            "{}: {e}; the rest of the file is skipped",
                            file.display()
                        ));
                        break;
                    }
                }
            }
            Ok(part)
        })
        .collect();
    let mut all = Samples::default();
    for part in parts {
        all.append(part?);
    }
    if all.is_empty() {
        return Err("no usable position".into());
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mirrored lists are those of the board reflected by shakmaty.
    #[test]
    fn the_mirror_image_is_the_board_reflected() {
        let position: Chess =
            "r3k2r/pp1b1ppp/2n1pn2/q1pp4/3P1B2/2P1PN2/PP1NBPPP/R2QK2R b KQkq - 3 9"
                .parse::<shakmaty::fen::Fen>()
                .expect("fen")
                .into_position(shakmaty::CastlingMode::Standard)
                .expect("legal");
        let mut board = position.board().clone();
        board.flip_horizontal();
        let sorted = |v: &[u16]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v
        };
        for perspective in [Color::White, Color::Black] {
            let original = features(&position, perspective);
            let mut out = [0; MAX_FEATURES];
            let image = mirror_into(&original, &mut out);
            let expected: Vec<u16> = crate::nnue::features::active(&board, perspective)
                .map(|f| f as u16)
                .collect();
            assert_eq!(sorted(image), sorted(&expected));
            assert_ne!(sorted(image), sorted(&original));
        }
    }

    #[test]
    fn black_to_move_flips_score_and_result() {
        let position: Chess = "4k3/8/8/8/8/8/P7/4K3 b - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .expect("fen")
            .into_position(shakmaty::CastlingMode::Standard)
            .expect("legal");
        let mut samples = Samples::default();
        samples.push_position(&position, 120, 2);
        let s = samples.get(0);
        assert_eq!((s.score, s.result), (-120, 0));
        assert_eq!(s.us, features(&position, Color::Black));
        assert_eq!(s.them, features(&position, Color::White));
    }
}
