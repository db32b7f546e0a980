//! `qilin tune`: fits every evaluation weight to self-play data by gradient
//! descent (Adam) on the mean squared error between the evaluation's
//! predicted score, sigmoid(K · eval), and a target that mixes the game
//! result with the search score: `lambda · result + (1 − lambda) ·
//! sigmoid(K · score)`. K is fitted first, as the K that best maps the
//! data's search scores to its results. The evaluation is linear in its
//! weights (`eval::trace`), so each position is stored once as its sparse
//! coefficients; the gradient is summed in parallel on the rayon pool.
//! Writes `src/eval/weights.rs`.

use crate::data::{self, Filter};
use crate::eval::params::{self, COUNT, SECTIONS};
use crate::eval::{PHASE_MAX, SCALE_MAX};
use crate::search::tt::MATE_BOUND;
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;

/// `qilin tune`: fits the evaluation weights to self-play data.
#[derive(Clone, Debug, clap::Args)]
pub struct Settings {
    /// Data: run folders of `datagen`, game files or legacy 32-byte record files;
    /// comma-separated or the option repeated
    #[arg(
        long,
        value_name = "FILE[,FILE...]",
        value_delimiter = ',',
        required = true
    )]
    data: Vec<String>,
    /// Where to write the weights
    #[arg(long, value_name = "FILE", default_value = "src/eval/weights.rs")]
    out: String,
    /// Passes over the data
    #[arg(long, default_value_t = 2000)]
    epochs: usize,
    /// Weight of the game result in the target (the rest is the search score), 0.0-1.0
    #[arg(long, default_value_t = 0.5, value_parser = unit_interval, allow_negative_numbers = true)]
    lambda: f64,
    /// Adam's learning rate
    #[arg(long, default_value_t = 1.0, value_parser = positive, allow_negative_numbers = true)]
    rate: f64,
    /// Threads (default: every core)
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: Option<u16>,
    /// Start from zero weights instead of the current ones
    #[arg(long)]
    from_scratch: bool,
    /// Fit only these sections of the weights (comma-separated), keep the rest
    #[arg(long, value_name = "SECTION[,SECTION...]", value_delimiter = ',', value_parser = section)]
    only: Vec<String>,
    /// Use this K instead of fitting it (a partial fit keeps the K of the weights it leaves alone)
    #[arg(long, value_parser = positive, allow_negative_numbers = true)]
    k: Option<f64>,
}

/// A clap parser: a number in 0.0..=1.0 (also used by `qilin train`).
pub(crate) fn unit_interval(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err("must be within 0.0..1.0".into())
    }
}

/// A clap parser: a finite number above 0 (also used by `qilin train`).
pub(crate) fn positive(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err("must be a positive number".into())
    }
}

fn section(text: &str) -> Result<String, String> {
    let name = text.trim().to_uppercase();
    if SECTIONS.iter().any(|&(n, _, _)| n == name) {
        Ok(name)
    } else {
        Err(format!("no section '{name}'"))
    }
}

/// One position as the model sees it.
struct Entry {
    coeffs: Vec<(u16, i16)>,
    /// Middlegame share, 0..=1.
    mg: f64,
    /// Endgame share with the endgame scale applied.
    eg: f64,
    result: f64,
    score: f64,
}

fn sigmoid(k: f64, x: f64) -> f64 {
    1.0 / (1.0 + (-k * x).exp())
}

/// Runs the fit and writes the weights file.
pub fn run(s: &Settings) -> Result<(), String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(s.threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            usize::from,
        ))
        .build()
        .map_err(|e| e.to_string())?;
    pool.install(|| fit(s))
}

fn fit(s: &Settings) -> Result<(), String> {
    let started = Instant::now();
    let entries = load_entries(&s.data)?;
    eprintln!(
        "{} positions traced in {:.1} s",
        entries.len(),
        started.elapsed().as_secs_f64()
    );
    let k = match s.k {
        Some(k) => k,
        None => {
            let k = fit_k(&entries, |e| (e.score, e.result));
            eprintln!("K = {k:.6} (search scores to results)");
            k
        }
    };
    let targets: Vec<f64> = entries
        .iter()
        .map(|e| s.lambda * e.result + (1.0 - s.lambda) * sigmoid(k, e.score))
        .collect();
    let start = if s.from_scratch {
        params::initial()
    } else {
        crate::eval::weights()
    };
    let mut w: Vec<f64> = start
        .iter()
        .flat_map(|&(m, e)| [f64::from(m), f64::from(e)])
        .collect();
    let free = free_weights(&s.only);
    let (mut m1, mut m2) = (vec![0.0; 2 * COUNT], vec![0.0; 2 * COUNT]);
    let (beta1, beta2) = (0.9f64, 0.999f64);
    let train = entries.len() - entries.len() / 20;
    for epoch in 1..=s.epochs {
        let pass = gradient(&entries, &targets, &w, k);
        let scale = 2.0 / train as f64;
        let t = epoch as i32;
        for i in (0..2 * COUNT).filter(|&i| free[i]) {
            let g = pass.gradient[i] * scale;
            m1[i] = beta1 * m1[i] + (1.0 - beta1) * g;
            m2[i] = beta2 * m2[i] + (1.0 - beta2) * g * g;
            let mh = m1[i] / (1.0 - beta1.powi(t));
            let vh = m2[i] / (1.0 - beta2.powi(t));
            w[i] -= s.rate * mh / (vh.sqrt() + 1e-8);
        }
        if epoch.is_multiple_of(100) || epoch == s.epochs || epoch == 1 {
            let held = (entries.len() - train).max(1) as f64;
            eprintln!(
                "epoch {epoch}: training loss {:.6}, held-out loss {:.6}, held-out loss against results alone {:.6} ({:.0} s)",
                pass.loss / train as f64,
                pass.held_out_loss / held,
                pass.held_out_result_loss / held,
                started.elapsed().as_secs_f64()
            );
        }
    }
    let weights: Vec<(i32, i32)> = w
        .chunks(2)
        .map(|p| (p[0].round() as i32, p[1].round() as i32))
        .collect();
    let note = fit_note(s, entries.len(), k);
    std::fs::write(&s.out, weights_file(&weights, &note)).map_err(|e| format!("{}: {e}", s.out))?;
    eprintln!("wrote {}", s.out);
    Ok(())
}

/// Every quiet position of the data (files or run folders) as the model
/// sees it.
fn load_entries(paths: &[String]) -> Result<Vec<Entry>, String> {
    let mut positions = Vec::new();
    for path in paths {
        let files = data::training_files(Path::new(path)).map_err(|e| format!("{path}: {e}"))?;
        let before = positions.len();
        for file in &files {
            let reader =
                data::open_training(file, Filter::quiet(MATE_BOUND)).map_err(|e| e.to_string())?;
            for item in reader {
                match item {
                    Ok(p) => positions.push(p),
                    // A damaged or cut-short end: keep what came before it.
                    Err(e) => {
                        eprintln!("{}: {e}; the rest of the file is skipped", file.display());
                        break;
                    }
                }
            }
        }
        eprintln!(
            "{path}: {} positions in {} file(s)",
            positions.len() - before,
            files.len()
        );
    }
    let entries: Vec<Entry> = positions
        .par_iter()
        .filter_map(|p| {
            let (trace, phase, scale) = crate::eval::trace(&p.position)?;
            let coeffs = trace
                .coeffs
                .iter()
                .enumerate()
                .filter(|(_, c)| **c != 0)
                .map(|(i, c)| (i as u16, *c))
                .collect();
            let mg = f64::from(phase) / f64::from(PHASE_MAX);
            Some(Entry {
                coeffs,
                mg,
                eg: (1.0 - mg) * f64::from(scale) / f64::from(SCALE_MAX),
                result: f64::from(p.result) / 2.0,
                score: f64::from(p.score),
            })
        })
        .collect();
    if entries.is_empty() {
        return Err("no usable position".into());
    }
    Ok(entries)
}

/// Which of the 2 · COUNT numbers the fit may move: all, or those of the
/// sections named.
fn free_weights(only: &[String]) -> Vec<bool> {
    (0..COUNT)
        .flat_map(|i| {
            let free = only.is_empty()
                || SECTIONS.iter().any(|&(name, at, len)| {
                    (at..at + len).contains(&i) && only.iter().any(|o| o == name)
                });
            [free, free]
        })
        .collect()
}

/// One pass over the data: the loss gradient of the training part, and the
/// losses of the held-out part.
struct Pass {
    gradient: Vec<f64>,
    loss: f64,
    held_out_loss: f64,
    /// Against the game results alone.
    held_out_result_loss: f64,
}

/// Every twentieth position is held out to watch for over-fitting.
fn is_held_out(i: usize) -> bool {
    i % 20 == 19
}

fn gradient(entries: &[Entry], targets: &[f64], w: &[f64], k: f64) -> Pass {
    let empty = || Pass {
        gradient: vec![0.0; 2 * COUNT],
        loss: 0.0,
        held_out_loss: 0.0,
        held_out_result_loss: 0.0,
    };
    entries
        .par_iter()
        .zip(targets.par_iter())
        .enumerate()
        .fold(empty, |mut pass, (i, (e, &t))| {
            let (mut mg, mut eg) = (0.0, 0.0);
            for &(idx, c) in &e.coeffs {
                mg += w[2 * idx as usize] * f64::from(c);
                eg += w[2 * idx as usize + 1] * f64::from(c);
            }
            let p = sigmoid(k, mg * e.mg + eg * e.eg);
            let err = p - t;
            if is_held_out(i) {
                pass.held_out_loss += err * err;
                pass.held_out_result_loss += (p - e.result).powi(2);
                return pass;
            }
            pass.loss += err * err;
            let d = err * p * (1.0 - p) * k;
            for &(idx, c) in &e.coeffs {
                pass.gradient[2 * idx as usize] += d * e.mg * f64::from(c);
                pass.gradient[2 * idx as usize + 1] += d * e.eg * f64::from(c);
            }
            pass
        })
        .reduce(empty, |mut a, b| {
            a.gradient
                .iter_mut()
                .zip(b.gradient)
                .for_each(|(x, y)| *x += y);
            a.loss += b.loss;
            a.held_out_loss += b.held_out_loss;
            a.held_out_result_loss += b.held_out_result_loss;
            a
        })
}

/// The record of the fit written into the weights file. A partial fit keeps
/// the record of the fit the other weights came from.
fn fit_note(s: &Settings, positions: usize, k: f64) -> String {
    let fitted = format!(
        "{positions} positions from {}; K = {k:.6}, lambda = {}, {} epochs, rate {}",
        s.data.join(", "),
        s.lambda,
        s.epochs,
        s.rate
    );
    if s.only.is_empty() || s.from_scratch {
        fitted
    } else {
        format!(
            "{}; then {} alone on {fitted}",
            crate::eval::weights_note(),
            s.only.join(", ")
        )
    }
}

/// The k for which sigmoid(k · score) best predicts the results (least
/// squares, ternary search over 0.0001..0.05, that is 1/k from 20 to 10,000
/// centipawns). `score_result` gives an item's search score (centipawns) and
/// result (0, 0.5 or 1), both from the same side's view. Also used by `qilin
/// train`, which reports 1/k.
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

/// The generated source file.
pub fn weights_file(weights: &[(i32, i32)], note: &str) -> String {
    let mut out = String::new();
    out.push_str("//! Generated by `qilin tune`: do not edit. The evaluation's weights,\n");
    out.push_str("//! (middlegame, endgame) per entry, in the layout of `params`.\n");
    out.push_str(&format!("//! Fitted on {note}.\n\n"));
    out.push_str("use super::params::COUNT;\n\n");
    out.push_str(&format!("pub const NOTE: &str = {note:?};\n\n"));
    out.push_str("#[rustfmt::skip]\npub const WEIGHTS: [(i32, i32); COUNT] = [\n");
    for &(name, at, len) in SECTIONS {
        out.push_str(&format!("    // {name}\n"));
        for chunk in weights[at..at + len].chunks(8) {
            let row: Vec<String> = chunk.iter().map(|(m, e)| format!("({m}, {e}),")).collect();
            out.push_str(&format!("    {}\n", row.join(" ")));
        }
    }
    out.push_str("];\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weights_file_lists_every_weight_once() {
        let weights = vec![(1, -2); COUNT];
        let text = weights_file(&weights, "a test");
        assert_eq!(text.matches("(1, -2),").count(), COUNT);
        assert_eq!(text.matches("    // ").count(), SECTIONS.len());
        assert!(text.contains("pub const NOTE: &str = \"a test\";"));
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        settings: Settings,
    }

    fn parse(line: &str) -> Result<Settings, String> {
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("tune").chain(line.split_whitespace()))
            .map(|c| c.settings)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_partial_fit_names_real_sections_and_may_fix_k() {
        let s = parse("--data a.bin --only king_danger,SAFE_CHECK --k 0.005").expect("valid");
        assert_eq!(s.only, ["KING_DANGER", "SAFE_CHECK"]);
        assert_eq!(s.k, Some(0.005));
        let err = parse("--data a.bin --only KING_DANGERS")
            .err()
            .unwrap_or_default();
        assert!(err.contains("no section 'KING_DANGERS'"), "{err}");
        let err = parse("--data a.bin --k -1").err().unwrap_or_default();
        assert!(err.contains("--k"), "{err}");
        assert!(parse("--data a.bin --k 0.5").is_ok());
        assert!(parse("--only KING_DANGER").is_err(), "--data is required");
    }
}
