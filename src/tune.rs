//! `qilin tune`: fits every evaluation weight to self-play data by gradient
//! descent (Adam) on the mean squared error between the evaluation's
//! predicted score, sigmoid(K · eval), and a target that mixes the game
//! result with the search score: `lambda · result + (1 − lambda) ·
//! sigmoid(K · score)`. K is fitted first, as the K that best maps the
//! data's search scores to its results. The evaluation is linear in its
//! weights (`eval::trace`), so each position is stored once as its sparse
//! coefficients; the gradient is summed in parallel on the rayon pool.
//! Writes `src/eval/weights.rs`.

use crate::data;
use crate::eval::params::{self, COUNT, SECTIONS};
use crate::eval::{PHASE_MAX, SCALE_MAX};
use rayon::prelude::*;
use std::time::Instant;

pub const USAGE: &str = "qilin tune --data FILE[,FILE...] [--out src/eval/weights.rs] [--epochs N] [--lambda 0.0-1.0] [--rate R] [--threads N] [--from-scratch] [--only SECTION[,SECTION...]] [--k K]";

pub struct Settings {
    data: Vec<String>,
    out: String,
    epochs: usize,
    lambda: f64,
    rate: f64,
    threads: usize,
    from_scratch: bool,
    /// The sections whose weights move; empty for all of them.
    only: Vec<String>,
    /// K given, not fitted: a partial fit keeps the K of the weights it leaves alone.
    k: Option<f64>,
}

impl Settings {
    pub fn parse(args: &[String]) -> Result<Settings, String> {
        let mut s = Settings {
            data: Vec::new(),
            out: "src/eval/weights.rs".into(),
            epochs: 2000,
            lambda: 0.5,
            rate: 1.0,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            from_scratch: false,
            only: Vec::new(),
            k: None,
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or(format!("{flag} needs a value"));
            match flag.as_str() {
                "--data" => s.data.extend(value()?.split(',').map(String::from)),
                "--out" => s.out = value()?.clone(),
                "--epochs" => s.epochs = checked(flag, value()?, |_| true)?,
                "--lambda" => s.lambda = checked(flag, value()?, |l| (0.0..=1.0).contains(l))?,
                "--rate" => s.rate = checked(flag, value()?, |r: &f64| *r > 0.0)?,
                "--threads" => s.threads = checked(flag, value()?, |t| (1..=256).contains(t))?,
                "--from-scratch" => s.from_scratch = true,
                "--k" => s.k = Some(checked(flag, value()?, |k: &f64| *k > 0.0)?),
                "--only" => {
                    for name in value()?.split(',') {
                        let name = name.trim().to_uppercase();
                        if !SECTIONS.iter().any(|&(n, _, _)| n == name) {
                            return Err(format!("--only: no section '{name}'"));
                        }
                        s.only.push(name);
                    }
                }
                other => return Err(format!("unknown option '{other}'")),
            }
        }
        if s.data.is_empty() {
            return Err("--data FILE is required".into());
        }
        Ok(s)
    }
}

/// `text` read as a `T` that `ok` accepts, or an error naming the flag.
fn checked<T: std::str::FromStr>(
    flag: &str,
    text: &str,
    ok: impl Fn(&T) -> bool,
) -> Result<T, String> {
    text.parse::<T>()
        .ok()
        .filter(ok)
        .ok_or_else(|| format!("{flag}: bad value '{text}'"))
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
        .num_threads(s.threads)
        .build()
        .map_err(|e| e.to_string())?;
    pool.install(|| fit(s))
}

fn fit(s: &Settings) -> Result<(), String> {
    let started = Instant::now();
    let mut records = Vec::new();
    for path in &s.data {
        let (mut r, bad) = data::read_file(path).map_err(|e| format!("{path}: {e}"))?;
        eprintln!("{path}: {} positions, {bad} unreadable", r.len());
        records.append(&mut r);
    }
    let entries: Vec<Entry> = records
        .par_iter()
        .filter_map(|r| {
            let (trace, phase, scale) = crate::eval::trace(&r.position)?;
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
                result: f64::from(r.result) / 2.0,
                score: f64::from(r.score),
            })
        })
        .collect();
    drop(records);
    if entries.is_empty() {
        return Err("no usable position".into());
    }
    eprintln!(
        "{} positions traced in {:.1} s",
        entries.len(),
        started.elapsed().as_secs_f64()
    );
    let k = match s.k {
        Some(k) => k,
        None => {
            let k = fit_k(&entries);
            eprintln!("K = {k:.6} (search scores to results)");
            k
        }
    };
    let targets: Vec<f64> = entries
        .iter()
        .map(|e| s.lambda * e.result + (1.0 - s.lambda) * sigmoid(k, e.score))
        .collect();
    // Every twentieth position is held out to watch for over-fitting.
    let is_held_out = |i: usize| i % 20 == 19;
    let start = if s.from_scratch {
        params::initial()
    } else {
        crate::eval::weights()
    };
    let mut w: Vec<f64> = start
        .iter()
        .flat_map(|&(m, e)| [f64::from(m), f64::from(e)])
        .collect();
    // Which of the 2 · COUNT numbers the fit may move.
    let free: Vec<bool> = (0..COUNT)
        .flat_map(|i| {
            let free = s.only.is_empty()
                || SECTIONS.iter().any(|&(name, at, len)| {
                    (at..at + len).contains(&i) && s.only.iter().any(|o| o == name)
                });
            [free, free]
        })
        .collect();
    let (mut m1, mut m2) = (vec![0.0; 2 * COUNT], vec![0.0; 2 * COUNT]);
    let (beta1, beta2) = (0.9f64, 0.999f64);
    let train = entries.len() - entries.len() / 20;
    for epoch in 1..=s.epochs {
        let (grad, loss, (held_out, held_result)) = entries
            .par_iter()
            .zip(targets.par_iter())
            .enumerate()
            .fold(
                || (vec![0.0; 2 * COUNT], 0.0, (0.0, 0.0)),
                |(mut g, mut loss, mut held), (i, (e, &t))| {
                    let (mut mg, mut eg) = (0.0, 0.0);
                    for &(idx, c) in &e.coeffs {
                        mg += w[2 * idx as usize] * f64::from(c);
                        eg += w[2 * idx as usize + 1] * f64::from(c);
                    }
                    let p = sigmoid(k, mg * e.mg + eg * e.eg);
                    let err = p - t;
                    if is_held_out(i) {
                        held.0 += err * err;
                        held.1 += (p - e.result).powi(2);
                        return (g, loss, held);
                    }
                    loss += err * err;
                    let d = err * p * (1.0 - p) * k;
                    for &(idx, c) in &e.coeffs {
                        g[2 * idx as usize] += d * e.mg * f64::from(c);
                        g[2 * idx as usize + 1] += d * e.eg * f64::from(c);
                    }
                    (g, loss, held)
                },
            )
            .reduce(
                || (vec![0.0; 2 * COUNT], 0.0, (0.0, 0.0)),
                |(mut g, l1, h1), (g2, l2, h2)| {
                    g.iter_mut().zip(g2).for_each(|(a, b)| *a += b);
                    (g, l1 + l2, (h1.0 + h2.0, h1.1 + h2.1))
                },
            );
        let scale = 2.0 / train as f64;
        let t = epoch as i32;
        for i in (0..2 * COUNT).filter(|&i| free[i]) {
            let g = grad[i] * scale;
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
                loss / train as f64,
                held_out / held,
                held_result / held,
                started.elapsed().as_secs_f64()
            );
        }
    }
    let weights: Vec<(i32, i32)> = w
        .chunks(2)
        .map(|p| (p[0].round() as i32, p[1].round() as i32))
        .collect();
    let fitted = format!(
        "{} positions from {}; K = {k:.6}, lambda = {}, {} epochs, rate {}",
        entries.len(),
        s.data.join(", "),
        s.lambda,
        s.epochs,
        s.rate
    );
    // A partial fit keeps the record of the fit the other weights came from.
    let note = if s.only.is_empty() || s.from_scratch {
        fitted
    } else {
        format!(
            "{}; then {} alone on {fitted}",
            crate::eval::weights_note(),
            s.only.join(", ")
        )
    };
    std::fs::write(&s.out, weights_file(&weights, &note)).map_err(|e| format!("{}: {e}", s.out))?;
    eprintln!("wrote {}", s.out);
    Ok(())
}

/// The K minimising the squared error between sigmoid(K · score) and the result.
fn fit_k(entries: &[Entry]) -> f64 {
    let error = |k: f64| -> f64 {
        entries
            .par_iter()
            .map(|e| (sigmoid(k, e.score) - e.result).powi(2))
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

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_partial_fit_names_real_sections_and_may_fix_k() {
        let s = Settings::parse(&args(
            "--data a.bin --only king_danger,SAFE_CHECK --k 0.005",
        ))
        .expect("valid");
        assert_eq!(s.only, ["KING_DANGER", "SAFE_CHECK"]);
        assert_eq!(s.k, Some(0.005));
        let err = Settings::parse(&args("--data a.bin --only KING_DANGERS")).err();
        assert_eq!(err.as_deref(), Some("--only: no section 'KING_DANGERS'"));
        let err = Settings::parse(&args("--data a.bin --k -1")).err();
        assert_eq!(err.as_deref(), Some("--k: bad value '-1'"));
    }
}
