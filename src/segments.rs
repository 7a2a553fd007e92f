//! Many segments at once: per-segment confusion counts in one parallel pass over the rows, and
//! every segment's metric posteriors in one parallel call — optionally reduced on the fly to
//! summaries, so that 10⁵ segments never hold 10⁹ samples.
//!
//! Segment s draws from streams derived from (seed, s): results do not depend on the number of
//! threads, nor on which other segments are in the call.

use crate::metrics::Metric;
use crate::parallel;
use crate::posterior::{alloc_output, binary_metric_draws_into, check_draws};
use crate::rng::fork;
use crate::special;
use crate::summary;
use crate::{Error, Result};

/// Per-segment K × K counts (row-major, rows = true class) of rows with class codes `truth`,
/// `predicted` (< k) and segment codes `segment` (< n_segments), weighted by `weights`
/// (default 1). Output: n_segments × k × k.
pub fn segment_counts(
    truth: &[u32],
    predicted: &[u32],
    segment: &[u32],
    weights: Option<&[f64]>,
    n_segments: usize,
    k: usize,
) -> Result<Vec<f64>> {
    let n = truth.len();
    if predicted.len() != n || segment.len() != n || weights.is_some_and(|w| w.len() != n) {
        return Err(Error::invalid(
            "labels, predictions, segments and weights must have the same length",
        ));
    }
    if k < 2 {
        return Err(Error::invalid("need at least 2 classes"));
    }
    let cells = n_segments
        .checked_mul(k * k)
        .ok_or_else(|| Error::invalid("too many segments"))?;
    if truth.iter().chain(predicted).any(|&c| c as usize >= k) {
        return Err(Error::invalid("class code out of range"));
    }
    if segment.iter().any(|&s| s as usize >= n_segments) {
        return Err(Error::invalid("segment code out of range"));
    }
    if let Some(w) = weights
        && w.iter().any(|v| !(v.is_finite() && *v >= 0.0))
    {
        return Err(Error::invalid("weights must be finite and >= 0"));
    }
    let cell =
        |i: usize| segment[i] as usize * k * k + truth[i] as usize * k + predicted[i] as usize;
    // Partial counts per chunk of rows, added in chunk order: the same sums (and, for
    // fractional weights, the same rounding) whatever the thread count.
    const ROWS: usize = 1 << 16;
    let partials: Vec<Vec<f64>> = parallel::map(n.div_ceil(ROWS), |c| {
        let mut counts = vec![0.0; cells];
        for i in c * ROWS..((c + 1) * ROWS).min(n) {
            counts[cell(i)] += weights.map_or(1.0, |w| w[i]);
        }
        Ok(counts)
    })?;
    let mut total = vec![0.0; cells];
    for partial in partials {
        total.iter_mut().zip(partial).for_each(|(t, p)| *t += p);
    }
    Ok(total)
}

/// A metric of the segment kernels: sampled from Dirichlet draws, or — a proportion — its exact
/// Beta(successes + a₀, failures + b₀) over the cells (TP, FP, TN, FN) in the masks.
#[derive(Clone, Copy, Debug)]
pub enum SegmentMetric {
    Sampled(Metric),
    Exact {
        success: [bool; 4],
        failure: [bool; 4],
        a0: f64,
        b0: f64,
    },
}

/// Values per summary: mean, std, median, HDI low, HDI high, ETI low, ETI high.
pub const SUMMARY: [&str; 7] = [
    "mean", "std", "median", "hdi_low", "hdi_high", "eti_low", "eti_high",
];

fn check_cells(cells: &[f64], alpha0: &[f64; 4]) -> Result<usize> {
    if cells.len() % 4 != 0 {
        return Err(Error::invalid(
            "cells must be n_segments x 4 (TP, FP, TN, FN)",
        ));
    }
    if cells
        .iter()
        .chain(alpha0)
        .any(|v| !(v.is_finite() && *v >= 0.0))
    {
        return Err(Error::invalid(
            "counts and pseudo-counts must be finite and >= 0",
        ));
    }
    Ok(cells.len() / 4)
}

/// Dirichlet draws of the sampled metrics of every segment: output n_segments × metrics ×
/// n_draws. Segment s's draws equal `binary_metric_draws(cells_s + alpha0, ..., fork(seed, s))`.
pub fn segment_draws(
    cells: &[f64],
    alpha0: [f64; 4],
    metrics: &[Metric],
    n_draws: usize,
    seed: u64,
    zero_division: f64,
) -> Result<Vec<f64>> {
    let s = check_cells(cells, &alpha0)?;
    let rows = metrics.len().max(1);
    check_draws(n_draws, s.saturating_mul(rows))?;
    let mut out = alloc_output(s * metrics.len() * n_draws)?;
    if metrics.is_empty() {
        return Ok(out);
    }
    parallel::for_each_chunk(&mut out, metrics.len() * n_draws, |segment, draws| {
        binary_metric_draws_into(
            segment_alpha(cells, segment, &alpha0),
            metrics,
            fork(seed, segment as u64),
            zero_division,
            draws,
        )
        .map_err(|e| e.context(format_args!("segment {segment}")))
    })?;
    Ok(out)
}

/// Summaries of every segment's metric posteriors without keeping their samples: output
/// n_segments × metrics × 7 (see [`SUMMARY`]). Sampled metrics are drawn exactly as in
/// [`segment_draws`] and reduced in place; exact ones come from the Beta distribution.
pub fn segment_summaries(
    cells: &[f64],
    alpha0: [f64; 4],
    metrics: &[SegmentMetric],
    n_draws: usize,
    seed: u64,
    ci: f64,
    zero_division: f64,
) -> Result<Vec<f64>> {
    let s = check_cells(cells, &alpha0)?;
    if !(ci > 0.0 && ci < 1.0) {
        return Err(Error::invalid(format!(
            "ci must be strictly between 0 and 1, got {ci}"
        )));
    }
    let sampled: Vec<Metric> = metrics
        .iter()
        .filter_map(|m| match m {
            SegmentMetric::Sampled(metric) => Some(*metric),
            SegmentMetric::Exact { .. } => None,
        })
        .collect();
    check_draws(n_draws, sampled.len().max(1))?;
    let width = SUMMARY.len();
    let mut out = vec![0.0; s * metrics.len() * width];
    if metrics.is_empty() {
        return Ok(out);
    }
    parallel::for_each_chunk_init(
        &mut out,
        metrics.len() * width,
        || vec![0.0; sampled.len() * n_draws],
        |scratch, segment, summaries| {
            let c = &cells[4 * segment..4 * segment + 4];
            let fail = |e: Error| e.context(format_args!("segment {segment}"));
            if !sampled.is_empty() {
                binary_metric_draws_into(
                    segment_alpha(cells, segment, &alpha0),
                    &sampled,
                    fork(seed, segment as u64),
                    zero_division,
                    scratch,
                )
                .map_err(fail)?;
            }
            let mut next_sampled = 0;
            for (metric, target) in metrics.iter().zip(summaries.chunks_mut(width)) {
                let values = match metric {
                    SegmentMetric::Sampled(_) => {
                        let row = &scratch[next_sampled * n_draws..(next_sampled + 1) * n_draws];
                        next_sampled += 1;
                        sample_summary(row, ci).map_err(fail)?
                    }
                    SegmentMetric::Exact {
                        success,
                        failure,
                        a0,
                        b0,
                    } => {
                        let pick = |mask: &[bool; 4]| -> f64 {
                            (0..4).filter(|&i| mask[i]).map(|i| c[i]).sum()
                        };
                        beta_summary(pick(success) + a0, pick(failure) + b0, ci).map_err(fail)?
                    }
                };
                target.copy_from_slice(&values);
            }
            Ok(())
        },
    )?;
    Ok(out)
}

/// Segment `segment`'s Dirichlet parameters: its cells (TP, FP, TN, FN) plus the prior's.
fn segment_alpha(cells: &[f64], segment: usize, alpha0: &[f64; 4]) -> [f64; 4] {
    let c = &cells[4 * segment..4 * segment + 4];
    [
        c[0] + alpha0[0],
        c[1] + alpha0[1],
        c[2] + alpha0[2],
        c[3] + alpha0[3],
    ]
}

fn sample_summary(samples: &[f64], ci: f64) -> Result<[f64; 7]> {
    let s = summary::summarize(samples, ci)?;
    Ok([s.mean, s.std, s.median, s.hdi.0, s.hdi.1, s.eti.0, s.eti.1])
}

fn beta_summary(a: f64, b: f64, ci: f64) -> Result<[f64; 7]> {
    if a == 0.0 && b == 0.0 {
        return Err(Error::invalid(
            "no data and a zero prior: the posterior is improper",
        ));
    }
    let total = a + b;
    let mean = a / total;
    let std = (a * b / (total * total * (total + 1.0))).sqrt();
    let median = special::beta_ppf(0.5, a, b)?;
    let (hdi_low, hdi_high) = special::beta_hdi(a, b, ci)?;
    let (eti_low, eti_high) = special::beta_eti(a, b, ci)?;
    Ok([mean, std, median, hdi_low, hdi_high, eti_low, eti_high])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::posterior::binary_metric_draws;

    #[test]
    fn counts_per_segment() {
        let truth = [0u32, 1, 1, 0, 1, 0];
        let pred = [0u32, 1, 0, 1, 1, 0];
        let seg = [0u32, 0, 1, 1, 2, 2];
        let out = segment_counts(&truth, &pred, &seg, None, 3, 2).unwrap();
        // Segment 0: TN + TP; segment 1: FN + FP; segment 2: TP + TN.
        assert_eq!(&out[0..4], &[1.0, 0.0, 0.0, 1.0]);
        assert_eq!(&out[4..8], &[0.0, 1.0, 1.0, 0.0]);
        assert_eq!(&out[8..12], &[1.0, 0.0, 0.0, 1.0]);
        let w = [2.0, 1.0, 1.0, 1.0, 0.5, 1.0];
        let out = segment_counts(&truth, &pred, &seg, Some(&w), 3, 2).unwrap();
        assert_eq!(out[0], 2.0);
        assert_eq!(out[11], 0.5);
        assert!(segment_counts(&truth, &pred, &seg, None, 2, 2).is_err());
    }

    #[test]
    fn summaries_match_the_draws_and_the_thread_count_does_not_matter() {
        let cells = [
            50.0, 10.0, 40.0, 5.0, 3.0, 0.0, 9.0, 2.0, 500.0, 120.0, 700.0, 80.0,
        ];
        let metrics = [Metric::F1, Metric::Mcc];
        let summaries: Vec<SegmentMetric> =
            metrics.iter().map(|&m| SegmentMetric::Sampled(m)).collect();
        let n = 5000;
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    segment_summaries(&cells, [1.0; 4], &summaries, n, 7, 0.9, 0.0).unwrap()
                })
        };
        let out = run(1);
        assert_eq!(out, run(2));
        let draws = segment_draws(&cells, [1.0; 4], &metrics, n, 7, 0.0).unwrap();
        for s in 0..3 {
            // Segment s's draws are the plain kernel's with seed fork(7, s).
            let c = &cells[4 * s..4 * s + 4];
            let alpha = [c[0] + 1.0, c[1] + 1.0, c[2] + 1.0, c[3] + 1.0];
            let plain = binary_metric_draws(alpha, &metrics, n, fork(7, s as u64), 0.0).unwrap();
            assert_eq!(&draws[s * 2 * n..(s + 1) * 2 * n], &plain[..]);
            for m in 0..2 {
                let row = &plain[m * n..(m + 1) * n];
                let expect = sample_summary(row, 0.9).unwrap();
                assert_eq!(&out[(s * 2 + m) * 7..(s * 2 + m + 1) * 7], &expect);
            }
        }
    }

    #[test]
    fn exact_summaries() {
        let precision = SegmentMetric::Exact {
            success: [true, false, false, false],
            failure: [false, true, false, false],
            a0: 1.0,
            b0: 1.0,
        };
        let out = segment_summaries(
            &[8.0, 2.0, 0.0, 0.0],
            [1.0; 4],
            &[precision],
            10,
            1,
            0.95,
            0.0,
        )
        .unwrap();
        assert!((out[0] - 9.0 / 12.0).abs() < 1e-15);
        let (low, high) = special::beta_hdi(9.0, 3.0, 0.95).unwrap();
        assert_eq!((out[3], out[4]), (low, high));
    }
}
