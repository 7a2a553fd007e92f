//! The one wrapper shape every binding uses, written once.

use numpy::ndarray::Dimension;
use numpy::ndarray::IntoDimension;
use numpy::{Element, PyArray, PyArray1, PyArrayMethods, PyReadonlyArray};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A core error is the user's: it becomes `ValueError` with the core's message.
impl From<crate::Error> for PyErr {
    fn from(error: crate::Error) -> Self {
        PyValueError::new_err(error.to_string())
    }
}

/// Run `f` without the GIL; map core errors to ValueError and panics to RuntimeError.
pub(super) fn run<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> crate::Result<T> + Send,
    T: Send,
{
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.into()),
        Err(_) => Err(PyRuntimeError::new_err(
            "internal error in probeval's Rust core (this is a bug; please report it)",
        )),
    }
}

/// The elements of an array in C order: borrowed when contiguous, copied when strided.
pub(super) fn flat<'a, T, D>(array: &'a PyReadonlyArray<'_, T, D>) -> Cow<'a, [T]>
where
    T: Element + Copy,
    D: Dimension,
{
    match array.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}

/// A kernel's flat output as a numpy array of the given shape (no copy).
pub(super) fn shaped<'py, S: IntoDimension>(
    py: Python<'py>,
    values: Vec<f64>,
    shape: S,
) -> PyResult<Bound<'py, PyArray<f64, S::Dim>>> {
    PyArray1::from_vec(py, values).reshape(shape)
}

/// Apply `f` elementwise, in parallel for long inputs (order of results is preserved).
pub(super) fn map_values(
    values: &[f64],
    f: impl Fn(f64) -> crate::Result<f64> + Sync,
) -> crate::Result<Vec<f64>> {
    if values.len() > 4096 {
        values.par_iter().map(|&v| f(v)).collect()
    } else {
        values.iter().map(|&v| f(v)).collect()
    }
}
