//! Ensemble statistics (SPEC §2.5): per test sample, how much m models agree and how uncertain
//! they are, from their predicted probabilities P(y = 1) — one parallel pass over the (m, n)
//! matrix.
//!
//! For sample x with probabilities p₁..pₘ and kₓ = #{pᵢ > threshold} (label 1 iff p > t):
//! * label stability |kₓ − (m − kₓ)| / m;
//! * jitter 2 kₓ (m − kₓ) / (m (m − 1)): the fraction of model pairs whose labels differ, in
//!   closed form (O(m) instead of the O(m²) pair loop);
//! * epistemic uncertainty: the population variance of the pᵢ (std: its square root);
//! * aleatoric uncertainty: the mean binary entropy of the pᵢ, in bits;
//! * predictive entropy: the entropy of the mean p̄; mutual information = predictive − aleatoric;
//! * IQR: the 75th minus the 25th percentile of the pᵢ (numpy's default linear interpolation).

use crate::posterior::{alloc_output, fill_blocks};
use crate::{Error, Result};

/// The per-sample statistics, in the row order of [`ensemble_stats`]'s output.
pub const STATISTICS: [&str; 10] = [
    "mean",
    "positive_votes",
    "label_stability",
    "jitter",
    "epistemic",
    "std",
    "aleatoric",
    "predictive_entropy",
    "mutual_information",
    "iqr",
];

/// Binary entropy in bits, with 0 log 0 = 0.
#[inline(always)]
pub fn entropy_bits(p: f64) -> f64 {
    -(x_ln_x(p) + x_ln_x(1.0 - p)) * std::f64::consts::LOG2_E
}

/// x ln x for x in [0, 1], branch-free so that loops over it vectorise: the logarithm of the
/// mantissa m ∈ [√½, √2) comes from ln m = 2 atanh(s), s = (m − 1) / (m + 1), |s| < 0.172,
/// whose odd series to s²³ is below 2⁻⁵⁶ of the result. Arguments below the smallest normal
/// double (where x ln x < 1e-305) count as 0, as does x = 0.
#[inline(always)]
fn x_ln_x(x: f64) -> f64 {
    const SQRT2: f64 = std::f64::consts::SQRT_2;
    let bits = x.to_bits();
    // The exponent as a double without an integer conversion (which SSE2 cannot vectorise):
    // 2⁵² + k has the bits 0x4330... | k.
    let biased = f64::from_bits(((bits >> 52) & 0x7ff) | 0x4330_0000_0000_0000);
    let exponent = biased - (4_503_599_627_370_496.0 + 1023.0);
    let mantissa = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    // Fold [√2, 2) down to [√½, 1): m / 2, exponent + 1.
    let high = mantissa >= SQRT2;
    let m = if high { 0.5 * mantissa } else { mantissa };
    let e = exponent + if high { 1.0 } else { 0.0 };
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    // atanh(s) / s = Σ s^(2k) / (2k + 1), k = 0..11, by Horner.
    let mut series = 1.0 / 23.0;
    for k in (0..11).rev() {
        series = series * s2 + 1.0 / (2 * k + 1) as f64;
    }
    let ln = e * std::f64::consts::LN_2 + 2.0 * s * series;
    if x >= f64::MIN_POSITIVE { x * ln } else { 0.0 }
}

/// The q-quantile (0..1) of `values` with linear interpolation between order statistics, as
/// numpy's default; reorders `values`.
fn quantile(values: &mut [f64], q: f64) -> f64 {
    let len = values.len();
    let h = (len - 1) as f64 * q;
    let low = h.floor() as usize;
    let (_, &mut at, above) = values.select_nth_unstable_by(low, f64::total_cmp);
    if low + 1 >= len || h == low as f64 {
        return at;
    }
    let next = above.iter().copied().fold(f64::INFINITY, f64::min);
    at + (h - low as f64) * (next - at)
}

/// Add one model's row of probabilities to the per-sample sums, positive votes and entropies.
/// On x86-64 CPUs with AVX2 the same code runs compiled for AVX2 (the portable build targets
/// SSE2, where this loop does not vectorise); results are identical either way, since no
/// floating-point operation is contracted or reordered.
fn accumulate(row: &[f64], sum: &mut [f64], votes: &mut [f64], entropy: &mut [f64], t: f64) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the running CPU supports AVX2, checked just above.
        unsafe { accumulate_avx2(row, sum, votes, entropy, t) };
        return;
    }
    accumulate_portable(row, sum, votes, entropy, t);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn accumulate_avx2(row: &[f64], sum: &mut [f64], votes: &mut [f64], entropy: &mut [f64], t: f64) {
    accumulate_portable(row, sum, votes, entropy, t);
}

#[inline(always)]
fn accumulate_portable(
    row: &[f64],
    sum: &mut [f64],
    votes: &mut [f64],
    entropy: &mut [f64],
    threshold: f64,
) {
    let accumulators = sum.iter_mut().zip(votes.iter_mut()).zip(entropy.iter_mut());
    for (((total, vote), h), &p) in accumulators.zip(row) {
        *total += p;
        *vote += if p > threshold { 1.0 } else { 0.0 };
        *h += entropy_bits(p);
    }
}

/// The 75th minus the 25th percentile (linear interpolation). The upper quartile is selected
/// first; the lower one then lies in the part below it, which is all the second selection
/// has to look at.
fn interquartile_range(values: &mut [f64]) -> f64 {
    let upper = quantile(values, 0.75);
    let below = ((values.len() - 1) as f64 * 0.75).floor() as usize;
    let h = (values.len() - 1) as f64 * 0.25;
    let low = h.floor() as usize;
    if low + 1 > below {
        return upper - quantile(values, 0.25); // tiny m: just select again
    }
    // Elements [0, below) are <= the element at `below`, so the order statistics low and
    // low + 1 (both <= below) are found among [0, below].
    let lower = quantile_at(&mut values[..=below], low, h - low as f64);
    upper - lower
}

/// Order statistic `low` of `values` plus `frac` of the gap to the next one.
fn quantile_at(values: &mut [f64], low: usize, frac: f64) -> f64 {
    let (_, &mut at, above) = values.select_nth_unstable_by(low, f64::total_cmp);
    if frac == 0.0 || above.is_empty() {
        return at;
    }
    let next = above.iter().copied().fold(f64::INFINITY, f64::min);
    at + frac * (next - at)
}

/// Statistics of the row-major (m × n) matrix `proba`: a row-major (10 × n) output, one row
/// per entry of [`STATISTICS`]. Blocks of samples run in parallel; within a block the matrix is
/// read model by model, so every read is contiguous.
pub fn ensemble_stats(proba: &[f64], m: usize, n: usize, threshold: f64) -> Result<Vec<f64>> {
    if m < 2 || proba.len() != m * n {
        return Err(Error::invalid(format!(
            "proba must be (n_models, n_samples) with at least 2 models, got {} values for \
             {m} x {n}",
            proba.len()
        )));
    }
    if !(0.0..=1.0).contains(&threshold) {
        return Err(Error::invalid(format!(
            "threshold must be in [0, 1], got {threshold}"
        )));
    }
    if let Some(i) = proba.iter().position(|p| !(0.0..=1.0).contains(p)) {
        return Err(Error::invalid(format!(
            "proba must hold probabilities in [0, 1], found {} at model {}, sample {}",
            proba[i],
            i / n.max(1),
            i % n.max(1)
        )));
    }
    let mf = m as f64;
    let mut out = alloc_output(STATISTICS.len() * n)?;
    // No randomness here: fill_blocks only splits the work (its streams go unused).
    fill_blocks(&mut out, STATISTICS.len(), n, 0, |streams, rows| {
        let start = streams.first_column();
        let width = rows[0].len();
        let (mut sum, mut votes, mut entropy) =
            (vec![0.0; width], vec![0.0; width], vec![0.0; width]);
        let mut values = vec![0.0; width * m]; // each sample's m values together
        for model in 0..m {
            let row = &proba[model * n + start..model * n + start + width];
            // Element-wise over the row: a loop the compiler vectorises.
            accumulate(row, &mut sum, &mut votes, &mut entropy, threshold);
            for (x, &p) in row.iter().enumerate() {
                values[x * m + model] = p;
            }
        }
        for x in 0..width {
            let mean = sum[x] / mf;
            let column = &mut values[x * m..(x + 1) * m];
            // Two passes: exact for near-equal probabilities, where E[p²] - E[p]² cancels.
            let var = column.iter().map(|p| (p - mean) * (p - mean)).sum::<f64>() / mf;
            let k = votes[x];
            let aleatoric = entropy[x] / mf;
            let predictive = entropy_bits(mean);
            let iqr = interquartile_range(column);
            let stats = [
                mean,
                k,
                (2.0 * k - mf).abs() / mf,
                2.0 * k * (mf - k) / (mf * (mf - 1.0)),
                var,
                var.sqrt(),
                aleatoric,
                predictive,
                // Jensen: the entropy of the mean is at least the mean entropy, up to rounding.
                (predictive - aleatoric).max(0.0),
                iqr,
            ];
            for (row, value) in rows.iter_mut().zip(stats) {
                row[x] = value;
            }
        }
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(proba: &[f64], m: usize, n: usize, t: f64, x: usize) -> [f64; 4] {
        let p: Vec<f64> = (0..m).map(|i| proba[i * n + x]).collect();
        let labels: Vec<bool> = p.iter().map(|&v| v > t).collect();
        let mut disagree = 0.0;
        let mut pairs = 0.0;
        for i in 0..m {
            for j in i + 1..m {
                pairs += 1.0;
                disagree += f64::from(u8::from(labels[i] != labels[j]));
            }
        }
        let mean = p.iter().sum::<f64>() / m as f64;
        let var = p.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / m as f64;
        let mut sorted = p.clone();
        sorted.sort_by(f64::total_cmp);
        let q = |q: f64| {
            let h = (m - 1) as f64 * q;
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(m - 1);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        };
        [disagree / pairs, var, q(0.75) - q(0.25), mean]
    }

    #[test]
    fn matches_brute_force_including_ties_and_two_models() {
        for &(m, n) in &[(2usize, 7usize), (5, 3000), (11, 5)] {
            let mut state = 12345u64;
            let mut next = || {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Many exact ties at the threshold and at 0 and 1.
                match (state >> 33) % 7 {
                    0 => 0.5,
                    1 => 0.0,
                    2 => 1.0,
                    _ => ((state >> 11) as f64) / (1u64 << 53) as f64,
                }
            };
            let proba: Vec<f64> = (0..m * n).map(|_| next()).collect();
            let s = ensemble_stats(&proba, m, n, 0.5).unwrap();
            let row = |name: &str| {
                let r = STATISTICS.iter().position(|s| *s == name).unwrap();
                &s[r * n..(r + 1) * n]
            };
            for x in 0..n {
                let [jitter, var, iqr, mean] = brute_force(&proba, m, n, 0.5, x);
                assert!((row("jitter")[x] - jitter).abs() < 1e-12, "jitter at {x}");
                assert!((row("epistemic")[x] - var).abs() < 1e-12);
                assert!((row("iqr")[x] - iqr).abs() < 1e-12, "iqr at {x}");
                assert!((row("mean")[x] - mean).abs() < 1e-12);
                assert!(row("mutual_information")[x] >= 0.0);
            }
        }
    }

    #[test]
    fn fast_logarithm_is_accurate() {
        let mut x: f64 = 1e-300;
        while x < 1.0 {
            for v in [x, 1.0 - x, x * 0.70, x * 1.45] {
                if v > 0.0 && v <= 1.0 {
                    let exact = v * v.ln();
                    let ours = x_ln_x(v);
                    assert!(
                        (ours - exact).abs() <= 4.0 * f64::EPSILON * exact.abs(),
                        "{v}"
                    );
                }
            }
            x *= 1.37;
        }
        assert_eq!(x_ln_x(0.0), 0.0);
        assert_eq!(x_ln_x(1.0), 0.0);
        assert_eq!(x_ln_x(1e-320), 0.0);
    }

    #[test]
    fn entropy_in_bits() {
        assert_eq!(entropy_bits(0.5), 1.0);
        assert_eq!(entropy_bits(0.0), 0.0);
        assert_eq!(entropy_bits(1.0), 0.0);
        assert!((entropy_bits(0.1) - 0.468_995_593_589_281_2).abs() < 1e-15);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(ensemble_stats(&[0.5; 3], 1, 3, 0.5).is_err());
        assert!(ensemble_stats(&[0.5; 3], 2, 2, 0.5).is_err());
        assert!(ensemble_stats(&[0.5, 1.5], 2, 1, 0.5).is_err());
        assert!(ensemble_stats(&[0.5, f64::NAN], 2, 1, 0.5).is_err());
    }
}
