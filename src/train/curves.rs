//! The record of a training run, per epoch: a CSV and its loss curves as a
//! hand-written SVG (two polylines and a few labels do not need a plotting
//! crate).

/// One epoch's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochRecord {
    /// Mean loss over the epoch's training positions, as they were met.
    pub train_loss: f64,
    /// Mean loss of the float net on the validation positions after the
    /// epoch.
    pub valid_loss: f64,
    /// Mean |quantised − float| evaluation on the validation positions, cp.
    pub quantised_mad_cp: f64,
    /// The learning rate at the epoch's end.
    pub learning_rate: f64,
    /// Seconds the epoch took.
    pub seconds: f64,
}

impl EpochRecord {
    pub const FIELDS: usize = 5;

    pub fn to_array(self) -> [f64; Self::FIELDS] {
        [
            self.train_loss,
            self.valid_loss,
            self.quantised_mad_cp,
            self.learning_rate,
            self.seconds,
        ]
    }

    pub fn from_array(a: [f64; Self::FIELDS]) -> EpochRecord {
        EpochRecord {
            train_loss: a[0],
            valid_loss: a[1],
            quantised_mad_cp: a[2],
            learning_rate: a[3],
            seconds: a[4],
        }
    }
}

pub fn csv(history: &[EpochRecord]) -> String {
    let mut out =
        String::from("epoch,train_loss,valid_loss,quantised_mad_cp,learning_rate,seconds\n");
    for (i, r) in history.iter().enumerate() {
        out.push_str(&format!(
            "{},{:.7},{:.7},{:.3},{:.7},{:.1}\n",
            i + 1,
            r.train_loss,
            r.valid_loss,
            r.quantised_mad_cp,
            r.learning_rate,
            r.seconds
        ));
    }
    out
}

/// Training and validation loss against the epoch.
pub fn svg(history: &[EpochRecord]) -> String {
    let (width, height) = (720.0, 420.0);
    let (left, right, top, bottom) = (80.0, 20.0, 40.0, 50.0);
    let values = history.iter().flat_map(|r| [r.train_loss, r.valid_loss]);
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    } else if lo.is_finite() {
        (lo - 0.001, lo + 0.001)
    } else {
        (0.0, 1.0)
    };
    let epochs = history.len().max(2) as f64;
    let x = |epoch: f64| left + (epoch - 1.0) / (epochs - 1.0) * (width - left - right);
    let y = |loss: f64| top + (hi - loss) / (hi - lo) * (height - top - bottom);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"24\" font-size=\"14\">qilin train: loss per epoch (blue: training, orange: validation)</text>\n\
         <line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"black\"/>\n\
         <line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n",
        height - bottom,
        height - bottom,
        width - right,
        height - bottom
    );
    for i in 0..=4 {
        let loss = lo + (hi - lo) * f64::from(i) / 4.0;
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{loss:.5}</text>\n",
            left - 6.0,
            y(loss) + 4.0
        ));
    }
    let ticks = history.len().clamp(1, 10);
    for i in 0..ticks {
        let epoch = if ticks == 1 {
            1
        } else {
            1 + i * (history.len() - 1) / (ticks - 1)
        };
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{epoch}</text>\n",
            x(epoch as f64),
            height - bottom + 18.0
        ));
    }
    out.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">epoch</text>\n",
        (left + width - right) / 2.0,
        height - 8.0
    ));
    for (colour, pick) in [
        (
            "#1f77b4",
            (|r: &EpochRecord| r.train_loss) as fn(&EpochRecord) -> f64,
        ),
        ("#ff7f0e", |r: &EpochRecord| r.valid_loss),
    ] {
        let points: Vec<String> = history
            .iter()
            .enumerate()
            .map(|(i, r)| format!("{:.1},{:.1}", x(i as f64 + 1.0), y(pick(r))))
            .collect();
        out.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>\n",
            points.join(" ")
        ));
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_and_svg_list_every_epoch() {
        let history: Vec<EpochRecord> = (0..3)
            .map(|i| EpochRecord::from_array([0.05 - 0.01 * f64::from(i), 0.06, 1.5, 0.001, 10.0]))
            .collect();
        let csv = csv(&history);
        assert_eq!(csv.lines().count(), 4);
        assert_eq!(
            csv.lines().nth(3),
            Some("3,0.0300000,0.0600000,1.500,0.0010000,10.0")
        );
        let svg = svg(&history);
        assert_eq!(svg.matches("<polyline").count(), 2);
        // Training: highest loss at the top of the plot (y = 40 + 5% pad).
        assert!(svg.contains("points=\"80.0,"), "{svg}");
        assert!(svg.ends_with("</svg>\n"));
        assert!(super::svg(&[]).contains("</svg>"));
    }
}
