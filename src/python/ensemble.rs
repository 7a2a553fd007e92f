//! Per-sample statistics of an ensemble's probabilities, behind `probeval.ensemble`.

use super::convert::{flat, run, shaped};
use crate::ensemble;
use numpy::{PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// Per-sample ensemble statistics of an (m, n) probability matrix; shape (10, n), rows in the
/// order of `ensemble_statistic_names()`.
#[pyfunction]
pub(super) fn ensemble_stats<'py>(
    py: Python<'py>,
    proba: PyReadonlyArray2<'py, f64>,
    threshold: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let [m, n] = [proba.shape()[0], proba.shape()[1]];
    let values = flat(&proba);
    let out = run(py, || ensemble::ensemble_stats(&values, m, n, threshold))?;
    shaped(py, out, [ensemble::STATISTICS.len(), n])
}

/// Names of the rows of `ensemble_stats`.
#[pyfunction]
pub(super) fn ensemble_statistic_names() -> Vec<&'static str> {
    ensemble::STATISTICS.to_vec()
}
