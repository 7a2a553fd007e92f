//! CSV columns for the command line's `probeval._io`: the file is read without the GIL.

use super::convert::run;
use crate::table::{self, Cell, Values};
use numpy::PyArray1;
use pyo3::prelude::*;
use std::path::Path;

/// (values: int64, float64 or uint32 codes; the codes' levels; first missing cell; first
/// cell that is not a number).
type PyColumn<'py> = (
    Bound<'py, PyAny>,
    Option<Vec<String>>,
    Option<Cell>,
    Option<Cell>,
);

/// The header of a CSV file (None when it has no line with anything on it).
#[pyfunction]
pub(super) fn csv_header(
    py: Python<'_>,
    path: &str,
    delimiter: u8,
) -> PyResult<Option<Vec<String>>> {
    run(py, || table::read_file_header(Path::new(path), delimiter))
}

/// The columns at `indices` of a CSV file, each in the narrowest type that holds its cells.
#[pyfunction]
pub(super) fn csv_columns<'py>(
    py: Python<'py>,
    path: &str,
    delimiter: u8,
    indices: Vec<usize>,
) -> PyResult<Vec<PyColumn<'py>>> {
    let columns = run(py, || {
        table::read_file_columns(Path::new(path), delimiter, &indices)
    })?;
    Ok(columns
        .into_iter()
        .map(|column| {
            let (values, levels) = match column.values {
                Values::Int(v) => (PyArray1::from_vec(py, v).into_any(), None),
                Values::Float(v) => (PyArray1::from_vec(py, v).into_any(), None),
                Values::Text { codes, levels } => {
                    (PyArray1::from_vec(py, codes).into_any(), Some(levels))
                }
            };
            (values, levels, column.first_missing, column.first_text)
        })
        .collect())
}
