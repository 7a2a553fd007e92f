//! Metric posteriors under audited mislabelling (SPEC §2.6).
//!
//! A reviewer re-checks samples of the observed TPs and FPs (optionally TNs and FNs) and counts
//! the mislabelled ones. Each draw samples the mislabelling rates
//! m_c ~ Beta(mislabelled_c + a_c, reviewed_c − mislabelled_c + b_c), moves the mislabelled mass
//! to the cell it really belongs to —
//!
//! TP* = TP (1 − m_TP) + FP m_FP,   FP* = FP (1 − m_FP) + TP m_TP,
//! TN* = TN (1 − m_TN) + FN m_FN,   FN* = FN (1 − m_FN) + TN m_TN
//!
//! (a mislabelled TP is really a negative the model called positive: an FP) — and then draws
//! the metric given the corrected, real-valued counts: a proportion metric from
//! Beta(successes* + a₀, failures* + b₀), any other from Dirichlet(cells* + α₀).
//!
//! Fused per block of draws, quantity by quantity: the rates, then the corrected cells, then
//! each metric — every quantity one tight loop from its own sub-stream.

use crate::metrics::Metric;
use crate::posterior::{alloc_output, check_draws, fill_blocks};
use crate::sampling::{Beta, Gamma, MAX_SHAPE, Sampler};
use crate::{Error, Result};

/// Audit of the four cells in the order (TP, FP, TN, FN). A cell with `audited[c] == false`
/// keeps its count (rate 0).
#[derive(Clone, Debug)]
pub struct Audit {
    pub audited: [bool; 4],
    pub reviewed: [f64; 4],
    pub mislabelled: [f64; 4],
    /// Beta prior (a, b) of each cell's mislabelling rate.
    pub prior: [(f64, f64); 4],
}

impl Audit {
    fn rate_posteriors(&self) -> Result<[Option<Beta>; 4]> {
        let mut out = [None; 4];
        for (c, rate) in out.iter_mut().enumerate() {
            if !self.audited[c] {
                continue;
            }
            let (reviewed, wrong) = (self.reviewed[c], self.mislabelled[c]);
            let (a, b) = self.prior[c];
            let counts_ok = reviewed.is_finite() && wrong >= 0.0 && wrong <= reviewed;
            if !(counts_ok && a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
                return Err(Error::invalid(format!(
                    "audit of cell {c}: need 0 <= mislabelled <= reviewed and a positive \
                     finite prior, got reviewed {reviewed}, mislabelled {wrong}, prior ({a}, {b})"
                )));
            }
            *rate = Some(Beta::new(wrong + a, reviewed - wrong + b)?);
        }
        Ok(out)
    }
}

/// One requested metric.
#[derive(Clone, Copy, Debug)]
pub enum AuditedMetric {
    /// A proportion: successes over successes + failures (cells as masks over TP, FP, TN, FN),
    /// with prior pseudo-counts a₀, b₀.
    Proportion {
        success: [bool; 4],
        failure: [bool; 4],
        a0: f64,
        b0: f64,
    },
    /// Any metric, from Dirichlet(cells* + α₀) draws.
    Sampled(Metric),
}

/// Posterior draws of `metrics` (one row each) given `counts` (TP, FP, TN, FN) corrected by
/// `audit`; `alpha0` are the Dirichlet pseudo-counts of the sampled metrics.
pub fn audited_metric_draws(
    counts: [f64; 4],
    audit: &Audit,
    metrics: &[AuditedMetric],
    alpha0: [f64; 4],
    n_draws: usize,
    seed: u64,
    zero_division: f64,
) -> Result<Vec<f64>> {
    if counts
        .iter()
        .chain(&alpha0)
        .any(|v| !(v.is_finite() && *v >= 0.0 && *v <= MAX_SHAPE))
    {
        return Err(Error::invalid(format!(
            "counts and pseudo-counts must be finite, >= 0 and at most {MAX_SHAPE:e}"
        )));
    }
    check_draws(n_draws, metrics.len())?;
    let rates = audit.rate_posteriors()?;
    let any_sampled = metrics
        .iter()
        .any(|m| matches!(m, AuditedMetric::Sampled(_)));
    for m in metrics {
        if let AuditedMetric::Proportion { a0, b0, .. } = m
            && !((0.0..=MAX_SHAPE).contains(a0) && (0.0..=MAX_SHAPE).contains(b0))
        {
            return Err(Error::invalid(format!(
                "prior pseudo-counts must be finite, >= 0 and at most {MAX_SHAPE:e}"
            )));
        }
    }
    // Masks as 0/1 weights: a metric's successes are a dot product with the corrected cells.
    let weights = |mask: &[bool; 4]| mask.map(|on| if on { 1.0 } else { 0.0 });
    let mut out = alloc_output(metrics.len() * n_draws)?;
    fill_blocks(&mut out, metrics.len(), n_draws, seed, |streams, rows| {
        let len = rows[0].len();
        // Mislabelling rates: fixed Betas, each drawn as two tight gamma loops (0 when the cell
        // was not audited).
        let m: Vec<Vec<f64>> = rates
            .iter()
            .enumerate()
            .map(|(c, rate)| {
                let mut draws = vec![0.0; len];
                if let Some(beta) = rate {
                    let (ga, gb) = (
                        streams.sampler(2 * c as u64),
                        streams.sampler(2 * c as u64 + 1),
                    );
                    beta.fill(ga, gb, &mut draws);
                }
                draws
            })
            .collect();
        // Corrected cells (TP, FP, TN, FN).
        let [tp, fp, tn, fn_] = counts;
        let mut cells: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; len]);
        for i in 0..len {
            let (m_tp, m_fp, m_tn, m_fn) = (m[0][i], m[1][i], m[2][i], m[3][i]);
            cells[0][i] = tp * (1.0 - m_tp) + fp * m_fp;
            cells[1][i] = fp * (1.0 - m_fp) + tp * m_tp;
            cells[2][i] = tn * (1.0 - m_tn) + fn_ * m_fn;
            cells[3][i] = fn_ * (1.0 - m_fn) + tn * m_tn;
        }
        // One Dirichlet draw per draw for all sampled metrics (unnormalised: the metrics are
        // ratios). Shapes change every draw, so each gamma builds its constants.
        let mut g: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::new());
        if any_sampled {
            for (c, gc) in g.iter_mut().enumerate() {
                let mut s = streams.sampler(8 + c as u64);
                *gc = cells[c]
                    .iter()
                    .map(|&x| gamma_of(&mut s, x + alpha0[c]))
                    .collect();
            }
        }
        let (mut a, mut b) = (vec![0.0; len], vec![0.0; len]);
        for (j, metric) in metrics.iter().enumerate() {
            match metric {
                AuditedMetric::Sampled(metric) => {
                    metric.eval_into(&g[0], &g[1], &g[2], &g[3], zero_division, &mut rows[j][..]);
                }
                AuditedMetric::Proportion {
                    success,
                    failure,
                    a0,
                    b0,
                } => {
                    let (ws, wf) = (weights(success), weights(failure));
                    for i in 0..len {
                        let x = [cells[0][i], cells[1][i], cells[2][i], cells[3][i]];
                        a[i] = a0 + ws[0] * x[0] + ws[1] * x[1] + ws[2] * x[2] + ws[3] * x[3];
                        b[i] = b0 + wf[0] * x[0] + wf[1] * x[1] + wf[2] * x[2] + wf[3] * x[3];
                    }
                    let (sa, sb) = (
                        streams.sampler(16 + 2 * j as u64),
                        streams.sampler(17 + 2 * j as u64),
                    );
                    beta_draws(sa, sb, &a, &b, zero_division, &mut rows[j][..]);
                }
            }
        }
    })?;
    Ok(out)
}

/// Beta(a[i], b[i]) draws into `out`. When every shape is at least 1 (the usual case: counts
/// plus a prior) the Ga and Gb draws are two tight loops, one per stream; otherwise each draw
/// goes through the log-space-safe Beta sampler. A draw with a = b = 0 (no data and no prior)
/// is `zero_division`.
fn beta_draws(
    mut sa: Sampler,
    mut sb: Sampler,
    a: &[f64],
    b: &[f64],
    zero_division: f64,
    out: &mut [f64],
) {
    if a.iter().chain(b).all(|&v| v >= 1.0) {
        for (o, &shape) in out.iter_mut().zip(a) {
            *o = sa.gamma(&Gamma::at_least_one(shape));
        }
        for (o, &shape) in out.iter_mut().zip(b) {
            let y = sb.gamma(&Gamma::at_least_one(shape));
            *o /= *o + y;
        }
        return;
    }
    for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
        *o = match Beta::new(a, b) {
            Ok(beta) => sa.beta(&beta),
            Err(_) => zero_division,
        };
    }
}

/// One Gamma(shape) draw for a shape that changes every draw (validated upstream: >= 0).
#[inline]
fn gamma_of(s: &mut Sampler, shape: f64) -> f64 {
    if shape >= 1.0 {
        return s.gamma(&Gamma::at_least_one(shape));
    }
    match Gamma::new(shape) {
        Ok(g) => s.gamma(&g),
        Err(_) => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audit(reviewed: [f64; 4], wrong: [f64; 4]) -> Audit {
        Audit {
            audited: [true, true, reviewed[2] > 0.0, reviewed[3] > 0.0],
            reviewed,
            mislabelled: wrong,
            prior: [(1.0, 1.0); 4],
        }
    }

    #[test]
    fn huge_clean_audits_give_the_plain_posterior() {
        let counts = [5285.0, 3184.0, 8000.0, 1000.0];
        let clean = audit([1e12, 1e12, 0.0, 0.0], [0.0; 4]);
        let precision = AuditedMetric::Proportion {
            success: [true, false, false, false],
            failure: [false, true, false, false],
            a0: 1.0,
            b0: 1.0,
        };
        let n = 50_000;
        let out = audited_metric_draws(counts, &clean, &[precision], [1.0; 4], n, 3, 0.0).unwrap();
        let mean = out.iter().sum::<f64>() / n as f64;
        let exact = 5286.0 / (5286.0 + 3185.0);
        assert!((mean - exact).abs() < 1e-3, "{mean} vs {exact}");
    }

    #[test]
    fn bad_audits_are_errors() {
        let counts = [10.0, 5.0, 20.0, 3.0];
        let f1 = [AuditedMetric::Sampled(Metric::F1)];
        let more_wrong_than_reviewed = audit([10.0, 10.0, 0.0, 0.0], [11.0, 0.0, 0.0, 0.0]);
        assert!(
            audited_metric_draws(counts, &more_wrong_than_reviewed, &f1, [1.0; 4], 10, 1, 0.0)
                .is_err()
        );
        let mut zero_prior = audit([10.0, 10.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]);
        zero_prior.prior[0] = (0.0, 1.0);
        assert!(audited_metric_draws(counts, &zero_prior, &f1, [1.0; 4], 10, 1, 0.0).is_err());
    }
}
