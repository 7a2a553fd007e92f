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
    let (order, factor) = semidefinite_cholesky(correlation, n_vars)?;
    // Normal vectors, variable-major like `draws`, generated in blocks of draws so that block
    // b always gets stream (seed, b).
    let mut z = alloc_output(n_vars * n_draws)?;
    let mut by_draw = alloc_output(n_vars * n_draws)?;
    parallel::for_each_chunk(&mut by_draw, n_vars * BLOCK, |block, chunk| {
        let mut s = Sampler::new(stream(seed, block as u64));
        let mut g = vec![0.0; n_vars];
        for vector in chunk.chunks_exact_mut(n_vars) {
            g.iter_mut().for_each(|x| *x = s.normal());
            for (i, &v) in order.iter().enumerate() {
                let row = &factor[i * n_vars..=i * n_vars + i];
                vector[v] = row.iter().zip(&g).map(|(l, x)| l * x).sum();
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

/// A factor of a positive semi-definite matrix: the variables' `order` and a lower-triangular L
/// (row-major, rows and columns in that order) with L Lᵀ = `matrix` taken in that order, so
/// that variable `order[i]` of L g is row i of L times g.
///
/// First without pivoting (the order as given), which reproduces the matrix exactly when it
/// is positive semi-definite as stored. The correlations the multiclass kernels measure are
/// so in exact arithmetic, but one with nearly dependent quantities can come out of rounding
/// badly conditioned — a class held by a single row of tiny weight left a pivot of ~1e-11,
/// whose reciprocal drove the next one to −5e-6 — and then the factor is taken with pivoting
/// (the largest remaining diagonal first, so every multiplier stays within ±1 and rounding
/// does not grow; on that matrix L Lᵀ is exact to 1e-12).
fn semidefinite_cholesky(matrix: &[f64], n: usize) -> Result<(Vec<usize>, Vec<f64>)> {
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
    lower_factor(matrix, n, false)
        .or_else(|| lower_factor(matrix, n, true))
        .ok_or_else(|| Error::invalid("correlation must be positive semi-definite"))
}

/// [`semidefinite_cholesky`]'s factor, with or without pivoting; None when a pivot is
/// negative beyond rounding (below −1e-8 of its diagonal). A pivot that rounding leaves at or
/// below 1e-12 of its diagonal is a dependent direction: its column is set to zero instead of
/// dividing by (nearly) nothing.
fn lower_factor(matrix: &[f64], n: usize, pivoting: bool) -> Option<(Vec<usize>, Vec<f64>)> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut l = vec![0.0; n * n];
    // Row i's diagonal and what is left of it after the first j columns.
    let remaining = |l: &[f64], order: &[usize], i: usize, j: usize| {
        let diagonal = matrix[order[i] * n + order[i]];
        let used: f64 = (0..j).map(|k| l[i * n + k] * l[i * n + k]).sum();
        (diagonal, diagonal - used)
    };
    for j in 0..n {
        if pivoting {
            // The first of the largest remaining pivots, relative to their diagonals.
            let relative = |i: usize| {
                let (diagonal, pivot) = remaining(&l, &order, i, j);
                pivot / diagonal
            };
            let best = (j + 1..n).fold(j, |best, i| {
                if relative(i) > relative(best) {
                    i
                } else {
                    best
                }
            });
            if best != j {
                order.swap(j, best);
                for k in 0..j {
                    l.swap(j * n + k, best * n + k);
                }
            }
        }
        let (diagonal, pivot) = remaining(&l, &order, j, j);
        if pivot < -1e-8 * diagonal {
            return None;
        }
        if pivot <= 1e-12 * diagonal {
            continue;
        }
        let root = pivot.sqrt();
        l[j * n + j] = root;
        for i in j + 1..n {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            l[i * n + j] = (matrix[order[i] * n + order[j]] - dot) / root;
        }
    }
    Some((order, l))
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
        let (order, l) = semidefinite_cholesky(&m, 3).unwrap();
        assert_eq!(order, [0, 1, 2]);
        assert_reproduces(&m, 3, &order, &l, 1e-12);
        assert_eq!(l[2 * 3 + 2], 0.0);
        let not_psd = [1.0, 0.9, 0.0, 0.9, 1.0, 0.9, 0.0, 0.9, 1.0];
        assert!(semidefinite_cholesky(&not_psd, 3).is_err());
    }

    /// L Lᵀ against the matrix taken in the factor's order.
    fn assert_reproduces(m: &[f64], n: usize, order: &[usize], l: &[f64], tolerance: f64) {
        for i in 0..n {
            for j in 0..n {
                let product: f64 = (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum();
                let want = m[order[i] * n + order[j]];
                assert!(
                    (product - want).abs() < tolerance,
                    "{i} {j} {product} {want}"
                );
            }
        }
    }

    #[test]
    fn a_nearly_singular_correlation_is_factored_with_pivoting() {
        // The influence correlations (AUC, ln class total, AP of three classes) of a weighted
        // sample whose class 2 is one row of weight 2.5e-10 (found by hypothesis): positive
        // semi-definite, but without pivoting a pivot of ~1e-11 leaves the next one at -5.4e-6.
        #[rustfmt::skip]
        let m = [
            1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            0.0, 1.0, 0.8017837257429338, -1.2708478713011222e-10, 0.0, 1.1273184811324302e-5, -1.7050208256092413e-10, 0.0, 1.1273184811642668e-5,
            0.0, 0.8017837257429338, 1.0, -0.4454354031873743, 0.3984095364447977, -3.553312089842798e-11, -0.5976143046536948, 0.5976143046461005, -3.553312089517003e-11,
            0.0, -1.2708478713011222e-10, -0.4454354031873743, 1.0, 0.0, 0.0, 0.7453559925167696, -0.7453559924315185, -5.010304361402179e-6,
            0.0, 0.0, 0.3984095364447977, 0.0, 1.0, 0.0, -0.6666666666139499, 0.6666666666902007, -5.601690570029473e-6,
            0.0, 1.1273184811324302e-5, -3.553312089842798e-11, 0.0, 0.0, 1.0, -6.7220286836936625e-6, -8.402535854510297e-6, 0.9999999999717591,
            0.0, -1.7050208256092413e-10, -0.5976143046536948, 0.7453559925167696, -0.6666666666139499, -6.7220286836936625e-6, 1.0, -0.9999999998856237, -6.722028683883501e-6,
            0.0, 0.0, 0.5976143046461005, -0.7453559924315185, 0.6666666666902007, -8.402535854510297e-6, -0.9999999998856237, 1.0, -8.40253585474759e-6,
            0.0, 1.1273184811642668e-5, -3.553312089517003e-11, -5.010304361402179e-6, -5.601690570029473e-6, 0.9999999999717591, -6.722028683883501e-6, -8.40253585474759e-6, 1.0,
        ];
        assert!(lower_factor(&m, 9, false).is_none());
        let (order, l) = semidefinite_cholesky(&m, 9).unwrap();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..9).collect::<Vec<_>>());
        // The matrix is positive semi-definite as stored: the pivoted factor reproduces it.
        assert_reproduces(&m, 9, &order, &l, 1e-12);
        assert!(l.iter().all(|x| x.is_finite() && x.abs() <= 1.0 + 1e-12));
        // And join with it keeps every marginal.
        let n = 64;
        let mut draws: Vec<f64> = (0..9 * n).map(|i| i as f64).collect();
        join(&mut draws, 9, n, &m, 1).unwrap();
        for v in 0..9 {
            let mut row = draws[v * n..(v + 1) * n].to_vec();
            row.sort_unstable_by(f64::total_cmp);
            assert!(
                row.iter()
                    .enumerate()
                    .all(|(d, &x)| x == (v * n + d) as f64)
            );
        }
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
