//! `qilin train`: fits a (768→N)×2→B SCReLU network (NNUE-SPEC versions 1 and 2)
//! to self-play positions and writes it quantised.
//!
//! The prediction is sigmoid(eval_cp / K); the target mixes the game result
//! with the search score, `λ · result + (1 − λ) · sigmoid(score / K)`, both
//! from the side to move's view; the loss is their squared difference. K is
//! measured on the data (the K for which sigmoid(score / K) best predicts the
//! results: `k::fit_k`) unless given.
//!
//! Adam on mini-batches with a cosine learning-rate decay. Each batch is cut
//! into `PARTS` fixed parts whose gradients are computed in parallel and
//! summed in part order, so a run depends on its seed alone, not on the
//! number of threads. After every epoch the output folder receives a
//! checkpoint (weights, Adam's moments, epoch, generator state, the loss
//! history), the quantised net, and the loss curves (CSV, SVG); each is
//! written to a temporary file and renamed, and running the same command
//! again resumes from the checkpoint.

pub mod curves;
pub mod k;
pub mod model;
pub mod netfile;
pub mod samples;

use crate::data::Filter;
use crate::nnue::Accumulator;
use crate::nnue::format::Kings;
use crate::rng::SplitMix64;
use crate::score::MATE_BOUND;
use curves::EpochRecord;
use model::{Layout, Net, Quantised, Scratch};
use netfile::write_atomically;
use rayon::prelude::*;
use samples::{MAX_FEATURES, Samples, mirror_into};
use shakmaty::Color;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A number within `low..=high`, for the clap parsers below.
fn number_within(text: &str, low: f64, high: f64) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if (low..=high).contains(&v) {
        Ok(v)
    } else {
        Err(format!("must be within {low:.1}..{high:.1}"))
    }
}

/// A clap parser: a number in 0.0..=1.0.
fn unit_interval(text: &str) -> Result<f64, String> {
    number_within(text, 0.0, 1.0)
}

/// A clap parser: a finite number above 0.
fn positive(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err("must be a positive number".into())
    }
}

/// `qilin train`: fits a network to self-play positions.
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
    /// Output folder: checkpoint, net.nnue, losses.csv, losses.svg (the same command resumes)
    #[arg(long, value_name = "DIR", required_unless_present = "fit_scale")]
    dir: Option<PathBuf>,
    /// Also write the net of the epoch with the lowest validation loss here
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Only measure K (the scale for which sigmoid(score / K) best fits the results) and print it
    #[arg(long)]
    fit_scale: bool,
    /// The scale K in centipawns (default: measured on the data)
    #[arg(long, value_parser = positive, allow_negative_numbers = true)]
    k: Option<f64>,
    #[command(flatten)]
    hyper: Hyper,
    /// Threads (default: every core); the result does not depend on them
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: Option<u16>,
}

/// The options that shape a run, as `qilin train` takes them and as a
/// [`Config`] holds them: one declaration for both.
#[derive(Clone, Debug, PartialEq, clap::Args)]
pub struct Hyper {
    /// Hidden neurons per perspective (16 to 4096, a multiple of 16)
    #[arg(long, default_value_t = 256, value_parser = hidden_size)]
    pub hidden: usize,
    /// Passes over the training positions
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub epochs: u32,
    /// Positions per Adam step
    #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub batch: u32,
    /// Adam's learning rate at the start
    #[arg(long, default_value_t = 0.001, value_parser = positive, allow_negative_numbers = true)]
    pub lr: f64,
    /// The learning rate at the end as a fraction of --lr (cosine decay in between)
    #[arg(long, default_value_t = 0.05, value_parser = unit_interval, allow_negative_numbers = true)]
    pub final_lr: f64,
    /// Weight of the game result in the target (the rest is the search score), 0.0-1.0 (0.1 measured best of 0, 0.1, 0.3, 0.5, 0.7)
    #[arg(long, default_value_t = 0.1, value_parser = unit_interval, allow_negative_numbers = true)]
    pub lambda: f64,
    /// Share of the positions held out for validation, 0.0-0.5
    #[arg(long, default_value_t = 0.03, value_parser = validation_share, allow_negative_numbers = true)]
    pub validation: f64,
    /// Seed of the split, the initial weights and the shuffles
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also train on each training position mirrored left to right (twice
    /// the data; the net has no castling inputs, so the image is worth the same)
    #[arg(long)]
    pub mirror: bool,
    /// Output buckets, chosen by the number of pieces on the board (1 to 8;
    /// 1 writes a version-1 net)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=crate::nnue::format::MAX_BUCKETS as i64))]
    pub output_buckets: u32,
    /// King buckets: each side's inputs chosen by its king's square (1, 2,
    /// 4 or 8; NNUE-SPEC.md gives each layout; more than 1 writes a
    /// version-3 net)
    #[arg(long, default_value_t = 1, value_parser = king_bucket_count)]
    pub king_buckets: usize,
    /// Each side sees the board with its king on files e-h (flipped a-h
    /// when its king stands on files a-d); writes a version-3 net
    #[arg(long)]
    pub king_mirror: bool,
}

impl Hyper {
    /// The net's shape.
    pub fn layout(&self) -> Layout {
        Layout {
            hidden: self.hidden,
            buckets: self.output_buckets as usize,
            // The parser admits only the preset counts.
            kings: Kings::preset(self.king_buckets, self.king_mirror).unwrap_or(Kings::NONE),
        }
    }
}

/// A clap parser: a king bucket count with a preset layout.
fn king_bucket_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if Kings::preset(n, false).is_some() => Ok(n),
        _ => Err("must be 1, 2, 4 or 8".into()),
    }
}

fn hidden_size(text: &str) -> Result<usize, String> {
    let n: usize = text.parse().map_err(|e| format!("{e}"))?;
    if (16..=4096).contains(&n) && n.is_multiple_of(16) {
        Ok(n)
    } else {
        Err("must be 16 to 4096 and a multiple of 16".into())
    }
}

/// A clap parser: the share held out, at most half.
fn validation_share(text: &str) -> Result<f64, String> {
    number_within(text, 0.0, 0.5)
}

/// What a training run is, apart from its data.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub hyper: Hyper,
    /// Centipawns.
    pub k: f64,
    /// Draw a progress bar (on a terminal).
    pub progress: bool,
}

impl Config {
    /// What a checkpoint must have been made with to be resumed (not the
    /// threads: they do not change the result).
    fn fingerprint(&self, positions: usize) -> String {
        // A single output adds nothing, so checkpoints made before output
        // buckets still resume.
        let mut buckets = match self.hyper.output_buckets {
            1 => String::new(),
            b => format!(" buckets={b}"),
        };
        if self.hyper.king_buckets != 1 {
            buckets += &format!(" kings={}", self.hyper.king_buckets);
        }
        if self.hyper.king_mirror {
            buckets += " king-mirror";
        }
        format!(
            "hidden={}{buckets} epochs={} batch={} lr={} final-lr={} lambda={} k={} validation={} seed={} mirror={} positions={positions}",
            self.hyper.hidden,
            self.hyper.epochs,
            self.hyper.batch,
            self.hyper.lr,
            self.hyper.final_lr,
            self.hyper.lambda,
            self.k,
            self.hyper.validation,
            self.hyper.seed,
            self.hyper.mirror
        )
    }

    /// Cosine decay from `lr` to `lr · final_lr` over the whole run;
    /// `progress` in 0..=1.
    fn learning_rate(&self, progress: f64) -> f64 {
        let end = self.hyper.lr * self.hyper.final_lr;
        end + (self.hyper.lr - end) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
    }
}

/// Runs `qilin train` on a pool of the threads asked for.
pub fn run(s: &Settings) -> Result<(), String> {
    let threads = s.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let pool = crate::threads::pool("train", threads)?;
    pool.install(|| train_command(s, threads))
}

fn train_command(s: &Settings, threads: usize) -> Result<(), String> {
    let started = Instant::now();
    let note = |m: &str| eprintln!("{m}");
    let samples = samples::load(&s.data, Filter::quiet(MATE_BOUND), &note)?;
    eprintln!(
        "{} positions from {} in {:.1} s",
        samples.len(),
        s.data.join(", "),
        started.elapsed().as_secs_f64()
    );
    let k = match s.k {
        Some(k) => k,
        None => {
            let k = measure_k(&samples);
            eprintln!("K = {k:.2} (the scale that best maps the search scores to the results)");
            k
        }
    };
    if s.fit_scale {
        println!("{k:.2}");
        return Ok(());
    }
    let Some(dir) = &s.dir else {
        return Err("--dir is required to train".into());
    };
    let config = Config {
        hyper: s.hyper.clone(),
        k,
        progress: true,
    };
    eprintln!("{threads} threads; {}", config.fingerprint(samples.len()));
    let outcome = train(&config, &samples, dir, None, &note)?;
    let last = outcome.history.last().copied();
    if let Some(r) = last {
        eprintln!(
            "final: validation loss {:.6} (float), quantised net {:.3} cp from the float net on average",
            r.valid_loss, r.quantised_mad_cp
        );
    }
    eprintln!("wrote {}", dir.join(NET_FILE).display());
    if let Some(out) = &s.out {
        let bytes = std::fs::read(dir.join(BEST_FILE))
            .map_err(|e| format!("{}: {e}", dir.join(BEST_FILE).display()))?;
        write_atomically(out, &bytes)?;
        if let Some(epoch) = best_epoch(&outcome.history) {
            eprintln!(
                "wrote {}: the net of epoch {} (validation loss {:.6}), the lowest",
                out.display(),
                epoch + 1,
                outcome.history[epoch].valid_loss
            );
        }
    }
    Ok(())
}

/// K in centipawns, rounded to 0.01 so that the last bits of a parallel sum
/// cannot make two runs differ.
pub fn measure_k(samples: &Samples) -> f64 {
    let all: Vec<u32> = (0..samples.len() as u32).collect();
    let k = k::fit_k(&all, |&i| {
        let s = samples.get(i as usize);
        (f64::from(s.score), f64::from(s.result) / 2.0)
    });
    (100.0 / k).round() / 100.0
}

pub const CHECKPOINT_FILE: &str = "checkpoint.bin";
pub const NET_FILE: &str = "net.nnue";
/// The net of the epoch with the lowest validation loss so far: where the
/// net starts to learn its games by heart, the later ones get worse.
pub const BEST_FILE: &str = "best.nnue";
pub const CSV_FILE: &str = "losses.csv";
pub const SVG_FILE: &str = "losses.svg";

/// The parts a batch is cut into: a fixed number, so the sums do not depend
/// on the threads (more threads than parts would idle).
const PARTS: usize = 32;

/// Everything a run carries from one epoch to the next.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub net: Net,
    /// Adam's first and second moments.
    adam_m: Vec<f32>,
    adam_v: Vec<f32>,
    /// Adam steps taken.
    step: u64,
    /// Epochs done.
    pub epoch: u32,
    rng: SplitMix64,
    pub history: Vec<EpochRecord>,
}

impl State {
    fn fresh(config: &Config) -> State {
        let mut rng = SplitMix64::new(config.hyper.seed);
        let net = Net::random(config.hyper.layout(), &mut rng);
        let len = net.params.len();
        State {
            net,
            adam_m: vec![0.0; len],
            adam_v: vec![0.0; len],
            step: 0,
            epoch: 0,
            rng,
            history: Vec::new(),
        }
    }
}

/// The mark of a mirror image in an epoch's list of sample indices.
const MIRRORED: u32 = 1 << 31;

/// Positions held out together: the samples keep each game's positions
/// next to each other, so a block of this many holds whole games (about 17
/// of them) and the validation positions come from games the net never
/// trained on. Held out one by one, they would share their games with
/// training positions, and the validation loss would not show overfitting.
const MAX_SPLIT_BLOCK: usize = 1024;

/// Small sets get smaller blocks, so that there are at least about this
/// many to choose from.
const MIN_SPLIT_BLOCKS: usize = 1024;

/// The training and validation positions (indices into the samples), each
/// in ascending order: blocks of neighbouring positions shuffled by a
/// generator of its own, so the split depends on the seed and the data
/// alone.
fn split(len: usize, share: f64, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let block = (len / MIN_SPLIT_BLOCKS).clamp(1, MAX_SPLIT_BLOCK);
    let mut blocks: Vec<usize> = (0..len.div_ceil(block)).collect();
    SplitMix64::new(seed ^ 0x5851_f42d_4c95_7f2d).shuffle(&mut blocks);
    let wanted = ((len as f64 * share).round() as usize).min(len.saturating_sub(1));
    let mut valid = Vec::with_capacity(wanted + block);
    let mut train = Vec::with_capacity(len);
    for b in blocks {
        let range = (b * block) as u32..((b + 1) * block).min(len) as u32;
        if valid.len() < wanted {
            valid.extend(range);
        } else {
            train.extend(range);
        }
    }
    valid.sort_unstable();
    train.sort_unstable();
    (train, valid)
}

/// The target of a position: λ · result + (1 − λ) · sigmoid(score / K).
fn target(config: &Config, score: i16, result: u8) -> f32 {
    let searched = 1.0 / (1.0 + (-f64::from(score) / config.k).exp());
    (config.hyper.lambda * f64::from(result) / 2.0 + (1.0 - config.hyper.lambda) * searched) as f32
}

/// Trains until `config.hyper.epochs` (or `stop_after` epochs, for tests),
/// resuming from the checkpoint in `dir` if there is one.
pub fn train(
    config: &Config,
    samples: &Samples,
    dir: &Path,
    stop_after: Option<u32>,
    note: &dyn Fn(&str),
) -> Result<State, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let fingerprint = config.fingerprint(samples.len());
    let checkpoint = dir.join(CHECKPOINT_FILE);
    let mut state = if checkpoint.exists() {
        let state = read_checkpoint(&checkpoint, &fingerprint, config.hyper.layout())?;
        note(&format!(
            "resuming {} after epoch {}",
            checkpoint.display(),
            state.epoch
        ));
        state
    } else {
        State::fresh(config)
    };
    let (train_set, valid_set) = split(samples.len(), config.hyper.validation, config.hyper.seed);
    note(&format!(
        "{} training positions, {} validation positions",
        train_set.len(),
        valid_set.len()
    ));
    // An epoch's positions: the training set, and its mirror images marked
    // by the top bit (the validation set stays as the games were played,
    // so losses with and without --mirror compare).
    let mut train_set = train_set;
    if config.hyper.mirror {
        if samples.len() > MIRRORED as usize {
            return Err("too many positions to mirror".into());
        }
        let images: Vec<u32> = train_set.iter().map(|&i| i | MIRRORED).collect();
        train_set.extend(images);
    }
    let last = stop_after.map_or(config.hyper.epochs, |s| s.min(config.hyper.epochs));
    let batches = train_set.len().div_ceil(config.hyper.batch as usize);
    let remaining = u64::from(last.saturating_sub(state.epoch)) * train_set.len() as u64;
    let bar = progress_bar(config.progress, remaining);
    let mut grads: Vec<Vec<f32>> = vec![vec![0.0; state.net.params.len()]; PARTS];
    let mut order = train_set.clone();
    while state.epoch < last {
        let epoch = state.epoch + 1;
        bar.set_prefix(format!("epoch {epoch}/{}", config.hyper.epochs));
        let started = Instant::now();
        order.copy_from_slice(&train_set);
        state.rng.shuffle(&mut order);
        let mut loss = 0.0;
        let mut lr = config.hyper.lr;
        for (b, batch) in order.chunks(config.hyper.batch as usize).enumerate() {
            let progress =
                (f64::from(epoch - 1) + b as f64 / batches as f64) / f64::from(config.hyper.epochs);
            lr = config.learning_rate(progress);
            loss += step(&mut state, &mut grads, samples, batch, config, lr);
            bar.inc(batch.len() as u64);
        }
        let (valid_loss, quantised_mad_cp) = validate(&state.net, samples, &valid_set, config);
        let seconds = started.elapsed().as_secs_f64();
        let record = EpochRecord {
            train_loss: loss / train_set.len().max(1) as f64,
            valid_loss,
            quantised_mad_cp,
            learning_rate: lr,
            seconds,
        };
        state.history.push(record);
        state.epoch = epoch;
        bar.suspend(|| {
            note(&format!(
                "epoch {epoch}/{}: training loss {:.6}, validation loss {:.6}, quantised v float {:.2} cp, lr {:.6}, {:.0} positions/s, {:.1} s",
                config.hyper.epochs,
                record.train_loss,
                record.valid_loss,
                record.quantised_mad_cp,
                lr,
                train_set.len() as f64 / seconds.max(1e-9),
                seconds
            ))
        });
        save(dir, &state, &fingerprint)?;
    }
    bar.finish_and_clear();
    if state.history.is_empty() {
        // Nothing trained yet (no epoch asked for): still leave a net.
        save(dir, &state, &fingerprint)?;
    }
    Ok(state)
}

fn progress_bar(show: bool, positions: u64) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(positions);
    let style = indicatif::ProgressStyle::with_template(
        "{prefix} {wide_bar} {human_pos}/{human_len} positions, {per_sec}, ETA {eta}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// One Adam step on a batch; returns the batch's summed loss.
fn step(
    state: &mut State,
    grads: &mut [Vec<f32>],
    samples: &Samples,
    batch: &[u32],
    config: &Config,
    lr: f64,
) -> f64 {
    let part_len = batch.len().div_ceil(PARTS).max(1);
    let net = &state.net;
    let k = config.k as f32;
    let losses: Vec<f64> = grads
        .par_iter_mut()
        .zip(batch.par_chunks(part_len))
        .map(|(grad, part)| {
            grad.fill(0.0);
            let mut scratch = Scratch::new(net.layout.hidden);
            let mut loss = 0.0f64;
            let (mut us_image, mut them_image) = ([0; MAX_FEATURES], [0; MAX_FEATURES]);
            for &i in part {
                let s = samples.get((i & !MIRRORED) as usize);
                let (us, them) = if i & MIRRORED == 0 {
                    (s.us, s.them)
                } else {
                    (
                        mirror_into(s.us, &mut us_image),
                        mirror_into(s.them, &mut them_image),
                    )
                };
                let t = target(config, s.score, s.result);
                loss += f64::from(net.add_gradient(us, them, t, k, grad, &mut scratch));
            }
            loss
        })
        .collect();
    let used = &grads[..batch.len().div_ceil(part_len)];
    state.step += 1;
    let (beta1, beta2, eps) = (0.9f64, 0.999f64, 1e-8f32);
    let t = i32::try_from(state.step).unwrap_or(i32::MAX);
    let lr_t = (lr * (1.0 - beta2.powi(t)).sqrt() / (1.0 - beta1.powi(t))) as f32;
    let (beta1, beta2) = (beta1 as f32, beta2 as f32);
    let scale = 1.0 / batch.len() as f32;
    const CHUNK: usize = 4096;
    state
        .net
        .params
        .par_chunks_mut(CHUNK)
        .zip(state.adam_m.par_chunks_mut(CHUNK))
        .zip(state.adam_v.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, ((p, m), v))| {
            let at = c * CHUNK;
            let mut g = vec![0.0f32; p.len()];
            for part in used {
                for (g, &x) in g.iter_mut().zip(&part[at..at + p.len()]) {
                    *g += x;
                }
            }
            for (((p, m), v), &g) in p.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(&g) {
                let g = g * scale;
                *m = beta1 * *m + (1.0 - beta1) * g;
                *v = beta2 * *v + (1.0 - beta2) * g * g;
                *p -= lr_t * *m / (v.sqrt() + eps);
            }
        });
    state.net.clip();
    losses.iter().sum()
}

/// The float net's mean loss on `set`, and the mean |quantised − float|
/// evaluation in centipawns.
fn validate(net: &Net, samples: &Samples, set: &[u32], config: &Config) -> (f64, f64) {
    if set.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    // The engine's own integer forward pass on the quantised weights.
    let Some(quantised) = net.quantise().network() else {
        return (f64::NAN, f64::NAN);
    };
    let sums: Vec<(f64, f64)> = set
        .par_chunks(4096)
        .map(|part| {
            let mut scratch = Scratch::new(net.layout.hidden);
            let (mut loss, mut diff) = (0.0f64, 0.0f64);
            for &i in part {
                let s = samples.get(i as usize);
                let float = f64::from(net.eval_cp(s.us, s.them, &mut scratch));
                let p = 1.0 / (1.0 + (-float / config.k).exp());
                loss += (p - f64::from(target(config, s.score, s.result))).powi(2);
                let engine = Accumulator::from_features(&quantised, s.us, s.them).evaluate(
                    &quantised,
                    Color::White,
                    s.us.len(),
                );
                diff += (f64::from(engine) - float).abs();
            }
            (loss, diff)
        })
        .collect();
    let (loss, diff) = sums
        .iter()
        .fold((0.0, 0.0), |(a, b), &(l, d)| (a + l, b + d));
    (loss / set.len() as f64, diff / set.len() as f64)
}

/// The net file of quantised weights.
fn export(net: &Quantised) -> Result<Vec<u8>, String> {
    netfile::encode(net).ok_or_else(|| {
        "the quantised net breaks NNUE-SPEC (hidden size not a multiple of 16, or |W2| > 127)"
            .to_string()
    })
}

/// The index of the epoch whose net `BEST_FILE` holds: the lowest
/// validation loss, the later epoch on a tie.
fn best_epoch(history: &[EpochRecord]) -> Option<usize> {
    (0..history.len())
        .rev()
        .min_by(|&a, &b| history[a].valid_loss.total_cmp(&history[b].valid_loss))
}

/// The epoch's files: checkpoint, net, CSV and SVG, each whole or not at
/// all. The checkpoint goes last: a run stopped in between redoes the
/// epoch and rewrites the same files.
fn save(dir: &Path, state: &State, fingerprint: &str) -> Result<(), String> {
    let quantised: Quantised = state.net.quantise();
    let net = export(&quantised)?;
    write_atomically(&dir.join(NET_FILE), &net)?;
    if best_epoch(&state.history) == state.history.len().checked_sub(1) {
        write_atomically(&dir.join(BEST_FILE), &net)?;
    }
    write_atomically(&dir.join(CSV_FILE), curves::csv(&state.history).as_bytes())?;
    write_atomically(&dir.join(SVG_FILE), curves::svg(&state.history).as_bytes())?;
    write_atomically(
        &dir.join(CHECKPOINT_FILE),
        &encode_checkpoint(state, fingerprint),
    )
}

const CHECKPOINT_MAGIC: &[u8; 8] = b"QILINCK1";

fn encode_checkpoint(state: &State, fingerprint: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(CHECKPOINT_MAGIC);
    out.extend_from_slice(&(fingerprint.len() as u32).to_le_bytes());
    out.extend_from_slice(fingerprint.as_bytes());
    out.extend_from_slice(&(state.net.layout.hidden as u32).to_le_bytes());
    out.extend_from_slice(&state.epoch.to_le_bytes());
    out.extend_from_slice(&state.step.to_le_bytes());
    out.extend_from_slice(&state.rng.state.to_le_bytes());
    out.extend_from_slice(&(state.history.len() as u32).to_le_bytes());
    for r in &state.history {
        for x in r.to_array() {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    for v in [&state.net.params, &state.adam_m, &state.adam_v] {
        for x in v.iter() {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    let sum = netfile::fnv1a64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Reads little-endian fields off the front of a byte slice.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.rest.len() < n {
            return Err("cut short".into());
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f32s(&mut self, n: usize) -> Result<Vec<f32>, String> {
        let bytes = self.take(n.checked_mul(4).ok_or("too large")?)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

fn read_checkpoint(path: &Path, fingerprint: &str, layout: Layout) -> Result<State, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    decode_checkpoint(&bytes, fingerprint, layout).map_err(|e| format!("{}: {e}", path.display()))
}

/// What differs between two fingerprints, field by field ("name=value",
/// or a bare name for a flag): a field in one only, or with two values.
fn fingerprint_differences(theirs: &str, ours: &str) -> Vec<String> {
    let fields = |s: &str| -> Vec<(String, String)> {
        s.split(' ')
            .map(|t| match t.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (t.to_string(), String::new()),
            })
            .collect()
    };
    let show = |k: &str, v: &str| {
        if v.is_empty() {
            k.to_string()
        } else {
            format!("{k}={v}")
        }
    };
    let (a, b) = (fields(theirs), fields(ours));
    let mut differ = Vec::new();
    for (k, v) in &a {
        match b.iter().find(|(k2, _)| k2 == k) {
            Some((_, v2)) if v2 == v => {}
            Some((_, v2)) => differ.push(format!("{} there, {} here", show(k, v), show(k, v2))),
            None => differ.push(format!("{} there, not here", show(k, v))),
        }
    }
    for (k, v) in &b {
        if !a.iter().any(|(k2, _)| k2 == k) {
            differ.push(format!("{} here, not there", show(k, v)));
        }
    }
    differ
}

/// A checkpoint's state; the buckets come from the run's `layout` (the
/// fingerprint, which must match, names them), the hidden size from the file.
fn decode_checkpoint(bytes: &[u8], fingerprint: &str, layout: Layout) -> Result<State, String> {
    let (body, sum) = bytes
        .split_last_chunk::<8>()
        .ok_or("not a checkpoint: too short")?;
    if netfile::fnv1a64(body) != u64::from_le_bytes(*sum) {
        return Err("damaged checkpoint: wrong checksum".into());
    }
    let mut f = Fields { rest: body };
    if f.take(8)? != CHECKPOINT_MAGIC {
        return Err("not a checkpoint of qilin train".into());
    }
    let len = f.u32()? as usize;
    let theirs = String::from_utf8_lossy(f.take(len)?).into_owned();
    if theirs != fingerprint {
        let differ = fingerprint_differences(&theirs, fingerprint);
        return Err(format!(
            "made by another run ({}): give the same data and flags to resume, or another --dir",
            differ.join(", ")
        ));
    }
    let layout = Layout {
        hidden: f.u32()? as usize,
        ..layout
    };
    let epoch = f.u32()?;
    let step = f.u64()?;
    let rng = SplitMix64::new(f.u64()?);
    let records = f.u32()? as usize;
    let mut history = Vec::new();
    for _ in 0..records {
        let mut a = [0.0f64; EpochRecord::FIELDS];
        for x in &mut a {
            *x = f64::from_le_bytes(f.array()?);
        }
        history.push(EpochRecord::from_array(a));
    }
    let params = f.f32s(layout.size())?;
    let adam_m = f.f32s(layout.size())?;
    let adam_v = f.f32s(layout.size())?;
    if !f.rest.is_empty() {
        return Err("trailing bytes".into());
    }
    Ok(State {
        net: Net { layout, params },
        adam_m,
        adam_v,
        step,
        epoch,
        rng,
        history,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random positions of a few pieces as feature lists, with scores and
    /// results that follow a hidden material count, so there is something
    /// to learn.
    fn synthetic(count: usize, seed: u64) -> Samples {
        let mut rng = SplitMix64::new(seed);
        let mut samples = Samples::default();
        for _ in 0..count {
            let pieces = 2 + rng.below(10);
            let us: Vec<u16> = (0..pieces).map(|_| rng.below(768) as u16).collect();
            let them: Vec<u16> = us.iter().map(|&f| ((f + 384) % 768) ^ 56).collect();
            let material: i32 = us.iter().map(|&f| if f < 384 { 60 } else { -60 }).sum();
            let score = (material + rng.below(41) as i32 - 20) as i16;
            let result = if score > 50 {
                2
            } else if score < -50 {
                0
            } else {
                1
            };
            samples.push(&us, &them, score, result);
        }
        samples
    }

    fn config() -> Config {
        Config {
            hyper: Hyper {
                hidden: 16,
                epochs: 2,
                batch: 64,
                lr: 0.01,
                final_lr: 0.1,
                lambda: 0.3,
                validation: 0.1,
                seed: 5,
                mirror: false,
                output_buckets: 1,
                king_buckets: 1,
                king_mirror: false,
            },
            k: 200.0,
            progress: false,
        }
    }

    /// `config()` with some options changed.
    fn config_with(change: impl FnOnce(&mut Hyper)) -> Config {
        let mut config = config();
        change(&mut config.hyper);
        config
    }

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("qilin-train-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The state without the epochs' durations, which no two runs share.
    fn timeless(mut state: State) -> State {
        for r in &mut state.history {
            r.seconds = 0.0;
        }
        state
    }

    fn trained(config: &Config, samples: &Samples, dir: &Path, threads: usize) -> State {
        let pool = crate::threads::pool("train", threads).expect("pool");
        timeless(
            pool.install(|| train(config, samples, dir, None, &|_| {}))
                .expect("train"),
        )
    }

    /// `config` trained 2 epochs in one run and in two runs of one epoch
    /// each, which must end in the same state: that state and both folders.
    fn trained_whole_and_in_halves(
        config: &Config,
        samples: &Samples,
        tag: &str,
    ) -> (State, PathBuf, PathBuf) {
        let whole = scratch_dir(&format!("{tag}-whole"));
        let halves = scratch_dir(&format!("{tag}-halves"));
        let uninterrupted = trained(config, samples, &whole, 2);
        train(config, samples, &halves, Some(1), &|_| {}).expect("epoch 1");
        assert_eq!(trained(config, samples, &halves, 2), uninterrupted);
        (uninterrupted, whole, halves)
    }

    #[test]
    fn a_seed_gives_the_same_net_whatever_the_threads() {
        let samples = synthetic(1500, 11);
        let dirs = ["det-a", "det-b", "det-c", "det-d"].map(scratch_dir);
        let a = trained(&config(), &samples, &dirs[0], 2);
        let b = trained(&config(), &samples, &dirs[1], 2);
        let c = trained(&config(), &samples, &dirs[2], 3);
        assert_eq!(a, b);
        assert_eq!(a.net.params, c.net.params);
        // The run learned something, and another seed is another run.
        let losses: Vec<f64> = a.history.iter().map(|r| r.train_loss).collect();
        assert!(losses[1] < losses[0], "{losses:?}");
        let other = trained(&config_with(|h| h.seed = 6), &samples, &dirs[3], 2);
        assert_ne!(a.net.params, other.net.params);
        for dir in dirs {
            std::fs::remove_dir_all(dir).expect("clean up");
        }
    }

    /// Positions with every piece on the queen's wing (files a–d): trained
    /// with their mirror images, the net scores an image (all on the
    /// king's wing, never in the data) as it scores the original; without,
    /// the images' features keep their random weights.
    #[test]
    fn mirrored_training_scores_the_images_like_the_originals() {
        let mut rng = SplitMix64::new(21);
        let mut samples = Samples::default();
        for _ in 0..1500 {
            let pieces = 2 + rng.below(10);
            let us: Vec<u16> = (0..pieces).map(|_| (rng.below(768) as u16) & !4).collect();
            let them: Vec<u16> = us.iter().map(|&f| ((f + 384) % 768) ^ 56).collect();
            let material: i32 = us.iter().map(|&f| if f < 384 { 60 } else { -60 }).sum();
            let result = 1 + u8::from(material > 50) - u8::from(material < -50);
            samples.push(&us, &them, material as i16, result);
        }
        let gap = |mirror: bool, name: &str| {
            let dir = scratch_dir(name);
            let config = config_with(|h| {
                h.epochs = 4;
                h.mirror = mirror;
            });
            let state = trained(&config, &samples, &dir, 2);
            std::fs::remove_dir_all(&dir).expect("clean up");
            let mut scratch = Scratch::new(config.hyper.hidden);
            let (mut a, mut b) = ([0; MAX_FEATURES], [0; MAX_FEATURES]);
            (0..samples.len())
                .map(|i| {
                    let s = samples.get(i);
                    let original = state.net.eval_cp(s.us, s.them, &mut scratch);
                    let image = state.net.eval_cp(
                        mirror_into(s.us, &mut a),
                        mirror_into(s.them, &mut b),
                        &mut scratch,
                    );
                    f64::from((original - image).abs())
                })
                .sum::<f64>()
                / samples.len() as f64
        };
        let (with, without) = (gap(true, "mirror-on"), gap(false, "mirror-off"));
        assert!(
            with < without / 3.0,
            "with {with:.2} cp, without {without:.2} cp"
        );
    }

    #[test]
    fn a_resumed_run_equals_an_uninterrupted_one() {
        let samples = synthetic(1000, 12);
        let (whole, halves) = (scratch_dir("whole"), scratch_dir("halves"));
        let uninterrupted = trained(&config(), &samples, &whole, 2);
        let first = train(&config(), &samples, &halves, Some(1), &|_| {}).expect("epoch 1");
        assert_eq!(first.epoch, 1);
        let resumed = trained(&config(), &samples, &halves, 2);
        assert_eq!(resumed, uninterrupted);
        let (a, b) = (
            std::fs::read(whole.join(NET_FILE)),
            std::fs::read(halves.join(NET_FILE)),
        );
        assert!(a.is_ok() && a.ok() == b.ok());
        for dir in [&whole, &halves] {
            let csv = std::fs::read_to_string(dir.join(CSV_FILE)).expect("csv");
            assert_eq!(csv.lines().count(), 3);
            assert!(dir.join(SVG_FILE).exists());
            // best.nnue is the net of the epoch with the lowest validation loss.
            let history = &resumed.history;
            let best_is_last = history[1].valid_loss <= history[0].valid_loss;
            let (net, best) = (
                std::fs::read(dir.join(NET_FILE)).expect("net"),
                std::fs::read(dir.join(BEST_FILE)).expect("best"),
            );
            assert_eq!(net == best, best_is_last, "{history:?}");
        }
        // Another setting refuses the checkpoint, naming what differs.
        let err = train(
            &config_with(|h| h.lambda = 0.5),
            &samples,
            &halves,
            None,
            &|_| {},
        )
        .err()
        .unwrap_or_default();
        assert!(err.contains("lambda=0.3 there, lambda=0.5 here"), "{err}");
        // A damaged checkpoint is an error, not a fresh start.
        let path = halves.join(CHECKPOINT_FILE);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[40] ^= 1;
        std::fs::write(&path, bytes).expect("write");
        let err = train(&config(), &samples, &halves, None, &|_| {})
            .err()
            .unwrap_or_default();
        assert!(err.contains("wrong checksum"), "{err}");
        for dir in [whole, halves] {
            std::fs::remove_dir_all(dir).expect("clean up");
        }
    }

    /// Output buckets: the run resumes like any other, writes a version-2
    /// net that the engine reads with its buckets, and a checkpoint of
    /// another bucket count is refused.
    #[test]
    fn a_bucketed_run_writes_a_version_2_net_and_resumes() {
        let samples = synthetic(1000, 13);
        let bucketed = config_with(|h| h.output_buckets = 4);
        let (uninterrupted, whole, halves) = trained_whole_and_in_halves(&bucketed, &samples, "b");
        let bytes = std::fs::read(whole.join(NET_FILE)).expect("net");
        assert_eq!(bytes[8..12], 2u32.to_le_bytes());
        let net = crate::nnue::Network::from_bytes(&bytes).expect("a version-2 net");
        assert_eq!((net.hidden(), net.buckets()), (16, 4));
        // The synthetic positions have 2 to 11 pieces: buckets 0 (2-9) and
        // 1 (10-11) learned, 2 and 3 kept their initial weights.
        let l = uninterrupted.net.layout;
        let fresh = State::fresh(&bucketed).net;
        let w2 = |net: &Net, b: usize| net.params[l.w2() + 32 * b..l.w2() + 32 * (b + 1)].to_vec();
        assert_ne!(w2(&uninterrupted.net, 0), w2(&fresh, 0));
        assert_ne!(w2(&uninterrupted.net, 1), w2(&fresh, 1));
        assert_eq!(w2(&uninterrupted.net, 3), w2(&fresh, 3));
        let err = train(&config(), &samples, &halves, None, &|_| {})
            .err()
            .unwrap_or_default();
        assert!(err.contains("made by another run"), "{err}");
        for dir in [whole, halves] {
            std::fs::remove_dir_all(dir).expect("clean up");
        }
    }

    /// King buckets with mirroring: the run resumes, writes a version-3
    /// net that the engine reads with the trainer's layout and scores as
    /// the trainer's quantised net does, and its checkpoint is refused by
    /// a run without them.
    #[test]
    fn a_king_bucketed_run_writes_a_version_3_net_and_resumes() {
        let samples = synthetic(1000, 14);
        let kinged = config_with(|h| {
            h.king_buckets = 4;
            h.king_mirror = true;
        });
        let (uninterrupted, whole, halves) = trained_whole_and_in_halves(&kinged, &samples, "k");
        let bytes = std::fs::read(whole.join(NET_FILE)).expect("net");
        assert_eq!(bytes[8..12], 3u32.to_le_bytes());
        let net = crate::nnue::Network::from_bytes(&bytes).expect("a version-3 net");
        assert_eq!(*net.kings(), Kings::preset(4, true).expect("preset"));
        assert_eq!(Some(net.clone()), uninterrupted.net.quantise().network());
        let quantised = uninterrupted.net.quantise();
        for i in 0..50 {
            let s = samples.get(i);
            let engine = Accumulator::from_features(&net, s.us, s.them).evaluate(
                &net,
                Color::White,
                s.us.len(),
            );
            assert_eq!(Some(engine), quantised.eval_cp(s.us, s.them));
        }
        let err = train(&config(), &samples, &halves, None, &|_| {})
            .err()
            .unwrap_or_default();
        assert!(
            err.contains("(kings=4 there, not here, king-mirror there, not here)"),
            "{err}"
        );
        for dir in [whole, halves] {
            std::fs::remove_dir_all(dir).expect("clean up");
        }
    }

    #[test]
    fn the_split_is_fixed_by_the_seed() {
        let (train_a, valid_a) = split(1000, 0.05, 3);
        let (train_b, valid_b) = split(1000, 0.05, 3);
        assert_eq!((&train_a, &valid_a), (&train_b, &valid_b));
        assert_eq!((train_a.len(), valid_a.len()), (950, 50));
        let mut all: Vec<u32> = train_a.iter().chain(&valid_a).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
        assert_ne!(split(1000, 0.05, 4).1, valid_a);
    }

    /// In a large set the held-out positions come in runs of whole blocks:
    /// neighbouring positions (one game's) stay on one side.
    #[test]
    fn large_sets_are_split_in_blocks_of_neighbours() {
        let len = 3_000_000;
        let (train, valid) = split(len, 0.03, 1);
        assert_eq!(train.len() + valid.len(), len);
        assert!((90_000..=90_000 + MAX_SPLIT_BLOCK).contains(&valid.len()));
        let block = MAX_SPLIT_BLOCK as u32;
        for run in valid.chunk_by(|a, b| b / block == a / block) {
            let first = run[0] / block * block;
            let expected = (first..(first + block).min(len as u32)).collect::<Vec<_>>();
            assert_eq!(run, expected.as_slice());
        }
    }

    #[test]
    fn the_learning_rate_decays_by_a_cosine() {
        let c = config();
        assert!((c.learning_rate(0.0) - 0.01).abs() < 1e-12);
        assert!((c.learning_rate(0.5) - 0.0055).abs() < 1e-12);
        assert!((c.learning_rate(1.0) - 0.001).abs() < 1e-12);
    }

    #[test]
    fn k_is_measured_from_the_data() {
        // Results drawn with probability sigmoid(score / 250): K ≈ 250.
        let mut rng = SplitMix64::new(3);
        let mut samples = Samples::default();
        for _ in 0..40_000 {
            let score = rng.below(1201) as i32 - 600;
            let p = 1.0 / (1.0 + (-f64::from(score) / 250.0).exp());
            let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let result = if unit < p { 2 } else { 0 };
            samples.push(&[0], &[384], score as i16, result);
        }
        let k = measure_k(&samples);
        assert!((k - 250.0).abs() < 15.0, "{k}");
    }
}
