//! Label-free estimation behind `probeval.labelfree`: fit the reference calibration, summarise
//! production chunks per bin, and draw each chunk's metrics.

use super::convert::{flat, run, shaped};
use crate::labelfree;
use crate::metrics;
use numpy::{
    PyArray1, PyArray2, PyArray3, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
    PyReadonlyArrayDyn,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A fitted calibration as Python passes it: (edges, pos, neg, concordance, se, spread,
/// rate_centre, threshold); spread and rate_centre may be empty (not known).
type CalibrationArgs<'py> = (
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    f64,
);

fn calibration(args: &CalibrationArgs<'_>) -> PyResult<labelfree::Calibration> {
    Ok(labelfree::Calibration::from_parts(
        flat(&args.0).into_owned(),
        flat(&args.1).into_owned(),
        flat(&args.2).into_owned(),
        flat(&args.3).into_owned(),
        flat(&args.4).into_owned(),
        flat(&args.5).into_owned(),
        flat(&args.6).into_owned(),
        args.7,
    )?)
}

/// A fitted calibration as Python receives it: (edges, pos, neg, concordance, concordance_se,
/// spread).
type CalibrationArrays<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

fn calibration_to_py(py: Python<'_>, cal: labelfree::Calibration) -> CalibrationArrays<'_> {
    (
        PyArray1::from_vec(py, cal.edges),
        PyArray1::from_vec(py, cal.pos),
        PyArray1::from_vec(py, cal.neg),
        PyArray1::from_vec(py, cal.concordance),
        PyArray1::from_vec(py, cal.concordance_se),
        PyArray1::from_vec(py, cal.spread),
    )
}

/// Fit a reference calibration: (edges, pos, neg, concordance, concordance_se, spread).
#[pyfunction]
pub(super) fn labelfree_fit<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    positive: PyReadonlyArray1<'py, bool>,
    n_bins: usize,
    threshold: f64,
) -> PyResult<CalibrationArrays<'py>> {
    let (scores, positive) = (flat(&scores), flat(&positive));
    let cal = run(py, || labelfree::fit(&scores, &positive, n_bins, threshold))?;
    Ok(calibration_to_py(py, cal))
}

/// [`labelfree_fit`] from distinct scores with their positive and negative counts.
#[pyfunction]
pub(super) fn labelfree_fit_counts<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    pos: PyReadonlyArray1<'py, f64>,
    neg: PyReadonlyArray1<'py, f64>,
    n_bins: usize,
    threshold: f64,
) -> PyResult<CalibrationArrays<'py>> {
    let (values, pos, neg) = (flat(&values), flat(&pos), flat(&neg));
    let cal = run(py, || {
        labelfree::fit_from_counts(&values, &pos, &neg, n_bins, threshold)
    })?;
    Ok(calibration_to_py(py, cal))
}

type ChunkArrays<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray2<f64>>,
);

/// A finer calibration as Python passes it: upper scores, positives, negatives, and the
/// sub-bins where its monotone fit restarts ([`labelfree::FineCalibration::new`]).
type FineArgs<'py> = (
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    Vec<usize>,
);

/// Per chunk and bin: (counts, mean score, calibrated concordance if asked for, else ½,
/// known positives, known negatives, the scores' Gini mean difference, their tie factor, how
/// much higher (logit) the reference's rate is where the known rows sit in their bin, and
/// that move's variance).
/// `labels` (1, 0, NaN = missing) are the known labels; `fine`, the reference's scores on a
/// finer grid than its bins (upper scores, positives, negatives, the sub-bins where its monotone
/// fit restarts: [`labelfree::FineCalibration`]), places them inside their bins.
#[pyfunction]
#[pyo3(signature = (calibration_args, scores, starts, concordance, labels = None, fine = None))]
pub(super) fn labelfree_chunk_stats<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    starts: Vec<usize>,
    concordance: bool,
    labels: Option<PyReadonlyArray1<'py, f64>>,
    fine: Option<FineArgs<'py>>,
) -> PyResult<ChunkArrays<'py>> {
    let cal = calibration(&calibration_args)?;
    let scores = flat(&scores);
    let labels = labels.as_ref().map(flat);
    let fine = fine
        .map(|(upper, pos, neg, restarts)| {
            labelfree::FineCalibration::new(&flat(&upper), &flat(&pos), &flat(&neg), &restarts)
        })
        .transpose()?;
    let stats = run(py, || {
        labelfree::chunk_stats_placed(
            &cal,
            &scores,
            &starts,
            concordance,
            labels.as_deref(),
            fine.as_ref(),
        )
    })?;
    let (c, k) = (stats.len(), cal.n_bins());
    let column = |f: fn(&labelfree::ChunkStats) -> &Vec<f64>| -> Vec<f64> {
        stats.iter().flat_map(|s| f(s).iter().copied()).collect()
    };
    Ok((
        shaped(py, column(|s| &s.counts), [c, k])?,
        shaped(py, column(|s| &s.mean_score), [c, k])?,
        shaped(py, column(|s| &s.perfect_concordance), [c, k])?,
        shaped(py, column(|s| &s.labelled_pos), [c, k])?,
        shaped(py, column(|s| &s.labelled_neg), [c, k])?,
        shaped(py, column(|s| &s.spread), [c, k])?,
        shaped(py, column(|s| &s.tie_factor), [c, k])?,
        shaped(py, column(|s| &s.label_move), [c, k])?,
        shaped(py, column(|s| &s.label_move_var), [c, k])?,
    ))
}

/// Between-period drift as Python passes it: ((shift grid, its prior log-density), (tilt
/// grid, its prior log-density), centre, bin sd, slope, slope se, reference mean score,
/// per-chunk shift priors (chunks, shift points), or (0, points) for the grid's own prior,
/// per-chunk bin sds (chunks,), or (0,) for the bin sd, per-chunk tilt priors (chunks, tilt
/// points), or (0, points), per-chunk centring sds (chunks,), or (0,) for the periods' own,
/// per-bin further variances of the bins' own deviations (bins,), or (0,) for none).
type DriftArgs<'py> = (
    (PyReadonlyArray1<'py, f64>, PyReadonlyArray1<'py, f64>),
    (PyReadonlyArray1<'py, f64>, PyReadonlyArray1<'py, f64>),
    f64,
    f64,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
);

fn drift(args: &DriftArgs<'_>) -> labelfree::Drift {
    let grid = |g: &(PyReadonlyArray1<'_, f64>, PyReadonlyArray1<'_, f64>)| labelfree::Grid {
        values: flat(&g.0).into_owned(),
        log_prior: flat(&g.1).into_owned(),
    };
    labelfree::Drift {
        shift: grid(&args.0),
        tilt: grid(&args.1),
        centre: args.2,
        bin_sd: args.3,
        slope: flat(&args.4).into_owned(),
        slope_se: flat(&args.5).into_owned(),
        ref_mean: flat(&args.6).into_owned(),
        chunk_shift_prior: args.7.as_array().iter().copied().collect(),
        chunk_bin_sd: flat(&args.8).into_owned(),
        chunk_tilt_prior: args.9.as_array().iter().copied().collect(),
        chunk_centre_sd: flat(&args.10).into_owned(),
        bin_extra_var: flat(&args.11).into_owned(),
        class_shift: None,
    }
}

/// Average precision's score slices: (share, mean, span) as (chunks, bins, slices) arrays
/// (see [`labelfree::ScoreSlices`]).
type SliceArgs<'py> = (
    PyReadonlyArray3<'py, f64>,
    PyReadonlyArray3<'py, f64>,
    PyReadonlyArray3<'py, f64>,
);

fn score_slices(
    args: &SliceArgs<'_>,
    k: usize,
    n_chunks: usize,
) -> PyResult<labelfree::ScoreSlices> {
    let shape = args.0.as_array().shape().to_vec();
    let same = |a: &PyReadonlyArray3<'_, f64>| a.as_array().shape() == shape.as_slice();
    if !same(&args.1) || !same(&args.2) || shape[..2] != [n_chunks, k] {
        return Err(PyValueError::new_err(format!(
            "score slices must be ({n_chunks}, {k}, slices) arrays, got {shape:?}"
        )));
    }
    let all = |a: &PyReadonlyArray3<'_, f64>| a.as_array().iter().copied().collect();
    Ok(labelfree::ScoreSlices {
        per_bin: shape[2],
        share: all(&args.0),
        mean: all(&args.1),
        span: all(&args.2),
    })
}

/// A (chunks, width) table of what `per_chunk` says of every chunk under the drift model.
fn drift_table<'py>(
    py: Python<'py>,
    width: usize,
    calibration_args: &CalibrationArgs<'py>,
    drift_args: &DriftArgs<'py>,
    stats: &ChunkInputs<'py>,
    per_chunk: impl FnOnce(
        &labelfree::Calibration,
        &labelfree::Drift,
        &[labelfree::ChunkStats],
    ) -> crate::Result<Vec<Vec<f64>>>
    + Send,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let cal = calibration(calibration_args)?;
    let drift = drift(drift_args);
    let chunks = chunk_inputs(stats, cal.n_bins())?;
    let rows = run(py, || per_chunk(&cal, &drift, &chunks))?;
    shaped(py, rows.concat(), [chunks.len(), width])
}

/// Per chunk, the drift model's posterior of the common shift δ (logit): mean and sd.
#[pyfunction]
pub(super) fn labelfree_drift_shift<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    drift_args: DriftArgs<'py>,
    stats: ChunkInputs<'py>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    drift_table(
        py,
        2,
        &calibration_args,
        &drift_args,
        &stats,
        |cal, drift, chunks| {
            let shifts = labelfree::drift_shift_posteriors(cal, drift, chunks)?;
            Ok(shifts
                .into_iter()
                .map(|(mean, sd)| vec![mean, sd])
                .collect())
        },
    )
}

/// Per chunk and bin, the logit of the positive rate the drift model's draws centre on
/// (`labelfree::drift_expected_logits`); shape (chunks, bins).
#[pyfunction]
pub(super) fn labelfree_drift_expected_logits<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    drift_args: DriftArgs<'py>,
    stats: ChunkInputs<'py>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let bins = calibration_args.1.len()?;
    drift_table(
        py,
        bins,
        &calibration_args,
        &drift_args,
        &stats,
        labelfree::drift_expected_logits,
    )
}

/// Per chunk, ln P(its known labels | the effect) at every point of the effect's grid
/// (`effect` "shift": the tilt averaged over its prior; "tilt": the shift averaged over the
/// chunk's prior of it; 0 for chunks without labels); shape (chunks, points).
#[pyfunction]
pub(super) fn labelfree_drift_likelihood<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    drift_args: DriftArgs<'py>,
    stats: ChunkInputs<'py>,
    effect: &str,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (points, effect) = match effect {
        "shift" => (drift_args.0.0.len()?, labelfree::Effect::Shift),
        "tilt" => (drift_args.1.0.len()?, labelfree::Effect::Tilt),
        _ => {
            return Err(PyValueError::new_err(format!(
                "effect must be 'shift' or 'tilt', got {effect:?}"
            )));
        }
    };
    drift_table(
        py,
        points,
        &calibration_args,
        &drift_args,
        &stats,
        move |cal, drift, chunks| labelfree::drift_likelihoods(cal, drift, chunks, effect),
    )
}

/// Chunk statistics as Python passes them back (the arrays of [`labelfree_chunk_stats`]).
type ChunkInputs<'py> = (
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    PyReadonlyArray2<'py, f64>,
);

fn chunk_inputs(stats: &ChunkInputs<'_>, k: usize) -> PyResult<Vec<labelfree::ChunkStats>> {
    let parts = [
        &stats.0, &stats.1, &stats.2, &stats.3, &stats.4, &stats.5, &stats.6, &stats.7, &stats.8,
    ]
    .into_iter()
    .map(|a| rows_of(a, k))
    .collect::<PyResult<Vec<_>>>()?;
    let c = parts[0].len();
    if parts.iter().any(|rows| rows.len() != c) {
        return Err(PyValueError::new_err(
            "chunk statistics must have one row per chunk",
        ));
    }
    let [
        counts,
        means,
        concordances,
        pos,
        neg,
        spread,
        ties,
        label_moves,
        label_move_vars,
    ] = <[Vec<Vec<f64>>; 9]>::try_from(parts).expect("nine statistics");
    Ok(counts
        .into_iter()
        .zip(means)
        .zip(concordances)
        .zip(pos.into_iter().zip(neg))
        .zip(spread.into_iter().zip(ties))
        .zip(label_moves.into_iter().zip(label_move_vars))
        .map(
            |(
                (
                    (((counts, mean_score), perfect_concordance), (labelled_pos, labelled_neg)),
                    (spread, tie_factor),
                ),
                (label_move, label_move_var),
            )| {
                labelfree::ChunkStats {
                    counts,
                    mean_score,
                    perfect_concordance,
                    labelled_pos,
                    labelled_neg,
                    label_move,
                    label_move_var,
                    spread,
                    tie_factor,
                }
            },
        )
        .collect())
}

/// The rows of a (chunks, bins) statistic, checked against the calibration's bins.
fn rows_of(a: &PyReadonlyArray2<'_, f64>, k: usize) -> PyResult<Vec<Vec<f64>>> {
    let view = a.as_array();
    if view.ncols() != k {
        return Err(PyValueError::new_err(
            "chunk statistics do not match the calibration's bins",
        ));
    }
    Ok(view.rows().into_iter().map(|r| r.to_vec()).collect())
}

/// The estimate's target and calibration mode from their names.
fn target_and_mode(target: &str, mode: &str) -> PyResult<(labelfree::Target, labelfree::Mode)> {
    let target = match target {
        "population" => labelfree::Target::Population,
        "realized" => labelfree::Target::Realized,
        other => {
            return Err(PyValueError::new_err(format!(
                "target must be \"population\" or \"realized\", got {other:?}"
            )));
        }
    };
    let mode = match mode {
        "reference" => labelfree::Mode::Reference,
        "perfect" => labelfree::Mode::Perfect,
        other => {
            return Err(PyValueError::new_err(format!(
                "calibration must be \"reference\" or \"perfect\", got {other:?}"
            )));
        }
    };
    Ok((target, mode))
}

/// Posterior draws per chunk; shape (chunks, metrics [+ AUC] [+ AP], n). `options` is
/// (target "population"|"realized", calibration "reference"|"perfect", within_bin, want_auc,
/// want_ap);
/// `drift`, if given, is the between-period drift model (reference calibration only);
/// `slices`, if given, the chunks' score slices for average precision; `bin_offset` (with a
/// drift), each chunk's logit offset of each bin's rate (chunks, bins) and the sd (chunks,)
/// by which they move together: a multiclass label shift seen from one class's one-vs-rest
/// bins.
#[pyfunction]
#[pyo3(signature = (calibration_args, stats, metrics, options, n_samples, seed, beta = 1.0, zero_division = 0.0, drift_args = None, slices = None, bin_offset = None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn labelfree_estimate<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    stats: ChunkInputs<'py>,
    metrics: Vec<String>,
    options: (String, String, bool, bool, bool),
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
    drift_args: Option<DriftArgs<'py>>,
    slices: Option<SliceArgs<'py>>,
    bin_offset: Option<(PyReadonlyArray2<'py, f64>, PyReadonlyArray1<'py, f64>)>,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let cal = calibration(&calibration_args)?;
    let parsed = metrics::parse_metrics(&metrics, beta)?;
    let (target, mode) = target_and_mode(&options.0, &options.1)?;
    let chunks = chunk_inputs(&stats, cal.n_bins())?;
    let mut drift = drift_args.as_ref().map(drift);
    if let Some((offset, sd)) = &bin_offset {
        let shape = offset.as_array().shape().to_vec();
        let Some(drift) = drift.as_mut() else {
            return Err(PyValueError::new_err("bin_offset needs drift_args"));
        };
        if shape != [chunks.len(), cal.n_bins()] || sd.len()? != chunks.len() {
            return Err(PyValueError::new_err(format!(
                "bin_offset needs offsets of shape ({}, {}) and one sd per chunk, got {shape:?} \
                 and {}",
                chunks.len(),
                cal.n_bins(),
                sd.len()?
            )));
        }
        // One group of every bin: each chunk's offsets, all moving together by its sd.
        drift.class_shift = Some(labelfree::ClassShift {
            groups: vec![0; cal.n_bins()],
            n_groups: 1,
            offset: flat(offset).into_owned(),
            sd: flat(sd).into_owned(),
            move_sd: 0.0,
            move_loading: Vec::new(),
            move_factor: Vec::new(),
        });
    }
    let settings = labelfree::Settings {
        target,
        mode,
        within_bin: options.2,
        want_auc: options.3,
        want_ap: options.4,
        zero_division,
    };
    let rows = parsed.len() + usize::from(options.3) + usize::from(options.4);
    let n_chunks = chunks.len();
    let slices = slices
        .as_ref()
        .map(|args| score_slices(args, cal.n_bins(), n_chunks))
        .transpose()?;
    let out = run(py, || {
        labelfree::estimate(
            &cal,
            &chunks,
            &parsed,
            settings,
            drift.as_ref(),
            slices.as_ref(),
            n_samples,
            seed,
        )
    })?;
    shaped(py, out, [n_chunks, rows, n_samples])
}

/// Multiclass posterior draws per chunk; shape (chunks, metrics, n). The calibration's bins
/// each hold one predicted class (`predicted`, per bin) and count correct predictions as
/// positives; `error_alpha` (bins, K) are the Dirichlet parameters of the true class of each
/// bin's wrong predictions ((chunks, bins, K): each chunk's own); `known_errors` (chunks,
/// bins, K) the chunks' known wrong predictions by true class. `metrics` are (name, average, class index) specifications.
/// `error_tilt` (chunks, 2, K): per chunk the means and sds of the common tilt of the error
/// shares (None: no tilt). `class_shift` (with a drift): per chunk and bin the mean, and per
/// chunk and class the sd, of the shift shared by the bins of each predicted class (None:
/// none). `tilt_correlation` (K,): per class, the correlation of its tilt with its class
/// shift (None: independent). `class_moves` (with a class shift): the sd of each class's
/// log-odds move, each bin's loading on them (bins, K; or (chunks, bins, K)), and how far each moves each chunk's
/// bin's error shares (chunks, bins, K); see `labelfree::ClassShift` and
/// `labelfree::ErrorModel`. `class_move_factor` (with class moves): per chunk, a
/// lower-triangular factor of the moves' covariance (chunks, K, K), in place of their sd.
#[pyfunction]
#[pyo3(signature = (calibration_args, stats, predicted, error_alpha, known_errors, metrics, target, n_samples, seed, beta = 1.0, zero_division = 0.0, drift_args = None, error_tilt = None, class_shift = None, tilt_correlation = None, class_moves = None, class_move_factor = None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn labelfree_estimate_multiclass<'py>(
    py: Python<'py>,
    calibration_args: CalibrationArgs<'py>,
    stats: ChunkInputs<'py>,
    predicted: Vec<usize>,
    error_alpha: PyReadonlyArrayDyn<'py, f64>,
    known_errors: PyReadonlyArray3<'py, f64>,
    metrics: Vec<(String, String, usize)>,
    target: String,
    n_samples: usize,
    seed: u64,
    beta: f64,
    zero_division: f64,
    drift_args: Option<DriftArgs<'py>>,
    error_tilt: Option<PyReadonlyArray3<'py, f64>>,
    class_shift: Option<(PyReadonlyArray2<'py, f64>, PyReadonlyArray2<'py, f64>)>,
    tilt_correlation: Option<Vec<f64>>,
    class_moves: Option<(
        f64,
        PyReadonlyArrayDyn<'py, f64>,
        PyReadonlyArray3<'py, f64>,
    )>,
    class_move_factor: Option<PyReadonlyArray3<'py, f64>>,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let cal = calibration(&calibration_args)?;
    let (target, mode) = target_and_mode(&target, "reference")?;
    let alpha_shape = error_alpha.as_array().shape().to_vec();
    let n_classes = alpha_shape.last().copied().unwrap_or(0);
    if !(alpha_shape.len() == 2 || alpha_shape.len() == 3) || n_classes < 2 {
        return Err(PyValueError::new_err(format!(
            "error_alpha must be (bins, K) or (chunks, bins, K) with a column per class (at \
             least 2), got shape {alpha_shape:?}"
        )));
    }
    let parsed = metrics
        .iter()
        .map(|(name, average, class)| {
            metrics::MulticlassMetric::from_parts(name, average, *class, beta, n_classes)
        })
        .collect::<crate::Result<Vec<_>>>()?;
    let chunks = chunk_inputs(&stats, cal.n_bins())?;
    let move_share = match &class_moves {
        None => Vec::new(),
        Some((_, _, share)) => {
            let shape = share.as_array().shape().to_vec();
            if shape != [chunks.len(), cal.n_bins(), n_classes] {
                return Err(PyValueError::new_err(format!(
                    "class_moves needs move shares of shape ({}, {}, {n_classes}), got {shape:?}",
                    chunks.len(),
                    cal.n_bins()
                )));
            }
            flat(share).into_owned()
        }
    };
    let errors = labelfree::ErrorModel {
        n_classes,
        predicted,
        alpha: flat(&error_alpha).into_owned(),
        move_share,
    };
    if alpha_shape.len() == 3 && alpha_shape != [chunks.len(), cal.n_bins(), n_classes] {
        return Err(PyValueError::new_err(format!(
            "a per-chunk error_alpha must have shape ({}, {}, {n_classes}), got {alpha_shape:?}",
            chunks.len(),
            cal.n_bins()
        )));
    }
    let shape = known_errors.as_array().shape().to_vec();
    if shape[0] != chunks.len() || shape[1] != cal.n_bins() || shape[2] != n_classes {
        return Err(PyValueError::new_err(format!(
            "known_errors must have shape ({}, {}, {n_classes}), got {shape:?}",
            chunks.len(),
            cal.n_bins()
        )));
    }
    let known: Vec<Vec<f64>> = flat(&known_errors)
        .chunks(cal.n_bins() * n_classes)
        .map(<[f64]>::to_vec)
        .collect();
    let known = if chunks.is_empty() { Vec::new() } else { known };
    let tilts: Vec<Vec<f64>> = match &error_tilt {
        None => Vec::new(),
        Some(tilt) => {
            let shape = tilt.as_array().shape().to_vec();
            if shape != [chunks.len(), 2, n_classes] {
                return Err(PyValueError::new_err(format!(
                    "error_tilt must have shape ({}, 2, {n_classes}), got {shape:?}",
                    chunks.len()
                )));
            }
            flat(tilt)
                .chunks(2 * n_classes)
                .map(<[f64]>::to_vec)
                .collect()
        }
    };
    let mut drift = drift_args.as_ref().map(drift);
    if let (Some(drift), Some((offset, sd))) = (drift.as_mut(), &class_shift) {
        let (offset, sd) = (offset.as_array(), sd.as_array());
        if offset.shape() != [chunks.len(), cal.n_bins()] || sd.shape() != [chunks.len(), n_classes]
        {
            return Err(PyValueError::new_err(format!(
                "class_shift needs offsets of shape ({}, {}) and sds of shape ({}, {n_classes}), \
                 got {:?} and {:?}",
                chunks.len(),
                cal.n_bins(),
                chunks.len(),
                offset.shape(),
                sd.shape()
            )));
        }
        let (move_sd, move_loading) = match &class_moves {
            None => (0.0, Vec::new()),
            Some((move_sd, loading, _)) => {
                let loading = loading.as_array();
                if loading.shape() != [cal.n_bins(), n_classes]
                    && loading.shape() != [chunks.len(), cal.n_bins(), n_classes]
                {
                    return Err(PyValueError::new_err(format!(
                        "class_moves needs a loading of shape ({}, {n_classes}) or ({}, {}, \
                         {n_classes}), got {:?}",
                        cal.n_bins(),
                        chunks.len(),
                        cal.n_bins(),
                        loading.shape()
                    )));
                }
                (*move_sd, loading.iter().copied().collect())
            }
        };
        let move_factor = match (&class_move_factor, &class_moves) {
            (None, _) => Vec::new(),
            (Some(_), None) => {
                return Err(PyValueError::new_err("class_move_factor needs class_moves"));
            }
            (Some(factor), Some(_)) => {
                let shape = factor.as_array().shape().to_vec();
                if shape != [chunks.len(), n_classes, n_classes] {
                    return Err(PyValueError::new_err(format!(
                        "class_move_factor must have shape ({}, {n_classes}, {n_classes}), got \
                         {shape:?}",
                        chunks.len()
                    )));
                }
                flat(factor).into_owned()
            }
        };
        drift.class_shift = Some(labelfree::ClassShift {
            groups: errors.predicted.clone(),
            n_groups: n_classes,
            offset: offset.iter().copied().collect(),
            sd: sd.iter().copied().collect(),
            move_sd,
            move_loading,
            move_factor,
        });
    } else if class_moves.is_some() || class_move_factor.is_some() {
        return Err(PyValueError::new_err(
            "class_moves needs drift_args and class_shift",
        ));
    }
    let settings = labelfree::Settings {
        target,
        mode,
        within_bin: false,
        want_auc: false,
        want_ap: false,
        zero_division,
    };
    let n_chunks = chunks.len();
    let out = run(py, || {
        labelfree::estimate_multiclass(
            &cal,
            &chunks,
            &errors,
            &known,
            &tilts,
            tilt_correlation.as_deref().unwrap_or(&[]),
            &parsed,
            settings,
            drift.as_ref(),
            n_samples,
            seed,
        )
    })?;
    shaped(py, out, [n_chunks, parsed.len(), n_samples])
}

/// Each row of `log_priors` (rows, points) on the uniform grid `values` convolved with
/// N(0, `sds[row]`²); shape (rows, points).
#[pyfunction]
pub(super) fn labelfree_spread_priors<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    log_priors: PyReadonlyArray2<'py, f64>,
    sds: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let shape = log_priors.as_array().dim();
    let (values, log_priors, sds) = (flat(&values), flat(&log_priors), flat(&sds));
    if shape.0 != sds.len() || shape.1 != values.len() {
        return Err(PyValueError::new_err(format!(
            "log_priors must have shape (len(sds), len(values)) = ({}, {}), got {:?}",
            sds.len(),
            values.len(),
            shape
        )));
    }
    let out = run(py, || {
        labelfree::spread_log_priors(&values, &log_priors, &sds)
    })?;
    shaped(py, out, [shape.0, shape.1])
}

/// Per chunk, the log-density of its calibration shift on the grid given every other chunk's
/// labels, production keeping a course through time: `emit` (spreads, chunks, points),
/// `spread` (spreads, points, points), `moves` (moves, points, points), `starts` (starts,
/// points), `log_weight` (moves, spreads × starts); shape (chunks, points).
#[pyfunction]
pub(super) fn labelfree_course_priors<'py>(
    py: Python<'py>,
    emit: PyReadonlyArray3<'py, f64>,
    spread: PyReadonlyArray3<'py, f64>,
    moves: PyReadonlyArray3<'py, f64>,
    starts: PyReadonlyArray2<'py, f64>,
    log_weight: PyReadonlyArray2<'py, f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (points, chunks) = (starts.as_array().ncols(), emit.as_array().shape()[1]);
    let (emit, spread, moves) = (flat(&emit), flat(&spread), flat(&moves));
    let (starts, log_weight) = (flat(&starts), flat(&log_weight));
    let course = crate::course::Course {
        points,
        chunks,
        emit: &emit,
        spread: &spread,
        moves: &moves,
        starts: &starts,
        log_weight: &log_weight,
    };
    let out = run(py, || crate::course::course_priors(&course))?;
    shaped(py, out, [chunks, points])
}
