//! K: the scale that maps a search score to a win expectation,
//! sigmoid(k · score). Measured on the data itself, as the k for which the
//! search scores best predict the game results.

use rayon::prelude::*;

fn sigmoid(k: f64, x: f64) -> f64 {
    1.0 / (1.0 + (-k * x).exp())
}

/// The k for which sigmoid(k · score) best predicts the results (least
/// squares, ternary search over 0.0001..0.05, that is 1/k from 20 to 10,000
/// centipawns). `score_result` gives an item's search score (centipawns) and
/// result (0, 0.5 or 1), both from the same side's view.
pub fn fit_k<T: Sync>(items: &[T], score_result: impl Fn(&T) -> (f64, f64) + Sync) -> f64 {
    let error = |k: f64| -> f64 {
        items
            .par_iter()
            .map(|e| {
                let (score, result) = score_result(e);
                (sigmoid(k, score) - result).powi(2)
            })
            .sum::<f64>()
    };
    let (mut lo, mut hi) = (0.0001f64, 0.05f64);
    for _ in 0..60 {
        let (a, b) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if error(a) < error(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results drawn so that a score s wins with probability
    /// sigmoid(k · s) exactly (as fractions of many games at each score):
    /// the fit finds that k again.
    #[test]
    fn finds_the_k_the_results_were_made_with() {
        for k in [0.004, 0.0063, 0.01] {
            let items: Vec<(f64, f64)> = (-400..=400)
                .step_by(10)
                .map(|s| (f64::from(s), sigmoid(k, f64::from(s))))
                .collect();
            let fitted = fit_k(&items, |&(s, r)| (s, r));
            assert!((fitted - k).abs() < 1e-6, "{k}: {fitted}");
        }
    }
}
