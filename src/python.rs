//! The Python binding `probeval._core` — the only file that imports pyo3 and numpy.
//!
//! Every function here is a thin wrapper: extract the arguments (borrowing numpy buffers when
//! they are contiguous float64), release the GIL around the core call (`py.detach`), turn a
//! core [`Error`](crate::Error) into `ValueError`, and catch any panic so that a bug surfaces
//! as `RuntimeError` instead of aborting the interpreter. User-facing validation with friendly
//! messages happens earlier, in `probeval/_validation.py`; the checks below are the last line.

use crate::metrics::{self, Cells, Metric, MulticlassMetric};
use crate::{
    auc, audit, binning, ensemble, f1, labelfree, posterior, rng, segments, special, summary,
};
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Run `f` without the GIL; map core errors to ValueError and panics to RuntimeError.
fn run<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> crate::Result<T> + Send,
    T: Send,
{
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(PyValueError::new_err(error.to_string())),
        Err(_) => Err(PyRuntimeError::new_err(
            "internal error in probeval's Rust core (this is a bug; please report it)",
        )),
    }
}

/// Borrow a contiguous array, or copy a strided one.
fn slice<'a>(array: &'a PyReadonlyArray1<'_, f64>) -> Cow<'a, [f64]> {
    match array.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}

fn parse_metrics(names: &[String], beta: f64) -> PyResult<Vec<Metric>> {
    metrics::parse_metrics(names, beta).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Apply `f` elementwise, in parallel for long inputs (order of results is preserved).
fn map_values(
    values: &[f64],
    f: impl Fn(f64) -> crate::Result<f64> + Sync,
) -> crate::Result<Vec<f64>> {
    if values.len() > 4096 {
        values.par_iter().map(|&v| f(v)).collect()
    } else {
        values.iter().map(|&v| f(v)).collect()
    }
}

/// Seed of sub-task `key` of the task seeded with `seed` (hierarchical stream splitting).
#[pyfunction]
fn derive_seed(seed: u64, key: u64) -> u64 {
    rng::fork(seed, key)
}

/// Canonical names of the binary metrics the kernels understand.
#[pyfunction]
fn binary_metric_names() -> Vec<&'static str> {
    metrics::BINARY_METRIC_NAMES.to_vec()
}

/// Point values of binary metrics on counts (tp, fp, tn, fn).
#[pyfunction]
#[pyo3(signature = (cells, metrics, beta = 1.0, zero_division = 0.0))]
fn binary_metric_values(
    py: Python<'_>,
    cells: (f64, f64, f64, f64),
    metrics: Vec<String>,
    beta: f64,
    zero_division: f64,
) -> PyResult<Vec<f64>> {
    let parsed = parse_metrics(&metrics, beta)?;
    let c = Cells::new(cells.0, cells.1, cells.2, cells.3);
    run(py, || Ok(metrics::evaluate(&c, &parsed, zero_division)))
}

/// Metric draws from p ~ Dirichlet(alpha), alpha = (tp, fp, tn, fn) + prior; shape (metrics, n).
#[pyfunction]
#[pyo3(signature = (alpha, metrics, n_samples, seed, beta = 1.0, zero_division = 0.0))]
fn binary_metric_draws<'py>(
    py: Python<'py>,
    alpha: (f64, f64, f64, f64),
    metrics: Vec<String>,
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let parsed = parse_metrics(&metrics, beta)?;
    let alpha = [alpha.0, alpha.1, alpha.2, alpha.3];
    let out = run(py, || {
        posterior::binary_metric_draws(alpha, &parsed, n_samples, seed, zero_division)
    })?;
    PyArray1::from_vec(py, out).reshape([parsed.len(), n_samples])
}

/// Parse multiclass metric specifications (name, average, class index).
fn parse_multiclass(
    specs: &[(String, String, usize)],
    beta: f64,
    k: usize,
) -> PyResult<Vec<MulticlassMetric>> {
    specs
        .iter()
        .map(|(name, average, class)| MulticlassMetric::from_parts(name, average, *class, beta, k))
        .collect::<crate::Result<Vec<_>>>()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn square_matrix<'a>(counts: &'a PyReadonlyArray2<'_, f64>) -> PyResult<(Cow<'a, [f64]>, usize)> {
    let shape = counts.shape();
    if shape.len() != 2 || shape[0] != shape[1] {
        return Err(PyValueError::new_err(format!(
            "expected a square matrix, got shape {shape:?}"
        )));
    }
    let values = match counts.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(counts.as_array().iter().copied().collect()),
    };
    Ok((values, shape[0]))
}

/// Point values of multiclass metrics on a K x K count matrix (rows = true class).
#[pyfunction]
#[pyo3(signature = (counts, metrics, beta = 1.0, zero_division = 0.0))]
fn multiclass_metric_values(
    py: Python<'_>,
    counts: PyReadonlyArray2<'_, f64>,
    metrics: Vec<(String, String, usize)>,
    beta: f64,
    zero_division: f64,
) -> PyResult<Vec<f64>> {
    let (values, k) = square_matrix(&counts)?;
    let parsed = parse_multiclass(&metrics, beta, k)?;
    run(py, || {
        Ok(metrics::evaluate_multiclass(
            &values,
            k,
            &parsed,
            zero_division,
        ))
    })
}

/// Multiclass metric draws from p ~ Dirichlet(alpha) over K x K cells; shape (metrics, n).
/// `data` (the observed counts) decides which classes each average counts.
#[pyfunction]
#[pyo3(signature = (alpha, data, metrics, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
fn multiclass_metric_draws<'py>(
    py: Python<'py>,
    alpha: PyReadonlyArray2<'py, f64>,
    data: PyReadonlyArray2<'py, f64>,
    metrics: Vec<(String, String, usize)>,
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (values, k) = square_matrix(&alpha)?;
    let (observed, _) = square_matrix(&data)?;
    let parsed = parse_multiclass(&metrics, beta, k)?;
    let out = run(py, || {
        posterior::multiclass_metric_draws(
            &values,
            &observed,
            k,
            &parsed,
            n_samples,
            seed,
            zero_division,
        )
    })?;
    PyArray1::from_vec(py, out).reshape([parsed.len(), n_samples])
}

/// Paired draws of one metric for two models scored on the same rows; shape (2, n).
/// `alpha` is the K x K x K joint table (truth, prediction A, prediction B) plus prior;
/// `data` holds the observed joint counts (same shape);
/// `metric` is ("binary", name, "", 0) or ("multiclass", name, average, class).
#[pyfunction]
#[pyo3(signature = (alpha, data, metric, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
fn paired_metric_draws<'py>(
    py: Python<'py>,
    alpha: PyReadonlyArray3<'py, f64>,
    data: PyReadonlyArray3<'py, f64>,
    metric: (String, String, String, usize),
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let shape = alpha.shape();
    let k = shape[0];
    if shape[1] != k || shape[2] != k {
        return Err(PyValueError::new_err(format!(
            "alpha must be K x K x K, got {shape:?}"
        )));
    }
    if data.shape() != shape {
        return Err(PyValueError::new_err(format!(
            "data must have the shape of alpha {shape:?}, got {:?}",
            data.shape()
        )));
    }
    let values: Cow<'_, [f64]> = match alpha.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(alpha.as_array().iter().copied().collect()),
    };
    let observed: Cow<'_, [f64]> = match data.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(data.as_array().iter().copied().collect()),
    };
    let (kernel, name, average, class) = metric;
    let parsed = match kernel.as_str() {
        "binary" => Metric::from_name(&name, beta).map(posterior::PairedMetric::Binary),
        "multiclass" => MulticlassMetric::from_parts(&name, &average, class, beta, k)
            .map(posterior::PairedMetric::Multiclass),
        other => Err(crate::Error::invalid(format!("unknown kernel {other:?}"))),
    }
    .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let out = run(py, || {
        posterior::paired_metric_draws(
            &values,
            &observed,
            k,
            parsed,
            n_samples,
            seed,
            zero_division,
        )
    })?;
    PyArray1::from_vec(py, out).reshape([2, n_samples])
}

fn u32_slice<'a>(array: &'a PyReadonlyArray1<'_, u32>) -> Cow<'a, [u32]> {
    match array.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}

fn bool_slice<'a>(array: &'a PyReadonlyArray1<'_, bool>) -> Cow<'a, [bool]> {
    match array.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}

type Unique<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

fn unique_to_py<'py>(py: Python<'py>, u: binning::UniqueScores) -> Unique<'py> {
    (
        PyArray1::from_vec(py, u.values),
        PyArray1::from_vec(py, u.pos),
        PyArray1::from_vec(py, u.neg),
    )
}

/// Collapse scores to (distinct values ascending, positive weight, negative weight).
#[pyfunction]
#[pyo3(signature = (scores, positive, weights = None))]
fn unique_scores<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    positive: PyReadonlyArray1<'py, bool>,
    weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Unique<'py>> {
    let scores = slice(&scores);
    let positive = bool_slice(&positive);
    let weights = weights.as_ref().map(slice);
    let u = run(py, || {
        binning::unique_scores(&scores, &positive, weights.as_deref())
    })?;
    Ok(unique_to_py(py, u))
}

/// Group distinct scores into at most max_bins equal-frequency bins (ties never split).
#[pyfunction]
fn equal_frequency_bins<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    pos: PyReadonlyArray1<'py, f64>,
    neg: PyReadonlyArray1<'py, f64>,
    max_bins: usize,
) -> PyResult<Unique<'py>> {
    let u = binning::UniqueScores {
        values: slice(&values).into_owned(),
        pos: slice(&pos).into_owned(),
        neg: slice(&neg).into_owned(),
    };
    let b = run(py, || binning::equal_frequency(&u, max_bins))?;
    Ok(unique_to_py(py, b))
}

/// Point (ROC AUC, average precision) of bins in ascending score order.
#[pyfunction]
fn auc_point(
    py: Python<'_>,
    pos: PyReadonlyArray1<'_, f64>,
    neg: PyReadonlyArray1<'_, f64>,
) -> PyResult<(f64, f64)> {
    let (pos, neg) = (slice(&pos), slice(&neg));
    run(py, || auc::point_values(&pos, &neg))
}

/// Binned Bayesian-bootstrap draws of (AUC, AP) rows, as requested.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn auc_draws<'py>(
    py: Python<'py>,
    pos: PyReadonlyArray1<'py, f64>,
    neg: PyReadonlyArray1<'py, f64>,
    prior: f64,
    n_samples: usize,
    seed: u64,
    want_auc: bool,
    want_ap: bool,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (pos, neg) = (slice(&pos), slice(&neg));
    let rows = usize::from(want_auc) + usize::from(want_ap);
    let out = run(py, || {
        auc::binned_draws(&pos, &neg, prior, n_samples, seed, want_auc, want_ap)
    })?;
    PyArray1::from_vec(py, out).reshape([rows, n_samples])
}

/// Exact per-row Bayesian-bootstrap draws of (AUC, AP); shape (2, n).
#[pyfunction]
fn auc_draws_per_row<'py>(
    py: Python<'py>,
    bin_of: PyReadonlyArray1<'py, u32>,
    positive: PyReadonlyArray1<'py, bool>,
    weights: PyReadonlyArray1<'py, f64>,
    n_bins: usize,
    n_samples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (bin_of, positive, weights) = (u32_slice(&bin_of), bool_slice(&positive), slice(&weights));
    let out = run(py, || {
        auc::per_row_draws(&bin_of, &positive, &weights, n_bins, n_samples, seed)
    })?;
    PyArray1::from_vec(py, out).reshape([2, n_samples])
}

/// One-vs-rest AUC (then AP) draws with shared row weights; rows: classes, macro, weighted.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn multiclass_auc_draws<'py>(
    py: Python<'py>,
    bins: PyReadonlyArray2<'py, u32>,
    classes: PyReadonlyArray1<'py, u32>,
    weights: PyReadonlyArray1<'py, f64>,
    n_bins: Vec<usize>,
    n_samples: usize,
    seed: u64,
    want_ap: bool,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let bins: Cow<'_, [u32]> = match bins.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bins.as_array().iter().copied().collect()),
    };
    let (classes, weights) = (u32_slice(&classes), slice(&weights));
    let rows = (n_bins.len() + 2) * if want_ap { 2 } else { 1 };
    let out = run(py, || {
        auc::multiclass_draws(&bins, &classes, &weights, &n_bins, n_samples, seed, want_ap)
    })?;
    PyArray1::from_vec(py, out).reshape([rows, n_samples])
}

/// Draws of Beta(a, b) as Ga / (Ga + Gb).
#[pyfunction]
fn beta_draws<'py>(
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
fn dirichlet_draws<'py>(
    py: Python<'py>,
    alpha: PyReadonlyArray1<'py, f64>,
    n_samples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let alpha = slice(&alpha);
    let k = alpha.len();
    let out = run(py, || posterior::dirichlet_draws(&alpha, n_samples, seed))?;
    PyArray1::from_vec(py, out).reshape([n_samples, k])
}

/// Beta(a, b) cumulative distribution function P[X <= x], elementwise.
#[pyfunction]
fn beta_cdf<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let x = slice(&x);
    let out = run(py, || map_values(&x, |v| Ok(special::beta_cdf(v, a, b)?.0)))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Beta(a, b) survival function P[X > x], elementwise (no cancellation in the upper tail).
#[pyfunction]
fn beta_sf<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let x = slice(&x);
    let out = run(py, || map_values(&x, |v| Ok(special::beta_cdf(v, a, b)?.1)))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Beta(a, b) density, elementwise.
#[pyfunction]
fn beta_pdf<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let x = slice(&x);
    let out = run(py, || map_values(&x, |v| special::beta_pdf(v, a, b)))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Beta(a, b) lower quantiles, elementwise.
#[pyfunction]
fn beta_ppf<'py>(
    py: Python<'py>,
    q: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let q = slice(&q);
    let out = run(py, || map_values(&q, |v| special::beta_ppf(v, a, b)))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Beta(a, b) upper quantiles (x with P[X > x] = q), elementwise.
#[pyfunction]
fn beta_isf<'py>(
    py: Python<'py>,
    q: PyReadonlyArray1<'py, f64>,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let q = slice(&q);
    let out = run(py, || map_values(&q, |v| special::beta_isf(v, a, b)))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Exact highest-density interval of Beta(a, b).
#[pyfunction]
fn beta_hdi(py: Python<'_>, a: f64, b: f64, ci: f64) -> PyResult<(f64, f64)> {
    run(py, || special::beta_hdi(a, b, ci))
}

/// Exact equal-tailed interval of Beta(a, b).
#[pyfunction]
fn beta_eti(py: Python<'_>, a: f64, b: f64, ci: f64) -> PyResult<(f64, f64)> {
    run(py, || special::beta_eti(a, b, ci))
}

/// Mode of Beta(a, b).
#[pyfunction]
fn beta_mode(py: Python<'_>, a: f64, b: f64) -> PyResult<f64> {
    run(py, || special::beta_mode(a, b))
}

/// Mean and variance of F1 = 2J/(1+J) for J ~ Beta(a, b), a, b >= 1.
#[pyfunction]
fn f1_mean_var(py: Python<'_>, a: f64, b: f64) -> PyResult<(f64, f64)> {
    run(py, || f1::f1_mean_var(a, b))
}

/// Mode of F1 = 2J/(1+J) for J ~ Beta(a, b), a, b >= 1.
#[pyfunction]
fn f1_mode(py: Python<'_>, a: f64, b: f64) -> PyResult<f64> {
    run(py, || f1::f1_mode(a, b))
}

/// Exact highest-density interval of F1 = 2J/(1+J) for J ~ Beta(a, b), a, b >= 1.
#[pyfunction]
fn f1_hdi(py: Python<'_>, a: f64, b: f64, ci: f64) -> PyResult<(f64, f64)> {
    run(py, || f1::f1_hdi(a, b, ci))
}

/// HDI of samples: the shortest window of ceil(ci * n) order statistics, leftmost on ties.
#[pyfunction]
fn sample_hdi(py: Python<'_>, samples: PyReadonlyArray1<'_, f64>, ci: f64) -> PyResult<(f64, f64)> {
    let samples = slice(&samples);
    run(py, || summary::hdi(&samples, ci))
}

/// Equal-tailed interval of samples (numpy's linear quantile interpolation).
#[pyfunction]
fn sample_eti(py: Python<'_>, samples: PyReadonlyArray1<'_, f64>, ci: f64) -> PyResult<(f64, f64)> {
    let samples = slice(&samples);
    run(py, || summary::eti(&samples, ci))
}

/// (mean, std, median, hdi_low, hdi_high) of samples in one pass over one key buffer.
#[pyfunction]
fn sample_summary(
    py: Python<'_>,
    samples: PyReadonlyArray1<'_, f64>,
    ci: f64,
) -> PyResult<(f64, f64, f64, f64, f64)> {
    let samples = slice(&samples);
    let s = run(py, || summary::summarize(&samples, ci))?;
    Ok((s.mean, s.std, s.median, s.hdi.0, s.hdi.1))
}

/// Quantiles of samples with numpy's linear interpolation, by selection (no full sort).
#[pyfunction]
fn sample_quantiles<'py>(
    py: Python<'py>,
    samples: PyReadonlyArray1<'py, f64>,
    q: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let samples = slice(&samples);
    let q = slice(&q);
    let out = run(py, || summary::quantiles(&samples, &q))?;
    Ok(PyArray1::from_vec(py, out))
}

/// (min, max, mean, std with ddof=1) of finite samples, overflow-safe.
#[pyfunction]
fn sample_moments(
    py: Python<'_>,
    samples: PyReadonlyArray1<'_, f64>,
) -> PyResult<(f64, f64, f64, f64)> {
    let samples = slice(&samples);
    run(py, || summary::moments(&samples))
}

/// Linear binning of values onto the grid low + i * step, i = 0..m (for the KDE).
#[pyfunction]
fn linear_binning<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    low: f64,
    step: f64,
    m: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let values = slice(&values);
    let out = run(py, || summary::linear_binning(&values, low, step, m))?;
    Ok(PyArray1::from_vec(py, out))
}

// ---------------------------------------------------------------------------------------------
// Segments
// ---------------------------------------------------------------------------------------------

fn cells_of(cells: &PyReadonlyArray2<'_, f64>) -> PyResult<Vec<f64>> {
    if cells.shape()[1] != 4 {
        return Err(PyValueError::new_err(
            "cells must have shape (n_segments, 4): TP, FP, TN, FN",
        ));
    }
    Ok(cells.as_array().iter().copied().collect())
}

/// Per-segment confusion counts; shape (n_segments, k, k).
#[pyfunction]
#[pyo3(signature = (truth, predicted, segment, weights, n_segments, k))]
fn segment_counts<'py>(
    py: Python<'py>,
    truth: PyReadonlyArray1<'py, u32>,
    predicted: PyReadonlyArray1<'py, u32>,
    segment: PyReadonlyArray1<'py, u32>,
    weights: Option<PyReadonlyArray1<'py, f64>>,
    n_segments: usize,
    k: usize,
) -> PyResult<Bound<'py, numpy::PyArray3<f64>>> {
    let (truth, predicted, segment) = (
        u32_slice(&truth),
        u32_slice(&predicted),
        u32_slice(&segment),
    );
    let weights = weights.as_ref().map(slice);
    let out = run(py, || {
        segments::segment_counts(
            &truth,
            &predicted,
            &segment,
            weights.as_deref(),
            n_segments,
            k,
        )
    })?;
    PyArray1::from_vec(py, out).reshape([n_segments, k, k])
}

/// Sampled metric draws of every segment; shape (n_segments, metrics, n).
#[pyfunction]
#[pyo3(signature = (cells, alpha0, metrics, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
fn segment_draws<'py>(
    py: Python<'py>,
    cells: PyReadonlyArray2<'py, f64>,
    alpha0: [f64; 4],
    metrics: Vec<String>,
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, numpy::PyArray3<f64>>> {
    let values = cells_of(&cells)?;
    let parsed = parse_metrics(&metrics, beta)?;
    let n_segments = values.len() / 4;
    let out = run(py, || {
        segments::segment_draws(&values, alpha0, &parsed, n_samples, seed, zero_division)
    })?;
    PyArray1::from_vec(py, out).reshape([n_segments, parsed.len(), n_samples])
}

/// Summaries (mean, std, median, HDI, ETI) of every segment's metrics; shape
/// (n_segments, metrics, 7). Proportion metrics come with their exact Beta (masks, a0, b0).
#[pyfunction]
#[pyo3(signature = (cells, alpha0, metrics, n_samples, seed, ci, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
fn segment_summaries<'py>(
    py: Python<'py>,
    cells: PyReadonlyArray2<'py, f64>,
    alpha0: [f64; 4],
    metrics: Vec<AuditedSpec>,
    n_samples: usize,
    seed: u64,
    ci: f64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, numpy::PyArray3<f64>>> {
    let values = cells_of(&cells)?;
    let parsed = metrics
        .iter()
        .map(|(name, exact)| match exact {
            Some((success, failure, a0, b0)) => Ok(segments::SegmentMetric::Exact {
                success: *success,
                failure: *failure,
                a0: *a0,
                b0: *b0,
            }),
            None => Metric::from_name(name, beta).map(segments::SegmentMetric::Sampled),
        })
        .collect::<crate::Result<Vec<_>>>()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let n_segments = values.len() / 4;
    let out = run(py, || {
        segments::segment_summaries(&values, alpha0, &parsed, n_samples, seed, ci, zero_division)
    })?;
    PyArray1::from_vec(py, out).reshape([n_segments, parsed.len(), segments::SUMMARY.len()])
}

// ---------------------------------------------------------------------------------------------
// Ensembles
// ---------------------------------------------------------------------------------------------

/// Per-sample ensemble statistics of an (m, n) probability matrix; shape (10, n), rows in the
/// order of `ensemble_statistic_names()`.
#[pyfunction]
fn ensemble_stats<'py>(
    py: Python<'py>,
    proba: PyReadonlyArray2<'py, f64>,
    threshold: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let [m, n] = [proba.shape()[0], proba.shape()[1]];
    let values: Cow<'_, [f64]> = match proba.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(proba.as_array().iter().copied().collect()),
    };
    let out = run(py, || ensemble::ensemble_stats(&values, m, n, threshold))?;
    PyArray1::from_vec(py, out).reshape([ensemble::STATISTICS.len(), n])
}

/// Names of the rows of `ensemble_stats`.
#[pyfunction]
fn ensemble_statistic_names() -> Vec<&'static str> {
    ensemble::STATISTICS.to_vec()
}

// ---------------------------------------------------------------------------------------------
// Audited labels
// ---------------------------------------------------------------------------------------------

/// One metric for the audited kernel: its name, and for proportion metrics their
/// (success mask, failure mask, a0, b0) over (TP, FP, TN, FN).
type AuditedSpec = (String, Option<([bool; 4], [bool; 4], f64, f64)>);

/// (audited, reviewed, mislabelled, prior (a, b)) per cell (TP, FP, TN, FN).
type AuditArgs = ([bool; 4], [f64; 4], [f64; 4], [(f64, f64); 4]);

/// Metric draws under audited mislabelling; shape (metrics, n). `audit` is
/// (audited, reviewed, mislabelled, prior (a, b)) per cell (TP, FP, TN, FN).
#[pyfunction]
#[pyo3(signature = (counts, audit, metrics, alpha0, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
fn audited_metric_draws<'py>(
    py: Python<'py>,
    counts: [f64; 4],
    audit: AuditArgs,
    metrics: Vec<AuditedSpec>,
    alpha0: [f64; 4],
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let parsed = metrics
        .iter()
        .map(|(name, proportion)| match proportion {
            Some((success, failure, a0, b0)) => Ok(audit::AuditedMetric::Proportion {
                success: *success,
                failure: *failure,
                a0: *a0,
                b0: *b0,
            }),
            None => Metric::from_name(name, beta).map(audit::AuditedMetric::Sampled),
        })
        .collect::<crate::Result<Vec<_>>>()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let audit = audit::Audit {
        audited: audit.0,
        reviewed: audit.1,
        mislabelled: audit.2,
        prior: audit.3,
    };
    let out = run(py, || {
        audit::audited_metric_draws(
            counts,
            &audit,
            &parsed,
            alpha0,
            n_samples,
            seed,
            zero_division,
        )
    })?;
    PyArray1::from_vec(py, out).reshape([parsed.len(), n_samples])
}

// ---------------------------------------------------------------------------------------------
// Label-free estimation
// ---------------------------------------------------------------------------------------------

/// A fitted calibration as Python passes it: (edges, pos, neg, concordance, se, threshold).
type CalibrationArgs<'py> = (
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    f64,
);

fn calibration(args: &CalibrationArgs<'_>) -> PyResult<labelfree::Calibration> {
    labelfree::Calibration::from_parts(
        slice(&args.0).into_owned(),
        slice(&args.1).into_owned(),
        slice(&args.2).into_owned(),
        slice(&args.3).into_owned(),
        slice(&args.4).into_owned(),
        args.5,
    )
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

type Arrays5<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// Fit a reference calibration: (edges, pos, neg, concordance, concordance_se).
#[pyfunction]
fn labelfree_fit<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    positive: PyReadonlyArray1<'py, bool>,
    n_bins: usize,
    threshold: f64,
) -> PyResult<Arrays5<'py>> {
    let (scores, positive) = (slice(&scores), bool_slice(&positive));
    let cal = run(py, || labelfree::fit(&scores, &positive, n_bins, threshold))?;
    Ok((
        PyArray1::from_vec(py, cal.edges),
        PyArray1::from_vec(py, cal.pos),
        PyArray1::from_vec(py, cal.neg),
        PyArray1::from_vec(py, cal.concordance),
        PyArray1::from_vec(py, cal.concordance_se),
    ))
}

/// [`labelfree_fit`] from distinct scores with their positive and negative counts.
#[pyfunction]
fn labelfree_fit_counts<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    pos: PyReadonlyArray1<'py, f64>,
    neg: PyReadonlyArray1<'py, f64>,
    n_bins: usize,
    threshold: f64,
) -> PyResult<Arrays5<'py>> {
    let (values, pos, neg) = (slice(&values), slice(&pos), slice(&neg));
    let cal = run(py, || {
        labelfree::fit_from_counts(&values, &pos, &neg, n_bins, threshold)
    })?;
    Ok((
        PyArray1::from_vec(py, cal.edges),
        PyArray1::from_vec(py, cal.pos),
        PyArray1::from_vec(py, cal.neg),
        PyArray1::from_vec(py, cal.concordance),
        PyArray1::from_vec(py, cal.concordance_se),
    ))
}

type ChunkArrays<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
);

/// Per chunk and bin: (counts, mean score, calibrated concordance if asked for, else ½).
#[pyfunction]
fn labelfree_chunk_stats<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    starts: Vec<usize>,
    concordance: bool,
) -> PyResult<ChunkArrays<'py>> {
    let cal = calibration(&calibration_args)?;
    let scores = slice(&scores);
    let stats = run(py, || {
        labelfree::chunk_stats(&cal, &scores, &starts, concordance)
    })?;
    let (c, k) = (stats.len(), cal.n_bins());
    let flat = |f: fn(&labelfree::ChunkStats) -> &Vec<f64>| -> Vec<f64> {
        stats.iter().flat_map(|s| f(s).iter().copied()).collect()
    };
    Ok((
        PyArray1::from_vec(py, flat(|s| &s.counts)).reshape([c, k])?,
        PyArray1::from_vec(py, flat(|s| &s.mean_score)).reshape([c, k])?,
        PyArray1::from_vec(py, flat(|s| &s.perfect_concordance)).reshape([c, k])?,
    ))
}

/// Posterior draws per chunk; shape (chunks, metrics [+ AUC], n). `options` is
/// (target "population"|"realized", calibration "reference"|"perfect", within_bin, want_auc).
#[pyfunction]
#[pyo3(signature = (calibration_args, stats, metrics, options, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
fn labelfree_estimate<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    stats: (
        PyReadonlyArray2<'py, f64>,
        PyReadonlyArray2<'py, f64>,
        PyReadonlyArray2<'py, f64>,
    ),
    metrics: Vec<String>,
    options: (String, String, bool, bool),
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, numpy::PyArray3<f64>>> {
    let cal = calibration(&calibration_args)?;
    let parsed = parse_metrics(&metrics, beta)?;
    let target = match options.0.as_str() {
        "population" => labelfree::Target::Population,
        "realized" => labelfree::Target::Realized,
        other => {
            return Err(PyValueError::new_err(format!(
                "target must be \"population\" or \"realized\", got {other:?}"
            )));
        }
    };
    let mode = match options.1.as_str() {
        "reference" => labelfree::Mode::Reference,
        "perfect" => labelfree::Mode::Perfect,
        other => {
            return Err(PyValueError::new_err(format!(
                "calibration must be \"reference\" or \"perfect\", got {other:?}"
            )));
        }
    };
    let k = cal.n_bins();
    let rows_of = |a: &PyReadonlyArray2<'_, f64>| -> PyResult<Vec<Vec<f64>>> {
        let view = a.as_array();
        if view.ncols() != k {
            return Err(PyValueError::new_err(
                "chunk statistics do not match the calibration's bins",
            ));
        }
        Ok(view.rows().into_iter().map(|r| r.to_vec()).collect())
    };
    let (counts, means, concordances) =
        (rows_of(&stats.0)?, rows_of(&stats.1)?, rows_of(&stats.2)?);
    if means.len() != counts.len() || concordances.len() != counts.len() {
        return Err(PyValueError::new_err(
            "chunk statistics must have one row per chunk",
        ));
    }
    let chunks: Vec<labelfree::ChunkStats> = counts
        .into_iter()
        .zip(means)
        .zip(concordances)
        .map(
            |((counts, mean_score), perfect_concordance)| labelfree::ChunkStats {
                counts,
                mean_score,
                perfect_concordance,
            },
        )
        .collect();
    let settings = labelfree::Settings {
        target,
        mode,
        within_bin: options.2,
        want_auc: options.3,
        zero_division,
    };
    let rows = parsed.len() + usize::from(options.3);
    let n_chunks = chunks.len();
    let out = run(py, || {
        labelfree::estimate(&cal, &chunks, &parsed, settings, n_samples, seed)
    })?;
    PyArray1::from_vec(py, out).reshape([n_chunks, rows, n_samples])
}

#[pymodule]
mod _core {
    #[pymodule_export]
    use super::{
        auc_draws, auc_draws_per_row, auc_point, equal_frequency_bins, multiclass_auc_draws,
        unique_scores,
    };
    #[pymodule_export]
    use super::{
        audited_metric_draws, ensemble_statistic_names, ensemble_stats, labelfree_chunk_stats,
        labelfree_estimate, labelfree_fit, labelfree_fit_counts, segment_counts, segment_draws,
        segment_summaries,
    };
    #[pymodule_export]
    use super::{
        beta_cdf, beta_draws, beta_eti, beta_hdi, beta_isf, beta_mode, beta_pdf, beta_ppf, beta_sf,
        binary_metric_draws, binary_metric_names, binary_metric_values, derive_seed,
        dirichlet_draws, f1_hdi, f1_mean_var, f1_mode, linear_binning, multiclass_metric_draws,
        multiclass_metric_values, paired_metric_draws, sample_eti, sample_hdi, sample_moments,
        sample_quantiles, sample_summary,
    };

    #[pymodule_init]
    fn init(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        m.add("BLOCK_SIZE", crate::rng::BLOCK)?;
        m.add("MAX_OUTPUT", crate::posterior::MAX_OUTPUT)?;
        m.add("MIN_POSITIVE_SHAPE", crate::special::MIN_POSITIVE_SHAPE)?;
        m.add("MAX_SHAPE", crate::sampling::MAX_SHAPE)?;
        Ok(())
    }
}
