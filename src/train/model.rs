//! The network of NNUE-SPEC, (768·K→N)×2→B with SCReLU, B output buckets
//! chosen by the number of pieces (B = 1: version 1) and K king buckets
//! (with or without mirroring: version 3): the float
//! model the trainer fits (forward, gradient, Adam, clipping) and its
//! quantised form with the engine's integer forward pass.
//!
//! Every parameter lives in one flat `f32` vector (`Layout`), so Adam, the
//! checkpoint and the reduction of the per-part gradients are plain loops
//! over slices that the compiler vectorises.

/// Input features per perspective.
pub const INPUTS: usize = 768;

use crate::nnue::format::{Kings, View};
/// The accumulator's scale in the quantised net.
pub const QA: i32 = 255;
/// The output weights' scale in the quantised net.
pub const QB: i32 = 64;
/// Centipawns per unit of the float output.
pub const SCALE: i32 = 400;
/// |w1|, |b1| and |w2| after every step: keeps |W2| = round(64 · 1.98) ≤ 127
/// (the engine's madd trick) and the i16 accumulator far from overflow.
pub const CLIP: f32 = 1.98;

/// Where each tensor sits in the flat parameter vector of a net with
/// `hidden` neurons per perspective, `buckets` outputs and the inputs
/// `kings` choose: w1 (input-major, w1[i][j] at i·N + j), b1, w2 (per
/// bucket, the side to move's N, then the other side's N), b2 (one per
/// bucket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub hidden: usize,
    pub buckets: usize,
    pub kings: Kings,
}

impl Layout {
    pub fn b1(self) -> usize {
        self.kings.inputs() * self.hidden
    }
    pub fn w2(self) -> usize {
        self.b1() + self.hidden
    }
    pub fn b2(self) -> usize {
        self.w2() + 2 * self.hidden * self.buckets
    }
    /// Parameters in all.
    pub fn size(self) -> usize {
        self.b2() + self.buckets
    }
    /// The output bucket of a position whose side to move has the features
    /// `us` (one per piece on the board): the engine's own choice.
    pub fn bucket(self, us: &[u16]) -> usize {
        crate::nnue::format::bucket(us.len(), self.buckets)
    }
}

/// The float net.
#[derive(Clone, Debug, PartialEq)]
pub struct Net {
    pub layout: Layout,
    pub params: Vec<f32>,
}

/// The two accumulators of one position, reused between positions.
pub struct Scratch {
    us: Vec<f32>,
    them: Vec<f32>,
}

impl Scratch {
    pub fn new(hidden: usize) -> Scratch {
        Scratch {
            us: vec![0.0; hidden],
            them: vec![0.0; hidden],
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// b1 + the rows of the active features' inputs in `view`.
fn accumulate(acc: &mut [f32], w1: &[f32], b1: &[f32], features: &[u16], view: View) {
    let n = acc.len();
    acc.copy_from_slice(b1);
    for &f in features {
        let at = view.input(usize::from(f)) * n;
        let row = &w1[at..at + n];
        for (a, w) in acc.iter_mut().zip(row) {
            *a += w;
        }
    }
}

/// Σ screlu(acc[j]) · w[j].
fn screlu_dot(acc: &[f32], w: &[f32]) -> f32 {
    acc.iter()
        .zip(w)
        .map(|(&a, &w)| {
            let c = a.clamp(0.0, 1.0);
            c * c * w
        })
        .sum()
}

impl Net {
    /// A fresh net: w1 uniform in ±0.1 (about 30 active features, so the
    /// accumulators start mostly inside SCReLU's bend), b1 = 0.1 (half-open
    /// neurons), w2 uniform in ±1/√(2N), b2 = 0.
    pub fn random(layout: Layout, rng: &mut crate::rng::SplitMix64) -> Net {
        let hidden = layout.hidden;
        let mut params = vec![0.0f32; layout.size()];
        let out_bound = 1.0 / ((2 * hidden) as f32).sqrt();
        for (i, p) in params.iter_mut().enumerate() {
            *p = if i < layout.b1() {
                rng.uniform(0.1)
            } else if i < layout.w2() {
                0.1
            } else if i < layout.b2() {
                rng.uniform(out_bound)
            } else {
                0.0
            };
        }
        Net { layout, params }
    }

    /// w1, b1, then w2 and b2 of every bucket.
    fn parts(&self) -> (&[f32], &[f32], &[f32], &[f32]) {
        let l = self.layout;
        (
            &self.params[..l.b1()],
            &self.params[l.b1()..l.w2()],
            &self.params[l.w2()..l.b2()],
            &self.params[l.b2()..],
        )
    }

    /// The float output o (eval_cp / SCALE), side to move's view.
    pub fn output(&self, us: &[u16], them: &[u16], scratch: &mut Scratch) -> f32 {
        let n = self.layout.hidden;
        let b = self.layout.bucket(us);
        let (w1, b1, w2, b2) = self.parts();
        let w2 = &w2[2 * n * b..2 * n * (b + 1)];
        let kings = &self.layout.kings;
        accumulate(&mut scratch.us, w1, b1, us, kings.view_of(us));
        accumulate(&mut scratch.them, w1, b1, them, kings.view_of(them));
        screlu_dot(&scratch.us, &w2[..n]) + screlu_dot(&scratch.them, &w2[n..]) + b2[b]
    }

    /// The float evaluation in centipawns, side to move's view.
    pub fn eval_cp(&self, us: &[u16], them: &[u16], scratch: &mut Scratch) -> f32 {
        self.output(us, them, scratch) * SCALE as f32
    }

    /// The loss (sigmoid(eval_cp / k) − target)² of one position; adds its
    /// gradient to `grad` (same layout as the parameters). Only the rows of
    /// the active features of w1 are touched.
    pub fn add_gradient(
        &self,
        us: &[u16],
        them: &[u16],
        target: f32,
        k: f32,
        grad: &mut [f32],
        scratch: &mut Scratch,
    ) -> f32 {
        let l = self.layout;
        let n = l.hidden;
        let o = self.output(us, them, scratch);
        let slope = SCALE as f32 / k;
        let p = sigmoid(o * slope);
        let err = p - target;
        let d = 2.0 * err * p * (1.0 - p) * slope;
        let b = l.bucket(us);
        let (_, _, w2, _) = self.parts();
        let w2 = &w2[2 * n * b..2 * n * (b + 1)];
        let (gw1, rest) = grad.split_at_mut(l.b1());
        let (gb1, rest) = rest.split_at_mut(n);
        let (gw2, gb2) = rest.split_at_mut(2 * n * l.buckets);
        let gw2 = &mut gw2[2 * n * b..2 * n * (b + 1)];
        gb2[b] += d;
        let (gw2_us, gw2_them) = gw2.split_at_mut(n);
        // The accumulators become their gradients, in place.
        for (acc, (w, g)) in [
            (&mut scratch.us, (&w2[..n], gw2_us)),
            (&mut scratch.them, (&w2[n..], gw2_them)),
        ] {
            for ((a, &w), g) in acc.iter_mut().zip(w).zip(g.iter_mut()) {
                let c = a.clamp(0.0, 1.0);
                *g += d * c * c;
                // d(c²)/da = 2c inside (0, 1), 0 outside (c = 0 below).
                let inside = if *a < 1.0 { 2.0 * c } else { 0.0 };
                *a = d * w * inside;
            }
        }
        for ((g, &u), &t) in gb1.iter_mut().zip(&scratch.us).zip(&scratch.them) {
            *g += u + t;
        }
        for (features, acc) in [(us, &scratch.us), (them, &scratch.them)] {
            let view = l.kings.view_of(features);
            for &f in features {
                let at = view.input(usize::from(f)) * n;
                for (g, &a) in gw1[at..at + n].iter_mut().zip(acc.iter()) {
                    *g += a;
                }
            }
        }
        err * err
    }

    /// Keeps w1, b1 and w2 within ±CLIP (b2 is free).
    pub fn clip(&mut self) {
        let b2 = self.layout.b2();
        for p in &mut self.params[..b2] {
            *p = p.clamp(-CLIP, CLIP);
        }
    }

    /// The integer net of the spec.
    pub fn quantise(&self) -> Quantised {
        let (w1, b1, w2, b2) = self.parts();
        let q = |x: f32, scale: i32, limit: i32| -> i16 {
            // Within i16 by the clamp.
            (x * scale as f32)
                .round()
                .clamp(-limit as f32, limit as f32) as i16
        };
        let wide = i32::from(i16::MAX);
        Quantised {
            hidden: self.layout.hidden,
            kings: self.layout.kings,
            w1: w1.iter().map(|&x| q(x, QA, wide)).collect(),
            b1: b1.iter().map(|&x| q(x, QA, wide)).collect(),
            w2: w2.iter().map(|&x| q(x, QB, 127)).collect(),
            // `as` saturates; b2 is nowhere near i32's range in practice.
            b2: b2
                .iter()
                .map(|&x| (x * (QA * QB) as f32).round() as i32)
                .collect(),
        }
    }
}

/// The quantised net, as the file stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantised {
    pub hidden: usize,
    pub kings: Kings,
    /// Input-major: W1[i][j] at i·N + j.
    pub w1: Vec<i16>,
    pub b1: Vec<i16>,
    /// Per output bucket: the side to move's N, then the other side's N.
    pub w2: Vec<i16>,
    /// One per output bucket.
    pub b2: Vec<i32>,
}

impl Quantised {
    /// The engine's net of these weights, which computes the integer
    /// forward pass (one implementation of it); `None` when the weights
    /// break the spec.
    pub fn network(&self) -> Option<crate::nnue::Network> {
        crate::nnue::Network::from_parts_with_kings(
            self.kings,
            self.hidden,
            self.w1.clone(),
            self.b1.clone(),
            self.w2.clone(),
            self.b2.clone(),
        )
    }

    /// The engine's score of a position given as feature lists (side to
    /// move's first); `None` when the weights break the spec.
    #[cfg(test)]
    pub fn eval_cp(&self, us: &[u16], them: &[u16]) -> Option<i32> {
        let net = self.network()?;
        Some(
            crate::nnue::Accumulator::from_features(&net, us, them).evaluate(
                &net,
                shakmaty::Color::White,
                us.len(),
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use crate::train::samples::features;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, Color, Position};

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("legal")
    }

    fn loss(net: &Net, data: &[(Vec<u16>, Vec<u16>, f32)], k: f32) -> f64 {
        let mut scratch = Scratch::new(net.layout.hidden);
        data.iter()
            .map(|(us, them, t)| {
                let p = 1.0 / (1.0 + (-f64::from(net.eval_cp(us, them, &mut scratch) / k)).exp());
                (p - f64::from(*t)).powi(2)
            })
            .sum()
    }

    #[test]
    fn the_gradient_matches_finite_differences() {
        gradient_matches_finite_differences(1, Kings::NONE);
    }

    /// King buckets with mirroring: the positions below put the side to
    /// move's king on e1 (bucket 0), f7 (f2 from Black's side: bucket 2)
    /// and e1, the other king on e8 (e1 from its side: bucket 0), d5
    /// (flipped to e5: bucket 3) and e8; each list's rows are those of its
    /// king's bucket, flipped for the d5 king.
    #[test]
    fn the_gradient_of_a_king_bucketed_net_matches_finite_differences() {
        gradient_matches_finite_differences(1, Kings::preset(4, true).expect("a preset"));
    }

    /// With 3 output buckets the positions below (32, 3 and 4 pieces) use
    /// buckets 2 and 0: bucket 1's weights get no gradient.
    #[test]
    fn the_gradient_of_a_bucketed_net_matches_finite_differences() {
        gradient_matches_finite_differences(3, Kings::NONE);
    }

    fn gradient_matches_finite_differences(buckets: usize, kings: Kings) {
        let mut rng = SplitMix64::new(7);
        let mut net = Net::random(
            Layout {
                hidden: 16,
                buckets,
                kings,
            },
            &mut rng,
        );
        // Larger output weights than a fresh net's, so every term matters.
        let l = net.layout;
        for p in &mut net.params[l.w2()..l.b2()] {
            *p *= 4.0;
        }
        for (b, p) in net.params[l.b2()..].iter_mut().enumerate() {
            *p = 0.05 - 0.02 * b as f32;
        }
        let data: Vec<(Vec<u16>, Vec<u16>, f32)> = [
            (
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
                0.7,
            ),
            ("8/5k2/8/3K4/8/2R5/8/8 b - - 0 1", 0.1),
            ("r3k2r/8/8/8/8/8/8/4K3 w kq - 0 1", 0.3),
        ]
        .iter()
        .map(|&(fen, t)| {
            let p = position(fen);
            let us = features(&p, p.turn());
            let them = features(&p, !p.turn());
            (us, them, t)
        })
        .collect();
        let k = 300.0;
        let mut grad = vec![0.0f32; l.size()];
        let mut scratch = Scratch::new(16);
        for (us, them, t) in &data {
            net.add_gradient(us, them, *t, k, &mut grad, &mut scratch);
        }
        // Every touched weight: the rows of the features present (as their
        // kings see them), b1, w2, b2.
        let rows_of = |list: &Vec<u16>| {
            let view = kings.view_of(list);
            list.iter()
                .map(move |&f| view.input(usize::from(f)))
                .collect::<Vec<_>>()
        };
        let mut rows: Vec<usize> = data
            .iter()
            .flat_map(|(u, t, _)| rows_of(u).into_iter().chain(rows_of(t)))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        let mut checked = 0;
        let indices = rows
            .iter()
            .flat_map(|&f| (f * 16..f * 16 + 16).step_by(5))
            .chain(l.b1()..l.size());
        for i in indices {
            let eps = 1e-3f32;
            let mut plus = net.clone();
            plus.params[i] += eps;
            let mut minus = net.clone();
            minus.params[i] -= eps;
            let numeric = (loss(&plus, &data, k) - loss(&minus, &data, k)) / (2.0 * f64::from(eps));
            let analytic = f64::from(grad[i]);
            assert!(
                (numeric - analytic).abs() <= 2e-4 + 0.01 * numeric.abs(),
                "parameter {i}: analytic {analytic}, numeric {numeric}"
            );
            checked += 1;
        }
        assert!(checked > 100);
        // An untouched row has no gradient.
        let absent = (0..kings.inputs())
            .find(|f| !rows.contains(f))
            .expect("a free row");
        assert!(
            grad[absent * 16..absent * 16 + 16]
                .iter()
                .all(|&g| g == 0.0)
        );
        if buckets == 3 {
            // Bucket 1, unused: no gradient; buckets 0 and 2: some.
            let w2 = |b: usize| &grad[l.w2() + 32 * b..l.w2() + 32 * (b + 1)];
            assert!(w2(1).iter().all(|&g| g == 0.0));
            assert_eq!(grad[l.b2() + 1], 0.0);
            assert!(w2(0).iter().any(|&g| g != 0.0) && w2(2).iter().any(|&g| g != 0.0));
            assert!(grad[l.b2()] != 0.0 && grad[l.b2() + 2] != 0.0);
        }
    }

    #[test]
    fn features_follow_the_spec() {
        // White: Ke1 (4), Pa2 (8); Black: Ke8 (60), Nh6 (47).
        let p = position("4k3/8/7n/8/8/8/P7/4K3 w - - 0 1");
        let mut white = features(&p, Color::White);
        white.sort_unstable();
        // own pawn a2: 0*384 + 0*64 + 8; own king e1: 5*64 + 4 = 324;
        // their knight h6: 384 + 64 + 47 = 495; their king e8: 384 + 320 + 60 = 764.
        assert_eq!(white, [8, 324, 495, 764]);
        let mut black = features(&p, Color::Black);
        black.sort_unstable();
        // Mirrored squares: h6 (47) → h3 (23), e8 (60) → e1 (4), a2 (8) →
        // a7 (48), e1 (4) → e8 (60).
        // own knight: 64 + 23 = 87; own king: 320 + 4 = 324;
        // their pawn: 384 + 48 = 432; their king: 384 + 320 + 60 = 764.
        assert_eq!(black, [87, 324, 432, 764]);
    }

    /// A 16-neuron net with a handful of non-zero weights, quantised, on
    /// the bare kings (Ke1, Ke8): features 324 (own king e1 / e8 mirrored)
    /// and 764 (their king) for both sides.
    #[test]
    fn the_integer_forward_pass_is_the_spec_formula() {
        let layout = Layout {
            hidden: 16,
            buckets: 1,
            kings: Kings::NONE,
        };
        let mut net = Net {
            layout,
            params: vec![0.0; layout.size()],
        };
        let w1 = |f: usize, j: usize| f * 16 + j;
        // Neuron 0: 0.5 + 0.3 + b1 0.1 → 127.5→128, 76.5→77, 25.5→26: 231.
        net.params[w1(324, 0)] = 0.5;
        net.params[w1(764, 0)] = 0.3;
        net.params[layout.b1()] = 0.1;
        // Neuron 1: 1.5 + 1.0 → 382.5→383, 255: 638, clamped to 255.
        net.params[w1(324, 1)] = 1.5;
        net.params[w1(764, 1)] = 1.0;
        // Neuron 2: −0.4 → −102: below 0, screlu 0.
        net.params[w1(324, 2)] = -0.4;
        // Output weights: us 0.75 → 48 (neuron 0), −0.5 → −32 (neuron 1),
        // 1.0 → 64 (neuron 2); them 1.98 → 126.72 → 127 (neuron 0); b2 0.01 → 163.2 → 163.
        let w2 = layout.w2();
        net.params[w2] = 0.75;
        net.params[w2 + 1] = -0.5;
        net.params[w2 + 2] = 1.0;
        net.params[w2 + 16] = 1.98;
        net.params[layout.b2()] = 0.01;
        let q = net.quantise();
        assert_eq!(q.w2[16], 127);
        assert_eq!(q.b2, [163]);
        let p = position("4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        let (us, them) = (features(&p, Color::White), features(&p, Color::Black));
        // us: 231²·48 + 255²·(−32) + 0 = 2,561,328 − 2,080,800 = 480,528;
        // them: 231²·127 + 255²·0 = 6,776,847 (neuron 1's them-weight is 0).
        // sum = 7,257,375; /255 = 28,460 (truncated); + 163 = 28,623;
        // ·400 / 16,320 = 701.54… → 701.
        assert_eq!(q.eval_cp(&us, &them), Some(701));
        // A negative sum truncates toward zero: us weight on neuron 0 only,
        // −64: −231²·64 = −3,415,104; /255 = −13,392.56 → −13,392; + 163 =
        // −13,229; ·400 / 16,320 = −324.2 → −324.
        let mut neg = net.clone();
        neg.params[w2] = -1.0;
        neg.params[w2 + 1] = 0.0;
        neg.params[w2 + 16] = 0.0;
        assert_eq!(neg.quantise().eval_cp(&us, &them), Some(-324));
        // The float net agrees within the quantisation's error.
        let mut scratch = Scratch::new(16);
        let float = net.eval_cp(&us, &them, &mut scratch);
        // (0.9² v (231/255)², times the 1.98 weight: about 12 cp here.)
        assert!((float - 701.0).abs() < 20.0, "{float}");
    }
}
