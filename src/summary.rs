//! Summaries of posterior samples: HDI, quantiles, mean and standard deviation.
//!
//! The sample HDI is the shortest window of ⌈ci·n⌉ consecutive order statistics (the leftmost
//! one on ties). Only the order statistics in the two tails can be window ends, so instead of
//! sorting all n samples we partition around the tails (O(n)) and sort just those — for
//! ci = 0.95 about a tenth of the data.

use crate::parallel;
use crate::{Error, Result};

/// Number of samples an interval of probability `ci` must hold: ⌈ci·n⌉, where products within
/// 1e-9 of an integer count as that integer (0.95 · 10000 is 9500, not 9501).
pub fn window_size(n: usize, ci: f64) -> usize {
    let x = ci * n as f64;
    let r = x.round();
    let k = if (x - r).abs() <= 1e-9 * r.max(1.0) {
        r
    } else {
        x.ceil()
    };
    (k as usize).clamp(1, n.max(1))
}

fn check(samples: &[f64], ci: f64) -> Result<()> {
    if samples.is_empty() {
        return Err(Error::invalid("samples must not be empty"));
    }
    if !(ci > 0.0 && ci < 1.0) {
        return Err(Error::invalid(format!(
            "ci must be strictly between 0 and 1, got {ci}"
        )));
    }
    Ok(())
}

/// Order-preserving integer key of a (non-NaN) float: the transform behind `f64::total_cmp`,
/// applied once per value instead of twice per comparison. It is its own inverse.
#[inline(always)]
fn key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

#[inline(always)]
fn unkey(k: i64) -> f64 {
    f64::from_bits((k ^ ((((k >> 63) as u64) >> 1) as i64)) as u64)
}

/// The keys of `samples`, or an error if any sample is NaN. NaN keys fall outside the keys of
/// ±inf, so the check is one vectorisable comparison per chunk.
fn keys(samples: &[f64]) -> Result<Vec<i64>> {
    // In chunks of 2^20 with a checkpoint after each: at 10⁸ samples this pass (and the first
    // touch of its 800 MB) takes a few tenths of a second. Summaries stop between passes.
    const CHUNK: usize = 1 << 20;
    let (low, high) = (key(f64::NEG_INFINITY), key(f64::INFINITY));
    let mut keys = Vec::with_capacity(samples.len());
    for chunk in samples.chunks(CHUNK) {
        let start = keys.len();
        keys.extend(chunk.iter().map(|&v| key(v)));
        let nan = keys[start..]
            .iter()
            .fold(false, |seen, &k| seen | (k < low) | (k > high));
        if nan {
            return Err(Error::invalid("samples contain NaN"));
        }
        parallel::checkpoint()?;
    }
    Ok(keys)
}

/// Index of the shortest window, given the sorted window starts and window ends.
fn shortest_window(starts: impl Iterator<Item = f64>, ends: impl Iterator<Item = f64>) -> usize {
    // starts[i] is order statistic i, ends[i] is order statistic i + k − 1.
    let mut best = 0;
    let mut best_width = f64::INFINITY;
    for (i, (lo, hi)) in starts.zip(ends).enumerate() {
        let width = hi - lo;
        if width < best_width {
            best_width = width;
            best = i;
        }
    }
    best
}

/// HDI of samples that are already sorted ascending.
pub fn hdi_sorted(sorted: &[f64], ci: f64) -> Result<(f64, f64)> {
    check(sorted, ci)?;
    if sorted.iter().any(|v| v.is_nan()) {
        return Err(Error::invalid("samples contain NaN"));
    }
    let n = sorted.len();
    let k = window_size(n, ci);
    let starts = n - k + 1;
    let i = shortest_window(
        sorted[..starts].iter().copied(),
        sorted[k - 1..].iter().copied(),
    );
    Ok((sorted[i], sorted[i + k - 1]))
}

/// HDI of unsorted samples (left untouched).
pub fn hdi(samples: &[f64], ci: f64) -> Result<(f64, f64)> {
    check(samples, ci)?;
    let n = samples.len();
    let k = window_size(n, ci);
    let starts = n - k + 1; // window starts are order statistics 0 .. starts − 1
    let first_end = k - 1; // window ends are order statistics k − 1 .. n − 1
    let mut scratch = keys(samples)?;
    if starts > first_end || n < 64 {
        // The tails overlap (small ci) or the input is tiny: a full sort is simplest.
        scratch.sort_unstable();
        let i = shortest_window(
            scratch[..starts].iter().map(|&v| unkey(v)),
            scratch[first_end..].iter().map(|&v| unkey(v)),
        );
        return Ok((unkey(scratch[i]), unkey(scratch[i + k - 1])));
    }
    // Order statistics 0..starts to the front (then sorted), first_end..n to the back (sorted).
    scratch.select_nth_unstable(starts - 1);
    parallel::checkpoint()?;
    let (low, rest) = scratch.split_at_mut(starts);
    let offset = first_end - starts;
    let sort_high = |rest: &mut [i64]| -> Result<()> {
        if offset > 0 {
            rest.select_nth_unstable(offset);
            parallel::checkpoint()?;
        }
        rest[offset..].sort_unstable();
        Ok(())
    };
    // Sequential on purpose: the tails are small, and waking a sleeping rayon worker for
    // them costs more than it saves. A checkpoint after each pass: at 10⁸ samples the
    // selections and the sorts of the tails take 0.1-0.3 s each.
    low.sort_unstable();
    parallel::checkpoint()?;
    sort_high(rest)?;
    let high = &rest[offset..];
    let i = shortest_window(
        low.iter().map(|&v| unkey(v)),
        high.iter().map(|&v| unkey(v)),
    );
    Ok((unkey(low[i]), unkey(high[i])))
}

/// `lo + frac (hi − lo)` for `lo <= hi`, with the limits where that formula gives NaN: equal
/// order statistics (including two infinities) interpolate to themselves, and an infinite end
/// wins over a finite one (a likelihood-ratio posterior can hold `inf` draws).
#[inline]
fn lerp(lo: f64, hi: f64, frac: f64) -> f64 {
    if lo == hi {
        lo
    } else if hi == f64::INFINITY || lo == f64::NEG_INFINITY {
        if lo == f64::NEG_INFINITY { lo } else { hi }
    } else {
        lo + frac * (hi - lo)
    }
}

/// Quantile with linear interpolation between order statistics (numpy's default method), by
/// selection on integer keys; `scratch` is reordered.
fn quantile_of_keys(scratch: &mut [i64], q: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&q) {
        return Err(Error::invalid(format!("q must be in [0, 1], got {q}")));
    }
    let n = scratch.len();
    let pos = q * (n - 1) as f64;
    let lo = (pos.floor() as usize).min(n - 1);
    let frac = pos - lo as f64;
    let (_, &mut k_lo, rest) = scratch.select_nth_unstable(lo);
    let v_lo = unkey(k_lo);
    if frac == 0.0 || rest.is_empty() {
        return Ok(v_lo);
    }
    let v_hi = unkey(rest.iter().copied().min().unwrap_or(k_lo));
    Ok(lerp(v_lo, v_hi, frac))
}

/// Several quantiles (each in [0, 1]) of unsorted samples (left untouched). Selection per
/// quantile, O(n) each — no full sort.
pub fn quantiles(samples: &[f64], qs: &[f64]) -> Result<Vec<f64>> {
    if samples.is_empty() {
        return Err(Error::invalid("samples must not be empty"));
    }
    let mut scratch = keys(samples)?;
    qs.iter()
        .map(|&q| quantile_of_keys(&mut scratch, q))
        .collect()
}

/// Equal-tailed interval of unsorted samples (left untouched).
pub fn eti(samples: &[f64], ci: f64) -> Result<(f64, f64)> {
    check(samples, ci)?;
    let tail = 0.5 * (1.0 - ci);
    let values = quantiles(samples, &[tail, 1.0 - tail])?;
    Ok((values[0], values[1]))
}

/// Mean, standard deviation, median, HDI and ETI of one posterior's samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub std: f64,
    pub median: f64,
    pub hdi: (f64, f64),
    pub eti: (f64, f64),
}

/// Quantile q (numpy's linear rule) of n samples whose order statistic i is `stat(i)`.
fn interpolated(n: usize, q: f64, stat: impl Fn(usize) -> f64) -> f64 {
    let pos = q * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - lo as f64;
    let v_lo = stat(lo);
    if frac == 0.0 || lo + 1 >= n {
        v_lo
    } else {
        lerp(v_lo, stat(lo + 1), frac)
    }
}

/// [`Summary`] of unsorted samples in one call: one key buffer serves the HDI's two tail
/// selections and the median's selection in between (half the memory traffic of separate
/// calls, which on 1e5+ samples is what dominates). The ETI's quantiles lie inside the sorted
/// tails, so they come for free.
pub fn summarize(samples: &[f64], ci: f64) -> Result<Summary> {
    check(samples, ci)?;
    let (mean, std) = mean_std(samples);
    let n = samples.len();
    let k = window_size(n, ci);
    let starts = n - k + 1;
    let first_end = k - 1;
    let mut scratch = keys(samples)?;
    // numpy's linear interpolation at position 0.5 (n − 1).
    let pos = 0.5 * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - pos.floor();
    if starts > first_end || n < 64 || lo < starts || lo + 1 >= first_end {
        // Tiny input, small ci, or the median next to a tail: sort everything.
        scratch.sort_unstable();
        let i = shortest_window(
            scratch[..starts].iter().map(|&v| unkey(v)),
            scratch[first_end..].iter().map(|&v| unkey(v)),
        );
        let hdi = (unkey(scratch[i]), unkey(scratch[i + k - 1]));
        let v_lo = unkey(scratch[lo]);
        let median = if frac == 0.0 {
            v_lo
        } else {
            lerp(v_lo, unkey(scratch[lo + 1]), frac)
        };
        let tail = 0.5 * (1.0 - ci);
        let stat = |i: usize| unkey(scratch[i]);
        let eti = (
            interpolated(n, tail, stat),
            interpolated(n, 1.0 - tail, stat),
        );
        return Ok(Summary {
            mean,
            std,
            median,
            hdi,
            eti,
        });
    }
    // Low tail (order statistics 0..starts) to the front, high tail (first_end..n) to the back,
    // each sorted; the median's order statistics lo and lo + 1 are in the middle part.
    scratch.select_nth_unstable(starts - 1);
    parallel::checkpoint()?;
    let (low, rest) = scratch.split_at_mut(starts);
    low.sort_unstable();
    parallel::checkpoint()?;
    let offset = first_end - starts;
    rest.select_nth_unstable(offset);
    parallel::checkpoint()?;
    let (middle, high) = rest.split_at_mut(offset);
    high.sort_unstable();
    let i = shortest_window(
        low.iter().map(|&v| unkey(v)),
        high.iter().map(|&v| unkey(v)),
    );
    let hdi = (unkey(low[i]), unkey(high[i]));
    let (_, &mut k_lo, above) = middle.select_nth_unstable(lo - starts);
    let v_lo = unkey(k_lo);
    let median = if frac == 0.0 {
        v_lo
    } else {
        let next = above.iter().copied().min().unwrap_or(high[0]);
        lerp(v_lo, unkey(next), frac)
    };
    // Order statistic i is low[i] in the low tail, high[i - first_end] in the high one; the
    // ETI's quantiles (and their neighbours) are there unless the tails are very short.
    let tail = 0.5 * (1.0 - ci);
    let lower_needs = ((tail * (n - 1) as f64).floor() as usize) + 1;
    let upper_needs = ((1.0 - tail) * (n - 1) as f64).floor() as usize;
    let eti = if lower_needs < starts && upper_needs >= first_end {
        let low_stat = |i: usize| unkey(low[i]);
        let high_stat = |i: usize| unkey(high[i - first_end]);
        (
            interpolated(n, tail, low_stat),
            interpolated(n, 1.0 - tail, high_stat),
        )
    } else {
        eti(samples, ci)?
    };
    Ok(Summary {
        mean,
        std,
        median,
        hdi,
        eti,
    })
}

/// (min, max, mean, standard deviation with n − 1 in the denominator; 0 for one sample) of
/// finite samples. The sums run in units of a power of two near the largest magnitude —
/// exact rescaling that keeps squares of 1e200 from overflowing and of 1e-200 from underflowing.
pub fn moments(samples: &[f64]) -> Result<(f64, f64, f64, f64)> {
    if samples.is_empty() {
        return Err(Error::invalid("samples must not be empty"));
    }
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for &v in samples {
        min = min.min(v);
        max = max.max(v);
    }
    if !(min.is_finite() && max.is_finite()) {
        return Err(Error::invalid("samples must be finite"));
    }
    let magnitude = min.abs().max(max.abs());
    let scale = if magnitude > 0.0 {
        // 2^e with 2^(e−1) <= magnitude < 2^e, from the exponent bits.
        let exponent = ((magnitude.to_bits() >> 52) & 0x7ff) as i32 - 1022;
        2f64.powi(exponent.clamp(-1000, 1000))
    } else {
        1.0
    };
    let inv = 1.0 / scale;
    let n = samples.len() as f64;
    let mean = samples.iter().map(|v| v * inv).sum::<f64>() / n;
    let var = if samples.len() > 1 {
        samples
            .iter()
            .map(|v| (v * inv - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0)
    } else {
        0.0
    };
    Ok((min, max, mean * scale, var.sqrt() * scale))
}

/// Values per chunk of [`linear_binning`]: fixed, so that the summation order (and hence every
/// bit of the result) does not depend on the number of threads.
const BINNING_CHUNK: usize = 1 << 17;

/// Linear binning onto the grid `low + i * step`, i = 0..m: each value splits its unit weight
/// between its two neighbouring grid points in proportion to proximity (values beyond the grid
/// are clamped to its ends).
pub fn linear_binning(values: &[f64], low: f64, step: f64, m: usize) -> Result<Vec<f64>> {
    if m < 2 {
        return Err(Error::invalid(format!(
            "the grid needs at least 2 points, got {m}"
        )));
    }
    if !(low.is_finite() && step.is_finite() && step > 0.0) {
        return Err(Error::invalid(format!(
            "grid start and step must be finite with step > 0, got low={low}, step={step}"
        )));
    }
    let last = (m - 1) as f64;
    let bin_chunk = |chunk: &[f64]| -> Vec<f64> {
        let mut weights = vec![0.0; m];
        for &v in chunk {
            let pos = ((v - low) / step).clamp(0.0, last);
            // pos in [0, m − 1]: the left index is at most m − 2 so that i + 1 is valid.
            let i = (pos.floor() as usize).min(m - 2);
            let frac = pos - i as f64;
            weights[i] += 1.0 - frac;
            weights[i + 1] += frac;
        }
        weights
    };
    if values.len() <= BINNING_CHUNK {
        return Ok(bin_chunk(values));
    }
    let partial: Vec<Vec<f64>> = parallel::map(values.len().div_ceil(BINNING_CHUNK), |c| {
        Ok(bin_chunk(
            &values[c * BINNING_CHUNK..((c + 1) * BINNING_CHUNK).min(values.len())],
        ))
    })?;
    let mut total = vec![0.0; m];
    for weights in &partial {
        for (t, w) in total.iter_mut().zip(weights) {
            *t += w;
        }
    }
    Ok(total)
}

/// Mean and (population) standard deviation, two-pass for accuracy.
pub fn mean_std(samples: &[f64]) -> (f64, f64) {
    let n = samples.len() as f64;
    if samples.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = samples.iter().sum::<f64>() / n;
    if mean.is_infinite() {
        // Mass at infinity (a likelihood ratio with an empty cell): the spread is infinite too.
        return (mean, f64::INFINITY);
    }
    let var = samples.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinite_samples_interpolate_to_their_limits() {
        let mut samples = vec![1.0; 80];
        samples.extend([f64::INFINITY; 120]);
        let s = summarize(&samples, 0.9).unwrap();
        assert_eq!(s.median, f64::INFINITY);
        assert_eq!(s.eti.1, f64::INFINITY);
        assert!(!s.eti.0.is_nan());
        let q = quantiles(
            &[f64::NEG_INFINITY, 0.0, 1.0, f64::INFINITY],
            &[0.1, 0.5, 0.9],
        )
        .unwrap();
        assert_eq!(q, vec![f64::NEG_INFINITY, 0.5, f64::INFINITY]);
    }

    #[test]
    fn summarize_gives_the_same_eti_as_eti() {
        let mut state = 99u64;
        for &n in &[1usize, 2, 7, 63, 64, 65, 100, 1000, 10_000, 10_007] {
            let samples: Vec<f64> = (0..n)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    ((state >> 11) as f64 / (1u64 << 53) as f64).powi(3)
                })
                .collect();
            for &ci in &[0.5, 0.8, 0.9, 0.95, 0.99, 0.999] {
                let s = summarize(&samples, ci).unwrap();
                assert_eq!(s.eti, eti(&samples, ci).unwrap(), "n {n} ci {ci}");
                assert_eq!(s.hdi, hdi(&samples, ci).unwrap(), "n {n} ci {ci}");
            }
        }
    }
    use crate::rng::stream;

    fn brute_force_hdi(samples: &[f64], ci: f64) -> (f64, f64) {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let k = window_size(s.len(), ci);
        let mut best = (0, f64::INFINITY);
        for i in 0..=s.len() - k {
            let w = s[i + k - 1] - s[i];
            if w < best.1 {
                best = (i, w);
            }
        }
        (s[best.0], s[best.0 + k - 1])
    }

    #[test]
    fn window_size_rounding() {
        assert_eq!(window_size(10_000, 0.95), 9500);
        assert_eq!(window_size(10, 0.95), 10);
        assert_eq!(window_size(3, 0.5), 2);
        assert_eq!(window_size(1, 0.01), 1);
    }

    #[test]
    fn partial_selection_matches_full_sort() {
        let mut rng = stream(4, 0);
        for n in [1usize, 2, 5, 63, 64, 65, 100, 1000, 4097] {
            for &ci in &[0.05, 0.5, 0.89, 0.95, 0.999] {
                // Skewed data with ties.
                let data: Vec<f64> = (0..n)
                    .map(|_| {
                        let u = rng.open01();
                        (u * u * 50.0).floor() / 50.0
                    })
                    .collect();
                let fast = hdi(&data, ci).unwrap();
                assert_eq!(fast, brute_force_hdi(&data, ci), "n={n} ci={ci}");
            }
        }
    }

    #[test]
    fn selection_matches_full_sort_on_large_inputs() {
        let mut rng = stream(6, 0);
        let n = 50_000;
        type Shape = (&'static str, Box<dyn Fn(f64) -> f64>);
        let shapes: [Shape; 4] = [
            ("uniform", Box::new(|u| u)),
            (
                "skewed with ties",
                Box::new(|u| (u * u * 200.0).floor() / 200.0),
            ),
            ("heavy tail", Box::new(|u| (1.0 / (1.0 - u)).ln().powi(3))),
            ("few values", Box::new(|u| (u * 3.0).floor())),
        ];
        for (name, f) in &shapes {
            let mut data: Vec<f64> = (0..n).map(|_| f(rng.open01())).collect();
            for &ci in &[0.5, 0.9, 0.95, 0.99] {
                assert_eq!(
                    hdi(&data, ci).unwrap(),
                    brute_force_hdi(&data, ci),
                    "{name} ci={ci}"
                );
            }
            // Sorted and reversed inputs are selection's classic worst cases.
            data.sort_by(f64::total_cmp);
            assert_eq!(
                hdi(&data, 0.95).unwrap(),
                brute_force_hdi(&data, 0.95),
                "{name} sorted"
            );
            data.reverse();
            assert_eq!(
                hdi(&data, 0.95).unwrap(),
                brute_force_hdi(&data, 0.95),
                "{name} reversed"
            );
        }
    }

    /// numpy's linear-interpolation quantile of sorted data.
    fn sorted_quantile(sorted: &[f64], q: f64) -> f64 {
        interpolated(sorted.len(), q, |i| sorted[i])
    }

    #[test]
    fn large_inputs_agree_with_sorting_for_hostile_patterns() {
        let mut rng = stream(21, 0);
        let n = 65_536;
        type Pattern = (&'static str, Box<dyn Fn(usize, f64) -> f64>);
        let patterns: [Pattern; 5] = [
            ("uniform", Box::new(|_, u| u)),
            ("beta-like", Box::new(|_, u| 0.6 + 0.05 * (u - 0.5).powi(3))),
            ("ties", Box::new(|_, u| (u * 7.0).floor())),
            // Periodic outliers: a pattern that defeats strided-subsample shortcuts.
            (
                "stride-aligned outliers",
                Box::new(|i, u| if i % 32 == 0 { 1e6 } else { u }),
            ),
            (
                "infinite tails",
                Box::new(|i, u| match i % 1000 {
                    0 => f64::INFINITY,
                    1 => f64::NEG_INFINITY,
                    _ => u,
                }),
            ),
        ];
        for (name, f) in &patterns {
            let data: Vec<f64> = (0..n).map(|i| f(i, rng.open01())).collect();
            let mut sorted = data.clone();
            sorted.sort_by(f64::total_cmp);
            for &ci in &[0.5, 0.9, 0.95, 0.99] {
                let expected_hdi = brute_force_hdi(&data, ci);
                assert_eq!(hdi(&data, ci).unwrap(), expected_hdi, "{name} ci={ci}");
                let summary = summarize(&data, ci).unwrap();
                assert_eq!(summary.hdi, expected_hdi, "{name} ci={ci}");
                assert_eq!(summary.median, sorted_quantile(&sorted, 0.5), "{name}");
                let tail = 0.5 * (1.0 - ci);
                let expected_eti = (
                    sorted_quantile(&sorted, tail),
                    sorted_quantile(&sorted, 1.0 - tail),
                );
                assert_eq!(summary.eti, expected_eti, "{name} ci={ci}");
                assert_eq!(eti(&data, ci).unwrap(), expected_eti, "{name} ci={ci}");
            }
            let qs = [0.0, 0.001, 0.37, 1.0];
            let expected: Vec<f64> = qs.iter().map(|&q| sorted_quantile(&sorted, q)).collect();
            assert_eq!(quantiles(&data, &qs).unwrap(), expected, "{name}");
        }
    }

    #[test]
    fn summarize_matches_separate_statistics() {
        let mut rng = stream(12, 0);
        for n in [1usize, 2, 3, 10, 63, 64, 65, 100, 1001, 20_000, 100_000] {
            for &ci in &[0.2, 0.5, 0.9, 0.95, 0.999] {
                let data: Vec<f64> = (0..n)
                    .map(|_| (rng.open01() * 40.0).floor() / 7.0)
                    .collect();
                let s = summarize(&data, ci).unwrap();
                assert_eq!(s.hdi, hdi(&data, ci).unwrap(), "n={n} ci={ci}");
                assert_eq!(
                    s.median,
                    quantiles(&data, &[0.5]).unwrap()[0],
                    "n={n} ci={ci}"
                );
                let (mean, std) = mean_std(&data);
                assert_eq!((s.mean, s.std), (mean, std));
            }
        }
        assert!(summarize(&[], 0.9).is_err());
        assert!(summarize(&[1.0, f64::NAN], 0.9).is_err());
    }

    #[test]
    fn moments_are_accurate_at_extreme_scales() {
        for scale in [1e-200, 1e-3, 1.0, 1e200] {
            let data: Vec<f64> = [1.0, 2.0, 4.0, 5.0].iter().map(|v| v * scale).collect();
            let (min, max, mean, std) = moments(&data).unwrap();
            assert_eq!((min, max), (scale, 5.0 * scale));
            assert!((mean / scale - 3.0).abs() < 1e-14);
            assert!((std / scale - (10.0f64 / 3.0).sqrt()).abs() < 1e-14);
        }
        assert_eq!(moments(&[2.5]).unwrap(), (2.5, 2.5, 2.5, 0.0));
        assert!(moments(&[]).is_err());
        assert!(moments(&[1.0, f64::INFINITY]).is_err());
    }

    #[test]
    fn leftmost_on_ties() {
        let data = [0.0, 1.0, 2.0, 3.0];
        assert_eq!(hdi_sorted(&data, 0.5).unwrap(), (0.0, 1.0));
    }

    #[test]
    fn quantiles_match_linear_interpolation() {
        let data = [5.0, 1.0, 4.0, 2.0, 3.0];
        let q = quantiles(&data, &[0.5, 0.0, 1.0, 0.1]).unwrap();
        assert_eq!(q[..3], [3.0, 1.0, 5.0]);
        assert!((q[3] - 1.4).abs() < 1e-12);
        let signed = quantiles(&[-0.0, 0.0, -3.5, 2.0, -1e300], &[0.0, 0.5, 1.0]).unwrap();
        assert_eq!(signed, vec![-1e300, 0.0, 2.0]);
        assert_eq!(eti(&data, 0.5).unwrap(), (2.0, 4.0));
    }

    #[test]
    fn keys_preserve_order_and_invert() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -0.0,
            0.0,
            1e-310,
            1.0,
            f64::INFINITY,
        ];
        for pair in values.windows(2) {
            assert!(key(pair[0]) < key(pair[1]), "{pair:?}");
        }
        for v in values {
            assert_eq!(unkey(key(v)).to_bits(), v.to_bits());
        }
    }

    #[test]
    fn linear_binning_conserves_mass_and_splits_by_distance() {
        let w = linear_binning(&[0.0, 0.25, 1.0, 2.0, -5.0, 9.0], 0.0, 1.0, 3).unwrap();
        assert_eq!(w.len(), 3);
        assert!((w.iter().sum::<f64>() - 6.0).abs() < 1e-12);
        // 0.0 and the clamped -5.0 land on point 0; 0.25 splits 0.75 / 0.25.
        assert!((w[0] - 2.75).abs() < 1e-12 && (w[1] - 1.25).abs() < 1e-12);
        let mut rng = stream(2, 0);
        let big: Vec<f64> = (0..300_000).map(|_| rng.open01()).collect();
        let w = linear_binning(&big, 0.0, 1.0 / 99.0, 100).unwrap();
        assert!((w.iter().sum::<f64>() - 300_000.0).abs() < 1e-6);
        assert!(linear_binning(&big, 0.0, 0.0, 100).is_err());
        assert!(linear_binning(&big, 0.0, 0.1, 1).is_err());
    }

    #[test]
    fn rejects_bad_input() {
        assert!(hdi(&[], 0.9).is_err());
        assert!(hdi(&[1.0], 1.0).is_err());
        assert!(hdi(&[1.0, f64::NAN], 0.5).is_err());
        assert!(quantiles(&[1.0], &[1.5]).is_err());
        assert!(quantiles(&[f64::NAN], &[0.5]).is_err());
        assert!(quantiles(&[0.5, -f64::NAN], &[0.5]).is_err());
        assert!(eti(&[0.5, 0.25, -f64::NAN], 0.5).is_err());
        assert!(quantiles(&[], &[0.5]).is_err());
    }
}
