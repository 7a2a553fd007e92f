//! The Python binding `probeval._core` — the only module that imports pyo3 and numpy.
//!
//! One file per capability, mirroring the Python package:
//!
//! | file              | kernels                                                        | Python layer        |
//! |-------------------|----------------------------------------------------------------|---------------------|
//! | `convert.rs`      | the shared wrapper: extract, release the GIL, map errors       | —                   |
//! | `distributions.rs`| Beta/Dirichlet/F1 laws, sample summaries, KDE binning, seeds   | `probeval.base`     |
//! | `labels.rs`       | confusion-matrix metrics and draws, paired, audited, segments  | `probeval.labels`   |
//! | `scores.rs`       | distinct scores, bins, ROC AUC and average precision           | `probeval.labels`   |
//! | `ensemble.rs`     | per-sample ensemble statistics                                 | `probeval.ensemble` |
//! | `labelfree.rs`    | calibration fit, chunk statistics, label-free draws, course    | `probeval.labelfree`|
//! | `table.rs`        | CSV header and columns for the command line                    | `probeval._io`      |
//!
//! Every function is a thin wrapper in the same shape: borrow the numpy buffers
//! ([`convert::flat`]), run the core function through [`convert::run`] (GIL released, core
//! errors to `ValueError`, panics to `RuntimeError`), and hand the result back as a shaped
//! array ([`convert::shaped`]). User-facing validation with friendly messages happens earlier,
//! in `probeval/_util/validation.py`; the checks in the core are the last line.

mod convert;
mod distributions;
mod ensemble;
mod labelfree;
mod labels;
mod scores;
mod table;

#[pyo3::pymodule]
mod _core {
    #[pymodule_export]
    use super::distributions::{
        beta_cdf, beta_draws, beta_eti, beta_hdi, beta_isf, beta_mode, beta_pdf, beta_ppf, beta_sf,
        derive_seed, dirichlet_draws, dirichlet_multinomial_log_likelihood, f1_hdi, f1_mean_var,
        f1_mode, linear_binning, sample_eti, sample_hdi, sample_moments, sample_quantiles,
        sample_summary,
    };
    #[pymodule_export]
    use super::ensemble::{ensemble_statistic_names, ensemble_stats};
    #[pymodule_export]
    use super::labelfree::{
        labelfree_chunk_stats, labelfree_course_priors, labelfree_drift_expected_logits,
        labelfree_drift_likelihood, labelfree_drift_shift, labelfree_estimate,
        labelfree_estimate_multiclass, labelfree_fit, labelfree_fit_counts,
        labelfree_spread_priors,
    };
    #[pymodule_export]
    use super::labels::{
        audited_metric_draws, binary_metric_draws, binary_metric_names, binary_metric_rows,
        binary_metric_values, multiclass_metric_draws, multiclass_metric_values,
        paired_metric_draws, segment_counts, segment_draws, segment_summaries,
    };
    #[pymodule_export]
    use super::scores::{
        auc_draws, auc_draws_per_row, auc_point, chunk_score_draws, equal_frequency_bins,
        multiclass_auc_draws, unique_scores,
    };
    #[pymodule_export]
    use super::table::{csv_columns, csv_header};

    #[pymodule_init]
    fn init(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        m.add("BLOCK_SIZE", crate::rng::BLOCK)?;
        m.add("MAX_OUTPUT", crate::posterior::MAX_OUTPUT)?;
        m.add("MIN_POSITIVE_SHAPE", crate::special::MIN_POSITIVE_SHAPE)?;
        m.add("MAX_SHAPE", crate::sampling::MAX_SHAPE)?;
        // rust-numpy loads NumPy's C API and its borrow-checking capsule on first use, and
        // imports numpy modules to do it. Inside a user's first call, a Ctrl-C landing there
        // came out as a panic ("Failed to access NumPy array API capsule") instead of
        // KeyboardInterrupt (tests/test_interrupt.py, CI). Both are loaded here, at import.
        use numpy::PyArrayMethods;
        let empty = numpy::PyArray1::<f64>::zeros(m.py(), 0, false);
        drop(empty.try_readonly()?);
        Ok(())
    }
}
