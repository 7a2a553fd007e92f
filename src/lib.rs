//! # probeval core
//!
//! Posterior distributions of classifier performance metrics. This crate holds the hot loops of
//! the `probeval` Python package: seeded parallel random streams, Beta/Dirichlet sampling, the
//! metric catalogue, fused "draw -> metrics" kernels and exact Beta distribution functions.
//!
//! Everything here is plain Rust: functions take slices and numbers and return [`Result`].
//! Only the `python` module (behind the `python` feature, enabled by maturin) knows about
//! Python; it converts arguments, releases the GIL around each kernel and maps [`Error`] to
//! `ValueError`.
//!
//! ## Map
//!
//! | capability (Python package)  | core modules                                              | binding (`src/python/`) |
//! |------------------------------|-----------------------------------------------------------|-------------------------|
//! | foundations (`probeval.base`)| [`rng`], [`parallel`], [`sampling`], [`copula`], [`special`], [`f1`], [`summary`], [`posterior`] (block driver, Dirichlet draws) | `distributions.rs` |
//! | `probeval.labels`            | [`metrics`], [`posterior`] (metric kernels), [`audit`], [`segments`] | `labels.rs`  |
//! | `probeval.labels.scores`     | [`binning`], [`auc`]                                      | `scores.rs`             |
//! | `probeval.ensemble`          | [`ensemble`]                                              | `ensemble.rs`           |
//! | `probeval.labelfree`         | [`labelfree`], [`course`] (production's course through time) | `labelfree.rs` |
//! | `probeval._io` (CLI input)   | [`table`] (CSV columns)                                   | `table.rs`              |
//!
//! Each row uses only the rows above it (`labelfree` draws with the foundations and evaluates
//! with [`metrics`]); nothing in the foundations knows of a capability. A new kernel is a pure
//! function in its capability's module plus a wrapper of a few lines in the matching binding
//! file, built from `python/convert.rs`: `flat` borrows an array, `run` releases the GIL and
//! maps core errors to `ValueError` and panics to `RuntimeError`, `shaped` returns an array.
//!
//! Long calls: every parallel loop runs through [`parallel`], whose driver stops between units
//! of work when the caller's watch asks it to (Ctrl-C from Python), so kernels return
//! [`Error::Interrupted`] instead of running to the end.
//!
//! Reproducibility: random kernels split their draws into blocks of [`rng::BLOCK`] and give every
//! block its own stream derived from `(seed, block index)`, so results are bit-identical for any
//! number of rayon threads.

pub mod auc;
pub mod audit;
pub mod binning;
pub mod copula;
pub mod course;
pub mod ensemble;
pub mod f1;
pub mod labelfree;
pub mod metrics;
pub mod parallel;
pub mod posterior;
#[cfg(test)]
mod proptests;
pub mod rng;
pub mod sampling;
pub mod segments;
pub mod special;
pub mod summary;
pub mod table;

#[cfg(feature = "python")]
mod python;

use std::fmt;

/// The one error type of the core: an invalid argument, described for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An argument is out of its domain; the message names it and its value.
    Invalid(String),
    /// The call was asked to stop (see [`parallel::watch`]) and did.
    Interrupted,
    /// A buffer of this many bytes could not be allocated.
    OutOfMemory { bytes: usize },
}

impl Error {
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }

    /// Prefix an invalid argument's message with where it happened (`"segment 3"`).
    pub fn context(self, place: impl fmt::Display) -> Self {
        match self {
            Error::Invalid(message) => Error::Invalid(format!("{place}: {message}")),
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(message) => f.write_str(message),
            Error::Interrupted => f.write_str("interrupted"),
            Error::OutOfMemory { bytes } => write!(
                f,
                "could not allocate {:.1} MiB for the output: ask for fewer samples",
                *bytes as f64 / f64::from(1u32 << 20)
            ),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
