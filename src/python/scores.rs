//! Score-based metrics behind `probeval.labels.scores`: distinct scores and their bins, ROC AUC
//! and average precision (point values and Bayesian-bootstrap draws), one-vs-rest multiclass.

use super::convert::{flat, run, shaped};
use crate::{auc, binning};
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// (distinct values ascending, positive weight, negative weight).
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
pub(super) fn unique_scores<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    positive: PyReadonlyArray1<'py, bool>,
    weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Unique<'py>> {
    let (scores, positive) = (flat(&scores), flat(&positive));
    let weights = weights.as_ref().map(flat);
    let u = run(py, || {
        binning::unique_scores(&scores, &positive, weights.as_deref())
    })?;
    Ok(unique_to_py(py, u))
}

/// Group distinct scores into at most max_bins equal-frequency bins (ties never split).
#[pyfunction]
pub(super) fn equal_frequency_bins<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    pos: PyReadonlyArray1<'py, f64>,
    neg: PyReadonlyArray1<'py, f64>,
    max_bins: usize,
) -> PyResult<Unique<'py>> {
    let u = binning::UniqueScores {
        values: flat(&values).into_owned(),
        pos: flat(&pos).into_owned(),
        neg: flat(&neg).into_owned(),
    };
    let b = run(py, || binning::equal_frequency(&u, max_bins))?;
    Ok(unique_to_py(py, b))
}

/// Point (ROC AUC, average precision) of bins in ascending score order.
#[pyfunction]
pub(super) fn auc_point(
    py: Python<'_>,
    pos: PyReadonlyArray1<'_, f64>,
    neg: PyReadonlyArray1<'_, f64>,
) -> PyResult<(f64, f64)> {
    let (pos, neg) = (flat(&pos), flat(&neg));
    run(py, || auc::point_values(&pos, &neg))
}

/// Binned Bayesian-bootstrap draws of (AUC, AP) rows, as requested.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(super) fn auc_draws<'py>(
    py: Python<'py>,
    pos: PyReadonlyArray1<'py, f64>,
    neg: PyReadonlyArray1<'py, f64>,
    prior: f64,
    n_samples: usize,
    seed: u64,
    want_auc: bool,
    want_ap: bool,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (pos, neg) = (flat(&pos), flat(&neg));
    let rows = usize::from(want_auc) + usize::from(want_ap);
    let out = run(py, || {
        auc::binned_draws(&pos, &neg, prior, n_samples, seed, want_auc, want_ap)
    })?;
    shaped(py, out, [rows, n_samples])
}

/// (exact value per chunk, draws per chunk).
type ChunkDraws<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>);

/// With-labels ROC AUC or average precision (`metric`) of many chunks at once: the exact
/// value per chunk, shape (chunks,), and the draws, shape (chunks, n) (NaN for a chunk with
/// one class).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(super) fn chunk_score_draws<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    positive: PyReadonlyArray1<'py, bool>,
    starts: Vec<usize>,
    max_bins: usize,
    n_samples: usize,
    seed: u64,
    metric: &str,
) -> PyResult<ChunkDraws<'py>> {
    let kernel = match metric {
        "roc_auc" => auc::chunk_draws,
        "average_precision" => auc::chunk_ap_draws,
        _ => {
            return Err(PyValueError::new_err(format!(
                "metric must be 'roc_auc' or 'average_precision', got {metric:?}"
            )));
        }
    };
    let (scores, positive) = (flat(&scores), flat(&positive));
    let (observed, out) = run(py, || {
        kernel(&scores, &positive, &starts, max_bins, n_samples, seed)
    })?;
    Ok((
        PyArray1::from_vec(py, observed),
        shaped(py, out, [starts.len(), n_samples])?,
    ))
}

/// Exact per-row Bayesian-bootstrap draws of (AUC, AP); shape (2, n).
#[pyfunction]
pub(super) fn auc_draws_per_row<'py>(
    py: Python<'py>,
    bin_of: PyReadonlyArray1<'py, u32>,
    positive: PyReadonlyArray1<'py, bool>,
    weights: PyReadonlyArray1<'py, f64>,
    n_bins: usize,
    n_samples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (bin_of, positive, weights) = (flat(&bin_of), flat(&positive), flat(&weights));
    let out = run(py, || {
        auc::per_row_draws(&bin_of, &positive, &weights, n_bins, n_samples, seed)
    })?;
    shaped(py, out, [2, n_samples])
}

/// One-vs-rest AUC (then AP) draws with shared row weights; rows per model: classes, macro,
/// weighted. `per_row`: the exact O(n M K)-per-draw kernel, which also draws `n_models` models
/// on the same row weights (their columns side by side in `bins`); otherwise binned marginals
/// joined by copula (one model); `ordered` (AUC bins, AP bins), with `bins` at every distinct
/// score: those marginals drawn on coarse bins that keep the rows' order inside them.
#[pyfunction]
#[pyo3(signature = (bins, classes, weights, n_bins, n_samples, seed, want_ap, per_row, n_models = 1, ordered = None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn multiclass_auc_draws<'py>(
    py: Python<'py>,
    bins: PyReadonlyArray2<'py, u32>,
    classes: PyReadonlyArray1<'py, u32>,
    weights: PyReadonlyArray1<'py, f64>,
    n_bins: Vec<usize>,
    n_samples: usize,
    seed: u64,
    want_ap: bool,
    per_row: bool,
    n_models: usize,
    ordered: Option<(usize, usize)>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    if n_models == 0 || n_bins.len() % n_models != 0 || (!per_row && n_models != 1) {
        return Err(PyValueError::new_err(format!(
            "n_models must divide the {} columns and be 1 unless per_row, got {n_models}",
            n_bins.len()
        )));
    }
    let (bins, classes, weights) = (flat(&bins), flat(&classes), flat(&weights));
    let rows = n_models * (n_bins.len() / n_models + 2) * if want_ap { 2 } else { 1 };
    let out = run(py, || {
        if per_row {
            auc::multiclass_draws(
                &bins, &classes, &weights, &n_bins, n_models, n_samples, seed, want_ap,
            )
        } else {
            auc::multiclass_joined_draws(
                &bins, &classes, &weights, &n_bins, n_samples, seed, want_ap, ordered,
            )
        }
    })?;
    shaped(py, out, [rows, n_samples])
}
