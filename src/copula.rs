//! Joining independently drawn marginals into one joint sample with a given correlation.
//!
//! Some posteriors are cheap to draw one quantity at a time but expensive jointly: the K
//! one-vs-rest AUCs of a multiclass model each take O(bins) per draw from their own binned
//! bootstrap, while the joint per-row bootstrap costs O(rows × K). [`join`] keeps each
//! quantity's draws exactly (the same values, so the same marginal posterior) and only
//! reorders them across draws, so that the draws' ranks follow a Gaussian copula with the
//! requested correlation — the method of Iman & Conover (1982), here with fresh normal vectors
//! rather than a fixed score matrix.

use crate::parallel;
use crate::posterior::{alloc_output, check_draws};
use crate::rng::{BLOCK, stream};
use crate::sampling::Sampler;
use crate::{Error, Result};

/// Reorder each row of `draws` (row-major, `n_vars` rows of `n_draws` values) in place so that
/// draw d of every row takes the rank, within its row, that coordinate v of the normal vector
/// z_d = L g_d has among z_1..z_n (g_d ~ N(0, I) from `seed`, L Lᵀ = `correlation`).
///
/// `correlation` is `n_vars` × `n_vars`, symmetric, positive semi-definite with unit
/// diagonal; a singular one (perfectly dependent quantities) is allowed and gives identical
/// ranks. Each row keeps its multiset of values, so every marginal is unchanged; results do
/// not depend on the number of threads.
pub fn join(
    draws: &mut [f64],
    n_vars: usize,
    n_draws: usize,
    correlation: &[f64],
    seed: u64,
) -> Result<()> {
    if draws.len() != n_vars * n_draws || correlation.len() != n_vars * n_vars {
        return Err(Error::invalid(
            "draws must be n_vars x n_draws and the correlation n_vars x n_vars",
        ));
    }
    check_draws(n_draws, n_vars)?;
    if n_vars < 2 {
        return Ok(());
    }
    let factor = semidefinite_cholesky(correlation, n_vars)?;
    // Normal vectors, variable-major like `draws`, generated in blocks of draws so that block
    // b always gets stream (seed, b).
    let mut z = alloc_output(n_vars * n_draws)?;
    let mut by_draw = alloc_output(n_vars * n_draws)?;
    parallel::for_each_chunk(&mut by_draw, n_vars * BLOCK, |block, chunk| {
        let mut s = Sampler::new(stream(seed, block as u64));
        let mut g = vec![0.0; n_vars];
        for vector in chunk.chunks_exact_mut(n_vars) {
            g.iter_mut().for_each(|x| *x = s.normal());
            for (v, out) in vector.iter_mut().enumerate() {
                let row = &factor[v * n_vars..=v * n_vars + v];
                *out = row.iter().zip(&g).map(|(l, x)| l * x).sum();
            }
        }
        Ok(())
    })?;
    for (d, vector) in by_draw.chunks_exact(n_vars).enumerate() {
        for (v, &x) in vector.iter().enumerate() {
            z[v * n_draws + d] = x;
        }
    }
    parallel::for_each_chunk(draws, n_draws, |v, row| {
        let scores = &z[v * n_draws..(v + 1) * n_draws];
        let mut order: Vec<usize> = (0..n_draws).collect();
        order.sort_unstable_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(a.cmp(&b)));
        let mut values = row.to_vec();
        values.sort_unstable_by(f64::total_cmp);
        for (&d, &value) in order.iter().zip(&values) {
            row[d] = value;
        }
        Ok(())
    })
}

/// Lower-triangular L (row-major) with L Lᵀ = `matrix` for a positive semi-definite matrix:
/// a pivot that rounding leaves at or below 1e-12 of its diagonal is a dependent direction,
/// and its column is set to zero instead of dividing by (nearly) nothing.
fn semidefinite_cholesky(matrix: &[f64], n: usize) -> Result<Vec<f64>> {
    for i in 0..n {
        for j in 0..i {
            let (a, b) = (matrix[i * n + j], matrix[j * n + i]);
            if !(a.is_finite() && (a - b).abs() <= 1e-12 * (1.0 + a.abs())) {
                return Err(Error::invalid("correlation must be finite and symmetric"));
            }
        }
        if !(matrix[i * n + i] > 0.0 && matrix[i * n + i].is_finite()) {
            return Err(Error::invalid(
                "correlation must have a positive finite diagonal",
            ));
        }
    }
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let diagonal = matrix[j * n + j];
        let pivot = diagonal - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
        if pivot < -1e-8 * diagonal {
            return Err(Error::invalid("correlation must be positive semi-definite"));
        }
        if pivot <= 1e-12 * diagonal {
            continue;
        }
        let root = pivot.sqrt();
        l[j * n + j] = root;
        for i in j + 1..n {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            l[i * n + j] = (matrix[i * n + j] - dot) / root;
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pearson(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
        cov / (va * vb).sqrt()
    }

    #[test]
    fn cholesky_reproduces_the_matrix_and_tolerates_rank_deficiency() {
        // Rank 2: the third variable is the first.
        let m = [1.0, 0.3, 1.0, 0.3, 1.0, 0.3, 1.0, 0.3, 1.0];
        let l = semidefinite_cholesky(&m, 3).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let product: f64 = (0..3).map(|k| l[i * 3 + k] * l[j * 3 + k]).sum();
                assert!((product - m[i * 3 + j]).abs() < 1e-12, "{i} {j} {product}");
            }
        }
        assert_eq!(l[2 * 3 + 2], 0.0);
        let not_psd = [1.0, 0.9, 0.0, 0.9, 1.0, 0.9, 0.0, 0.9, 1.0];
        assert!(semidefinite_cholesky(&not_psd, 3).is_err());
    }

    #[test]
    fn join_keeps_marginals_reaches_the_correlation_and_ignores_threads() {
        let n = 20_000;
        // Two independent skewed marginals: exponential-like values in two rows.
        let mut s = Sampler::new(stream(5, 0));
        let original: Vec<f64> = (0..2 * n).map(|_| s.exponential()).collect();
        let rho = 0.6;
        let correlation = [1.0, rho, rho, 1.0];
        let run = |threads: usize| {
            let mut draws = original.clone();
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| join(&mut draws, 2, n, &correlation, 9).unwrap());
            draws
        };
        let (one, two) = (run(1), run(2));
        assert!(one == two, "thread count changed the result");
        for v in 0..2 {
            let (mut before, mut after) = (
                original[v * n..(v + 1) * n].to_vec(),
                one[v * n..(v + 1) * n].to_vec(),
            );
            before.sort_unstable_by(f64::total_cmp);
            after.sort_unstable_by(f64::total_cmp);
            assert!(before == after, "marginal {v} changed");
        }
        // Spearman correlation of a Gaussian copula: (6/π) asin(ρ/2); sd of the estimate
        // ~ 1/sqrt(n) = 0.007.
        let ranks = |row: &[f64]| {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_unstable_by(|&a, &b| row[a].total_cmp(&row[b]));
            let mut rank = vec![0.0; n];
            for (r, &d) in order.iter().enumerate() {
                rank[d] = r as f64;
            }
            rank
        };
        let spearman = pearson(&ranks(&one[..n]), &ranks(&one[n..]));
        let expected = 6.0 / std::f64::consts::PI * (rho / 2.0).asin();
        assert!(
            (spearman - expected).abs() < 0.03,
            "{spearman} vs {expected}"
        );
    }
}
