//! Confusion-matrix metrics behind `probeval.labels`: point values and posterior draws for
//! binary and multiclass matrices, two models on the same rows, audited (noisy) labels and
//! segments.

use super::convert::{flat, run, shaped};
use crate::metrics::{self, Cells, Metric, MulticlassMetric};
use crate::{audit, posterior, segments};
use numpy::{
    PyArray2, PyArray3, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::borrow::Cow;

/// Canonical names of the binary metrics the kernels understand.
#[pyfunction]
pub(super) fn binary_metric_names() -> Vec<&'static str> {
    metrics::BINARY_METRIC_NAMES.to_vec()
}

/// Point values of binary metrics on counts (tp, fp, tn, fn).
#[pyfunction]
#[pyo3(signature = (cells, metrics, beta = 1.0, zero_division = 0.0))]
pub(super) fn binary_metric_values(
    py: Python<'_>,
    cells: (f64, f64, f64, f64),
    metrics: Vec<String>,
    beta: f64,
    zero_division: f64,
) -> PyResult<Vec<f64>> {
    let parsed = metrics::parse_metrics(&metrics, beta)?;
    let c = Cells::new(cells.0, cells.1, cells.2, cells.3);
    run(py, || Ok(metrics::evaluate(&c, &parsed, zero_division)))
}

/// Point values of binary metrics on many (tp, fp, tn, fn) rows: an (n, 4) array in, an
/// (metrics, n) array out.
#[pyfunction]
#[pyo3(signature = (cells, metrics, beta = 1.0, zero_division = 0.0))]
pub(super) fn binary_metric_rows<'py>(
    py: Python<'py>,
    cells: PyReadonlyArray2<'py, f64>,
    metrics: Vec<String>,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let parsed = metrics::parse_metrics(&metrics, beta)?;
    if cells.shape()[1] != 4 {
        return Err(PyValueError::new_err(format!(
            "cells must have shape (n, 4), got {:?}",
            cells.shape()
        )));
    }
    let n = cells.shape()[0];
    let values = flat(&cells);
    let out = run(py, || {
        metrics::evaluate_rows(&values, &parsed, zero_division)
    })?;
    shaped(py, out, [parsed.len(), n])
}

/// Metric draws from p ~ Dirichlet(alpha), alpha = (tp, fp, tn, fn) + prior; shape (metrics, n).
#[pyfunction]
#[pyo3(signature = (alpha, metrics, n_samples, seed, beta = 1.0, zero_division = 0.0))]
pub(super) fn binary_metric_draws<'py>(
    py: Python<'py>,
    alpha: (f64, f64, f64, f64),
    metrics: Vec<String>,
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let parsed = metrics::parse_metrics(&metrics, beta)?;
    let alpha = [alpha.0, alpha.1, alpha.2, alpha.3];
    let out = run(py, || {
        posterior::binary_metric_draws(alpha, &parsed, n_samples, seed, zero_division)
    })?;
    shaped(py, out, [parsed.len(), n_samples])
}

/// Parse multiclass metric specifications (name, average, class index).
fn parse_multiclass(
    specs: &[(String, String, usize)],
    beta: f64,
    k: usize,
) -> crate::Result<Vec<MulticlassMetric>> {
    specs
        .iter()
        .map(|(name, average, class)| MulticlassMetric::from_parts(name, average, *class, beta, k))
        .collect()
}

/// The cells of a K x K matrix, and K.
fn square_matrix<'a>(counts: &'a PyReadonlyArray2<'_, f64>) -> PyResult<(Cow<'a, [f64]>, usize)> {
    let shape = counts.shape();
    if shape[0] != shape[1] {
        return Err(PyValueError::new_err(format!(
            "expected a square matrix, got shape {shape:?}"
        )));
    }
    Ok((flat(counts), shape[0]))
}

/// Point values of multiclass metrics on a K x K count matrix (rows = true class).
#[pyfunction]
#[pyo3(signature = (counts, metrics, beta = 1.0, zero_division = 0.0))]
pub(super) fn multiclass_metric_values(
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
pub(super) fn multiclass_metric_draws<'py>(
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
    shaped(py, out, [parsed.len(), n_samples])
}

/// Paired draws of one metric for two models scored on the same rows; shape (2, n).
/// `alpha` is the K x K x K joint table (truth, prediction A, prediction B) plus prior;
/// `data` holds the observed joint counts (same shape);
/// `metric` is ("binary", name, "", 0) or ("multiclass", name, average, class).
#[pyfunction]
#[pyo3(signature = (alpha, data, metric, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
pub(super) fn paired_metric_draws<'py>(
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
    let (values, observed) = (flat(&alpha), flat(&data));
    let (kernel, name, average, class) = metric;
    let parsed = match kernel.as_str() {
        "binary" => Metric::from_name(&name, beta).map(posterior::PairedMetric::Binary),
        "multiclass" => MulticlassMetric::from_parts(&name, &average, class, beta, k)
            .map(posterior::PairedMetric::Multiclass),
        other => Err(crate::Error::invalid(format!("unknown kernel {other:?}"))),
    }?;
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
    shaped(py, out, [2, n_samples])
}

// ---------------------------------------------------------------------------------------------
// Audited labels
// ---------------------------------------------------------------------------------------------

/// One metric for the audited and segment kernels: its name, and for proportion metrics their
/// (success mask, failure mask, a0, b0) over (TP, FP, TN, FN).
type ExactSpec = (String, Option<([bool; 4], [bool; 4], f64, f64)>);

/// Each spec as the kernel's exact variant (proportion masks and Beta prior) or, without
/// masks, as its sampled variant.
fn exact_or_sampled<T>(
    specs: &[ExactSpec],
    beta: f64,
    exact: impl Fn([bool; 4], [bool; 4], f64, f64) -> T,
    sampled: impl Fn(Metric) -> T,
) -> crate::Result<Vec<T>> {
    specs
        .iter()
        .map(|(name, masks)| match masks {
            Some((success, failure, a0, b0)) => Ok(exact(*success, *failure, *a0, *b0)),
            None => Metric::from_name(name, beta).map(&sampled),
        })
        .collect()
}

/// (audited, reviewed, mislabelled, prior (a, b)) per cell (TP, FP, TN, FN).
type AuditArgs = ([bool; 4], [f64; 4], [f64; 4], [(f64, f64); 4]);

/// Metric draws under audited mislabelling; shape (metrics, n). `audit` is
/// (audited, reviewed, mislabelled, prior (a, b)) per cell (TP, FP, TN, FN).
#[pyfunction]
#[pyo3(signature = (counts, audit, metrics, alpha0, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
pub(super) fn audited_metric_draws<'py>(
    py: Python<'py>,
    counts: [f64; 4],
    audit: AuditArgs,
    metrics: Vec<ExactSpec>,
    alpha0: [f64; 4],
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let parsed = exact_or_sampled(
        &metrics,
        beta,
        |success, failure, a0, b0| audit::AuditedMetric::Proportion {
            success,
            failure,
            a0,
            b0,
        },
        audit::AuditedMetric::Sampled,
    )?;
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
    shaped(py, out, [parsed.len(), n_samples])
}

// ---------------------------------------------------------------------------------------------
// Segments
// ---------------------------------------------------------------------------------------------

/// The (n_segments, 4) cells TP, FP, TN, FN as one flat vector.
fn cells_of(cells: &PyReadonlyArray2<'_, f64>) -> PyResult<Vec<f64>> {
    if cells.shape()[1] != 4 {
        return Err(PyValueError::new_err(
            "cells must have shape (n_segments, 4): TP, FP, TN, FN",
        ));
    }
    Ok(flat(cells).into_owned())
}

/// Per-segment confusion counts; shape (n_segments, k, k).
#[pyfunction]
#[pyo3(signature = (truth, predicted, segment, weights, n_segments, k))]
pub(super) fn segment_counts<'py>(
    py: Python<'py>,
    truth: PyReadonlyArray1<'py, u32>,
    predicted: PyReadonlyArray1<'py, u32>,
    segment: PyReadonlyArray1<'py, u32>,
    weights: Option<PyReadonlyArray1<'py, f64>>,
    n_segments: usize,
    k: usize,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let (truth, predicted, segment) = (flat(&truth), flat(&predicted), flat(&segment));
    let weights = weights.as_ref().map(flat);
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
    shaped(py, out, [n_segments, k, k])
}

/// Sampled metric draws of every segment; shape (n_segments, metrics, n).
#[pyfunction]
#[pyo3(signature = (cells, alpha0, metrics, n_samples, seed, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
pub(super) fn segment_draws<'py>(
    py: Python<'py>,
    cells: PyReadonlyArray2<'py, f64>,
    alpha0: [f64; 4],
    metrics: Vec<String>,
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let values = cells_of(&cells)?;
    let parsed = metrics::parse_metrics(&metrics, beta)?;
    let n_segments = values.len() / 4;
    let out = run(py, || {
        segments::segment_draws(&values, alpha0, &parsed, n_samples, seed, zero_division)
    })?;
    shaped(py, out, [n_segments, parsed.len(), n_samples])
}

/// Summaries (mean, std, median, HDI, ETI) of every segment's metrics; shape
/// (n_segments, metrics, 7). Proportion metrics come with their exact Beta (masks, a0, b0).
#[pyfunction]
#[pyo3(signature = (cells, alpha0, metrics, n_samples, seed, ci, beta = 1.0, zero_division = 0.0))]
#[allow(clippy::too_many_arguments)]
pub(super) fn segment_summaries<'py>(
    py: Python<'py>,
    cells: PyReadonlyArray2<'py, f64>,
    alpha0: [f64; 4],
    metrics: Vec<ExactSpec>,
    n_samples: usize,
    seed: u64,
    ci: f64,
    beta: f64,
    zero_division: f64,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let values = cells_of(&cells)?;
    let parsed = exact_or_sampled(
        &metrics,
        beta,
        |success, failure, a0, b0| segments::SegmentMetric::Exact {
            success,
            failure,
            a0,
            b0,
        },
        segments::SegmentMetric::Sampled,
    )?;
    let n_segments = values.len() / 4;
    let out = run(py, || {
        segments::segment_summaries(&values, alpha0, &parsed, n_samples, seed, ci, zero_division)
    })?;
    shaped(py, out, [n_segments, parsed.len(), segments::SUMMARY.len()])
}
