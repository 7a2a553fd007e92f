//! The one wrapper shape every binding uses, written once.

use crate::parallel;
use numpy::ndarray::Dimension;
use numpy::ndarray::IntoDimension;
use numpy::{Element, PyArray, PyArray1, PyArrayMethods, PyReadonlyArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

/// A core error is the user's: it becomes `ValueError` with the core's message, a failed
/// allocation `MemoryError`, and a call that stopped without a Python exception to show for it
/// a `KeyboardInterrupt`.
impl From<crate::Error> for PyErr {
    fn from(error: crate::Error) -> Self {
        match error {
            crate::Error::Interrupted => PyKeyboardInterrupt::new_err(()),
            crate::Error::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
            crate::Error::Invalid(_) => PyValueError::new_err(error.to_string()),
        }
    }
}

/// Run `f` without the GIL; map core errors to ValueError and panics to RuntimeError.
///
/// The call is watched (see [`parallel::watch`]): every 20 ms of a long call, the calling
/// thread takes the GIL back for a moment to run pending signal handlers. If one raises — a
/// Ctrl-C's `KeyboardInterrupt`, or whatever a user's handler raises — the kernel stops at its
/// next unit of work, frees its buffers, and that exception is raised here. Only the main
/// thread runs signal handlers, so calls from other threads never take the GIL to ask.
pub(super) fn run<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> crate::Result<T> + Send,
    T: Send,
{
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let poll = signal_poll(raised.clone());
    match py.detach(move || catch_unwind(AssertUnwindSafe(|| parallel::watch(poll, f)))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(crate::Error::Interrupted)) => Err(parallel::lock(&raised)
            .take()
            .unwrap_or_else(|| PyKeyboardInterrupt::new_err(()))),
        Ok(Err(error)) => Err(error.into()),
        Err(_) => Err(PyRuntimeError::new_err(
            "internal error in probeval's Rust core (this is a bug; please report it)",
        )),
    }
}

/// A poll for [`parallel::watch`]: run the interpreter's pending signal handlers and keep the
/// exception one raises in `raised`. The first poll finds out whether this is the main thread;
/// on any other thread later polls return at once.
fn signal_poll(raised: Arc<Mutex<Option<PyErr>>>) -> impl FnMut() -> bool + Send + 'static {
    let mut main_thread = None;
    move || {
        if main_thread == Some(false) {
            return false;
        }
        Python::attach(|py| {
            // Finding out runs Python code, which may itself run a pending handler: whatever
            // either step raises stops the call.
            let checked = py.check_signals().and_then(|()| {
                if main_thread.is_none() {
                    main_thread = Some(is_main_thread(py)?);
                }
                Ok(())
            });
            match checked {
                Ok(()) => false,
                Err(error) => {
                    *parallel::lock(&raised) = Some(error);
                    true
                }
            }
        })
    }
}

fn is_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import("threading")?;
    let main = threading.call_method0("main_thread")?;
    Ok(main.is(&threading.call_method0("current_thread")?))
}

/// The elements of an array in C order: borrowed when C-contiguous, copied otherwise.
/// (`as_slice` also borrows a Fortran-ordered array, in its memory order: a transposed
/// matrix would come out transposed.)
pub(super) fn flat<'a, T, D>(array: &'a PyReadonlyArray<'_, T, D>) -> Cow<'a, [T]>
where
    T: Element + Copy,
    D: Dimension,
{
    match array.as_slice() {
        Ok(s) if array.is_c_contiguous() => Cow::Borrowed(s),
        _ => Cow::Owned(array.as_array().iter().copied().collect()),
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

/// Apply `f` elementwise, in parallel chunks for long inputs (order of results is preserved).
pub(super) fn map_values(
    values: &[f64],
    f: impl Fn(f64) -> crate::Result<f64> + Sync,
) -> crate::Result<Vec<f64>> {
    const CHUNK: usize = 4096;
    if values.len() <= CHUNK {
        return values.iter().map(|&v| f(v)).collect();
    }
    let mut out = vec![0.0; values.len()];
    parallel::for_each_chunk(&mut out, CHUNK, |c, chunk| {
        for (o, &v) in chunk.iter_mut().zip(&values[c * CHUNK..]) {
            *o = f(v)?;
        }
        Ok(())
    })?;
    Ok(out)
}
