//! Distributions and sample summaries behind `probeval.base`: exact Beta and F1 laws, Beta and
//! Dirichlet draws, HDI/ETI/quantiles of samples, the KDE's binning, and stream seeds.

use super::convert::{flat, map_values, run, shaped};
use crate::{f1, posterior, rng, special, summary};
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// Seed of sub-task `key` of the task seeded with `seed` (hierarchical stream splitting).
#[pyfunction]
pub(super) fn derive_seed(seed: u64, key: u64) -> u64 {
    rng::fork(seed, key)
}

/// Draws of Beta(a, b) as Ga / (Ga + Gb).
#[pyfunction]
pub(super) fn beta_draws<'py>(
    py: Python<'py>,
    a: f64,
    b: f64,
    n_samples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let out = run(py, || posterior::beta_draws(a, b, n_samples, seed))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Normalised Dirichlet(alpha) draws; shape (n, len(alpha)).
#[pyfunction]
pub(super) fn dirichlet_draws<'py>(
    py: Python<'py>,
    alpha: PyReadonlyArray1<'py, f64>,
    n_samples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let alpha = flat(&alpha);
    let out = run(py, || posterior::dirichlet_draws(&alpha, n_samples, seed))?;
    shaped(py, out, [n_samples, alpha.len()])
}

/// Log-likelihood of (cells, K) `counts` whose shares scatter around the (cells, K) `shares` as
/// Dirichlet(A × shares), for each precision A (the multinomial coefficients left out).
#[pyfunction]
pub(super) fn dirichlet_multinomial_log_likelihood<'py>(
    py: Python<'py>,
    counts: PyReadonlyArray2<'py, f64>,
    shares: PyReadonlyArray2<'py, f64>,
    precisions: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let k = counts.shape()[1];
    if shares.shape() != counts.shape() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "counts and shares must have the same shape, got {:?} and {:?}",
            counts.shape(),
            shares.shape()
        )));
    }
    let (counts, shares, precisions) = (flat(&counts), flat(&shares), flat(&precisions));
    let out = run(py, || {
        special::dirichlet_multinomial_ln_grid(&counts, &shares, k, &precisions)
    })?;
    Ok(PyArray1::from_vec(py, out))
}

/// `f` of each element of `x`, elementwise and in parallel for long inputs.
fn elementwise<'py>(
    py: Python<'py>,
    x: &PyReadonlyArray1<'py, f64>,
    f: impl Fn(f64) -> crate::Result<f64> + Sync + Send,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let x = flat(x);
    let out = run(py, || map_values(&x, f))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Beta(a, b) cumulative distribution function P[X <= x], elementwise.
#[pyfunction]
pub(super) fn beta_cdf<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    elementwise(py, &x, |v| Ok(special::beta_cdf(v, a, b)?.0))
}

/// Beta(a, b) survival function P[X > x], elementwise (no cancellation in the upper tail).
#[pyfunction]
pub(super) fn beta_sf<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    elementwise(py, &x, |v| Ok(special::beta_cdf(v, a, b)?.1))
}

/// Beta(a, b) density, elementwise.
#[pyfunction]
pub(super) fn beta_pdf<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    elementwise(py, &x, |v| special::beta_pdf(v, a, b))
}

/// Beta(a, b) lower quantiles, elementwise.
#[pyfunction]
pub(super) fn beta_ppf<'py>(
    py: Python<'py>,
    q: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    elementwise(py, &q, |v| special::beta_ppf(v, a, b))
}

/// Beta(a, b) upper quantiles (x with P[X > x] = q), elementwise.
#[pyfunction]
pub(super) fn beta_isf<'py>(
    py: Python<'py>,
    q: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    elementwise(py, &q, |v| special::beta_isf(v, a, b))
}

/// Exact highest-density interval of Beta(a, b).
#[pyfunction]
pub(super) fn beta_hdi(py: Python<'_>, a: f64, b: f64, ci: f64) -> PyResult<(f64, f64)> {
    run(py, || special::beta_hdi(a, b, ci))
}

/// Exact equal-tailed interval of Beta(a, b).
#[pyfunction]
pub(super) fn beta_eti(py: Python<'_>, a: f64, b: f64, ci: f64) -> PyResult<(f64, f64)> {
    run(py, || special::beta_eti(a, b, ci))
}

/// Mode of Beta(a, b).
#[pyfunction]
pub(super) fn beta_mode(py: Python<'_>, a: f64, b: f64) -> PyResult<f64> {
    run(py, || special::beta_mode(a, b))
}

/// Mean and variance of F1 = 2J/(1+J) for J ~ Beta(a, b), a, b >= 1.
#[pyfunction]
pub(super) fn f1_mean_var(py: Python<'_>, a: f64, b: f64) -> PyResult<(f64, f64)> {
    run(py, || f1::f1_mean_var(a, b))
}

/// Mode of F1 = 2J/(1+J) for J ~ Beta(a, b), a, b >= 1.
#[pyfunction]
pub(super) fn f1_mode(py: Python<'_>, a: f64, b: f64) -> PyResult<f64> {
    run(py, || f1::f1_mode(a, b))
}

/// Exact highest-density interval of F1 = 2J/(1+J) for J ~ Beta(a, b), a, b >= 1.
#[pyfunction]
pub(super) fn f1_hdi(py: Python<'_>, a: f64, b: f64, ci: f64) -> PyResult<(f64, f64)> {
    run(py, || f1::f1_hdi(a, b, ci))
}

/// HDI of samples: the shortest window of ceil(ci * n) order statistics, leftmost on ties.
#[pyfunction]
pub(super) fn sample_hdi(
    py: Python<'_>,
    samples: PyReadonlyArray1<'_, f64>,
    ci: f64,
) -> PyResult<(f64, f64)> {
    let samples = flat(&samples);
    run(py, || summary::hdi(&samples, ci))
}

/// Equal-tailed interval of samples (numpy's linear quantile interpolation).
#[pyfunction]
pub(super) fn sample_eti(
    py: Python<'_>,
    samples: PyReadonlyArray1<'_, f64>,
    ci: f64,
) -> PyResult<(f64, f64)> {
    let samples = flat(&samples);
    run(py, || summary::eti(&samples, ci))
}

/// (mean, std, median, hdi_low, hdi_high) of samples in one pass over one key buffer.
#[pyfunction]
pub(super) fn sample_summary(
    py: Python<'_>,
    samples: PyReadonlyArray1<'_, f64>,
    ci: f64,
) -> PyResult<(f64, f64, f64, f64, f64)> {
    let samples = flat(&samples);
    let s = run(py, || summary::summarize(&samples, ci))?;
    Ok((s.mean, s.std, s.median, s.hdi.0, s.hdi.1))
}

/// Quantiles of samples with numpy's linear interpolation, by selection (no full sort).
#[pyfunction]
pub(super) fn sample_quantiles<'py>(
    py: Python<'py>,
    samples: PyReadonlyArray1<'py, f64>,
    q: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (samples, q) = (flat(&samples), flat(&q));
    let out = run(py, || summary::quantiles(&samples, &q))?;
    Ok(PyArray1::from_vec(py, out))
}

/// (min, max, mean, std with ddof=1) of finite samples, overflow-safe.
#[pyfunction]
pub(super) fn sample_moments(
    py: Python<'_>,
    samples: PyReadonlyArray1<'_, f64>,
) -> PyResult<(f64, f64, f64, f64)> {
    let samples = flat(&samples);
    run(py, || summary::moments(&samples))
}

/// Linear binning of values onto the grid low + i * step, i = 0..m (for the KDE).
#[pyfunction]
pub(super) fn linear_binning<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    low: f64,
    step: f64,
    m: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let values = flat(&values);
    let out = run(py, || summary::linear_binning(&values, low, step, m))?;
    Ok(PyArray1::from_vec(py, out))
}
