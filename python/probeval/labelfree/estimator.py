"""Performance without labels: reference-calibrated posterior estimation (SPEC §2.4).

Labels often arrive weeks late, or never. :class:`LabelFreeEstimator` learns, on reference data
with labels, how often each score range is right (``fit``), and then turns scores alone into
posteriors of accuracy, precision, recall, F1, ROC AUC, ... per chunk of production data
(``estimate``) — with the uncertainty of both the reference calibration and the finite data.

Two targets, both needed, and easy to confuse:

- ``target="population"`` (default): the metric of the population the data came from. It
  leaves out the noise of drawing labels, so it does *not* cover the value measured on a chunk
  once labels arrive (only about half the time, by design).
- ``target="realized"``: the posterior predictive of the value that will be measured on exactly
  these rows once their labels arrive. Compare this one with realized values.

The default ``method="hierarchical"`` does not assume that P(label | score) stays put: it learns
from the reference, split into consecutive periods, how much each bin's positive rate moves from
one period to the next (a shift common to all bins plus each bin's own), and how the rate climbs
inside a bin (so that a chunk whose scores sit higher inside a bin gets a higher rate); labels
that have already arrived for some rows of a chunk (``partial_labels=``) update that chunk's
calibration. ``method="pooled"`` is the earlier algorithm: one calibration from the pooled
reference, no drift (narrower, and overconfident on real data whose calibration moves).
"""

from __future__ import annotations

import json
import math
import numbers
import zlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.arrays import LabelledDraws
from probeval._util.classes import encode, is_standard_binary, observed_classes, resolve_labels
from probeval._util.equality import ValueEquality
from probeval._util.frames import is_frame, resolve
from probeval._util.html import HtmlRepr
from probeval._util.jsonable import json_dict
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_count_matrix,
    as_labels,
    as_name_list,
    as_probabilities,
    check_beta,
    check_ci,
    check_memory,
    check_n_samples,
    check_open_unit,
    check_positive,
    check_same_length,
    check_threshold,
    check_value_matrix,
    check_zero_division,
    describe,
    first_missing,
    missing_mask,
)
from probeval.base.metrics import (
    BINARY_METRICS,
    DEFAULT_BINARY,
    DEFAULT_MULTICLASS,
    DEFAULT_MULTICLASS_SCORES,
    MetricSpec,
    canonical_name,
    is_multiclass_name,
    is_score_metric,
    metric_info,
    resolve_metric,
    resolve_score_metric,
)
from probeval.base.posterior import Posterior
from probeval.base.priors import resolve_prior
from probeval.compare.decisions import Decision, decide, no_worse_rope
from probeval.labelfree.chunking import Chunk, make_chunks
from probeval.labelfree.drift import (
    CHUNK_BIN_SD_ARG,
    CONFIDENCE_NOT_MOVED,
    DRIFT_PER_SHIFT,
    LABELLED_SHIFT_SHARE,
    TILT_FROM_CHUNK_ON,
    TILT_NOT_MOVED,
    TILT_UNIFORM_SPREAD,
    UNSEEN_DRIFT,
    UNSEEN_TILT_SHARE,
    Drift,
    LabelConflict,
    conflict_p,
    finer_tilt,
    group_chunks,
    learn_drift,
    learn_drifts,
    merge_periods,
    moved_weight,
    movement_prior_scale,
    period_sums,
    prior_data_conflict,
    production_bin_offsets,
    production_cell_sd,
    production_priors,
    production_walk_priors,
    reference_error_var,
    score_shift_distance,
    shift_diagnostic,
    shift_spread,
    spread_bin_sd,
    spread_shift_priors,
    translated_priors,
    unseen_share,
    widen_shift,
    widen_tilt,
)
from probeval.labelfree.label_shift import (
    adjusted_class_counts,
    adjusted_counts,
    convolved_priors,
    drift_evidence,
    label_shift_log_likelihood,
    located_class_shift,
    located_shift,
    pooled_class_shifts,
    pooled_label_shift_priors,
    shifted_class_shares,
)
from probeval.labelfree.multiclass import (
    AUC_SAMPLING_DRAWS,
    MulticlassBins,
    as_score_matrix,
    auc_correlation,
    auc_coupling,
    bin_classes,
    chunk_class_shifts,
    chunk_error_tilts,
    class_move_loading,
    class_shift_evidence,
    class_shift_sd,
    combine_one_vs_rest,
    confidence_level_map,
    confidence_summary,
    couple,
    drifting_error_alpha,
    error_alpha_from_scores,
    error_movement,
    fit_bins,
    known_errors,
    move_shares,
    period_errors,
    pseudo_scores,
    score_share_moments,
    tilt_class_correlation,
)
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.scores import ScoreSummary, multiclass_score_posteriors
from probeval.labels.value import value_of_cells

__all__ = ["LabelFreeEstimate", "LabelFreeEstimator"]

CALIBRATIONS = ("reference", "perfect")
METHODS = ("hierarchical", "pooled")
TARGETS = ("population", "realized")
WITHIN_BIN = ("concordance", "ties")
SHIFTS = ("covariate", "label")
DEFAULT_METRICS = (*DEFAULT_BINARY, "roc_auc")
#: The binary estimator's metrics of the scores' order, in the order its kernel returns them.
RANKING_METRICS = ("roc_auc", "average_precision")
#: Bins of the reference scores kept for the reference ROC AUC posterior (decisions; saved
#: with the estimator). 256 equal-frequency bins move the AUC by < 1e-4 on 5,000-500,000 rows
#: of a calibrated model, and cost an eighth of 2048.
_REFERENCE_AUC_BINS = 256
_FORMAT = "probeval.LabelFreeEstimator/2"
_FORMAT_MULTICLASS = "probeval.LabelFreeEstimator.multiclass/1"
#: Default reference periods when ``fit`` is not told: consecutive blocks of about this many
#: rows, at least 5 and at most 200 of them. ``estimate`` adds them up into windows the size of
#: its chunks, so that the drift it allows for is the drift between chunk-sized stretches of time.
_PERIOD_ROWS = 1_000
_MAX_BLOCKS = 200
#: Largest ``unseen_drift`` and ``drift_per_shift`` (logit): 2 moves a bin's rate from 50% to 88%.
_MAX_DRIFT_SD = 2.0
#: The shift grid spans at least this many of the largest further sd a chunk's score shift adds.
_SPREAD_GRID_SDS = 5.0
#: Points of the tilt grid once chunks' scores' levels move their tilts (Drift.coupled): as
#: many as the tilt drawn with labels has (each draw spreads its tilt over its point's step).
_COUPLED_TILT_POINTS = 81
#: Fewer windows than this cannot say how much the calibration moves between them.
_MIN_WINDOWS = 5
#: Production's chunks shorter than this are added up to it (as far as the reference's windows
#: allow) when their bin counts are compared with the windows' (:meth:`_comparison_rows`): the
#: rows at which the unseen drift's trigger (:data:`~probeval.labelfree.drift._UNSEEN_RATIO`)
#: was measured and set.
_UNSEEN_ROWS = 5_000.0
#: Below this ``score_shift_p`` a chunk's scores are unlike anything the reference periods showed
#: (CLI warning, chunks plot): with 50 chunks a stable stream raises one by chance every 20 runs.
SCORE_SHIFT_ALERT = 1e-3
#: Bins per chunk of the with-labels ROC AUC posterior. Pairs inside a bin keep their observed
#: concordance, so the point is exact and the spread lost is ~1 / (12 · bins²) of the per-row
#: Bayesian bootstrap's: at 32 the two agree within Monte Carlo error (sd ratios 0.99 to 1.01 on
#: simulated, tied and real chunks of 40 to 5,000 rows) at a sixtieth of the cost of 2,048 bins.
_REALIZED_AUC_BINS = 32
#: Bins per chunk of the with-labels average precision posterior (cut by rows, by positives and
#: at ranks 1, 2, 4... from the top: a few hundred at most), each bin's rows in their observed
#: order (``_core.chunk_score_draws``): the exact value at the counts, and sds 0.99-1.03 of the
#: bootstrap over every distinct score on chunks of 60 to 5,000 rows, 1% to 50% positives,
#: weak or strong rankings, tied or not. 32 let a weak ranking's sd fall to 0.96, 64 to 0.97;
#: in an estimate of 40 chunks of 3,000 rows they added 0.48 / 0.68 / 0.93 s at 32 / 64 / 128,
#: ``ScoreSummary``'s 2,048 bins 3.3 s.
_REALIZED_AP_BINS = 128
#: Slices of a chunk's rows inside each bin for average precision (see ``_score_slices``). With
#: 2% positives the top bin's order is almost all of it: at 2 x 10^6 calibrated rows the
#: posterior mean sat +0.9 sds from the rows' value with 16, +2.5 with 8 (population target, 42
#: chunks of 5,000 rows: the default metrics plus average precision took 3.6x their time with 8
#: slices, 5.3x with 16).
_AP_SLICES = 16


def _is_matrix(y_score: Any) -> bool:
    """Two-dimensional scores (one column per class)."""
    return not isinstance(y_score, (str, bytes)) and np.ndim(y_score) == 2


def _choice(name: str, value: Any, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def _check_n_bins(n_bins: Any) -> int:
    if isinstance(n_bins, (bool, np.bool_)) or not isinstance(n_bins, numbers.Integral):
        raise TypeError(f"n_bins must be an integer, got {describe(n_bins)}")
    if not 1 <= int(n_bins) <= 10_000:
        raise ValueError(f"n_bins must be between 1 and 10000, got {n_bins}")
    return int(n_bins)


def _check_drift_sd(name: str, value: Any) -> float:
    """``unseen_drift`` and ``drift_per_shift``: sds (logit), 0 to ``_MAX_DRIFT_SD``."""
    number = check_positive(name, value, allow_zero=True)
    if number > _MAX_DRIFT_SD:
        raise ValueError(f"{name} must be at most {_MAX_DRIFT_SD:g} (logit), got {number!r}")
    return number


def _check_metrics(metrics: Any) -> list[str]:
    """Binary metric names, canonical; multiclass names (``f1_macro``, ``recall[cat]``,
    ``roc_auc_macro``, ...) pass as given and are resolved at ``fit`` against the classes."""
    names = list(DEFAULT_METRICS) if metrics is None else as_name_list("metrics", metrics)
    resolved = []
    for name in names:
        if key_is_binary(name):
            key = canonical_name(name)
        elif is_multiclass_name(name):
            key = name.strip()
        else:
            if not is_score_metric(name):
                canonical_name(name)  # an unknown name: the catalogue's error lists them all
            raise ValueError(
                f"{name!r} cannot be estimated without labels; available: binary metrics "
                f"({', '.join(BINARY_METRICS)}), roc_auc and average_precision; for "
                f"multiclass scores {', '.join(DEFAULT_MULTICLASS)}, per-class metrics with "
                "_macro, _weighted, _micro or [class], and roc_auc or average_precision with "
                "_macro, _weighted or [class]"
            )
        if key not in resolved:
            resolved.append(key)
    # Never empty: as_name_list refuses an empty list, and every name resolves or raises.
    return resolved


def key_is_binary(name: str) -> bool:
    """A name the binary estimator takes: a binary metric (or alias), roc_auc or
    average_precision."""
    try:
        key = canonical_name(name)
    except ValueError:
        return False
    return key in BINARY_METRICS or key in RANKING_METRICS


def _confidence_dict(kept: tuple[ScoreSummary, np.ndarray] | None) -> dict[str, Any] | None:
    """A multiclass fit's finer confidence calibration (:func:`confidence_summary`) as JSON."""
    if kept is None:
        return None
    summary, restarts = kept
    return {"scores": summary.to_dict(), "restarts": [int(r) for r in restarts]}


def _confidence_from_dict(data: Any) -> tuple[ScoreSummary, np.ndarray] | None:
    """:func:`_confidence_dict`'s inverse, checked like user input (None: not kept)."""
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) != {"scores", "restarts"}:
        raise ValueError(
            "reference_confidence must be null or an object of scores and restarts, got "
            f"{describe(data)}"
        )
    summary = ScoreSummary.from_dict(data["scores"])
    if summary.n_distinct == 0:
        raise ValueError("reference_confidence's scores must hold one score or more")
    restarts = np.asarray(data["restarts"])
    if (
        restarts.ndim != 1
        or (restarts.size and restarts.dtype.kind not in "iu")
        or np.any(np.diff(restarts) <= 0)
        or np.any((restarts <= 0) | (restarts >= summary.n_distinct))
    ):
        raise ValueError(
            "reference_confidence's restarts must be increasing sub-bin indices within "
            f"(0, {summary.n_distinct}), got {describe(data['restarts'])}"
        )
    return summary, restarts.astype(np.int64)


class LabelFreeEstimator(HtmlRepr, ValueEquality):
    """Estimate a binary classifier's performance on data without labels.

    Parameters
    ----------
    n_bins : int
        Equal-frequency bins of the reference scores (an edge at ``threshold`` is added, so
        that no bin mixes predictions).
    threshold : float
        Decision threshold: a row is predicted positive when its score is > threshold. Not
        used for multiclass scores, whose prediction is the column of the highest score.
    metrics : list of str, optional
        Binary metrics, ``roc_auc`` and ``average_precision`` (not by default); default:
        accuracy, precision, recall, specificity, f1, mcc, balanced_accuracy, roc_auc.
    calibration : "reference" or "perfect"
        "reference" (default) learns each bin's positive rate from the reference labels, with its
        uncertainty; "perfect" trusts the scores as probabilities (narrower, and wrong when the
        model is miscalibrated).
    auc_within_bin : "concordance" or "ties"
        How ROC AUC credits pairs within one bin. "ties" (the plain algorithm) gives them ½,
        which biases the AUC low, because scores still rank within a bin; "concordance" (default)
        gives them the bin's concordance measured on the reference data (or, with perfect
        calibration, implied by the scores).
    method : "hierarchical" or "pooled"
        "hierarchical" (default) lets each chunk's calibration differ from the reference by as
        much as the reference's own periods differ from each other (its tilt, how far apart the
        bins' rates are, by half as much again: production runs for longer than the periods
        do), follows the scores inside a bin, and updates a chunk's calibration with its known
        labels (``partial_labels``).
        "pooled" is the earlier algorithm: the pooled reference calibration, unchanged.
    unseen_drift : float
        Method "hierarchical": the standard deviation (logit) of a shift of production's
        calibration away from the reference's that the reference's own periods cannot show,
        added to the drift they do show. Default 0.08 (a bin's positive rate moving 2 points at
        50%): production often runs a year or more after the reference, and a reference that is
        one cross-section, or shuffled, shows no drift at all. It applies where production's
        scores show another population: the chunks of one :meth:`estimate` call vary from the
        reference's bin counts more than the reference's windows do (in full once their median
        Pearson statistic is 2.5 times the windows' median, none up to 1.5, both read at 5,000
        rows whatever the chunks' size; against a reference under 25,000 rows, at the chunks'
        rows between a fifth of it and 5,000; ``drift.unseen_share``), so a production that
        looks like one more reference window gets none (a simulated stationary stream covers
        0.94-0.97, not 0.99-1.00) and a shift of P(y|score) that leaves the scores as they were
        is not covered. Set 0 when the reference spans production's conditions; on real data
        that moved, 0 covers far less (ACS employment precision 0.83). A binary model's
        separation (the tilt: how far apart the bins' logits sit) moves with it by half that
        sd (``drift.UNSEEN_TILT_SHARE``): the 12 ACS designs' ROC AUC covered 0.91 of chunks
        without it, 0.97 with it. Once production rows have labels (``partial_labels``) the
        shift is left out, since they show how far production moved; the tilt, which they pin
        far more loosely, stays.
    drift_per_shift : float
        Method "hierarchical": a further sd (logit) of a chunk's calibration shift per unit of
        how far its scores moved beyond anything the reference's periods showed (the chi
        distance of its bin shares from the reference's, less the periods' own spread; see
        ``score_shift_p`` in :meth:`LabelFreeEstimate.diagnostics`), at most 1 logit; a quarter
        of it once production rows have labels (``partial_labels``: they show how far it
        moved). Default 2: a model's calibration moves when its inputs do. On the real streams
        whose scores moved, the calibration moved by 0.1-1.8 logit per unit of that distance
        (median per stream: NannyML's car loan 0.12, ACS employment 0.2-0.5, a change of
        measurement in NOAA's rainfall 1-1.8, ACS employment with a model that sees only
        demographics or education 0.8-1.5); with 0.5, the last two covered accuracy in 0.75
        and 0.52-0.74 of chunks, with 2 in 0.90 and 0.64-0.95. Each bin's own deviation gets
        half that sd more (labels then pin the chunk's common shift, not the shape of its
        calibration). The spread is symmetric in logit and the chunk's rates are centred so
        that averaged over it they are the reference's. 0: the chunk's scores do not matter.
        Binary calibrations only (a multiclass model's one-vs-rest ones included, not its
        confidence calibration).
    shift : "covariate" or "label"
        What moved between the reference and production, which the scores alone cannot tell
        (a location shift of calibrated scores looks much like a change of prevalence).
        "covariate" (default): the mix of cases, P(y | score) carrying over up to the drift
        above. "label": the prevalence, each class's scores carrying over (P(score | y) the
        reference's), as when fraud, a disease or churn becomes more common while each case
        looks as before. Every score's odds of being positive then move by the prevalence's
        odds ratio, which each chunk's bin counts show (a multinomial likelihood, the binned
        form of Saerens et al.'s 2002 EM estimate; :mod:`probeval.labelfree.label_shift`), read
        with the other chunks' (a binary fit's chunks share a prior of their label shifts,
        learned from all of them: none where none moved, so that a stable stream costs no more
        than the default), and the drift, the unseen drift and ``drift_per_shift`` apply to
        how far the scores moved beyond it. Simulated label shift (prevalence odds x 1.3):
        accuracy, precision and recall cover 0.96-0.97 of chunks with errors 0.21-0.27 times
        the default's (which covers 0.65-0.69); on a covariate shift it covers 0.53-0.56
        (docs/labelfree-record.md).
        A multiclass fit's classes each move their own way, shown by each chunk's confidence
        bins (each holds the reference's classes times e^g_k), which moves every bin's
        correct rate and its mistakes' classes together, and the one-vs-rest ranking
        metrics' bins too. Method "hierarchical" and calibration "reference" only.

    Examples
    --------
    >>> import numpy as np, probeval as pe
    >>> rng = np.random.default_rng(0)
    >>> ref_scores = rng.beta(1.3, 2.0, 20_000)
    >>> ref_labels = rng.random(20_000) < ref_scores
    >>> estimator = pe.LabelFreeEstimator().fit(ref_labels, ref_scores)
    >>> result = estimator.estimate(rng.beta(1.3, 2.0, 5_000), n_chunks=2, rng=0)
    >>> post = result.posterior("accuracy", chunk=0)
    """

    def __init__(
        self,
        n_bins: int = 10,
        threshold: float = 0.5,
        metrics: Any = None,
        calibration: str = "reference",
        auc_within_bin: str = "concordance",
        method: str = "hierarchical",
        unseen_drift: float = UNSEEN_DRIFT,
        drift_per_shift: float = DRIFT_PER_SHIFT,
        shift: str = "covariate",
    ) -> None:
        self.n_bins: int = _check_n_bins(n_bins)
        self.threshold: float = check_threshold(threshold)
        self.metrics: list[str] = _check_metrics(metrics)
        # Multiclass scores get the multiclass defaults when no metrics were named.
        self._default_metrics = metrics is None
        self.calibration: str = _choice("calibration", calibration, CALIBRATIONS)
        self.auc_within_bin: str = _choice("auc_within_bin", auc_within_bin, WITHIN_BIN)
        self.method: str = _choice("method", method, METHODS)
        self.unseen_drift: float = _check_drift_sd("unseen_drift", unseen_drift)
        self.drift_per_shift: float = _check_drift_sd("drift_per_shift", drift_per_shift)
        self.shift: str = _choice("shift", shift, SHIFTS)
        if self.shift == "label" and (method != "hierarchical" or calibration != "reference"):
            raise ValueError(
                f'shift="label" needs method="hierarchical" and calibration="reference" (it moves '
                f"the reference's calibration by what the scores show), got method={method!r}, "
                f"calibration={calibration!r}"
            )
        self._fitted: dict[str, Any] | None = None

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        data: Any = None,
        /,
        y_score: Any = None,
        *,
        y_true: Any = None,
        pos_label: Any = None,
        periods: Any = None,
        labels: Any = None,
    ) -> LabelFreeEstimator:
        """Learn the calibration from reference labels and scores (probabilities in [0, 1]).

        Parameters
        ----------
        data : array-like or data frame
            The labels (``fit(y_true, y_score)``), or a data frame whose columns ``y_true``,
            ``y_score`` (and ``periods``) name.
        y_score : array-like or column name(s)
            Scores P(y = 1); or, for a multiclass model, an (n, K) matrix of class
            probabilities with one column per class in ``labels`` order, as from
            ``predict_proba`` (with a data frame: the list of its K columns). Two columns are
            binary scores (the second column's class is the positive one).
        y_true : array-like or column name, optional
            The labels by keyword, or a column of ``data``.
        pos_label : optional
            The positive class, when the labels are not 0/1 or False/True.
        periods : int, array-like or column name, optional
            The reference's periods, from which the drift of the calibration is learned: a
            period label per row (e.g. the month), or a number of consecutive blocks of rows.
            Default: consecutive blocks of about 1,000 rows (5 to 200 of them), which
            :meth:`estimate` adds up into stretches as long as its chunks (at least 5), so that
            the drift allowed for is the drift between chunk-sized windows. Rows are taken to
            be in time order; shuffled reference rows show no drift. Declared periods are used
            as they are, whatever the chunk size.
        labels : list, optional
            Multiclass scores: the class of each column (default: the sorted classes of
            ``y_true``). Labels may be of any hashable type; strings and integers give the
            same estimates.
        """
        if is_frame(data):
            columns = resolve(data, y_true=y_true, y_score=y_score, periods=periods)
            y_true, y_score, periods = columns["y_true"], columns["y_score"], columns["periods"]
        elif data is not None:
            if y_true is not None:
                raise TypeError("pass the labels once: positionally or as y_true=..., not both")
            y_true = data
        if y_true is None or y_score is None:
            raise TypeError("fit needs the reference labels and scores: fit(y_true, y_score)")
        truth = as_labels("y_true", y_true)
        if _is_matrix(y_score):
            matrix = as_score_matrix("y_score", y_score)
            check_same_length(y_true=truth, y_score=matrix)
            classes = resolve_labels(observed_classes(truth), labels, None)
            if len(classes) != matrix.shape[1]:
                raise ValueError(
                    f"y_score has {matrix.shape[1]} columns but there are {len(classes)} "
                    f"classes {classes!r}; the columns must follow labels (default: the sorted "
                    "classes of y_true) — pass labels=[...] naming every column's class"
                )
            if len(classes) > 2:
                if pos_label is not None:
                    raise ValueError("pos_label is for binary scores; multiclass scores have none")
                return self._fit_multiclass(truth, matrix, classes, periods)
            # Two columns, as predict_proba gives binary scores: the second class's column.
            y_score, pos_label = matrix[:, 1], classes[1]
        elif labels is not None:
            raise ValueError("labels=... names the columns of multiclass (n, K) scores")
        scores = as_probabilities("y_score", y_score)
        check_same_length(y_true=truth, y_score=scores)
        self._check_binary_metrics()
        order = resolve_labels(observed_classes(truth), None, pos_label)
        if len(order) != 2:
            raise ValueError(f"y_true must be binary, found classes {order!r}")
        if pos_label is None and not is_standard_binary(order):
            raise ValueError(
                f"y_true has the classes {order!r}; pass pos_label=... to say which one the "
                "scores are the probability of"
            )
        positive = encode(truth, order) == 1
        _check_both_classes(float(positive.sum()), float((~positive).sum()), order)
        period, n_periods = _periods(periods, scores.shape[0])
        calibration = _core.labelfree_fit(scores, positive, self.n_bins, self.threshold)
        sums = period_sums(
            calibration[0],
            scores,
            positive.astype(np.float64),
            (~positive).astype(np.float64),
            period,
            n_periods,
        )
        # The reference's own posteriors (for "no worse than reference" decisions), from the
        # arrays validated above.
        cells = np.bincount(positive * 2 + (scores > self.threshold), minlength=4)
        values, pos_counts, neg_counts = _core.unique_scores(scores, positive, None)
        summary = ScoreSummary(values, pos_counts, neg_counts, labels=(order[0], order[1]))
        self._store(calibration, cells.astype(np.float64), summary, sums, periods is not None)
        return self

    def fit_summary(self, summary: Any) -> LabelFreeEstimator:
        """Fit from :class:`ScoreSummary` objects of the reference data (unweighted) instead of
        its rows. One summary gives exactly the calibration :meth:`fit` gives on those rows,
        but no drift (a summary has no time order); a list of summaries, one per reference
        period, gives the drift too — the same as ``fit(..., periods=...)`` on the rows.
        Summaries of parts of the data can be built where the data live and added up (``+``):
        see :mod:`probeval.dask`."""
        parts = list(summary) if isinstance(summary, (list, tuple)) else [summary]
        if not parts:
            raise ValueError("fit_summary needs at least one ScoreSummary")
        self._check_binary_metrics()
        for part in parts:
            if not isinstance(part, ScoreSummary):
                raise TypeError(f"fit_summary needs ScoreSummary objects, got {describe(part)}")
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        if total.n_distinct == 0:
            raise ValueError("the ScoreSummary is empty")
        values, pos, neg = total.values, total.positives, total.negatives
        _check_both_classes(float(pos.sum()), float(neg.sum()), list(total.labels))
        if values[0] < 0 or values[-1] > 1:
            raise ValueError("reference scores must be probabilities in [0, 1]")
        calibration = _core.labelfree_fit_counts(values, pos, neg, self.n_bins, self.threshold)
        sums = period_sums(
            calibration[0],
            np.concatenate([p.values for p in parts]),
            np.concatenate([p.positives for p in parts]),
            np.concatenate([p.negatives for p in parts]),
            np.repeat(np.arange(len(parts)), [p.n_distinct for p in parts]),
            len(parts),
        )
        above = values > self.threshold
        # Cells (TN, FP, FN, TP): negatives below / above the threshold, positives likewise.
        cells = np.array([neg[~above].sum(), neg[above].sum(), pos[~above].sum(), pos[above].sum()])
        self._store(calibration, cells, total, sums, True)
        return self

    def _store(
        self,
        calibration: tuple[np.ndarray, ...],
        cells: np.ndarray,
        summary: ScoreSummary,
        sums: np.ndarray,
        declared: bool,
    ) -> None:
        edges, pos, neg, concordance, se, spread = calibration
        confusion = ConfusionMatrix._from_matrix(cells.reshape(2, 2), [0, 1], weighted=False)
        self._fitted = {
            "kind": "binary",
            "score_scale": 1.0,
            "labels": list(summary.labels),
            "edges": edges,
            "positives": pos,
            "negatives": neg,
            "concordance": concordance,
            "concordance_se": se,
            "spread": spread,
            "reference_confusion": confusion,
            "reference_scores": summary.binned(_REFERENCE_AUC_BINS),
            "reference_observed": _ranking_observed(summary),
            "period_sums": sums,
            "periods_declared": declared,
        }

    def _check_binary_metrics(self) -> None:
        multiclass = [m for m in self.metrics if not key_is_binary(m)]
        if multiclass:
            raise ValueError(
                f"metrics: {', '.join(map(repr, multiclass))} name multiclass metrics, and these "
                "are binary scores (one per row, or two columns): use the binary names "
                "(accuracy, f1, roc_auc, ...)"
            )

    def _multiclass_specs(self, classes: list[Any]) -> list[MetricSpec]:
        names = (
            [*DEFAULT_MULTICLASS, *DEFAULT_MULTICLASS_SCORES]
            if self._default_metrics
            else self.metrics
        )
        specs: list[MetricSpec] = []
        for name in names:
            if is_score_metric(name):
                spec = resolve_score_metric(name, classes, binary=False)
            else:
                spec = resolve_metric(name, classes, binary=False)
            if spec.name not in [s.name for s in specs]:
                specs.append(spec)
        return specs

    def _fit_multiclass(
        self, truth: np.ndarray, matrix: np.ndarray, classes: list[Any], periods: Any
    ) -> LabelFreeEstimator:
        """Multiclass fit: confidence bins per predicted class with the correct rate and the
        error shares of each, their drift over the reference periods, and one binary
        (one-vs-rest) estimator per class for ROC AUC and average precision (see
        :mod:`probeval.labelfree.multiclass`)."""
        if self.calibration == "perfect":
            raise ValueError(
                'calibration="perfect" is for binary scores; multiclass scores are calibrated '
                'on the reference (calibration="reference")'
            )
        specs = self._multiclass_specs(classes)
        codes = encode(truth, classes)
        k = len(classes)
        for c in range(k):
            if not np.any(codes == c):
                raise ValueError(
                    f"the reference's y_true has no rows of the class {classes[c]!r}: the "
                    "calibration needs labelled rows of every class; add reference rows of it, "
                    "or leave the class out of labels and its column out of y_score"
                )
        bins, u, right = fit_bins(matrix, codes, self.n_bins)
        period, n_periods = _periods(periods, matrix.shape[0])
        right_f = right.astype(np.float64)
        sums = period_sums(bins.edges, u, right_f, 1.0 - right_f, period, n_periods)
        errors = period_errors(bins, u, codes, right, period, n_periods)
        ovr = []
        if any(spec.kernel == "scores" for spec in specs):
            wanted = _one_vs_rest_metrics([spec for spec in specs if spec.kernel == "scores"])
            for c in range(k):
                one = LabelFreeEstimator(
                    n_bins=self.n_bins,
                    metrics=wanted,
                    auc_within_bin=self.auc_within_bin,
                    method=self.method,
                    unseen_drift=self.unseen_drift,
                    drift_per_shift=self.drift_per_shift,
                )
                ovr.append(one.fit(codes == c, matrix[:, c], periods=periods))
        # The predicted class as pseudo_scores (and evaluate) take it: the first highest score.
        predicted = np.argmax(matrix, axis=1)
        confusion = _class_confusion(codes, predicted, classes)
        self._fitted = self._multiclass_state(
            list(classes), specs, bins, confusion, sums, periods is not None, ovr, errors
        )
        self._fitted["auc_correlation"] = auc_correlation(codes, matrix)
        # Each one-vs-rest bin's rows by true class: what a label shift does to its rate.
        self._fitted["ovr_class_counts"] = [
            _ovr_class_counts(one, matrix[:, c], codes, k) for c, one in enumerate(ovr)
        ]
        self._fitted["reference_confidence"] = confidence_summary(
            u, predicted, right, k, _REFERENCE_AUC_BINS
        )
        return self

    @staticmethod
    def _multiclass_state(
        labels: list[Any],
        specs: list[MetricSpec],
        bins: MulticlassBins,
        confusion: ConfusionMatrix,
        sums: np.ndarray,
        declared: bool,
        ovr: list[LabelFreeEstimator],
        errors: np.ndarray | None,
    ) -> dict[str, Any]:
        """``errors``: the reference's wrong predictions per period, bin and true class
        (:func:`period_errors`; None in a fit saved before they were kept)."""
        scale = len(labels) - 1.0
        return {
            "kind": "multiclass",
            "labels": labels,
            "specs": specs,
            "bins": bins,
            "edges": bins.edges,
            "positives": bins.correct,
            "negatives": bins.wrong,
            "concordance": np.full(bins.n_bins, 0.5),
            "concordance_se": np.zeros(bins.n_bins),
            "spread": np.zeros(0),
            "reference_confusion": confusion,
            "period_sums": sums,
            "periods_declared": declared,
            "score_scale": scale,
            "ovr": ovr,
            "period_errors": errors,
        }

    @property
    def is_fitted(self) -> bool:
        return self._fitted is not None

    def _state(self) -> dict[str, Any]:
        if self._fitted is None:
            raise ValueError("this LabelFreeEstimator is not fitted yet: call fit(y_true, y_score)")
        return self._fitted

    @property
    def bin_edges(self) -> np.ndarray:
        """All bin edges, from 0 to 1 (the threshold among them)."""
        state = self._state()
        edges: np.ndarray = np.concatenate([[0.0], state["edges"], [1.0]])
        return edges

    @property
    def bin_table(self) -> Table:
        """Per bin: edges, prediction, reference counts, positive rate and concordance. For a
        multiclass fit, per (predicted class, confidence) bin: the confidence range, the
        reference's correct and wrong predictions, the rate of correct ones, and where the
        wrong ones truly belong (the shares the model draws from, prior included)."""
        state = self._state()
        if state["kind"] == "multiclass":
            return _multiclass_bin_table(state["bins"], state["labels"], self._rate_centres())
        edges = self.bin_edges
        pos, neg = state["positives"], state["negatives"]
        return Table(
            {
                "low": edges[:-1].tolist(),
                "high": edges[1:].tolist(),
                "predicted": (edges[:-1] >= self.threshold).astype(int).tolist(),
                "positives": pos.tolist(),
                "negatives": neg.tolist(),
                "positive_rate": _rate_means(pos, neg, self._rate_centres()).tolist(),
                "concordance": state["concordance"].tolist(),
            },
            title="reference calibration",
        )

    def _rate_centres(self) -> np.ndarray:
        """The centre of each bin's rate prior (the core's ``Calibration::rate_prior``, two
        rows' weight): what the scores say of the bin's rate, its reference rows' mean score
        (a multiclass model's confidence bins: their mean confidence, :func:`confidence_level_map`);
        the reference's overall rate in a bin without rows. Kept within half a row of 0 and 1
        of the reference's size, where the overall rate's prior sat."""
        state = self._state()
        sums = state["period_sums"].sum(axis=0)
        rows, total = sums[:, 0], sums[:, 2]
        if state["kind"] == "multiclass":
            offset, scale = confidence_level_map(state["bins"])
            total = offset * rows + scale * total
        pos, neg = float(state["positives"].sum()), float(state["negatives"].sum())
        overall = (pos + 1.0) / (pos + neg + 2.0)
        mean = np.where(rows > 0, total / np.maximum(rows, 1e-300), overall)
        floor = 0.5 / (pos + neg + 1.0)
        out: np.ndarray = np.clip(mean, floor, 1.0 - floor)
        return out

    def _fine_calibration(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]] | None:
        """The reference's scores on a finer grid than the bins (upper scores, positives,
        negatives, and the sub-bins where the monotone fit restarts), which places a chunk's
        labelled rows inside their bins (the core's ``FineCalibration``): labels that arrive
        depending on the score, the highest scores reviewed first, come from one end of a
        bin. A binary fit's is its kept score summary (:data:`_REFERENCE_AUC_BINS` sub-bins);
        a multiclass fit's, its confidence pseudo-scores' right predictions
        (:func:`confidence_summary`). None in a multiclass fit saved before they were kept."""
        state = self._state()
        if state["kind"] == "multiclass":
            kept = state.get("reference_confidence")
            if kept is None:
                return None
            summary, restarts = kept
        else:
            summary, restarts = state["reference_scores"], np.zeros(0, dtype=np.int64)
        return (
            np.ascontiguousarray(summary.values, dtype=np.float64),
            np.ascontiguousarray(summary.positives, dtype=np.float64),
            np.ascontiguousarray(summary.negatives, dtype=np.float64),
            [int(r) for r in restarts],
        )

    def _calibration_args(self) -> tuple[Any, ...]:
        state = self._state()
        return (
            state["edges"],
            state["positives"],
            state["negatives"],
            state["concordance"],
            state["concordance_se"],
            # The reference scores' spread per bin (none in a fit saved before it was kept:
            # the concordances then hold in every chunk as they are).
            state["spread"],
            self._rate_centres(),
            # Multiclass bins predict their class, not by a threshold: none of them lies above 1.
            self.threshold if state["kind"] == "binary" else 1.0,
        )

    # ------------------------------------------------------------------ estimation

    def estimate(
        self,
        data: Any = None,
        /,
        *,
        y_score: Any = None,
        target: str = "population",
        y_true: Any = None,
        partial_labels: Any = None,
        chunk_size: Any = None,
        n_chunks: Any = None,
        period: Any = None,
        timestamps: Any = None,
        n_samples: int = 10_000,
        rng: Any = None,
        ci: float = 0.95,
        beta: float = 1.0,
        zero_division: Any = 0.0,
    ) -> LabelFreeEstimate:
        """Posteriors of the metrics on scores without labels, per chunk.

        Parameters
        ----------
        data : array-like or data frame
            The scores P(y = 1) in [0, 1]; or a data frame whose columns ``y_score``,
            ``y_true`` and ``timestamps`` name.
        y_score : array-like or column name, optional
            The scores by keyword, or a column of ``data``.
        target : "population" or "realized"
            The population metric, or the posterior predictive of the value these rows will
            show once labelled (see the module docstring).
        y_true : array-like, optional
            Labels of these rows, if they exist (e.g. in a backtest): each chunk then also
            reports the realized value and its with-labels posterior next to the estimate.
        partial_labels : array-like or column name, optional
            The labels known so far, aligned with the scores, missing ones as NaN, None or
            pandas NA (a reviewed sample, the cases resolved first, only the predicted
            positives...). They update each chunk's calibration (method "hierarchical"), and the
            realized target counts them as they are and predicts only the rest. Assumed: whether
            a row's label is known depends on its scores (and time) only, not on the label.
            Labels from one end of the scores (the highest, or a multiclass model's surest
            predictions, reviewed first) are placed where they sit in their bins, but say less
            of the other bins than a random sample of the same size.
        chunk_size, n_chunks, period, timestamps :
            Chunking (at most one of the first three): ``chunk_size`` rows per chunk,
            ``n_chunks`` nearly equal chunks, or one chunk per ``period`` ("h", "D", "W", "M",
            "Q", "Y") of ``timestamps``. Default: one chunk.
        n_samples : int
            Posterior draws per chunk and metric.
        rng : None, int, Generator or SeedSequence
        ci : float
            Probability of the HDIs in summaries and of the "no worse than reference" decision.
        beta, zero_division :
            As in :func:`probeval.evaluate`.
        """
        self._state()  # fitted?
        if is_frame(data):
            columns = resolve(
                data,
                y_score=y_score,
                y_true=y_true,
                timestamps=timestamps,
                partial_labels=partial_labels,
            )
            y_score, y_true, timestamps, partial_labels = (
                columns["y_score"],
                columns["y_true"],
                columns["timestamps"],
                columns["partial_labels"],
            )
        elif data is not None:
            if y_score is not None:
                raise TypeError("pass the scores once: positionally or as y_score=..., not both")
            y_score = data
        if y_score is None:
            raise TypeError("estimate needs the scores: estimate(y_score)")
        target = _choice("target", target, TARGETS)
        kind = self._state()["kind"]
        run = self._estimate_multiclass if kind == "multiclass" else self._estimate_binary
        return run(
            y_score,
            target=target,
            y_true=y_true,
            partial_labels=partial_labels,
            chunking={
                "chunk_size": chunk_size,
                "n_chunks": n_chunks,
                "period": period,
                "timestamps": timestamps,
            },
            n_samples=n_samples,
            rng=rng,
            ci=ci,
            beta=beta,
            zero_division=zero_division,
        )

    def _estimate_binary(
        self,
        y_score: Any,
        *,
        target: str,
        y_true: Any,
        partial_labels: Any,
        chunking: dict[str, Any],
        n_samples: int,
        rng: Any,
        ci: float,
        beta: float,
        zero_division: Any,
        drift_model: Drift | None = None,
        shift_diagnostic: bool = True,
        sampling_only: bool = False,
        share: float = 1.0,
        class_label_shift: tuple[np.ndarray, np.ndarray, np.ndarray, int] | None = None,
    ) -> LabelFreeEstimate:
        """:meth:`estimate` for a binary fit; ``drift_model``: the drift to allow for instead of
        this estimator's own (a multiclass fit's classes share the sd of the bins' deviations);
        ``shift_diagnostic``: whether the diagnostics include the posterior of each chunk's
        calibration shift (a multiclass fit's one-vs-rest estimates, whose diagnostics nobody
        reads, skip it: a fifth of a K = 10 estimate's time); ``sampling_only``: ROC AUC alone,
        with no drift at all, as method "pooled" draws it (a multiclass fit's classes' AUC
        sampling variances); ``share``: with ``drift_model``, how far production's scores moved
        (:meth:`_unseen_share`, the multiclass fit's), which a binary fit finds itself;
        ``class_label_shift``: a multiclass fit's label shift in each chunk (chunks, K) and
        its covariance, the reference's rows of each class in this one-vs-rest fit's bins
        (bins, K), and its class, which move each bin's rate by its own offset."""
        if _is_matrix(y_score):
            matrix = as_score_matrix("y_score", y_score)
            if matrix.shape[1] != 2:
                raise ValueError(
                    f"y_score has {matrix.shape[1]} columns, but the estimator was fitted on "
                    "binary scores"
                )
            y_score = matrix[:, 1]
        scores = as_probabilities("y_score", y_score)
        chunks = make_chunks(scores.shape[0], **chunking)
        truth = None
        if y_true is not None:
            truth = as_labels("y_true", y_true)
            check_same_length(y_true=truth, y_score=scores)
        known = None
        if partial_labels is not None:
            known = _known_labels(partial_labels, self._state()["labels"])
            check_same_length(partial_labels=known, y_score=scores)
        n = check_n_samples(n_samples)
        ci = check_ci(ci)
        beta = check_beta(beta)
        zd = check_zero_division(zero_division)
        seed = seed_from(rng)
        order = np.concatenate([chunk.rows for chunk in chunks])
        starts = np.cumsum([0] + [chunk.n_rows for chunk in chunks[:-1]]).tolist()
        arranged = np.ascontiguousarray(scores[order])
        calibration = self._calibration_args()
        concordance = self.calibration == "perfect" and self.auc_within_bin == "concordance"
        stats = _core.labelfree_chunk_stats(
            calibration,
            arranged,
            starts,
            concordance,
            None if known is None else np.ascontiguousarray(known[order]),
            None if known is None else self._fine_calibration(),
        )
        # A multiclass fit's sampling pass needs ROC AUC's draws only (AP triples the cost).
        metrics = ["roc_auc"] if sampling_only else self.metrics
        binary = [m for m in metrics if m not in RANKING_METRICS]
        want_auc = "roc_auc" in metrics
        want_ap = "average_precision" in metrics
        within = self.auc_within_bin == "concordance"
        options = (target, self.calibration, within, want_auc, want_ap)
        # With labels, the realized ROC AUC and average precision have draws of their own.
        realized_ranking = (truth is not None) * (int(want_auc) + int(want_ap))
        check_memory(
            n * len(chunks) * (len(metrics) + realized_ranking),
            request=f"n_samples={n:,} for {len(metrics)} metric(s) in {len(chunks):,} chunks",
            alternative="ask for fewer n_samples, or fewer (larger) chunks",
        )
        # A binary fit's own drift (a multiclass fit's one-vs-rest classes bring theirs).
        own = drift_model is None
        # What the scores' movement says of the calibration: with a label shift, what is left
        # of it once the chunk's prevalence is taken back out.
        moved = self._label_shift_counts(chunks, np.asarray(stats[0])) if own else None
        counts, label_room = (np.asarray(stats[0]), None) if moved is None else moved
        # A multiclass fit's label shift, seen from this one-vs-rest class's bins.
        label = None
        if class_label_shift is not None:
            mean, cov, class_counts, c = class_label_shift
            label = _ClassLabelShift(
                mean,
                cov,
                _one_vs_rest_shares(class_counts),
                np.full(class_counts.shape[0], c),
                counts,
                np.asarray(stats[3]) + np.asarray(stats[4]),
            )
            counts = label.counts
        if drift_model is None:
            share = self._unseen_share(chunks, counts, _any_known(known))
            drift_model = self._drift_for(chunks, _any_known(known), share)
        if moved is not None or label is not None:
            drift_model = _label_shift_drift(drift_model)
        drift, conflict = None, None
        if not sampling_only:
            drift, conflict = self._drift_args(
                drift_model,
                calibration,
                stats,
                share,
                counts,
                label_room,
                label_offset=None if label is None else label.read_by_labels,
            )
        if own and drift is not None and _any_known(known):
            calibration, expected = self._moved_calibration(
                calibration, drift_model, drift, stats, share
            )
            drift = self._labelled_cell_sd(expected, drift_model, drift, stats, share, counts)
        slices = None
        if want_ap:
            slices = _score_slices(arranged, starts, np.asarray(calibration[0]), _AP_SLICES)
        draws = _core.labelfree_estimate(
            calibration,
            stats,
            binary,
            options,
            n,
            derive(seed, 0),
            beta,
            zd,
            drift,
            slices,
            None if label is None or drift is None else (label.offsets, label.offset_sd()),
        )
        diagnostics = self._diagnostics(
            stats,
            calibration,
            drift_model,
            drift if shift_diagnostic else None,
            counts,
            conflict if shift_diagnostic else None,
        )
        names = binary + [m for m in RANKING_METRICS if m in metrics]
        positive = None if truth is None else self._positive(truth)
        auc_realized = ap_realized = None
        if positive is not None and want_auc:
            auc_realized = _core.chunk_score_draws(
                arranged, positive[order], starts, _REALIZED_AUC_BINS, n, derive(seed, 3), "roc_auc"
            )
        if positive is not None and want_ap:
            ap_realized = _core.chunk_score_draws(
                arranged,
                positive[order],
                starts,
                _REALIZED_AP_BINS,
                n,
                derive(seed, 5),
                "average_precision",
            )
        results = []
        for chunk in chunks:
            estimates = {
                name: Posterior(
                    name,
                    samples=np.ascontiguousarray(draws[chunk.index, row]),
                    bounds=metric_info(name).bounds,
                )
                for row, name in enumerate(names)
            }
            realized: dict[str, tuple[float, Posterior | None]] = {}
            if positive is not None:
                labels, chunk_scores = positive[chunk.rows], scores[chunk.rows]
                realized = self._realized(
                    labels, chunk_scores, binary, n, seed, chunk.index, beta, zd
                )
                for name, drawn in (("roc_auc", auc_realized), ("average_precision", ap_realized)):
                    if drawn is not None:
                        observed, value_draws = drawn
                        realized[name] = _realized_score_metric(
                            name, float(observed[chunk.index]), value_draws[chunk.index]
                        )
            results.append(_ChunkResult(chunk, estimates, realized))
        return LabelFreeEstimate(
            results,
            names,
            reference=_ReferencePosteriors(self, names, n, beta, zd),
            target=target,
            calibration=self.calibration,
            method=self.method,
            ci=ci,
            counts=np.asarray(stats[0]),
            diagnostics=diagnostics,
            shift=self.shift,
            conflict=conflict if shift_diagnostic else None,
        )

    def _estimate_multiclass(
        self,
        y_score: Any,
        *,
        target: str,
        y_true: Any,
        partial_labels: Any,
        chunking: dict[str, Any],
        n_samples: int,
        rng: Any,
        ci: float,
        beta: float,
        zero_division: Any,
    ) -> LabelFreeEstimate:
        """:meth:`estimate` for a multiclass fit (see :mod:`probeval.labelfree.multiclass`)."""
        state = self._state()
        labels: list[Any] = state["labels"]
        bins = state["bins"]
        specs: list[MetricSpec] = state["specs"]
        matrix = as_score_matrix("y_score", y_score, len(labels))
        chunks = make_chunks(matrix.shape[0], **chunking)
        truth = None
        if y_true is not None:
            truth = as_labels("y_true", y_true)
            check_same_length(y_true=truth, y_score=matrix)
            truth = self._class_codes(truth)
        known = None
        if partial_labels is not None:
            known = _known_labels(partial_labels, labels)
            check_same_length(partial_labels=known, y_score=matrix)
        n = check_n_samples(n_samples)
        ci = check_ci(ci)
        beta = check_beta(beta)
        zd = check_zero_division(zero_division)
        seed = seed_from(rng)
        order = np.concatenate([chunk.rows for chunk in chunks])
        starts = np.cumsum([0] + [chunk.n_rows for chunk in chunks[:-1]]).tolist()
        predicted, u = pseudo_scores(matrix)
        right, table = known_errors(bins, u, predicted, known, [chunk.rows for chunk in chunks])
        calibration = self._calibration_args()
        stats = _core.labelfree_chunk_stats(
            calibration,
            np.ascontiguousarray(u[order]),
            starts,
            False,
            None if right is None else np.ascontiguousarray(right[order]),
            None if right is None else self._fine_calibration(),
        )
        confusion_specs = [spec for spec in specs if spec.kernel != "scores"]
        score_specs = [spec for spec in specs if spec.kernel == "scores"]
        classes_needed = len(labels) * len(_one_vs_rest_metrics(score_specs)) if score_specs else 0
        check_memory(
            n * len(chunks) * (len(specs) + classes_needed),
            request=f"n_samples={n:,} for {len(specs)} metric(s) in {len(chunks):,} chunks",
            alternative="ask for fewer n_samples, or fewer (larger) chunks",
        )
        # With a label shift: each chunk's, and its bin counts with it taken back out.
        label = self._class_label_shift(chunks, stats)
        counts = np.asarray(stats[0]) if label is None else label.counts
        share = self._unseen_share(chunks, counts, _any_known(known))
        drift_model = self._drift_for(chunks, _any_known(known), share)
        if label is not None:
            drift_model = _label_shift_drift(drift_model)
        drift, conflict = self._drift_args(
            drift_model,
            calibration,
            stats,
            share,
            None if label is None else counts,
            label_offset=None if label is None else label.read_by_labels,
        )
        if conflict is not None:
            offsets = None if label is None else label.offsets
            conflict = self._class_conflict(conflict, chunks, stats, drift_model, share, offsets)
        draws = np.empty((len(chunks), 0, n))
        if confusion_specs:
            from_scores, moves, factor = None, None, None
            if self.method != "pooled":
                group = np.repeat(np.arange(len(chunks)), [c.n_rows for c in chunks])
                shares, squares, _ = score_share_moments(
                    bins, u[order], predicted[order], matrix, group, len(chunks), rows=order
                )
                if bins.score_shares is not None:
                    from_scores = error_alpha_from_scores(bins, shares)
                moves = self._class_moves(_any_known(known), share, shares, squares, label)
                if label is not None:
                    # A label shift moves the rows inside each bin too, towards those whose
                    # scores favour the classes that gained: the bin's classes are then the
                    # reference's times e^g, and its rows' other scores would count the
                    # shift twice.
                    from_scores = label.tilted(bins.error_alpha)
                    factor = label.factor(moves[0] if moves is not None else 0.0)
            error_alpha, error_tilt = self._error_model(
                chunks, table, _any_known(known), from_scores
            )
            draws = _core.labelfree_estimate_multiclass(
                calibration,
                stats,
                bins.predicted.tolist(),
                error_alpha,
                table,
                [spec.core_spec() for spec in confusion_specs],
                target,
                n,
                derive(seed, 0),
                beta,
                zd,
                drift,
                error_tilt,
                None
                if drift is None
                else self._class_shift(
                    chunks, stats, drift_model, share, None if label is None else label.offsets
                ),
                None if drift is None else self._tilt_correlation(chunks),
                None if drift is None else moves,
                None if drift is None else factor,
            )
        # Each class's one-vs-rest draws (classes, chunks, draws) of every ranking metric asked
        # for, with ROC AUC's always (their order carries the classes' correlation), and of
        # the prevalence that weights them.
        per_class: dict[str, np.ndarray] = {}
        if score_specs:
            ranked = _one_vs_rest_metrics(score_specs)
            per_class = {name: np.empty((len(labels), len(chunks), n)) for name in ranked}
            class_drifts = self._class_drifts(chunks, _any_known(known), share)
            # Each class's AUC variance from sampling alone, apart from the drift's share: the
            # two parts are coupled across classes apart (auc_coupling). Method "pooled" has
            # no drift: its draws are all sampling.
            sampling_var = None
            if self.method != "pooled":
                sampling_var = np.empty((len(labels), len(chunks)))
            # What every class's one-vs-rest estimate shares.
            common: dict[str, Any] = {
                "target": target,
                "y_true": None,
                "chunking": chunking,
                "ci": ci,
                "beta": beta,
                "zero_division": zd,
                "shift_diagnostic": False,
                "share": share,
            }
            for c, one in enumerate(state["ovr"]):
                own: dict[str, Any] = {"drift_model": class_drifts[c], "partial_labels": None}
                if label is not None:
                    own["class_label_shift"] = (
                        label.mean,
                        label.cov,
                        state["ovr_class_counts"][c],
                        c,
                    )
                if known is not None:
                    own["partial_labels"] = np.where(
                        np.isnan(known), np.nan, (known == c).astype(np.float64)
                    )
                result = one._estimate_binary(
                    matrix[:, c], n_samples=n, rng=derive(seed, 10 + c), **own, **common
                )
                for chunk in chunks:
                    for name, draws_of in per_class.items():
                        draws_of[c, chunk.index] = result.posterior(name, chunk.index).samples
                if sampling_var is not None:
                    sampling = one._estimate_binary(
                        matrix[:, c],
                        n_samples=min(n, AUC_SAMPLING_DRAWS),
                        rng=derive(seed, 2_000 + c),
                        sampling_only=True,
                        **own,
                        **common,
                    )
                    for chunk in chunks:
                        alone = sampling.posterior("roc_auc", chunk.index).samples
                        sampling_var[c, chunk.index] = alone.var()
            for chunk in chunks:
                total_var = per_class["roc_auc"][:, chunk.index].var(axis=1)
                correlation = auc_coupling(
                    state["auc_correlation"],
                    total_var,
                    total_var if sampling_var is None else sampling_var[:, chunk.index],
                )
                coupled = couple(
                    {name: draws_of[:, chunk.index] for name, draws_of in per_class.items()},
                    correlation,
                    derive(seed, 1_000 + chunk.index),
                )
                for name, draws_of in per_class.items():
                    draws_of[:, chunk.index] = coupled[name]
        names = [spec.name for spec in specs]
        results = []
        for chunk in chunks:
            estimates: dict[str, Posterior] = {}
            for row, spec in enumerate(confusion_specs):
                estimates[spec.name] = Posterior(
                    spec.name,
                    samples=np.ascontiguousarray(draws[chunk.index, row]),
                    bounds=spec.bounds,
                )
            for spec in score_specs:
                samples = combine_one_vs_rest(
                    per_class[spec.base][:, chunk.index],
                    per_class["prevalence"][:, chunk.index],
                    spec.average,
                    spec.class_index,
                )
                estimates[spec.name] = Posterior(
                    spec.name, samples=np.ascontiguousarray(samples), bounds=spec.bounds
                )
            estimates = {name: estimates[name] for name in names}
            realized: dict[str, tuple[float, Posterior | None]] = {}
            if truth is not None:
                realized = self._realized_multiclass(
                    truth[chunk.rows],
                    predicted[chunk.rows],
                    matrix[chunk.rows],
                    n,
                    seed,
                    chunk.index,
                    beta,
                    zd,
                )
            results.append(_ChunkResult(chunk, estimates, realized))
        return LabelFreeEstimate(
            results,
            names,
            reference=_ReferencePosteriors(self, names, n, beta, zd),
            target=target,
            calibration=self.calibration,
            method=self.method,
            ci=ci,
            counts=np.asarray(stats[0]),
            diagnostics=self._diagnostics(
                stats, calibration, drift_model, drift, None if label is None else counts, conflict
            ),
            shift=self.shift,
            conflict=conflict,
        )

    def _class_codes(self, truth: np.ndarray) -> np.ndarray:
        """Labels as indices of the reference's classes."""
        labels = self._state()["labels"]
        unknown = [c for c in observed_classes(truth) if c not in labels]
        if unknown:
            raise ValueError(
                f"y_true contains classes {unknown!r} that the reference did not have ({labels!r})"
            )
        codes: np.ndarray = encode(truth, labels)
        return codes

    def _realized_multiclass(
        self,
        codes: np.ndarray,
        predicted: np.ndarray,
        matrix: np.ndarray,
        n: int,
        seed: int,
        chunk: int,
        beta: float,
        zd: float,
    ) -> dict[str, tuple[float, Posterior | None]]:
        """Realized value and with-labels posterior of each metric on one chunk (true and
        predicted class indices, scores), as :func:`probeval.evaluate` gives them."""
        state = self._state()
        labels: list[Any] = state["labels"]
        specs: list[MetricSpec] = state["specs"]
        k = len(labels)
        out: dict[str, tuple[float, Posterior | None]] = {}
        confusion_specs = [spec for spec in specs if spec.kernel != "scores"]
        if confusion_specs:
            confusion = _class_confusion(codes, predicted, labels)
            posts = confusion._posteriors(
                confusion_specs,
                prior=resolve_prior(None, k),
                n_samples=n,
                seed=derive(seed, 2 + 2 * chunk),
                beta=beta,
                zero_division=zd,
                joint=False,
            )
            for spec in confusion_specs:
                out[spec.name] = (posts[spec.name].observed, posts[spec.name])
        score_specs = [spec for spec in specs if spec.kernel == "scores"]
        if score_specs:
            out.update(
                self._realized_ranking_multiclass(
                    score_specs, codes, matrix, n, derive(seed, 3 + 2 * chunk)
                )
            )
        return out

    def _realized_ranking_multiclass(
        self, specs: list[MetricSpec], codes: np.ndarray, matrix: np.ndarray, n: int, seed: int
    ) -> dict[str, tuple[float, Posterior | None]]:
        """One-vs-rest ROC AUCs and average precisions of a chunk with its labels, by the
        Bayesian bootstrap that :func:`probeval.evaluate` uses (NaN and None unless every class
        occurs), each class's draws on coarse bins that keep the rows' order inside them, as
        the binary realized ones (``_REALIZED_AUC_BINS``, ``_REALIZED_AP_BINS``), then joined
        across classes by the shared-weight bootstrap's correlations. The values are exact.
        Before, AUC took 32 bins whose rows counted as tied (draws 0.03-0.11 sds below the
        value, K = 3) and AP ``evaluate``'s 2,048: 20 chunks of 3,000 rows with the macro
        averages took 14.7 s with labels against 4.8 s without."""
        present = np.bincount(codes, minlength=matrix.shape[1])
        if np.any(present == 0):
            return {spec.name: (math.nan, None) for spec in specs}
        posts = multiclass_score_posteriors(
            codes,
            matrix,
            np.ones(codes.shape[0]),
            specs,
            max_bins=None,
            n_samples=n,
            seed=seed,
            ordered=(_REALIZED_AUC_BINS, _REALIZED_AP_BINS),
        )
        return {spec.name: (posts[spec.name].observed, posts[spec.name]) for spec in specs}

    def _drift_for(
        self,
        chunks: list[Chunk],
        labelled: bool = False,
        share: float = 1.0,
        window_rows: float | None = None,
    ) -> Drift:
        """The drift between stretches of time the size of these chunks (median rows, or
        ``window_rows``): the declared periods' as they are; default blocks added up into that
        many rows each. ``labelled``: some production rows have labels; ``share``: of the
        unseen drift's variance (:meth:`_unseen`). Without labels, the tilt's spread keeps the
        part the level explains (``explained_spread``, :func:`learn_drifts`)."""
        state = self._state()
        windows = self._drift_windows(chunks, window_rows)
        # The unseen drift moves each class's rate at the same scores: a binary calibration's
        # shift, a multiclass model's one-vs-rest ones (_class_drifts) and, through each
        # class's own move, its confidence bins and error shares (_class_moves).
        unseen = 0.0 if state["kind"] == "multiclass" else self._unseen(labelled, share)
        unseen_tilt = 0.0 if state["kind"] == "multiclass" else self._unseen_tilt(share)
        cache: dict[tuple[int | None, float, float, bool], Drift] = state.setdefault(
            "drift_cache", {}
        )
        key = (windows, unseen, unseen_tilt, labelled)
        if key not in cache:
            sums = state["period_sums"]
            cache[key] = learn_drift(
                sums if windows is None else merge_periods(sums, windows),
                score_scale=state["score_scale"],
                unseen=unseen,
                # A multiclass model's confidence calibration keeps its drift uncoupled; its
                # one-vs-rest calibrations follow their levels (_class_drifts).
                coupled=state["kind"] != "multiclass",
                explained_spread=not labelled,
                unseen_tilt=unseen_tilt,
            )
        return cache[key]

    def _drift_windows(self, chunks: list[Chunk], rows: float | None = None) -> int | None:
        """Into how many windows the reference's default blocks are added up for these chunks
        (windows of ``rows`` rows if given; None: declared periods, used as they are)."""
        state = self._state()
        if state["periods_declared"]:
            return None
        sums: np.ndarray = state["period_sums"]
        if rows is None:
            rows = float(np.median([c.n_rows for c in chunks])) if chunks else 1.0
        windows = round(float(sums[..., 0].sum()) / max(rows, 1.0))
        return int(min(max(windows, _MIN_WINDOWS), sums.shape[0]))

    def _class_drifts(
        self, chunks: list[Chunk], labelled: bool = False, share: float = 1.0
    ) -> list[Drift]:
        """The drifts of a multiclass fit's one-vs-rest calibrations for these chunks, learned
        from all classes together (:func:`learn_drifts`): the sd of the bins' own deviations,
        whether any class moves between periods, and the slopes on the scores' level;
        ``labelled`` and ``share`` as for :meth:`_drift_for`."""
        state = self._state()
        windows = self._drift_windows(chunks)
        cache: dict[tuple[int | None, float, bool], list[Drift]] = state.setdefault(
            "class_drift_cache", {}
        )
        unseen = self._unseen(labelled, share)
        key = (windows, unseen, labelled)
        if key not in cache:
            sums = [one._state()["period_sums"] for one in state["ovr"]]
            if windows is not None:
                sums = [merge_periods(part, windows) for part in sums]
            cache[key] = learn_drifts(
                sums,
                [1.0] * len(sums),
                unseen,
                coupled=True,
                explained_spread=not labelled,
                # No unseen tilt (UNSEEN_TILT_SHARE, measured on binary models): on NannyML's
                # card tiers, after the concept shift no label-free method sees, it moved the
                # macro ROC AUC error from .0628 to .0664 and macro average precision's from
                # .0881 to .0926 (the one-vs-rest point estimate: .0661 and .0916).
                unseen_tilt=0.0,
            )
        return cache[key]

    def _error_model(
        self,
        chunks: list[Chunk],
        table: np.ndarray,
        labelled: bool,
        from_scores: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """A multiclass fit's error shares for these chunks: each bin's Dirichlet, the
        reference's widened by how much a bin's shares move between stretches of the reference
        the size of the chunks, and each chunk's common tilt of every bin's shares (chunks, 2,
        K), learned likewise and updated by the chunk's known wrong predictions ``table``
        (method "hierarchical"; :func:`error_movement`). ``from_scores``: each chunk's
        Dirichlet moved to where its rows' other scores sit (chunks, bins, K;
        :func:`error_alpha_from_scores`), around which its tilt moves. Method "pooled", or a
        fit saved without its periods: the reference's Dirichlet, no tilt."""
        state = self._state()
        bins: MulticlassBins = state["bins"]
        errors = state["period_errors"]
        if self.method == "pooled" or errors is None:
            return bins.error_alpha, None
        spread, sd = self._error_movement(chunks)
        alpha = bins.error_alpha if from_scores is None else from_scores
        tilts = chunk_error_tilts(sd, table, alpha, spread)
        return drifting_error_alpha(alpha, spread), tilts

    def _error_movement(self, chunks: list[Chunk]) -> tuple[float, np.ndarray]:
        """How the error shares move between stretches of the reference the size of these
        chunks (:func:`error_movement`, cached): each bin's spread and each class's tilt sd."""
        state = self._state()
        windows = self._drift_windows(chunks)
        cache: dict[int | None, tuple[float, np.ndarray]] = state.setdefault(
            "error_spread_cache", {}
        )
        if windows not in cache:
            errors = state["period_errors"]
            merged = errors if windows is None else merge_periods(errors, windows)
            cache[windows] = error_movement(merged, state["bins"].error_alpha)
        return cache[windows]

    def _class_shift_sd(self, chunks: list[Chunk]) -> np.ndarray:
        """Per predicted class, the sd of its shift between stretches of the reference the
        size of these chunks (:func:`class_shift_sd`, cached)."""
        state = self._state()
        windows = self._drift_windows(chunks)
        cache: dict[int | None, np.ndarray] = state.setdefault("class_shift_cache", {})
        if windows not in cache:
            sums = state["period_sums"]
            merged = sums if windows is None else merge_periods(sums, windows)
            cache[windows] = class_shift_sd(
                merged, state["bins"].predicted, state["bins"].n_classes
            )
        return cache[windows]

    def _tilt_correlation(self, chunks: list[Chunk]) -> list[float] | None:
        """Per class, the correlation of its error-share tilt with its class shift over the
        reference's stretches the size of these chunks (:func:`tilt_class_correlation`,
        cached); None for method "pooled" or a fit saved without its periods."""
        state = self._state()
        errors = state["period_errors"]
        if self.method == "pooled" or errors is None:
            return None
        windows = self._drift_windows(chunks)
        cache: dict[int | None, list[float]] = state.setdefault("tilt_correlation_cache", {})
        if windows not in cache:
            sums = state["period_sums"]
            spread, sd = self._error_movement(chunks)
            cache[windows] = tilt_class_correlation(
                sums if windows is None else merge_periods(sums, windows),
                errors if windows is None else merge_periods(errors, windows),
                state["bins"],
                spread,
                sd,
                self._class_shift_sd(chunks),
            ).tolist()
        return cache[windows]

    def _class_shift(
        self,
        chunks: list[Chunk],
        stats: tuple[np.ndarray, ...],
        drift: Drift,
        share: float,
        moved: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """A multiclass fit's shift of each predicted class's correct rates, per chunk, for the
        core: its sd learned from the reference's periods in windows the size of the chunks
        (:func:`class_shift_sd`, cached), updated by each chunk's known labels
        (:func:`chunk_class_shifts`). The common drift moves every class's bins together; on
        the flights, whether a prediction of "early" is right moved by 0.40 logit (sd) between
        the reference's stretches beyond that, "late" by 0.58. The prior of a class having moved
        follows ``share``, how far production's scores moved (:func:`movement_prior_scale`).
        ``moved``: each chunk's bins' label shift (:meth:`_class_label_shift`), around which
        the classes then shift."""
        bins: MulticlassBins = self._state()["bins"]
        scale = movement_prior_scale(share)
        return chunk_class_shifts(
            self._class_shift_sd(chunks), stats, bins, drift.bin_sd, scale, moved
        )

    def _class_conflict(
        self,
        conflict: LabelConflict,
        chunks: list[Chunk],
        stats: tuple[np.ndarray, ...],
        drift: Drift,
        share: float,
        moved: np.ndarray | None,
    ) -> LabelConflict:
        """``conflict`` with each predicted class's shift beyond the chunk's common one: where
        the chunk's known labels put it (:func:`class_shift_evidence`) against its prior had
        production no labels, N(0, the reference's periods' class sd² + the unseen drift's per
        class, s² / 2 of its share). The unseen drift and the reference's own correct rates
        (:func:`reference_error_var` over the class's bins) are shared by every chunk. A class
        whose calibration alone moved (the card tiers' second class after their concept shift,
        a class twice as common at the same scores) shows here and hardly in the common shift."""
        state = self._state()
        bins: MulticlassBins = state["bins"]
        residual, _, beyond = class_shift_evidence(stats, bins, drift.bin_sd, moved)
        unseen = self._unseen(False, share) ** 2 / 2.0
        prior = self._class_shift_sd(chunks) ** 2 + unseen
        known = (np.asarray(stats[3]) + np.asarray(stats[4])).sum(axis=0)
        common = np.empty(bins.n_classes)
        for j in range(bins.n_classes):
            own = bins.predicted == j
            # A row of prior each way at 0.5 where the class shifts read half a row: the same
            # rates to within a row, for a variance.
            reference, _ = reference_error_var(
                bins.correct[own], bins.wrong[own], np.full(int(own.sum()), 0.5), known[own]
            )
            common[j] = unseen + reference
        return replace(
            conflict,
            classes=residual,
            classes_var=prior[None, :] + beyond,
            classes_common=common,
            class_names=tuple(str(label) for label in state["labels"]),
        )

    def _class_label_shift(
        self, chunks: list[Chunk], stats: tuple[np.ndarray, ...]
    ) -> _ClassLabelShift | None:
        """With ``shift="label"``, a multiclass fit's label shift in each chunk
        (:func:`label_shift.located_class_shift`, read with the other chunks':
        :func:`label_shift.pooled_class_shifts`): each confidence bin holds the reference's
        classes in the proportions of its correct rate (as the core reads it) and its
        mistakes' shares; None otherwise."""
        if self.shift != "label":
            return None
        bins: MulticlassBins = self._state()["bins"]
        shares = self._class_shares()
        counts = np.asarray(stats[0], dtype=np.float64)
        dispersion = self._drift_for(chunks, False, 0.0).count_dispersion
        reference = self._state()["positives"] + self._state()["negatives"]
        mean, cov = pooled_class_shifts(*located_class_shift(counts, reference, shares, dispersion))
        labelled = np.asarray(stats[3]) + np.asarray(stats[4])
        return _ClassLabelShift(mean, cov, shares, bins.predicted, counts, labelled)

    def _class_shares(self) -> np.ndarray:
        """A multiclass fit's reference classes in each confidence bin (bins, K): its correct
        rate as the core reads it at the predicted class, the rest in its mistakes' shares."""
        bins: MulticlassBins = self._state()["bins"]
        rates = self._reference_rates()
        errors = bins.error_alpha / np.maximum(bins.error_alpha.sum(axis=1, keepdims=True), 1e-300)
        shares: np.ndarray = (1.0 - rates)[:, None] * errors
        shares[np.arange(bins.n_bins), bins.predicted] = rates
        return shares

    def _class_moves(
        self,
        labelled: bool,
        share: float,
        means: np.ndarray,
        squares: np.ndarray,
        label: _ClassLabelShift | None = None,
    ) -> tuple[float, np.ndarray, np.ndarray] | None:
        """A multiclass fit's unseen drift for the core: each class's log-odds at the same
        scores moves by N(0, s²/2) (with two classes, P(y = 1 | score) by the binary unseen
        drift s), moving every confidence bin by its loading (:func:`class_move_loading`) and
        each chunk's bin's error shares by its share of the move, from its rows' shares'
        ``means`` and mean ``squares`` (chunks, bins, K; :func:`move_shares`); None without
        unseen drift (:meth:`_unseen`, ``share`` of its variance) and without a ``label``
        shift, whose uncertainty the moves carry too (:meth:`_ClassLabelShift.factor`)."""
        unseen = self._unseen(labelled, share)
        if unseen <= 0 and label is None:
            return None
        bins: MulticlassBins = self._state()["bins"]
        shares = np.ascontiguousarray(move_shares(bins, means, squares))
        if label is not None:
            # A label shift tilts each bin's classes as a whole (every row's by the same e^g),
            # a common tilt: its rows' own shares do not temper it; and each bin's rate moves
            # by the derivative at the chunk's shifted classes, not the reference's.
            return unseen / math.sqrt(2.0), label.loading(), np.ones_like(shares)
        return unseen / math.sqrt(2.0), class_move_loading(bins), shares

    def _unseen_share(self, chunks: list[Chunk], counts: Any, labelled: bool) -> float:
        """How much of the unseen drift's variance production calls for: how far its chunks'
        bin ``counts`` vary from the reference's beyond its windows' own spread
        (:func:`unseen_share`). With labels, the same share scales the prior of production's
        calibration having moved (:func:`movement_prior_scale`). The estimates of a chunk
        therefore depend on the other chunks of the same call, as with labels
        (:func:`production_walk_priors`): many chunks show a population that moved where one
        might not."""
        if not labelled and self.unseen_drift <= 0:
            return 0.0
        state = self._state()
        counts = np.asarray(counts, dtype=np.float64)
        rows = counts.sum(axis=1)
        target = self._comparison_rows(rows) if rows.size else 0.0
        # Chunks over two thirds of the target stay as they are (group_chunks would leave the
        # most of them alone, and merge only a short last one).
        if rows.size and float(np.median(rows)) < 2.0 * target / 3.0:
            counts = group_chunks(counts, target)
        # Read at 5,000 rows, where the ramp was set, unless the reference's windows (or
        # production) are shorter: then at the chunks' rows up to 5,000, at least the target's.
        # Reading 5,000-row chunks at a fifth of a 10,000-row reference would take them below
        # the rows they show; reading short groups at 5,000 would multiply their noise.
        read = max(target, min(float(np.median(rows)), _UNSEEN_ROWS)) if rows.size else 1.0
        # The windows' spread does not depend on the unseen drift: the cheapest fit of it.
        drift = self._drift_for(chunks, labelled, 0.0, window_rows=max(read, 1.0))
        reference = state["positives"] + state["negatives"]
        return unseen_share(counts, reference, drift.count_median, rows=read)

    def _comparison_rows(self, rows: np.ndarray) -> float:
        """To how many rows :meth:`_unseen_share` adds up production's short chunks (``rows``
        each) before it compares them with the reference's windows: the windows' (declared
        periods: their median; default blocks: :data:`_UNSEEN_ROWS`, or a fifth of the
        reference if that is less), at most production's rows. Chunks under two thirds of it
        are added up, in order, to about that many. A population that moved shows in bin
        counts in proportion to their rows: at ACS employment's chi distance of 0.07 a
        1,000-row chunk's Pearson statistic is 1.5 times its degrees of freedom, a 5,000-row
        chunk's 3.5, and so a production cut into 1,000-row chunks got none of the unseen
        drift where one cut into 5,000-row chunks got all of it (its precision covered in 0.90
        of 209 chunks instead of 0.95). What is left of the rows' say (groups of 4,000 rows,
        chunks of 20,000) the statistic's reading at 5,000 rows takes out
        (:func:`unseen_share`)."""
        state = self._state()
        sums: np.ndarray = state["period_sums"]
        if state["periods_declared"]:
            window = float(np.median(sums[..., 0].sum(axis=1)))
        else:
            window = min(_UNSEEN_ROWS, float(sums[..., 0].sum()) / _MIN_WINDOWS)
        return min(window, float(rows.sum()))

    def _unseen(self, labelled: bool, share: float = 1.0) -> float:
        """The unseen drift's sd: ``unseen_drift``, its variance scaled by ``share``
        (:meth:`_unseen_share`), until production rows have labels. Then
        the labels show how far production moved beyond the reference's periods (the moved
        share of :func:`production_priors`), and a prior of that movement on top of it only
        widens the intervals: with 5% of rows labelled, a simulated stream that does not move
        covered 0.99 / 0.98 / 1.00 (accuracy, precision, recall) with it and 0.98 / 0.96 /
        0.98 without, ACS employment's precision error fell from .0105 to .0100."""
        return 0.0 if labelled else self.unseen_drift * math.sqrt(share)

    def _unseen_tilt(self, share: float) -> float:
        """The unseen drift's tilt sd: ``UNSEEN_TILT_SHARE`` of ``unseen_drift``, its variance
        scaled by ``share`` as the shift's, with labels too. Labels pin a chunk's shift far
        better than its tilt (250 labels: about 0.13 and 0.05 logit), so they do not replace
        it: with 5% labelled, a simulated production moved by the unseen drift (its tilt
        included) covered ROC AUC in 0.90 of chunks without it, 0.98 with it. Where the
        scores did not move (``share`` 0) it is 0, as without labels: kept there too, it took
        a stable stream's labelled chunks to 0.99-1.00."""
        return UNSEEN_TILT_SHARE * self.unseen_drift * math.sqrt(share)

    def _label_shift_counts(
        self, chunks: list[Chunk], counts: np.ndarray
    ) -> tuple[np.ndarray, float] | None:
        """With ``shift="label"``: each chunk's bin counts with its label shift taken back out
        (:func:`label_shift.adjusted_counts`, at the shift's posterior mean), and how far the
        shift grid must reach for every chunk's label shift (its mean plus
        ``_SPREAD_GRID_SDS`` sds, the largest); None otherwise."""
        if self.shift != "label":
            return None
        state = self._state()
        reference = state["positives"] + state["negatives"]
        rates = self._reference_rates()
        dispersion = self._drift_for(chunks, False, 0.0).count_dispersion
        mean, sd = located_shift(counts, reference, rates, dispersion)
        room = float((np.abs(mean) + _SPREAD_GRID_SDS * sd).max(initial=0))
        return adjusted_counts(counts, reference, rates, mean), room

    def _reference_rates(self) -> np.ndarray:
        """Each bin's reference positive rate as the core reads it (``Calibration::rate_mean``:
        two prior rows at the bin's centre)."""
        state = self._state()
        return _rate_means(state["positives"], state["negatives"], self._rate_centres())

    def _label_shift_log_posterior(self, drift: Drift, counts: np.ndarray) -> np.ndarray:
        """Per chunk, the log posterior of its label shift a on ``drift.shift``, up to a
        constant: ln P(its bin ``counts`` | a) (:func:`label_shift.label_shift_log_likelihood`)
        plus the prior the other chunks' counts give it
        (:func:`label_shift.pooled_label_shift_priors`)."""
        state = self._state()
        log_likelihood = label_shift_log_likelihood(
            drift.shift,
            counts,
            state["positives"] + state["negatives"],
            self._reference_rates(),
            drift.count_dispersion,
        )
        out: np.ndarray = log_likelihood + pooled_label_shift_priors(drift.shift, log_likelihood)
        out -= out.max(axis=1, keepdims=True)
        return out

    def _drift_args(
        self,
        drift: Drift,
        calibration: tuple[Any, ...] | None = None,
        stats: tuple[np.ndarray, ...] | None = None,
        share: float = 1.0,
        moved_counts: np.ndarray | None = None,
        label_room: float | None = None,
        label_offset: np.ndarray | None = None,
    ) -> tuple[tuple[Any, ...] | None, LabelConflict | None]:
        """The drift model for the core, or None (method "pooled", perfect calibration), and,
        where production has labels, how far they put each chunk's calibration from where the
        reference's drift expects it (:class:`LabelConflict`; None without labels).

        Each chunk gets its own prior of the shift when some chunks (``stats``) have labels
        already (from the labels of the others, in time order for a binary calibration:
        :func:`production_walk_priors`; :func:`production_priors` for a multiclass model's
        confidence calibration, prior mass :data:`CONFIDENCE_NOT_MOVED` on "not moved"), or
        when its scores moved further from the reference's than the reference's periods did
        from each other (spread by ``drift_per_shift`` per unit of that distance:
        :func:`shift_spread`);
        such a chunk's bins also get a wider deviation of their own (:func:`spread_bin_sd`).
        With labels, a binary calibration's chunks get their own prior of the tilt as well
        (:func:`production_priors`, :data:`TILT_NOT_MOVED`); the priors' masses on production
        having moved (but a multiclass confidence calibration's) follow ``share``, how far its
        scores moved (:meth:`_unseen_share`, :func:`movement_prior_scale`). With
        ``shift="label"`` each chunk's shift is its label shift, which its bin counts show,
        plus all of the above (:func:`label_shift.convolved_priors`; with labels, the course
        through time follows what is left beyond the label shift,
        :func:`label_shift.drift_evidence`); what the above reads from how far the scores moved
        it reads from ``moved_counts``, the counts with the label shift taken back out, and
        the shift grid reaches ``label_room`` further (:meth:`_label_shift_counts`). A
        multiclass fit's label shift moves its bins apart (``label_offset``: per chunk, the
        part of those moves its labels read as a shift of all bins), so that the labels'
        likelihood of the common shift is moved back by it: the shift then follows the drift
        beyond the label shift, which the classes' offsets carry."""
        if self.method == "pooled" or self.calibration == "perfect":
            return None, None
        if calibration is None or stats is None:
            return drift.core_args(), None
        labelled = (np.asarray(stats[3]).sum(axis=1) + np.asarray(stats[4]).sum(axis=1)) > 0
        # With a label shift, how far the scores moved beyond it (``moved_counts``).
        counts = np.asarray(stats[0]) if moved_counts is None else moved_counts
        label = label_room is not None
        spread = self._shift_spread(drift, counts, bool(labelled.any()))
        # How far each chunk's shift and tilt moved with its scores' level.
        rows = np.maximum(counts.sum(axis=1), 1e-300)
        mean_score = np.clip((counts * np.asarray(stats[1])).sum(axis=1) / rows, 1e-6, 1 - 1e-6)
        shift_mean, shift_sd, tilt_mean, tilt_sd = drift.coupled(
            np.log(mean_score / (1 - mean_score))
        )
        # Below a thousandth of a logit (a rate moving by 0.03 points at 50%) it is nothing.
        tilt_moves = max(np.abs(tilt_mean).max(initial=0), tilt_sd.max(initial=0)) > 1e-3
        if max(np.abs(shift_mean).max(initial=0), shift_sd.max(initial=0)) <= 1e-3:
            shift_mean, shift_sd = np.zeros_like(shift_mean), np.zeros_like(shift_sd)
        moves = labelled.any() or spread.any() or shift_mean.any() or shift_sd.any()
        if not (moves or tilt_moves or label):
            return drift.core_args(), None
        # The further sd of each chunk's shift: its scores' distance and its level's.
        further = np.sqrt(spread**2 + shift_sd**2)
        # Labels and far-moved scores need the production grid's room; a chunk's level alone
        # only as much as it moves the shift; a label shift, as far as the scores put it.
        half = _SPREAD_GRID_SDS * float(further.max(initial=0)) + float(
            np.abs(shift_mean).max(initial=0)
        )
        if label_room is not None:
            half += label_room
        wide = widen_shift(drift, half, production=bool(labelled.any() or spread.any() or label))
        if tilt_moves:
            half = float((np.abs(tilt_mean) + _SPREAD_GRID_SDS * tilt_sd).max(initial=0))
            wide = widen_tilt(wide, _COUPLED_TILT_POINTS, half)
        bin_sd = spread_bin_sd(drift.bin_sd, spread)
        # The further spread for scores that moved is symmetric in logit: the core centres
        # each such chunk's rates so that averaged over it they are the reference's (without,
        # a spread of 2 per unit moved the car loan's accuracy error from .0024 to .0120 and
        # recall's to .0153). Not over the level's sd: centred over that too, 5% labelled on
        # the simulated drift that follows the level (production moved by the unseen drift)
        # covered recall and ROC AUC 0.91 and 0.90 instead of 0.92 and 0.91.
        centre_sd = spread

        def coupled_shifts(priors: np.ndarray) -> np.ndarray:
            moved = translated_priors(wide.shift, priors, shift_mean)
            return spread_shift_priors(wide.shift, moved, further)

        def coupled_tilts(grid: np.ndarray, priors: np.ndarray) -> np.ndarray:
            return spread_shift_priors(grid, translated_priors(grid, priors, tilt_mean), tilt_sd)

        label_log_posterior = None
        if label:
            label_log_posterior = self._label_shift_log_posterior(wide, np.asarray(stats[0]))
        if not labelled.any():
            priors = np.tile(wide.shift_log_prior, (spread.shape[0], 1))
            if label_log_posterior is not None:
                priors = convolved_priors(label_log_posterior, priors)
            priors = coupled_shifts(priors)
            if not tilt_moves:
                return wide.core_args(priors, bin_sd, chunk_centre_sd=centre_sd), None
            tilts = coupled_tilts(wide.tilt, np.tile(wide.tilt_log_prior, (spread.shape[0], 1)))
            return wide.core_args(priors, bin_sd, tilts, centre_sd), None
        # Production's tilt is learned for binary calibrations (a multiclass model's
        # one-vs-rest ones included: its ROC AUCs), not for its confidence calibration, where
        # it moved accuracy away from the realized values (card tiers after the concept shift,
        # 20% labelled: MAE .0101 -> .0158) while the one-vs-rest tilts took the macro AUC's
        # from .0448 to .0090.
        learn = self._state()["kind"] != "multiclass"
        tilted = widen_tilt(wide) if learn else wide
        # The labels' likelihood of each chunk's shift keeps the reference's bin sd: with the
        # moved chunks' wider one (as in the draws) the benchmark's coverage and errors moved
        # by one chunk and 0.0001 either way, no better.
        log_likelihood = _core.labelfree_drift_likelihood(
            calibration, tilted.core_args(chunk_centre_sd=centre_sd), stats, "shift"
        )
        # The check of the labels against the drift: each chunk's shift as the labels put it,
        # against its prior had production no labels (the unseen drift, which labels replace
        # in the draws, included: it is part of what the reference's model allows).
        still = np.tile(wide.shift_log_prior, (spread.shape[0], 1))
        if label_log_posterior is not None:
            still = convolved_priors(label_log_posterior, still)
        # A multiclass label shift's move of every bin is the label shift's, not drift.
        read = log_likelihood
        if label_offset is not None:
            read = translated_priors(tilted.shift, log_likelihood, -label_offset)
        shift_gap, shift_var = prior_data_conflict(tilted.shift, coupled_shifts(still), read)
        # What every chunk shares: the unseen drift (one draw for all of production) and the
        # reference's own rates, which each chunk's likelihood allows for already.
        unseen = self._unseen(False, share) ** 2 if learn else 0.0
        shift_var += unseen
        reference_shift, reference_tilt = reference_error_var(
            np.asarray(calibration[1], float),
            np.asarray(calibration[2], float),
            np.asarray(calibration[6], float),
            (np.asarray(stats[3]) + np.asarray(stats[4])).sum(axis=0),
        )
        conflict = LabelConflict(labelled, shift_gap, shift_var, unseen + reference_shift)
        # A binary calibration's production keeps a course through time (a concept shift from
        # some chunk on: 5% labelled, simulated +0.4 logit from mid-stream, accuracy error
        # .0091 -> .0067 against the exchangeable mixture). A multiclass model's confidence
        # calibration keeps the mixture: there the course lost more than it gained (flights
        # 5% labelled, accuracy .0151 -> .0154; a stable stream .0064 -> .0069; card tiers
        # .0215 -> .0163), and its classes' walks carry their course already.
        # The walk and the mixture take the shift beyond what the chunk's level explains:
        # each chunk's likelihood moved back by its level's part, their priors forward again.
        log_likelihood = translated_priors(tilted.shift, log_likelihood, -shift_mean)
        if label_offset is not None:
            log_likelihood = translated_priors(tilted.shift, log_likelihood, -label_offset)
        if label_log_posterior is not None:
            # The walk then follows the drift beyond each chunk's label shift.
            log_likelihood = drift_evidence(label_log_posterior, log_likelihood)
        evidence = (tilted.shift, tilted.shift_log_prior, log_likelihood, labelled)
        scale = movement_prior_scale(share)
        if learn:
            priors = production_walk_priors(*evidence, scale)
        else:
            # The confidence calibration's mixture keeps its mass whatever the scores (its
            # 0.85 already leaves production's movement to the classes' walks, which do follow
            # them): scaled too, the three-class flights (scores like the reference's windows)
            # with 5% labelled lost accuracy before September, error .0131 -> .0146, and macro
            # F1 .0138 -> .0151, while a stable K = 3 stream's 10 labels went from 3.2 to 2.1
            # times as wide as none.
            priors = production_priors(*evidence, CONFIDENCE_NOT_MOVED)
        if label_log_posterior is not None:
            priors = convolved_priors(label_log_posterior, priors)
        priors = coupled_shifts(priors)
        if not learn:
            return tilted.core_args(priors, bin_sd, chunk_centre_sd=centre_sd), conflict
        # Then the tilt, the shift averaged over each chunk's prior of it: labels can show
        # production's calibration flattening (ranking worse) when the reference never did.
        log_likelihood = _core.labelfree_drift_likelihood(
            calibration, tilted.core_args(priors, bin_sd, chunk_centre_sd=centre_sd), stats, "tilt"
        )
        fine, log_likelihood = finer_tilt(wide, tilted, log_likelihood)
        still = coupled_tilts(fine.tilt, np.tile(fine.tilt_log_prior, (spread.shape[0], 1)))
        tilt_gap, tilt_var = prior_data_conflict(fine.tilt, still, log_likelihood)
        # The tilt's prior has the unseen drift's tilt in it (UNSEEN_TILT_SHARE), with labels too.
        conflict = replace(
            conflict,
            tilt=tilt_gap,
            tilt_var=tilt_var,
            tilt_common=self._unseen_tilt(share) ** 2 + reference_tilt,
        )
        log_likelihood = translated_priors(fine.tilt, log_likelihood, -tilt_mean)
        tilts = production_priors(
            fine.tilt,
            fine.tilt_log_prior,
            log_likelihood,
            labelled,
            TILT_NOT_MOVED,
            scale,
            uniform_spread=TILT_UNIFORM_SPREAD,
            from_chunk_on=TILT_FROM_CHUNK_ON,
            # Chunks whose scores moved beyond the reference's periods can move the shape of
            # their calibration together, which the labels of those chunks then show.
            chunk_moved=moved_weight(self._moved_distance(drift, counts)),
        )
        return fine.core_args(priors, bin_sd, coupled_tilts(fine.tilt, tilts), centre_sd), conflict

    def _moved_calibration(
        self,
        calibration: tuple[Any, ...],
        drift_model: Drift,
        drift: tuple[Any, ...],
        stats: tuple[np.ndarray, ...],
        share: float,
    ) -> tuple[tuple[Any, ...], np.ndarray]:
        """The calibration with each bin's rate moved by production's lasting offset, learned
        from all chunks' labels (:func:`production_bin_offsets`, its prior mass on a bin having
        moved following ``share``: :func:`movement_prior_scale`), and its rows thinned so that
        the rate's logit variance gains the offset's. The offsets are learned around the rates
        the draws centre each bin on (``_core.labelfree_drift_expected_logits``: the chunk's
        shift at its posterior mean, the chunk's labels included, its tilt at its prior mean,
        from the other chunks' labels, and the core's mean-preserving centring of the bins).
        The bins a threshold cuts through can sit off their chunks' shift and tilt all through
        production: the weather-only flights model's predicted positives were right 0.59 of
        the time against 0.49 expected, and with 5% of rows labelled its precision, recall and
        F1 HDIs covered 0.73 / 0.67 / 0.61 of chunks (docs/labelfree-record.md). A multiclass fit's
        one-vs-rest calibrations do not take it: there it moved the errors of macro ROC AUC
        and average precision by -0.8% (docs/labelfree-record.md). Also returns the rates the
        offsets were learned around, moved by them (chunks x bins, logit)."""
        expected = _core.labelfree_drift_expected_logits(calibration, drift, stats)
        offset, var = production_bin_offsets(
            expected,
            np.asarray(stats[3]),
            np.asarray(stats[4]),
            drift_model.bin_sd,
            movement_prior_scale(share),
        )
        pos, neg = np.asarray(calibration[1], float), np.asarray(calibration[2], float)
        # The core's rate (``Calibration::rate_mean``): two prior rows at the bin's centre.
        rate = (pos + 2.0 * np.asarray(calibration[6], float)) / (pos + neg + 2.0)
        logits = np.log(rate / (1.0 - rate))
        new_rate = 1.0 / (1.0 + np.exp(-(logits + offset)))
        rows = pos + neg
        logit_var = 1.0 / np.maximum(rows * rate * (1 - rate), 1e-300) + var
        kept = 1.0 / np.maximum(logit_var * new_rate * (1 - new_rate), 1e-300)
        rows = np.where(rows > 0, np.minimum(rows, kept), rows)
        out = list(calibration)
        out[1], out[2] = rows * new_rate, rows * (1 - new_rate)
        return tuple(out), expected + offset[None, :]

    def _labelled_cell_sd(
        self,
        expected: np.ndarray,
        drift_model: Drift,
        drift: tuple[Any, ...],
        stats: tuple[np.ndarray, ...],
        share: float,
        moved_counts: np.ndarray,
    ) -> tuple[Any, ...]:
        """The drift with every chunk's bins deviating by at least the sd production's labelled
        cells show around ``expected`` (chunks x bins, logit: their chunk's shift and tilt and
        the lasting offsets, :meth:`_moved_calibration`; :func:`production_cell_sd`). A chunk
        whose scores moved keeps a wider sd of its own, and the share of its no-label spread
        that the labelled cells of such chunks show. The labels then move each bin of their
        chunk by what they show of it: where production's bins moved against each other in
        time (ACS employment, the demographic model of ``tests/_monitoring.employment_design``
        with a 2015 reference, 5% labelled), accuracy and recall HDIs covered 0.67 of chunks
        with the reference windows' sd, 0.88 with the learned one. The rates come from the
        offsets' own core call, moved by the offsets, rather than a second call on the moved
        calibration (its centring moves a little with the rates): that call cost 64 of 824 ms
        over 61 chunks."""
        # The bins' further sd of a chunk whose scores moved, as it is without labels: labels
        # pin the chunk's shift, and its share of that sd falls to a quarter, but how far each
        # bin moved on its own only its own few labels show.
        unlabelled = self._shift_spread(drift_model, moved_counts, False)
        cell_sd = production_cell_sd(
            expected,
            np.asarray(stats[3], dtype=float),
            np.asarray(stats[4], dtype=float),
            drift_model.bin_sd,
            movement_prior_scale(share),
            spread_bin_sd(0.0, unlabelled),
        )
        own = np.asarray(drift[CHUNK_BIN_SD_ARG], dtype=float)
        if own.shape[0] == 0:
            own = np.full(expected.shape[0], drift_model.bin_sd)
        out = list(drift)
        out[CHUNK_BIN_SD_ARG] = np.ascontiguousarray(np.maximum(own, cell_sd))
        return tuple(out)

    def _shift_spread(self, drift: Drift, counts: np.ndarray, labelled: bool) -> np.ndarray:
        """Per chunk, the further sd (logit) of its calibration shift for how far its scores
        moved beyond the reference periods' own spread (:meth:`_moved_distance`)."""
        share = LABELLED_SHIFT_SHARE if labelled else 1.0
        return shift_spread(self._moved_distance(drift, counts), share * self.drift_per_shift)

    def _moved_distance(self, drift: Drift, counts: np.ndarray) -> np.ndarray:
        """Per chunk, how far its scores moved beyond the reference periods' own spread
        (:func:`score_shift_distance`). Binary calibrations only (a multiclass model's
        one-vs-rest ones included; 0 for its confidence calibration): there the further spread
        moved accuracy and macro F1 away from the realized values on both multiclass streams
        tried (flights after the shift: MAE .01332 -> .01349, .01572 -> .01591)."""
        state = self._state()
        if state["kind"] == "multiclass":
            return np.zeros(counts.shape[0])
        reference = state["positives"] + state["negatives"]
        out: np.ndarray = score_shift_distance(counts, reference, drift.count_dispersion)
        return out

    def _diagnostics(
        self,
        stats: tuple[np.ndarray, ...],
        calibration: tuple[Any, ...],
        drift_model: Drift,
        drift: Any,
        moved_counts: np.ndarray | None = None,
        conflict: LabelConflict | None = None,
    ) -> dict[str, np.ndarray]:
        """Per chunk: known labels, how unlike the reference its scores are (``moved_counts``:
        with a label shift, beyond it), (hierarchical method) the posterior of its calibration
        shift and, where production has labels, how far they put its calibration from where the
        reference's drift expects it (``conflict``)."""
        state = self._state()
        counts = np.asarray(stats[0]) if moved_counts is None else moved_counts
        reference = state["positives"] + state["negatives"]
        tv, p = shift_diagnostic(counts, reference, drift_model.count_dispersion)
        out = {
            "n_labelled": np.asarray(stats[3]).sum(axis=1) + np.asarray(stats[4]).sum(axis=1),
            "score_shift": tv,
            "score_shift_p": p,
        }
        if drift is not None:
            shift = _core.labelfree_drift_shift(calibration, drift, stats)
            out["calibration_shift"] = shift[:, 0]
            out["calibration_shift_sd"] = shift[:, 1]
        if conflict is not None:
            zs = conflict.chunk_z()
            out["labels_shift_z"] = zs[0]
            tilt = conflict.tilt is not None
            out["labels_tilt_z"] = zs[1] if tilt else np.full(zs[0].shape, np.nan)
            if conflict.classes is not None:
                for label, z in zip(conflict.class_names, zs[1 + tilt :], strict=True):
                    out[f"labels_class_z[{label}]"] = z
            out["labels_p"] = conflict_p(zs)
        return out

    def reference_score_pool(self) -> tuple[np.ndarray, np.ndarray]:
        """The reference's scores as the estimator keeps them (binned: distinct values and
        their shares), to simulate production chunks like the reference from."""
        state = self._state()
        summary: ScoreSummary = state["reference_scores"]
        counts = summary.positives + summary.negatives
        return np.asarray(summary.values, dtype=float), counts / counts.sum()

    @property
    def reference_confusion(self) -> ConfusionMatrix:
        """The confusion matrix of the reference data the estimator was fitted on."""
        confusion: ConfusionMatrix = self._state()["reference_confusion"]
        return confusion

    def reference_posteriors(
        self,
        metrics: Any = None,
        *,
        n_samples: int = 10_000,
        beta: float = 1.0,
        zero_division: Any = 0.0,
    ) -> dict[str, Posterior]:
        """Each metric's posterior on the reference data, with its labels.

        Parameters
        ----------
        metrics : str or list of str, optional
            Default: the estimator's metrics.
        n_samples : int
            Draws of the sampled posteriors.
        beta, zero_division :
            As in :func:`probeval.evaluate`.

        Returns
        -------
        dict of str to Posterior
            The same posteriors as :meth:`LabelFreeEstimate.reference_posterior` (computed once
            per setting and cached; their random stream is fixed by the reference data).
        """
        self._state()  # fitted?
        names = self.metrics if metrics is None else _check_metrics(metrics)
        unknown = [m for m in names if m not in self.metrics]
        if unknown:
            raise ValueError(
                f"metrics {unknown} were not fitted; this estimator has {self.metrics}"
            )
        n = check_n_samples(n_samples)
        posteriors = self._reference_posteriors(
            self.metrics, n, check_beta(beta), check_zero_division(zero_division)
        )
        return {m: posteriors[m] for m in names}

    def _reference_posteriors(
        self, names: list[str], n: int, beta: float, zd: float
    ) -> dict[str, Posterior]:
        """Each metric's posterior on the reference data, with its labels (§2.1, §2.3).

        A property of the fitted estimator, so it is computed once (per number of draws and
        metric settings) from a stream fixed by the reference data, not by ``rng``: a service
        that estimates per request does not pay for it every time, and a given ``rng`` still
        gives the same result whatever was estimated before."""
        state = self._state()
        key = (tuple(names), n, beta, zd)
        cache: dict[Any, dict[str, Posterior]] = state.setdefault("reference_cache", {})
        if key not in cache:
            cache[key] = self._compute_reference(names, n, beta, zd)
        return cache[key]

    def _compute_reference(
        self, names: list[str], n: int, beta: float, zd: float
    ) -> dict[str, Posterior]:
        state = self._state()
        confusion: ConfusionMatrix = state["reference_confusion"]
        seed = zlib.crc32(np.ascontiguousarray(confusion.counts).tobytes())
        if state["kind"] == "multiclass":
            return self._compute_reference_multiclass(confusion, n, beta, zd, seed)
        result: dict[str, Posterior] = {}
        binary = [m for m in names if m not in RANKING_METRICS]
        if binary:
            result.update(
                confusion._posteriors(
                    [confusion._spec(m) for m in binary],
                    prior=_uniform_prior(),
                    n_samples=n,
                    seed=seed,
                    beta=beta,
                    zero_division=zd,
                    joint=False,
                )
            )
        summary: ScoreSummary = state["reference_scores"]
        for offset, name in enumerate(RANKING_METRICS, start=1):
            if name in names:
                post = summary.posterior(name, n_samples=n, rng=derive(seed, offset))
                # The draws come from the binned summary; the measured value is the exact one.
                post.observed = state["reference_observed"][name]
                result[name] = post
        return result

    def _compute_reference_multiclass(
        self, confusion: ConfusionMatrix, n: int, beta: float, zd: float, seed: int
    ) -> dict[str, Posterior]:
        """The reference's posteriors of a multiclass fit: the confusion-matrix metrics as
        :func:`probeval.evaluate` gives them, the ROC AUCs from the classes' one-vs-rest
        reference posteriors (macro: their mean per draw; weighted: by the draw's
        prevalences)."""
        state = self._state()
        specs: list[MetricSpec] = state["specs"]
        result: dict[str, Posterior] = {}
        confusion_specs = [spec for spec in specs if spec.kernel != "scores"]
        if confusion_specs:
            result.update(
                confusion._posteriors(
                    confusion_specs,
                    prior=resolve_prior(None, confusion.n_classes),
                    n_samples=n,
                    seed=seed,
                    beta=beta,
                    zero_division=zd,
                    joint=False,
                )
            )
        score_specs = [spec for spec in specs if spec.kernel == "scores"]
        if score_specs:
            ranked = _one_vs_rest_metrics(score_specs)
            parts = [one._reference_posteriors(ranked, n, beta, zd) for one in state["ovr"]]
            observed = {
                name: np.array([[part[name].observed] for part in parts]) for name in ranked
            }
            per_class = couple(
                {name: np.stack([part[name].samples for part in parts]) for name in ranked},
                state["auc_correlation"],
                derive(seed, 2),
            )
            for spec in score_specs:
                samples = combine_one_vs_rest(
                    per_class[spec.base], per_class["prevalence"], spec.average, spec.class_index
                )
                value = combine_one_vs_rest(
                    observed[spec.base], observed["prevalence"], spec.average, spec.class_index
                )
                result[spec.name] = Posterior(
                    spec.name,
                    samples=np.ascontiguousarray(samples),
                    observed=float(value[0]),
                    bounds=spec.bounds,
                )
        return {spec.name: result[spec.name] for spec in specs}

    def _positive(self, truth: np.ndarray) -> np.ndarray:
        """Labels as positive (True) / negative, in the reference's classes."""
        labels = self._state()["labels"]
        unknown = [c for c in observed_classes(truth) if c not in labels]
        if unknown:
            raise ValueError(
                f"y_true contains classes {unknown!r} that the reference did not have ({labels!r})"
            )
        positive: np.ndarray = encode(truth, labels) == 1
        return positive

    def _realized(
        self,
        positive: np.ndarray,
        scores: np.ndarray,
        binary: list[str],
        n: int,
        seed: int,
        chunk: int,
        beta: float,
        zd: float,
    ) -> dict[str, tuple[float, Posterior | None]]:
        """Realized value and with-labels posterior of each binary metric on one chunk."""
        out: dict[str, tuple[float, Posterior | None]] = {}
        if binary:
            confusion = ConfusionMatrix.from_scores(
                positive.astype(np.int64), scores, threshold=self.threshold
            )
            posts = confusion._posteriors(
                [confusion._spec(m) for m in binary],
                prior=_uniform_prior(),
                n_samples=n,
                seed=derive(seed, 2 + 2 * chunk),
                beta=beta,
                zero_division=zd,
                joint=False,
            )
            for name in binary:
                out[name] = (posts[name].observed, posts[name])
        return out

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description of the fitted estimator (see :meth:`from_dict`)."""
        state = self._state()
        confusion: ConfusionMatrix = state["reference_confusion"]
        if state["kind"] == "multiclass":
            return self._multiclass_dict()
        return {
            "format": _FORMAT,
            "n_bins": self.n_bins,
            "threshold": self.threshold,
            "metrics": list(self.metrics),
            "calibration": self.calibration,
            "auc_within_bin": self.auc_within_bin,
            "method": self.method,
            "unseen_drift": self.unseen_drift,
            "drift_per_shift": self.drift_per_shift,
            "shift": self.shift,
            "labels": list(state["labels"]),
            "edges": state["edges"].tolist(),
            "positives": state["positives"].tolist(),
            "negatives": state["negatives"].tolist(),
            "concordance": state["concordance"].tolist(),
            "concordance_se": state["concordance_se"].tolist(),
            "spread": state["spread"].tolist(),
            "reference_confusion": confusion.counts.tolist(),
            "reference_scores": state["reference_scores"].to_dict(),
            "reference_observed": dict(state["reference_observed"]),
            "period_sums": state["period_sums"].tolist(),
            "periods_declared": bool(state["periods_declared"]),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabelFreeEstimator:
        """Rebuild a fitted estimator from :meth:`to_dict` output."""
        if not isinstance(data, dict):
            raise TypeError(f"from_dict needs a dict, got {describe(data)}")
        if data.get("format") == _FORMAT_MULTICLASS:
            return cls._from_multiclass_dict(data)
        if data.get("format") != _FORMAT:
            raise ValueError(
                f"not a saved LabelFreeEstimator (format {data.get('format')!r}, "
                f"expected {_FORMAT!r})"
            )
        try:
            estimator = cls(
                n_bins=data["n_bins"],
                threshold=data["threshold"],
                metrics=data["metrics"],
                calibration=data["calibration"],
                auc_within_bin=data["auc_within_bin"],
                method=data["method"],
                # Saved before the parameters existed: the drift those estimates had.
                unseen_drift=data.get("unseen_drift", 0.0),
                drift_per_shift=data.get("drift_per_shift", 0.0),
                shift=data.get("shift", "covariate"),
            )
            arrays = _payload_calibration(data, estimator.n_bins, estimator.threshold)
            counts = as_count_matrix(
                "the saved estimator's reference_confusion",
                data["reference_confusion"],
                whole=False,
            )
            summary = ScoreSummary.from_dict(data["reference_scores"])
            saved = data.get("reference_observed")
            if saved is not None and not isinstance(saved, dict):
                raise ValueError(
                    "the saved estimator's reference_observed must be a dict of "
                    f"{', '.join(RANKING_METRICS)}, got {describe(saved)}"
                )
            # Saved before the exact values were kept: the binned summary's, as reported then.
            observed = (
                _ranking_observed(summary)
                if saved is None
                else {name: float(saved[name]) for name in RANKING_METRICS}
            )
            labels = data["labels"]
            sums = np.asarray(data["period_sums"], dtype=np.float64)
            declared = data["periods_declared"]
        except KeyError as error:
            raise ValueError(f"the saved estimator lacks the key {error.args[0]!r}") from None
        except TypeError as error:  # e.g. None where a list of numbers belongs
            raise ValueError(f"the saved estimator is malformed: {error}") from None
        if not isinstance(labels, list) or len(labels) != 2:
            raise ValueError(f"the saved estimator's labels must be a list of 2, got {labels!r}")
        if not isinstance(declared, bool):
            raise ValueError(f"periods_declared must be true or false, got {declared!r}")
        if counts.shape != (2, 2):
            raise ValueError(f"reference_confusion must be 2 x 2, got shape {counts.shape}")
        k = arrays["edges"].shape[0] + 1
        if sums.ndim != 3 or sums.shape[1:] != (k, 5) or sums.shape[0] < 1:
            raise ValueError(f"period_sums must have shape (periods, {k}, 5), got {sums.shape}")
        if not np.all(np.isfinite(sums)):
            raise ValueError("period_sums must be finite")
        estimator._fitted = {
            "kind": "binary",
            "score_scale": 1.0,
            "labels": labels,
            **arrays,
            "reference_confusion": ConfusionMatrix(counts, labels=[0, 1]),
            "reference_scores": summary,
            "reference_observed": observed,
            "period_sums": sums,
            "periods_declared": declared,
        }
        # Let the core check the calibration once, now rather than at the first estimate.
        stats = _core.labelfree_chunk_stats(
            estimator._calibration_args(), np.array([0.5]), [0], False
        )
        drift = learn_drift(sums, unseen=estimator.unseen_drift, coupled=True)
        _core.labelfree_drift_shift(estimator._calibration_args(), drift.core_args(), stats)
        return estimator

    def _multiclass_dict(self) -> dict[str, Any]:
        state = self._state()
        bins = state["bins"]
        return {
            "format": _FORMAT_MULTICLASS,
            "n_bins": self.n_bins,
            "metrics": [spec.name for spec in state["specs"]],
            "auc_within_bin": self.auc_within_bin,
            "method": self.method,
            "unseen_drift": self.unseen_drift,
            "drift_per_shift": self.drift_per_shift,
            "labels": list(state["labels"]),
            "edges": bins.edges.tolist(),
            "correct": bins.correct.tolist(),
            "wrong": bins.wrong.tolist(),
            "error_alpha": bins.error_alpha.tolist(),
            "reference_confusion": state["reference_confusion"].counts.tolist(),
            "period_sums": state["period_sums"].tolist(),
            "periods_declared": bool(state["periods_declared"]),
            "one_vs_rest": [one.to_dict() for one in state["ovr"]],
            "auc_correlation": state["auc_correlation"].tolist(),
            "period_errors": None
            if state["period_errors"] is None
            else state["period_errors"].tolist(),
            "score_shares": None if bins.score_shares is None else bins.score_shares.tolist(),
            "reference_confidence": _confidence_dict(state.get("reference_confidence")),
            "shift": self.shift,
            "ovr_class_counts": [c.tolist() for c in state.get("ovr_class_counts", [])],
        }

    @classmethod
    def _from_multiclass_dict(cls, data: dict[str, Any]) -> LabelFreeEstimator:
        """Rebuild a multiclass fit, checking the payload like user input."""
        try:
            estimator = cls(
                n_bins=data["n_bins"],
                metrics=data["metrics"],
                auc_within_bin=data["auc_within_bin"],
                method=data["method"],
                # Saved before the parameters existed: the drift those estimates had.
                unseen_drift=data.get("unseen_drift", 0.0),
                drift_per_shift=data.get("drift_per_shift", 0.0),
                shift=data.get("shift", "covariate"),
            )
            labels = data["labels"]
            if not isinstance(labels, list) or len(labels) < 3:
                raise ValueError(f"labels must be a list of 3 or more classes, got {labels!r}")
            k = len(labels)
            edges = np.asarray(data["edges"], dtype=np.float64)
            if edges.ndim != 1 or not np.all(np.isfinite(edges)):
                raise ValueError(
                    f"edges must be a list of finite numbers, got {describe(data['edges'])}"
                )
            b = edges.shape[0] + 1
            arrays = {
                key: np.asarray(data[key], dtype=np.float64)
                for key in ("correct", "wrong", "error_alpha", "period_sums", "auc_correlation")
            }
            counts = as_count_matrix(
                "the saved estimator's reference_confusion",
                data["reference_confusion"],
                whole=False,
            )
            declared = data["periods_declared"]
            ovr = [cls.from_dict(part) for part in data["one_vs_rest"]]
            # Saved before the error shares' movement was learned: the reference's shares.
            errors = data.get("period_errors")
            if errors is not None:
                errors = np.asarray(errors, dtype=np.float64)
            # Saved before the reference's score shares were kept: no tilt from the scores.
            score_shares = data.get("score_shares")
            if score_shares is not None:
                score_shares = np.asarray(score_shares, dtype=np.float64)
            # Saved before it was kept: labelled rows are taken where their bin's rows sit.
            confidence = _confidence_from_dict(data.get("reference_confidence"))
            # Saved before label shifts were modelled (which need them): none.
            class_counts = [
                np.asarray(part, dtype=np.float64) for part in data.get("ovr_class_counts", [])
            ]
        except KeyError as error:
            raise ValueError(f"the saved estimator lacks the key {error.args[0]!r}") from None
        except TypeError as error:
            raise ValueError(f"the saved estimator is malformed: {error}") from None
        if np.any(np.diff(edges) <= 0) or np.any((edges <= 0) | (edges >= 1)):
            raise ValueError("edges must ascend strictly within (0, 1)")
        if not np.all(np.isin(np.arange(1, k) / k, edges)):
            raise ValueError(f"edges must hold the class boundaries c/{k}")
        shapes = {
            "correct": (b,),
            "wrong": (b,),
            "error_alpha": (b, k),
            "auc_correlation": (k, k),
        }
        for key, shape in shapes.items():
            if arrays[key].shape != shape or not np.all(np.isfinite(arrays[key])):
                raise ValueError(f"{key} must be finite with shape {shape}")
            if key != "auc_correlation" and np.any(arrays[key] < 0):
                raise ValueError(f"{key} must be >= 0")
        sums = arrays["period_sums"]
        if sums.ndim != 3 or sums.shape[1:] != (b, 5) or not np.all(np.isfinite(sums)):
            raise ValueError(f"period_sums must be finite with shape (periods, {b}, 5)")
        if counts.shape != (k, k):
            raise ValueError(f"reference_confusion must be {k} x {k}, got shape {counts.shape}")
        if errors is not None and (
            errors.shape != (sums.shape[0], b, k)
            or not np.all(np.isfinite(errors))
            or np.any(errors < 0)
        ):
            raise ValueError(
                f"period_errors must be finite and >= 0 with shape ({sums.shape[0]}, {b}, {k})"
            )
        if score_shares is not None and (
            score_shares.shape != (b, k)
            or not np.all(np.isfinite(score_shares))
            or np.any(score_shares < 0)
        ):
            raise ValueError(f"score_shares must be finite and >= 0 with shape ({b}, {k})")
        if not isinstance(declared, bool):
            raise ValueError(f"periods_declared must be true or false, got {declared!r}")
        if ovr and len(ovr) != k:
            raise ValueError(f"one_vs_rest must hold one estimator per class ({k}), or none")
        specs = estimator._multiclass_specs(labels)
        if any(spec.kernel == "scores" for spec in specs) and not ovr:
            raise ValueError("ROC AUC and average precision need the saved one-vs-rest estimators")
        wanted = _one_vs_rest_metrics([spec for spec in specs if spec.kernel == "scores"])
        if any(name not in one.metrics for one in ovr for name in wanted):
            raise ValueError(
                f"the saved one-vs-rest estimators must estimate {', '.join(wanted)} for "
                f"metrics {estimator.metrics}"
            )
        bins = MulticlassBins(
            k,
            edges,
            bin_classes(edges, k),
            arrays["correct"],
            arrays["wrong"],
            arrays["error_alpha"],
            score_shares,
        )
        estimator._fitted = estimator._multiclass_state(
            labels,
            specs,
            bins,
            ConfusionMatrix._from_matrix(counts, labels, weighted=False),
            sums,
            declared,
            ovr,
            errors,
        )
        correlation = arrays["auc_correlation"]
        if np.any(np.abs(correlation) > 1) or not np.allclose(correlation, correlation.T):
            raise ValueError("auc_correlation must be a symmetric matrix of correlations")
        estimator._fitted["auc_correlation"] = correlation
        estimator._fitted["reference_confidence"] = confidence
        if (class_counts or estimator.shift == "label") and len(class_counts) != len(ovr):
            raise ValueError(
                "ovr_class_counts must hold one table per one-vs-rest estimator "
                f"({len(ovr)}) with shift={estimator.shift!r}"
            )
        for one, table in zip(ovr if class_counts else [], class_counts, strict=True):
            shape = (one._state()["edges"].shape[0] + 1, k)
            if table.shape != shape or not np.all(np.isfinite(table)) or np.any(table < 0):
                raise ValueError(f"ovr_class_counts must be finite and >= 0 with shapes {shape}")
        estimator._fitted["ovr_class_counts"] = class_counts
        # Let the core check the bins and error model now rather than at the first estimate.
        estimator.estimate(np.full((1, k), 1.0 / k), n_samples=1, rng=0)
        return estimator

    def save(self, path: str | Path) -> None:
        """Write the fitted estimator to a JSON file (no pickle)."""
        Path(path).write_text(json.dumps(self.to_dict()), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> LabelFreeEstimator:
        """Read an estimator written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def __repr__(self) -> str:
        fitted = "fitted" if self.is_fitted else "not fitted"
        return (
            f"LabelFreeEstimator(n_bins={self.n_bins}, threshold={self.threshold:g}, "
            f"calibration={self.calibration!r}, auc_within_bin={self.auc_within_bin!r}, "
            f"method={self.method!r}, unseen_drift={self.unseen_drift:g}, "
            f"drift_per_shift={self.drift_per_shift:g}, shift={self.shift!r}, {fitted})"
        )


def _periods(periods: Any, n: int) -> tuple[np.ndarray, int]:
    """The reference period of each row (0, 1, ...) and their number."""
    if periods is None:
        blocks = min(_MAX_BLOCKS, max(5, n // _PERIOD_ROWS))
        return _blocks(n, blocks), blocks
    if isinstance(periods, (bool, np.bool_)):
        raise TypeError(f"periods must be a number of blocks or a label per row, got {periods!r}")
    if isinstance(periods, numbers.Integral):
        if not 1 <= int(periods) <= n:
            raise ValueError(
                f"periods must be between 1 and the number of reference rows ({n}), got {periods}"
            )
        return _blocks(n, int(periods)), int(periods)
    if np.ndim(periods) == 0:
        raise TypeError(
            f"periods must be a number of blocks or a period label per row, got {describe(periods)}"
        )
    values = np.asarray(periods)
    if values.ndim != 1 or values.shape[0] != n:
        raise ValueError(
            f"periods must have one label per reference row ({n}), got shape {values.shape}"
        )
    try:
        _, index = np.unique(values, return_inverse=True)
    except TypeError:
        raise TypeError("periods must be sortable labels (numbers, strings or dates)") from None
    return index.astype(np.int64), int(index.max()) + 1 if n else 0


def _blocks(n: int, blocks: int) -> np.ndarray:
    """Consecutive blocks of nearly equal size."""
    out: np.ndarray = (np.arange(n, dtype=np.int64) * blocks) // max(n, 1)
    return out


def has_missing(values: Any) -> bool:
    """Whether a label column has missing values (NaN, None, pandas NA)."""
    if hasattr(values, "to_numpy"):
        values = values.to_numpy(dtype=object)
    return first_missing(np.asarray(values)) is not None


def _any_known(known: np.ndarray | None) -> bool:
    """Whether partial labels (:func:`_known_labels`) give any row's label."""
    return known is not None and not bool(np.isnan(known).all())


def _known_labels(values: Any, labels: list[Any]) -> np.ndarray:
    """Partial labels as 1 (the positive class), 0 (the other) or NaN (not known yet)."""
    if np.ndim(values) != 1:
        raise ValueError(f"partial_labels must be one-dimensional, got {describe(values)}")
    if hasattr(values, "to_numpy"):
        values = values.to_numpy(dtype=object)
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        array = array.astype(object)
    missing = missing_mask(array)
    out = np.full(array.shape[0], np.nan)
    given = array[~missing]
    if given.shape[0]:
        checked = as_labels("partial_labels", given)
        unknown = [c for c in observed_classes(checked) if c not in labels]
        if unknown:
            raise ValueError(
                f"partial_labels contains classes {unknown!r} that the reference did not have "
                f"({labels!r})"
            )
        out[~missing] = encode(checked, labels).astype(np.float64)
    return out


def _class_confusion(
    codes: np.ndarray, predicted: np.ndarray, labels: list[Any]
) -> ConfusionMatrix:
    """The K x K count matrix of true and predicted class indices."""
    k = len(labels)
    cells = np.bincount(codes * k + predicted, minlength=k * k).astype(np.float64)
    return ConfusionMatrix._from_matrix(cells.reshape(k, k), labels, weighted=False)


def _ranking_observed(summary: ScoreSummary) -> dict[str, float]:
    """The reference's measured ROC AUC and average precision, from its whole score summary:
    the one kept for the reference's posteriors is binned (:data:`_REFERENCE_AUC_BINS`), which
    moves average precision by up to 1e-3 on a few thousand rows."""
    return {name: summary.observed(name) for name in RANKING_METRICS}


def _one_vs_rest_metrics(score_specs: list[MetricSpec]) -> list[str]:
    """What a multiclass fit's one-vs-rest estimators give for these ranking metrics: ROC AUC
    first (its draws carry the classes' correlation), the prevalence that weights the classes,
    and average precision when asked for."""
    names = ["roc_auc", "prevalence"]
    if any(spec.base == "average_precision" for spec in score_specs):
        names.append("average_precision")
    return names


def _realized_score_metric(
    name: str, observed: float, draws: np.ndarray
) -> tuple[float, Posterior | None]:
    """A chunk's measured ROC AUC or average precision and its with-labels posterior (both
    from ``_core.chunk_score_draws``); NaN and None when the chunk has one class only."""
    if math.isnan(observed):
        return (math.nan, None)
    post = Posterior(name, samples=draws, observed=observed, bounds=(0.0, 1.0))
    return (observed, post)


def _score_slices(
    scores: np.ndarray, starts: list[int], edges: np.ndarray, per_bin: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each chunk's rows inside each bin (``scores`` arranged chunk after chunk from
    ``starts``), cut into ``per_bin`` slices in score order that never split a tie: one per
    distinct score when a bin has at most ``per_bin`` of them (a slice of one score is credited
    as scikit-learn credits a tie), else about equal counts of rows. Per (chunk, bin, slice)
    the share of the bin's rows, their mean score and their span (max - min). (The slope of
    a bin's positive rate on the score comes from the chunk statistics' spread of its scores;
    see ``_core.labelfree_estimate``.)"""
    n, n_chunks, k = scores.shape[0], len(starts), edges.shape[0] + 1
    chunk = np.repeat(np.arange(n_chunks), np.diff([*starts, n]))
    group = chunk * k + np.searchsorted(edges, scores, side="left")
    order = np.lexsort((scores, group))
    group, values = group[order], scores[order]
    sizes = np.bincount(group, minlength=n_chunks * k)
    first = np.cumsum(sizes) - sizes
    within = np.arange(n) - first[group]
    # Runs of one score inside a bin (ties), each run's first row and index in its bin.
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = (group[1:] != group[:-1]) | (values[1:] != values[:-1])
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n), 0))
    run_index = np.cumsum(new_run) - 1
    distinct = np.bincount(group, weights=new_run, minlength=n_chunks * k)
    by_rank = within[run_start] * per_bin // np.maximum(sizes[group], 1)
    by_score = run_index - run_index[first[group]] if n else run_index
    cell = group * per_bin + np.where(distinct[group] <= per_bin, by_score, by_rank)
    size = n_chunks * k * per_bin
    counts = np.bincount(cell, minlength=size).astype(float)
    mean = np.bincount(cell, weights=values, minlength=size) / np.maximum(counts, 1)
    span = np.zeros(size)
    if n:
        head = np.flatnonzero(np.diff(cell, prepend=-1))
        tail = np.append(head[1:], n) - 1
        span[cell[head]] = values[tail] - values[head]
    share = counts / np.maximum(np.repeat(sizes, per_bin), 1)
    shape = (n_chunks, k, per_bin)
    return (
        share.reshape(shape),
        np.clip(mean, 0, 1).reshape(shape),
        span.reshape(shape),
    )


def _uniform_prior() -> Any:
    return resolve_prior(1.0, 2)


def _no_worse(estimate: Posterior, reference: Posterior, ci: float) -> Decision | None:
    """Is the chunk no worse than the reference? (:func:`no_worse_rope`); None for metrics with
    no better direction."""
    if metric_info(estimate.metric).better not in ("higher", "lower"):
        return None
    return decide(estimate, no_worse_rope(reference, ci), ci=ci)


def _payload_calibration(data: dict[str, Any], n_bins: int, threshold: float) -> dict[str, Any]:
    """The calibration arrays of a saved estimator, checked like user input: a tampered or
    truncated payload must fail here, naming the key, not estimate something else later."""

    def numbers(key: str, length: int | None = None) -> np.ndarray:
        value = data[key]
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{key} must be a list of numbers, got {describe(value)}") from None
        if array.ndim != 1 or not np.isfinite(array).all():
            raise ValueError(f"{key} must be a list of finite numbers, got {describe(value)}")
        if length is not None and array.shape[0] != length:
            raise ValueError(
                f"{key} must have one value per bin: {array.shape[0]} values for {length} bins"
            )
        return array

    edges = numbers("edges")
    k = edges.shape[0] + 1
    if np.any(np.diff(edges) <= 0) or (edges.size and (edges[0] < 0 or edges[-1] > 1)):
        raise ValueError("edges must ascend strictly within [0, 1]")
    if k > n_bins + 1:
        raise ValueError(
            f"{k} bins do not fit n_bins={n_bins} (at most n_bins + 1 with the edge "
            "at the threshold)"
        )
    if threshold < 1 and not np.any(edges == threshold):
        raise ValueError(
            f"threshold={threshold} is not one of the bin edges: the payload's bins were made "
            "for another threshold"
        )
    arrays = {"edges": edges}
    for key in ("positives", "negatives", "concordance_se"):
        arrays[key] = numbers(key, k)
        if np.any(arrays[key] < 0):
            raise ValueError(f"{key} must be >= 0")
    arrays["concordance"] = numbers("concordance", k)
    if np.any((arrays["concordance"] < 0) | (arrays["concordance"] > 1)):
        raise ValueError("concordance must lie in [0, 1]")
    # Saved before the reference scores' spread was kept: the concordances hold as they are.
    arrays["spread"] = numbers("spread", k) if "spread" in data else np.zeros(0)
    if np.any((arrays["spread"] < 0) | (arrays["spread"] > 1)):
        raise ValueError("spread must lie in [0, 1]")
    return arrays


def _check_both_classes(n_positive: float, n_negative: float, order: list[Any]) -> None:
    """A reference of one class cannot say how often a score range is right: refuse it at fit
    rather than fit something whose summaries, decisions and payload cannot be computed."""
    if n_positive > 0 and n_negative > 0:
        return
    present, missing = (order[0], order[1]) if n_positive == 0 else (order[1], order[0])
    raise ValueError(
        f"the reference's y_true holds only the class {present!r}: the calibration needs "
        f"labelled rows of both classes to learn how often each score range is right; add "
        f"reference rows of the class {missing!r}"
    )


class _ReferencePosteriors(ValueEquality):
    """The reference's posteriors that an estimate's decisions compare with, made on first use;
    an object rather than a closure so that estimates pickle and compare."""

    __slots__ = ("beta", "estimator", "metrics", "n_samples", "zero_division")

    def __init__(
        self,
        estimator: LabelFreeEstimator,
        metrics: list[str],
        n_samples: int,
        beta: float,
        zero_division: float,
    ) -> None:
        self.estimator = estimator
        self.metrics = metrics
        self.n_samples = n_samples
        self.beta = beta
        self.zero_division = zero_division

    def __call__(self) -> dict[str, Posterior]:
        return self.estimator._reference_posteriors(
            self.metrics, self.n_samples, self.beta, self.zero_division
        )


def _label_shift_drift(drift: Drift) -> Drift:
    """The drift model under a label shift: without the rate's climb inside each bin. A
    label shift moves a bin's rate as a whole, to the reference's classes in it times e^g
    (exactly, for the bin's rows on average); its rows sitting higher in the bin are the
    label shift itself, which the within-bin slope would count again (10^6 rows, prevalence
    odds x 3, ten bins: precision 1.2 posterior sds above the realized value and average
    precision 2.5 with it, -0.2 and 0.9 without)."""
    return replace(drift, slope=np.zeros_like(drift.slope), slope_se=np.zeros_like(drift.slope_se))


def _ovr_class_counts(
    one: LabelFreeEstimator, scores: np.ndarray, codes: np.ndarray, k: int
) -> np.ndarray:
    """The reference's rows of each class (columns) in each bin of a one-vs-rest estimator
    fitted on ``scores`` (bins (low, high], as the core takes them)."""
    edges = one._state()["edges"]
    bins = np.searchsorted(edges, scores, side="left")
    out = np.zeros((edges.shape[0] + 1, k))
    np.add.at(out, (bins, codes), 1.0)
    return out


def _one_vs_rest_shares(counts: np.ndarray) -> np.ndarray:
    """Each one-vs-rest bin's classes as shares (bins, K), each class with a sixth of a row
    more (so that no class is impossible in a bin that had none of it)."""
    padded = counts + 1.0 / 6.0
    out: np.ndarray = padded / padded.sum(axis=1, keepdims=True)
    return out


class _ClassLabelShift:
    """A multiclass fit's label shift in each chunk (:meth:`LabelFreeEstimator._class_label_shift`):
    its shift g of each class's log-odds (``mean`` (chunks, K)) with the covariance of its
    normal approximation (``cov``), the reference's classes in each bin (``shares`` (bins, K)),
    each bin's predicted class (whose rate the bin's drift model moves), the chunks' bin
    ``counts``, and their known labels per bin (``labelled``). A one-vs-rest class's bins take
    the same shift, each bin's "predicted class" that class."""

    def __init__(
        self,
        mean: np.ndarray,
        cov: np.ndarray,
        shares: np.ndarray,
        predicted: np.ndarray,
        counts: np.ndarray,
        labelled: np.ndarray,
    ) -> None:
        self.mean, self.cov, self.predicted = mean, cov, predicted
        #: The chunks' bin counts with the shift taken back out.
        self.counts: np.ndarray = adjusted_class_counts(counts, shares, mean)
        moved = shifted_class_shares(shares, mean)
        self.moved = moved
        bins = np.arange(shares.shape[0])
        before = np.clip(shares[bins, predicted], 1e-12, 1 - 1e-12)
        after = np.clip(moved[:, bins, predicted], 1e-12, 1 - 1e-12)
        #: Per chunk and bin, how far the shift moves the bin's correct rate (logit).
        self.offsets: np.ndarray = np.log(after / (1 - after)) - np.log(before / (1 - before))
        # What the chunk's labels read of these moves in the shift common to all bins: their
        # mean, each bin weighted by its labels' information n r (1 - r).
        weight = labelled * before * (1 - before)
        total = weight.sum(axis=1)
        #: Per chunk, that mean (0 without labels).
        self.read_by_labels: np.ndarray = np.where(
            total > 0, (weight * self.offsets).sum(axis=1) / np.maximum(total, 1e-300), 0.0
        )

    def loading(self) -> np.ndarray:
        """Per chunk, how each bin's logit correct rate moves with a further move e of the
        classes' log-odds (chunks, bins, K): e_c - Σ_j φ'_j e_j, φ' the shares of the bin's
        mistakes after the chunk's shift (:func:`class_move_loading` at the shifted shares).
        At the reference's shares a rare class that tripled moved accuracy by 0.4 times what
        it does."""
        bins = np.arange(self.moved.shape[1])
        correct = self.moved[:, bins, self.predicted]
        loading = -self.moved / np.maximum(1.0 - correct, 1e-12)[:, :, None]
        loading[:, bins, self.predicted] = 1.0
        out: np.ndarray = np.ascontiguousarray(loading)
        return out

    def offset_sd(self) -> np.ndarray:
        """Per chunk, the sd by which its bins' offsets move together with the shift's
        uncertainty: each bin's sd of its offset (its :meth:`loading` on the shift's
        covariance), their root mean square over the chunk's rows (a one-vs-rest class's
        offsets move by one amount for all its bins where the other classes' mix is the same
        in every bin)."""
        loading = self.loading()
        var = np.einsum("cbi,cij,cbj->cb", loading, self.cov, loading)
        weights = self.counts / np.maximum(self.counts.sum(axis=1, keepdims=True), 1e-300)
        out: np.ndarray = np.sqrt(np.maximum((weights * var).sum(axis=1), 0.0))
        return out

    def tilted(self, alpha: np.ndarray) -> np.ndarray:
        """The error shares' Dirichlet parameters ``alpha`` ((bins, K), or each chunk's) moved
        to the shift: each bin's shares times e^g, at the same total weight."""
        moved = alpha * np.exp(self.mean)[:, None, :]
        total = alpha.sum(axis=-1, keepdims=True)
        out: np.ndarray = np.ascontiguousarray(
            moved * total / np.maximum(moved.sum(axis=-1, keepdims=True), 1e-300)
        )
        return out

    def factor(self, move_sd: float) -> np.ndarray:
        """Per chunk, the lower-triangular factor of the class moves' covariance for the core:
        the shift's uncertainty plus the unseen drift's moves (sd ``move_sd`` per class)."""
        k = self.mean.shape[1]
        cov = self.cov + (move_sd**2 + 1e-12) * np.eye(k)
        out: np.ndarray = np.ascontiguousarray(np.linalg.cholesky(cov))
        return out


class _ChunkResult(ValueEquality):
    __slots__ = ("chunk", "estimates", "realized")

    def __init__(
        self,
        chunk: Chunk,
        estimates: dict[str, Posterior],
        realized: dict[str, tuple[float, Posterior | None]],
    ) -> None:
        self.chunk = chunk
        self.estimates = estimates
        self.realized = realized


def _rate_means(pos: np.ndarray, neg: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Posterior mean of each bin's positive rate, as the core draws it: prior Beta(2 m,
    2 (1 - m)) with m the bin's ``centre`` (:meth:`LabelFreeEstimator._rate_centres`)."""
    out: np.ndarray = (pos + 2.0 * centre) / (pos + neg + 2.0)
    return out


def _multiclass_bin_table(bins: MulticlassBins, labels: list[Any], centre: np.ndarray) -> Table:
    """The multiclass bins in the user's terms: pseudo-scores u = (c + t) / K back to the
    predicted class c and the confidence s = 1/K + t (K - 1) / K."""
    k = bins.n_classes
    edges = np.r_[0.0, bins.edges, 1.0]
    classes = bins.predicted

    def confidence(u: np.ndarray) -> np.ndarray:
        t = np.clip(u * k - classes, 0.0, 1.0)
        return np.asarray(1.0 / k + t * (k - 1.0) / k)

    correct, wrong = bins.correct, bins.wrong
    shares = bins.error_alpha / np.maximum(bins.error_alpha.sum(axis=1, keepdims=True), 1e-300)
    columns: dict[str, list[Any]] = {
        "predicted": [labels[c] for c in classes],
        "confidence_low": confidence(edges[:-1]).tolist(),
        "confidence_high": confidence(edges[1:]).tolist(),
        "correct": correct.tolist(),
        "wrong": wrong.tolist(),
        "correct_rate": _rate_means(correct, wrong, centre).tolist(),
    }
    for j, label in enumerate(labels):
        columns[f"wrong_is[{label}]"] = shares[:, j].tolist()
    return Table(columns, title="reference calibration (multiclass: per predicted class)")


class LabelFreeEstimate(HtmlRepr, LabelledDraws, ValueEquality):
    """Estimated posteriors per chunk and metric (from :meth:`LabelFreeEstimator.estimate`).

    ``result.posterior("f1", chunk=2)`` is a :class:`Posterior`; ``chunk`` is an index or a
    chunk key (e.g. "2024-03" for monthly chunks). :meth:`summary` is the table of all chunks;
    with labels given to ``estimate`` it also shows the realized values.
    """

    _not_compared = ("_reference",)  # computed from _make_reference on first use

    def __init__(
        self,
        results: list[_ChunkResult],
        metrics: list[str],
        *,
        reference: Callable[[], dict[str, Posterior]],
        target: str,
        calibration: str,
        method: str,
        ci: float,
        counts: np.ndarray,
        diagnostics: dict[str, np.ndarray],
        shift: str = "covariate",
        conflict: LabelConflict | None = None,
    ) -> None:
        self._results = results
        self._metrics = metrics
        # The reference posteriors (for decisions) are computed on first use.
        self._make_reference = reference
        self._reference: dict[str, Posterior] | None = None
        self.target = target
        self.calibration = calibration
        self.method = method
        self.shift = shift
        self.ci = ci
        self._counts = counts
        self._diagnostics = diagnostics
        self._conflict = conflict

    @property
    def metrics(self) -> list[str]:
        return list(self._metrics)

    @property
    def chunks(self) -> list[Chunk]:
        return [r.chunk for r in self._results]

    @property
    def has_labels(self) -> bool:
        return bool(self._results and self._results[0].realized)

    def bin_counts(self, chunk: Any = 0) -> np.ndarray:
        """Rows of the chunk in each calibration bin."""
        return np.asarray(self._counts[self._result(chunk).chunk.index])

    def diagnostics(self, chunk: Any = 0) -> dict[str, float]:
        """When to distrust a chunk's estimate.

        - ``n_labelled``: rows of the chunk with known labels (``partial_labels``);
        - ``score_shift``: total variation distance between the chunk's and the reference's
          shares of rows per bin (0: same mix of scores; 1: no overlap); with
          ``shift="label"``, the chunk's shares with its label shift taken back out (how far
          the scores moved beyond a change of prevalence);
        - ``score_shift_p``: probability of bin counts at least this unlike the reference's had
          the chunk been one more reference period (chi-squared, scaled by how much the
          reference periods differ from each other). Below 0.001 the chunk's scores are unlike
          anything the reference showed: the drift learned there may not hold;
        - ``calibration_shift`` and ``calibration_shift_sd`` (method "hierarchical"): posterior
          mean and sd of the chunk's common shift of logit P(y | score) from the reference; 0
          and the reference's own spread without labels, moved by the labels that are known;
          with ``shift="label"``, the log of the prevalence's odds ratio its scores show
          (plus any drift);
        - ``labels_shift_z``, ``labels_tilt_z`` and ``labels_p`` (method "hierarchical", once
          production has ``partial_labels``; nan for a chunk without): where the chunk's own labels
          put its calibration's shift and tilt (how far apart the bins' logits sit), against where
          the reference's drift expects them, in sds of that difference had production moved as the
          reference's periods did (a prior predictive check); ``labels_p`` is the chance of labels
          at least this far off in either (two-sided, Bonferroni over the two). A small ``labels_p``
          says the labels show a calibration the reference never did: the estimate then follows the
          labels, and its chunks without labels lean on the labelled ones (:meth:`label_check` for
          all chunks together). A multiclass model has its confidence calibration's shift (no
          tilt) and, per class c, ``labels_class_z[c]``: that class's predictions' shift beyond
          the chunk's common one (nan where none of them has a label); ``labels_p`` is then
          Bonferroni over the shift and the classes the chunk's labels show.
        """
        index = self._result(chunk).chunk.index
        return {key: float(values[index]) for key, values in self._diagnostics.items()}

    def score_shift_alerts(self, p: float = SCORE_SHIFT_ALERT) -> list[int]:
        """Indices of the chunks whose ``score_shift_p`` (see :meth:`diagnostics`) is below
        ``p``: scores unlike the reference periods', where the estimate deserves a labelled
        sample before it is trusted."""
        p = check_open_unit("p", p)
        return [int(i) for i in np.flatnonzero(self._diagnostics["score_shift_p"] < p)]

    def label_alerts(self, p: float = SCORE_SHIFT_ALERT) -> list[int]:
        """Indices of the chunks whose ``labels_p`` (see :meth:`diagnostics`) is below ``p``:
        labels that show a calibration the reference's periods never did."""
        p = check_open_unit("p", p)
        values = self._diagnostics.get("labels_p")
        if values is None:
            return []
        with np.errstate(invalid="ignore"):
            return [int(i) for i in np.flatnonzero(values < p)]

    def label_check(self) -> dict[str, Any] | None:
        """The labels of all chunks together against the reference's drift: whether production
        as a whole moved where the reference's periods did not (None without labels or with
        method "pooled").

        Each chunk's difference between where its labels put its calibration's shift (and
        tilt) and where the drift expects it (:meth:`diagnostics`), weighted by its precision
        and summed over the labelled chunks, in sds of that sum; what moves every chunk at once
        (the unseen drift, the reference's own rates) does not average away. A move common to
        every chunk that each chunk's labels show only faintly shows here: with 5% of
        5,000-row chunks labelled, a production that ranks 10% more steeply than the reference
        (slope times 1.1) gave the chunks' tilt z's a mean of 0.7 and this one 2.1 (40
        simulated streams; p < 0.05 in 16 of them).

        Returns
        -------
        dict or None
            ``n_chunks`` and ``n_labelled`` (labelled chunks and rows), ``shift_z`` and
            ``tilt_z`` (nan where the tilt is not learned: a multiclass model's confidence
            calibration), for a multiclass model ``class_z`` (class: z of its predictions'
            shift beyond the common one; nan for a class no labelled chunk predicted) and
            ``p``, the chance of labels this far off in any of them had production moved as
            the reference's periods did (two-sided, Bonferroni over them).
        """
        conflict = self._conflict
        if conflict is None or not conflict.labelled.any():
            return None
        zs = conflict.stream_z()
        tilt = conflict.tilt is not None
        out: dict[str, Any] = {
            "n_chunks": int(conflict.labelled.sum()),
            "n_labelled": int(self._diagnostics["n_labelled"].sum()),
            "shift_z": zs[0],
            "tilt_z": zs[1] if tilt else math.nan,
        }
        if conflict.classes is not None:
            out["class_z"] = dict(zip(conflict.class_names, zs[1 + tilt :], strict=True))
        out["p"] = float(conflict_p([np.array(z) for z in zs]))
        return out

    def _result(self, chunk: Any) -> _ChunkResult:
        if isinstance(chunk, (bool, np.bool_)):
            raise TypeError(f"chunk must be an index or a chunk key, got {chunk!r}")
        if isinstance(chunk, numbers.Integral):
            index = int(chunk)
            if not -len(self._results) <= index < len(self._results):
                raise IndexError(f"chunk {index} out of range ({len(self._results)} chunks)")
            return self._results[index]
        for result in self._results:
            if result.chunk.key == chunk:
                return result
        keys = ", ".join(repr(r.chunk.key) for r in self._results[:10])
        raise KeyError(
            f"no chunk {chunk!r}; chunks: {keys}{' ...' if len(self._results) > 10 else ''}"
        )

    def _metric(self, metric: Any) -> str:
        if isinstance(metric, str) and metric.strip() in self._metrics:
            return metric.strip()
        name = metric_info(metric).name if isinstance(metric, str) else canonical_name(metric)
        if name not in self._metrics:
            raise KeyError(f"{metric!r} was not estimated; metrics: {', '.join(self._metrics)}")
        return name

    def posterior(self, metric: str, chunk: Any = 0) -> Posterior:
        """The estimated posterior of ``metric`` on ``chunk``."""
        return self._result(chunk).estimates[self._metric(metric)]

    def _references(self) -> dict[str, Posterior]:
        if self._reference is None:
            self._reference = self._make_reference()
        return self._reference

    def reference_posterior(self, metric: str) -> Posterior:
        """The metric's posterior on the reference data (with its labels)."""
        return self._references()[self._metric(metric)]

    def realized(self, metric: str, chunk: Any = 0) -> float | None:
        """The value measured with the chunk's labels (None without labels; nan if undefined)."""
        entry = self._result(chunk).realized.get(self._metric(metric))
        return None if entry is None else entry[0]

    def realized_posterior(self, metric: str, chunk: Any = 0) -> Posterior | None:
        """The with-labels posterior of the chunk (None without labels or when undefined)."""
        entry = self._result(chunk).realized.get(self._metric(metric))
        return None if entry is None else entry[1]

    def value(self, value: Any, chunk: Any = 0) -> Posterior:
        """The posterior of the expected value per row of the estimator's decisions on
        ``chunk``, for a value (or, negated, cost) matrix as in
        :func:`~probeval.decision_curve`: ``{"tp": ..., "fp": ..., "tn": ..., "fn": ...}`` or
        ``[[tn, fp], [fn, tp]]``. Needs accuracy, prevalence and selection_rate among the
        estimator's metrics: their joint draws fix the four cells of every draw."""
        cells = check_value_matrix("value", value)
        needed = ("accuracy", "prevalence", "selection_rate")
        missing = [m for m in needed if m not in self._metrics]
        if missing:
            raise ValueError(
                f"the expected value needs {', '.join(needed)} among the estimator's metrics "
                f"(missing: {', '.join(missing)}): LabelFreeEstimator(metrics=[...])"
            )
        accuracy, prevalence, selection = (self.posterior(m, chunk) for m in needed)
        realized = [self.realized(m, chunk) for m in needed]
        observed = math.nan
        if all(r is not None for r in realized):
            observed = float(value_of_cells(cells, *np.array(realized, dtype=np.float64)))
        return Posterior(
            "value per row",
            samples=value_of_cells(cells, accuracy.samples, prevalence.samples, selection.samples),
            observed=observed,
            bounds=(min(cells), max(cells)),
        )

    def decision(self, metric: str, chunk: Any = 0) -> Decision | None:
        """ "No worse than the reference": accepted when the chunk's HDI lies within [the
        reference HDI's worse edge, the best value], rejected when wholly outside (None for
        prevalence and selection rate, which have no better direction)."""
        name = self._metric(metric)
        return _no_worse(self.posterior(name, chunk), self._references()[name], self.ci)

    def summary(self, ci: float | None = None) -> Table:
        """One row per chunk and metric: estimate mean, HDI, decision (and realized values),
        the chunk's known labels and its ``score_shift_p`` (:meth:`diagnostics`; with partial
        labels, its ``labels_p`` too)."""
        level = self.ci if ci is None else check_ci(ci)
        columns: dict[str, list[Any]] = {
            key: []
            for key in ("chunk", "metric", "n_rows", "mean", "hdi_low", "hdi_high", "decision")
        }
        if self.has_labels:
            columns.update({"realized": [], "realized_low": [], "realized_high": []})
        checked = "labels_p" in self._diagnostics
        columns.update({"n_labelled": [], "score_shift_p": []})
        if checked:
            columns["labels_p"] = []
        for result in self._results:
            diagnostics = self.diagnostics(result.chunk.index)
            for name in self._metrics:
                columns["n_labelled"].append(int(diagnostics["n_labelled"]))
                columns["score_shift_p"].append(diagnostics["score_shift_p"])
                if checked:
                    columns["labels_p"].append(diagnostics["labels_p"])
                post = result.estimates[name]
                low, high = post.hdi(level)
                columns["chunk"].append(result.chunk.key)
                columns["metric"].append(name)
                columns["n_rows"].append(result.chunk.n_rows)
                columns["mean"].append(post.mean())
                columns["hdi_low"].append(low)
                columns["hdi_high"].append(high)
                verdict = self.decision(name, result.chunk.index)
                columns["decision"].append("" if verdict is None else verdict.status)
                if self.has_labels:
                    value, with_labels = result.realized[name]
                    interval = (
                        (math.nan, math.nan) if with_labels is None else with_labels.hdi(level)
                    )
                    columns["realized"].append(value)
                    columns["realized_low"].append(interval[0])
                    columns["realized_high"].append(interval[1])
        percent = f"{100 * level:g}"
        method = f"{self.method}, label shift" if self.shift == "label" else self.method
        title = (
            f"label-free estimate ({self.target}, {self.calibration} calibration, {method}, "
            f"{percent}% HDI, {len(self._results)} chunks)"
        )
        return Table(columns, title=title)

    def backtest(self, ci: float | None = None) -> Table:
        """How the intervals did against the labels, per metric: an estimate made with
        ``y_true=`` and ``target="realized"`` (the value each chunk's rows show once labelled)
        on labelled history, to learn before relying on it whether its intervals hold on this
        data. Over the chunks whose realized value is defined (``n_chunks``):

        - ``coverage``: the share of chunks whose HDI (``ci``, default the estimate's) holds
          the realized value;
        - ``mae``: the mean absolute error of the posterior mean;
        - ``z_mean`` and ``z_sd``: the mean and sd of z = (realized - mean) / posterior sd
          (chunks whose posterior is a single value left out; nan with none). A ``z_sd`` well
          above 1 means intervals too narrow for this data (production moved further than the
          reference's periods did: fit on a reference that spans more of production's
          conditions, or pass the labels that arrive as ``partial_labels=``), well below 1 too
          wide; ``z_mean`` away from 0, a bias.

        The chunks share the drift and the reference, so their misses come together: over a
        few dozen chunks a coverage of 0.85 and one of 1.00 can both come from 95% intervals
        (the binomial sd at the nominal level, ``sqrt(ci (1 - ci) / n_chunks)``, is a floor).

        Parameters
        ----------
        ci : float, optional
            Probability mass of the HDIs, in (0, 1); default the estimate's ``ci``.

        Returns
        -------
        Table
            One row per metric: ``metric``, ``n_chunks``, ``coverage``, ``mae``, ``z_mean``,
            ``z_sd`` (``.to_pandas()`` for a DataFrame).

        Raises
        ------
        ValueError
            Without labels (``estimate(..., y_true=...)``), or for ``target="population"``,
            whose intervals are for the population's value, not the rows'.
        """
        level = self.ci if ci is None else check_ci(ci)
        if not self.has_labels:
            raise ValueError(
                "backtest needs each chunk's labels: estimate(..., y_true=labels, "
                'target="realized")'
            )
        if self.target != "realized":
            raise ValueError(
                f"backtest compares each chunk's interval with the value its rows show, which "
                f'target="realized" estimates; this estimate has target={self.target!r}'
            )
        columns: dict[str, list[Any]] = {
            key: [] for key in ("metric", "n_chunks", "coverage", "mae", "z_mean", "z_sd")
        }
        for name in self._metrics:
            covered, errors, z = [], [], []
            for result in self._results:
                value = result.realized[name][0]
                if not math.isfinite(value):
                    continue
                post = result.estimates[name]
                low, high = post.hdi(level)
                mean, sd = post.mean(), post.std()
                covered.append(low <= value <= high)
                errors.append(abs(mean - value))
                if sd > 0:
                    z.append((value - mean) / sd)
            columns["metric"].append(name)
            columns["n_chunks"].append(len(covered))
            columns["coverage"].append(float(np.mean(covered)) if covered else math.nan)
            columns["mae"].append(float(np.mean(errors)) if errors else math.nan)
            columns["z_mean"].append(float(np.mean(z)) if z else math.nan)
            columns["z_sd"].append(float(np.std(z)) if len(z) > 1 else math.nan)
        title = (
            f"backtest of the label-free estimate ({100 * level:g}% HDI against the realized "
            f"values, {len(self._results)} chunks)"
        )
        return Table(columns, title=title)

    def to_pandas(self, ci: float | None = None) -> Any:
        """The summary as a pandas DataFrame (pandas is optional)."""
        return self.summary(ci).to_pandas()

    def to_dict(self, ci: float | None = None) -> dict[str, Any]:
        """JSON-friendly: settings, chunks and, per chunk and metric, the estimate's summary,
        the decision and the realized value; with labels in production also
        :meth:`label_check`; for a backtest (every label, realized target) also
        :meth:`backtest`'s table, per metric (None where undefined)."""
        level = self.ci if ci is None else check_ci(ci)
        chunks = []
        for result in self._results:
            diagnostics = self.diagnostics(result.chunk.index)
            entry: dict[str, Any] = {
                **result.chunk.to_dict(),
                "diagnostics": diagnostics,
                "metrics": {},
            }
            for name in self._metrics:
                item: dict[str, Any] = {"estimate": result.estimates[name].to_dict(level)}
                verdict = self.decision(name, result.chunk.index)
                item["decision"] = None if verdict is None else verdict.to_dict()
                if name in result.realized:
                    value, with_labels = result.realized[name]
                    item["realized"] = value
                    item["with_labels"] = (
                        None if with_labels is None else with_labels.to_dict(level)
                    )
                entry["metrics"][name] = item
            chunks.append(entry)
        # Strict JSON: a chunk without labels has no label check, an undefined realized value
        # none, and a posterior without labels no observed value (null, not NaN).
        return json_dict(
            {
                "target": self.target,
                "calibration": self.calibration,
                "method": self.method,
                "shift": self.shift,
                "ci": level,
                "metrics": list(self._metrics),
                "reference": {
                    name: post.to_dict(level) for name, post in self._references().items()
                },
                "chunks": chunks,
                **({"label_check": check} if (check := self.label_check()) else {}),
                **({"backtest": self._backtest_dict(level)} if self._is_backtest() else {}),
            }
        )

    def _is_backtest(self) -> bool:
        return self.has_labels and self.target == "realized"

    def _backtest_dict(self, level: float) -> dict[str, dict[str, float | int]]:
        out: dict[str, dict[str, float | int]] = {}
        for row in self.backtest(level):
            entry: dict[str, float | int] = {"n_chunks": int(row["n_chunks"])}
            for key in ("coverage", "mae", "z_mean", "z_sd"):
                entry[key] = float(row[key])
            out[str(row["metric"])] = entry
        return out

    def __len__(self) -> int:
        return len(self._results)

    def _draws(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """Every metric with the dimension ``chunk`` (the chunks' keys)."""
        n = len(self._results)
        variables = {
            metric: (
                ("chunk",),
                np.column_stack([self.posterior(metric, i).samples for i in range(n)]),
            )
            for metric in self._metrics
        }
        observed = {}
        if self.has_labels:
            for metric in self._metrics:
                values = [self.realized(metric, i) for i in range(n)]
                realized = [math.nan if v is None else v for v in values]
                observed[f"{metric}_realized"] = (("chunk",), realized)
        keys = [str(result.chunk.key) for result in self._results]
        return variables, {"chunk": keys}, observed

    def _html(self) -> str:
        alerts = self.score_shift_alerts()
        note = (
            f'<p class="pe-note">score shift alerts in chunks {", ".join(map(str, alerts))}: '
            "these chunks' scores are unlike the reference's, so their estimates are less "
            "trustworthy</p>"
            if alerts
            else ""
        )
        return f"<h3>label-free estimate</h3>{self.summary().to_html()}{note}"

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        # Compact: a monitoring run can hold thousands of chunks; print() shows the table.
        alerts = len(self.score_shift_alerts())
        labels = ", with realized values" if self.has_labels else ""
        return (
            f"LabelFreeEstimate({len(self._results)} chunks x {len(self._metrics)} metrics "
            f"({', '.join(self._metrics)}), target={self.target!r}{labels}; "
            f"{alerts} score-shift alert{'s' if alerts != 1 else ''})"
        )
