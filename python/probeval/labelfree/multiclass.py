"""The multiclass label-free model: bins on (predicted class, confidence) (SPEC §2.4, last item).

A multiclass model's confusion matrix without labels needs two things per row: whether the
prediction is right, and — when it is not — which class the row really belongs to.

- **Correctness** is a binary question with a score, the confidence (the highest score), so it
  gets the binary estimator's whole design: equal-frequency bins of the confidence, now one set
  per predicted class, each bin's rate of correct predictions learned from the reference with
  its uncertainty, the drift of that rate between reference periods (a shift common to all bins,
  a tilt, each bin's own deviation), the rate's climb inside a bin, and labels already known
  for some rows. To reuse the binary core unchanged, each row's (predicted class c, confidence
  s) becomes one pseudo-score u = (c + t) / K in (c/K, (c+1)/K], t = (s - 1/K) · K/(K - 1)
  the confidence rescaled to [0, 1]; the class boundaries c/K are bin edges, so no bin mixes
  predicted classes, and a bin's "positives" are its correct predictions.
- **The true class of a wrong prediction**: per bin, shares φ ~ Dirichlet(reference counts of
  each true class among the bin's wrong predictions + a prior of total weight 1, half uniform
  and half the bin's mean scores of those classes), updated by a chunk's known wrong labels.
  These shares move between periods, mostly together (a stretch with more late flights makes
  more of every bin's mistakes late): method "hierarchical" learns, from the reference's
  periods, the sd of a common tilt g_j per class that moves every bin's shares to m ∘ e^g and,
  around each period's tilted shares, each bin's own spread (a Dirichlet-multinomial,
  :func:`error_movement`); a chunk draws its tilt per draw, updated by its known wrong labels
  (:func:`chunk_error_tilts`), and each bin's shares around the tilted mean
  (:func:`drifting_error_alpha`). Class j's tilt is drawn together with the shift of the
  correct rate of the predictions of j (:func:`chunk_class_shifts`), at the correlation the
  reference's periods show (:func:`tilt_class_correlation`): more rows of j make both more
  predictions of j right and more mistakes j, and j's recall moves less than either.

Each draw then gives a K x K expected confusion matrix (population target) or the drawn matrix
of these very rows (realized target), and every whole-matrix and per-class metric follows.
The ranking metrics (one-vs-rest ROC AUC and average precision) need the order of each class's
own score, which the confidence bins do not keep: they come from one binary estimator per
class, fitted on (y == k, score of k) — the one-vs-rest calibration — macro-averaged per draw,
and weighted by each draw's prevalence of the class (average precision's draws are carried
alongside ROC AUC's in the coupling below). The classes' AUCs err together (the same rows, the same
labels), which separate binary estimates do not know: averaged as they come, the macro AUC's
posterior is too narrow (83% coverage of a 95% HDI in a stable simulation). So each chunk's
per-class draws are reordered — each class keeps exactly its own draws — to carry the
correlation of the classes' AUC estimates, measured on the reference from every row's
first-order influence on every class's AUC (Iman-Conover, as ``evaluate`` joins its classes).
That correlation is the sampling's; the part of each class's posterior that the drift adds
(its variance beyond the same class's draws without drift) is coupled across classes at
:data:`AUC_DRIFT_CORRELATION` (:func:`auc_coupling`): a concept change moves every class's
ranking at once.

numpy only; the draws are made by ``_core.labelfree_estimate_multiclass``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.equality import ValueEquality
from probeval._util.validation import describe
from probeval.labelfree.drift import (
    STILL_PRIOR,
    still_mass,
    tau_estimate,
    tau_log_likelihood,
    tau_posterior,
)
from probeval.labels.scores import ScoreSummary

__all__ = [
    "AUC_DRIFT_CORRELATION",
    "CLASS_OWN_SD_LR",
    "MAX_TILT_CORRELATION",
    "MIN_BIN_ROWS",
    "MulticlassBins",
    "auc_correlation",
    "auc_coupling",
    "bin_classes",
    "combine_one_vs_rest",
    "confidence_level_map",
    "class_move_loading",
    "couple",
    "drifting_error_alpha",
    "chunk_class_shifts",
    "chunk_error_tilts",
    "class_shift_residuals",
    "class_shift_sd",
    "error_movement",
    "error_share_spread",
    "as_score_matrix",
    "fit_bins",
    "known_errors",
    "period_errors",
    "pseudo_scores",
    "tilt_class_correlation",
]

#: Fewest reference rows per confidence bin: a predicted class with fewer than
#: ``n_bins * MIN_BIN_ROWS`` reference rows gets fewer bins, so that every bin's error shares
#: and correct rate rest on enough rows (a tiny class gets one bin).
MIN_BIN_ROWS = 50
#: The smallest rescaled confidence: a row whose scores are all equal (confidence 1/K) still
#: lies strictly above its class's lower boundary c/K.
_FLOOR = 1e-9
#: Grid of v = 1 / (A + 1) for the error shares' movement between periods, besides v = 0:
#: geometric from 1e-4 (A = 10^4, no movement a period's few hundred errors could show) to 1/2
#: (A = 1), each point weighted by the width of v it stands for. 64 points gave the posterior
#: mean of 400 evenly spaced ones within 1% on the flights and card tiers, at a sixth of the
#: cost (K = 10, 100 bins, 60 windows: 0.8 s with 400).
_SHARE_GRID = np.geomspace(1e-4, 0.5, 64)
#: Largest correlation :func:`tilt_class_correlation` gives a class's two moves.
MAX_TILT_CORRELATION = 0.9
#: Correlation of the classes' one-vs-rest ROC AUC drifts (:func:`auc_coupling`): the part of
#: each class's AUC posterior that the calibration's drift adds beyond sampling. A concept
#: change that flattens or sharpens the model's ranking moves every class's AUC at once, and
#: the classes' drifts are drawn apart, so their average, the macro AUC, came out too narrow
#: once labels narrowed each class (5% of rows labelled: 0.86 / 0.91 / 0.82 coverage before
#: September on three flights streams, the classes' z-values correlated 0.24-0.58 over chunks).
#: Nothing measures it: the reference's eleven windows gave pairwise AUC correlations of -0.61
#: to 0.81, and a chunk's 250 labels (5%) measure a class's AUC with an sd near 0.03, more than
#: the errors to be explained (macro AUC's mean absolute error 0.010-0.014). So it is a prior,
#: halfway between drifts apart (0) and one drift for all (1), measured at 0 / 0.5 / 0.8 / 1
#: (docs/labelfree-record.md): those streams 0.86 / 0.89 / 0.91 / 0.98, 0.91 / 0.95 / 0.95 / 0.98,
#: 0.82 / 0.91 / 0.93 / 0.95 (sd of the z-values 0.90-1.22 at 0, 0.70-1.03 at 0.5, 0.56-0.84
#: at 1), while calibrated simulations, whose AUC barely drifts, moved by at most 0.02.
AUC_DRIFT_CORRELATION = 0.5
#: Draws of each class's sampling-only AUC posterior (:func:`auc_coupling`): 2,000 give its
#: variance within 3% (sd), at a fifth of the default draws' cost.
AUC_SAMPLING_DRAWS = 2_000

#: Newton steps for a common tilt of the error shares (:func:`_tilt_mode`); each moves g by at
#: most 1, and 40 reach |g| = 30 from 0.
_TILT_STEPS = 40
#: Production's own movement of a class's correct rates, once labels arrived
#: (:func:`_class_walks`): where it starts (the sd s0 of its offset from the reference at the
#: first chunk; uniform over these points) and how far it walks from one chunk to the next
#: (the sd q; mass :data:`STILL_PRIOR` on 0, the rest a half-normal of scale 0.5 / sqrt(chunks):
#: a walk that moves a class by about half a logit over the whole stream).
_CLASS_WALK_START = np.concatenate([[0.0], np.geomspace(0.02, 1.0, 12)])
_CLASS_WALK_STEP = np.concatenate([[0.0], np.geomspace(0.005, 0.3, 12)])
#: The grid's points as variances (s0², q²), s0 varying slowest, as :func:`_class_walk_moved_prior`
#: orders them.
_CLASS_WALK_START_VAR, _CLASS_WALK_STEP_VAR = (
    a.ravel() ** 2 for a in np.meshgrid(_CLASS_WALK_START, _CLASS_WALK_STEP, indexing="ij")
)
#: The share π of production's classes that moved beyond where the reference's periods put them
#: (:func:`_class_walks`), on a grid.
_CLASS_WALK_SHARE = np.linspace(0.0, 1.0, 21)
#: Prior mass on π = 0 (no class moved); the rest of π's prior is uniform, so that each class
#: moved with prior probability 0.3. That 0.3 is the earlier per-class prior mass of 0.7 on "this
#: class stayed", chosen by measurement (20% of rows labelled unless said; mass 0.9 / 0.7 / 0.5):
#: the card tiers' second class's precision after their concept shift covered 0.96 / 0.96 /
#: 1.00 (error .0162 / .0138 / .0125); a simulated production whose classes all moved from the
#: first chunk covered macro F1 0.90 / 0.94 / 0.93; a stable one with 1% labelled had a
#: precision error of .0108 / .0118 / .0133, and 250 labels made its precision intervals 2.7 /
#: 3.6 / 4.3 times as wide as none did. Learning π lets the classes that clearly moved speak for
#: a rare class's few labels (a model's calibration change seldom spares a class): with 5% of
#: rows labelled in a simulated production whose classes' log-odds moved by +0.6 / 0 / -0.3,
#: the rare class's precision covered 0.69 (error .0700) with each class on its own and 0.81
#: (.0590) with π. All classes moving or none (mass 0.7 on none) covered it 0.90 (.0552) but
#: held back a class that moved alone: the card tiers' second class, 20% labelled, .0151.
_CLASS_WALK_NONE_MOVED = 0.4


def as_score_matrix(name: str, values: Any, n_classes: int | None = None) -> np.ndarray:
    """An (n, K) matrix of probabilities in [0, 1] (K >= 3; or ``n_classes`` columns)."""
    array = np.asarray(values)
    if array.ndim != 2:
        raise ValueError(f"{name} must be an (n, K) score matrix, got {describe(values)}")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {array.dtype}")
    matrix = np.ascontiguousarray(array, dtype=np.float64)
    if n_classes is not None and matrix.shape[1] != n_classes:
        raise ValueError(
            f"{name} has {matrix.shape[1]} columns, but the estimator was fitted on "
            f"{n_classes} classes"
        )
    bad = ~np.isfinite(matrix) | (matrix < 0) | (matrix > 1)
    if bad.any():
        row, column = (int(i[0]) for i in np.nonzero(bad))
        value = float(matrix[row, column])
        raise ValueError(
            f"{name} must hold probabilities in [0, 1], found {value!r} at row {row}, "
            f"column {column}"
        )
    return matrix


def pseudo_scores(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's predicted class (the first column of its highest score, as ``evaluate``
    predicts) and its pseudo-score u = (c + t) / K (see the module docstring)."""
    k = scores.shape[1]
    predicted = np.argmax(scores, axis=1)
    confidence = scores[np.arange(scores.shape[0]), predicted]
    t = np.clip((confidence - 1.0 / k) * k / (k - 1.0), _FLOOR, 1.0)
    return predicted, (predicted + t) / k


def confidence_summary(
    u: np.ndarray, predicted: np.ndarray, right: np.ndarray, k: int, sub_bins: int
) -> tuple[ScoreSummary, np.ndarray]:
    """The reference's rate of right predictions on a finer grid of pseudo-scores than its
    bins (what a binary fit's kept score summary is for its scores), for placing a chunk's
    labelled rows inside their bins: labels that arrive depending on the confidence, the
    surest predictions reviewed first, come from one end of a bin. Each predicted class's
    rows get equal-frequency sub-bins of their own (about ``sub_bins`` in all, in proportion
    to their rows), so that none spans two classes; each class's last sub-bin reaches up to
    its boundary (c + 1)/K, so that a surer prediction than the reference made still falls in
    its own class's. Returns the summary (positives: right predictions) and the sub-bins where
    each class after the first begins: the rate climbs within a class and falls back at the
    next, so a monotone fit restarts there."""
    parts, uppers, restarts, start = [], [], [], 0
    for c in range(k):
        rows = predicted == c
        if not rows.any():
            continue
        # binned() takes two bins or more (a class of fewer distinct scores keeps them all).
        share = max(2, round(sub_bins * float(rows.mean())))
        part = ScoreSummary.from_scores(right[rows], u[rows], labels=(False, True)).binned(share)
        upper = part.values.copy()
        upper[-1] = (c + 1.0) / k  # pseudo_scores' u at confidence 1
        if start > 0:
            restarts.append(start)
        parts.append(part)
        uppers.append(upper)
        start += part.n_distinct
    summary = ScoreSummary(
        np.concatenate(uppers),
        np.concatenate([part.positives for part in parts]),
        np.concatenate([part.negatives for part in parts]),
        labels=(False, True),
    )
    return summary, np.asarray(restarts, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class MulticlassBins(ValueEquality):
    """The fitted bins: inner edges of the pseudo-score (class boundaries among them), per bin
    the predicted class, the reference's correct and wrong predictions, and the Dirichlet
    parameters (bins, K) of the true class of its wrong predictions (0 at the predicted
    class). ``score_shares`` (bins, K): the reference rows' mean shares of the classes they
    did not predict (:func:`score_share_moments`; None in a fit saved before they were kept)."""

    n_classes: int
    edges: np.ndarray
    predicted: np.ndarray
    correct: np.ndarray
    wrong: np.ndarray
    error_alpha: np.ndarray
    score_shares: np.ndarray | None = None

    @property
    def n_bins(self) -> int:
        return int(self.edges.shape[0]) + 1

    def bin_of(self, u: np.ndarray) -> np.ndarray:
        """The bin of each pseudo-score (bins are (low, high], as in the core)."""
        out: np.ndarray = np.searchsorted(self.edges, u, side="left")
        return out


def _boundaries(k: int) -> np.ndarray:
    out: np.ndarray = np.arange(1, k) / k
    return out


def bin_classes(edges: np.ndarray, k: int) -> np.ndarray:
    """The predicted class of each bin of these inner edges: the class whose segment
    (c/K, (c+1)/K] holds the bin's upper edge."""
    upper = np.append(edges, 1.0)
    out: np.ndarray = np.searchsorted(_boundaries(k), upper, side="left")
    return out


def fit_bins(
    scores: np.ndarray, truth: np.ndarray, n_bins: int
) -> tuple[MulticlassBins, np.ndarray, np.ndarray]:
    """Bins of the reference (scores (n, K), true class indices): up to ``n_bins``
    equal-frequency confidence bins per predicted class. Returns the bins, the pseudo-scores
    and whether each reference prediction is right."""
    k = scores.shape[1]
    predicted, u = pseudo_scores(scores)
    edges = [_boundaries(k)]
    for c in range(k):
        values = np.sort(u[predicted == c])
        m = values.shape[0]
        bins = max(1, min(n_bins, m // MIN_BIN_ROWS))
        if bins > 1:
            # The last value of each lower bin is its upper edge (bins are (low, high]).
            edges.append(values[(np.arange(1, bins) * m) // bins - 1])
    inner = np.unique(np.concatenate(edges))
    inner = inner[(inner > 0) & (inner < 1)]
    classes = bin_classes(inner, k)
    which = np.searchsorted(inner, u, side="left")
    right = predicted == truth
    b = inner.shape[0] + 1
    correct = np.bincount(which, right, b).astype(np.float64)
    errors = np.bincount(which[~right] * k + truth[~right], minlength=b * k).reshape(b, k)
    wrong = errors.sum(axis=1).astype(np.float64)
    # Prior of each bin's error shares: weight 1, half spread evenly over the other classes,
    # half in proportion to the bin's mean scores of them (uniform for an empty bin).
    rows = np.bincount(which, minlength=b).astype(np.float64)
    sums = np.stack([np.bincount(which, scores[:, j], b) for j in range(k)], axis=1)
    mean_scores = sums.astype(np.float64) / np.maximum(rows, 1.0)[:, None]
    others = np.ones((b, k))
    others[np.arange(b), classes] = 0.0
    mean_scores *= others
    total = mean_scores.sum(axis=1, keepdims=True)
    shares = np.where(total > 0, mean_scores / np.where(total > 0, total, 1.0), others / (k - 1))
    alpha = errors + 0.5 * shares + 0.5 * others / (k - 1)
    fitted = MulticlassBins(k, inner, classes, correct, wrong, alpha)
    score_shares, _, _ = score_share_moments(fitted, u, predicted, scores)
    return replace(fitted, score_shares=score_shares[0]), u, right


def score_share_moments(
    bins: MulticlassBins,
    u: np.ndarray,
    predicted: np.ndarray,
    scores: np.ndarray,
    group: np.ndarray | None = None,
    n_groups: int = 1,
    rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group of rows (``group``: each row's index below ``n_groups``; None: one group) and
    bin, the rows' mean shares of the classes they did not predict (each row's other scores
    over their sum; 0 at the predicted class), the mean squares of those shares, and the rows:
    (groups, bins, K) twice, (groups, bins). A row whose other scores are all 0 counts with
    none of them. ``rows``: the rows of ``scores`` that ``u``, ``predicted`` and ``group``
    describe, in their order (None: all of them); the scores are read a column at a time,
    never copied whole."""
    k, b = bins.n_classes, bins.n_bins

    def others(j: int) -> np.ndarray:
        column = scores[:, j] if rows is None else scores[rows, j]
        out: np.ndarray = np.where(predicted == j, 0.0, column)
        return out

    total = np.zeros(predicted.shape[0])
    for j in range(k):
        total += others(j)
    scale = np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
    cell = bins.bin_of(u) if group is None else group * b + bins.bin_of(u)
    size = n_groups * b
    count = np.bincount(cell, minlength=size).astype(np.float64)
    shares = [others(j) * scale for j in range(k)]
    per_row = np.maximum(count, 1.0)[:, None]
    means = np.stack([np.bincount(cell, q, size) for q in shares], axis=1) / per_row
    squares = np.stack([np.bincount(cell, q * q, size) for q in shares], axis=1) / per_row
    return (
        means.reshape(n_groups, b, k),
        squares.reshape(n_groups, b, k),
        count.reshape(n_groups, b),
    )


def move_shares(bins: MulticlassBins, means: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """How far a move e of a class's log-odds tilts each bin's error shares, as a share of a
    common tilt's e (chunks, bins, K), from the chunk's rows' shares q of each class among
    their other scores (mean m, mean square: :func:`score_share_moments`).

    A calibrated model's row is class j with probability sⱼ = (1 - c) qⱼ (c its confidence),
    which a move e of class j's log-odds moves by sⱼ (1 - sⱼ) e: over a bin's rows,
    (1 - c) [m - (1 - c) E[q²]] e. The core moves the bin's mistakes of class j by
    (1 - c) [c m² + κ m (1 - m)] e (its loading moves the wrong mass, a tilt κ e the share m);
    equal when κ = c + (1 - c) E[q (1 - q)] / (m (1 - m)), c the bin's correct rate (the
    reference's).
    A common tilt (κ = 1) moves m as if every row had the bin's mean share: on the K = 3
    simulation its rare class's recall moved 1.20 times as much as the exact moves. 1 where
    m (1 - m) is 0 (no rows, or every row alike)."""
    spread = means * (1.0 - means)
    alike: np.ndarray = np.ones_like(means)
    np.divide(means - squares, spread, out=alike, where=spread > 1e-12)
    correct = ((bins.correct + 0.5) / (bins.correct + bins.wrong + 1.0))[None, :, None]
    kappa: np.ndarray = correct + (1.0 - correct) * np.clip(alike, 0.0, 1.0)
    return kappa


#: Largest factor (either way) by which a chunk's scores move a bin's error share of a class
#: (:func:`error_alpha_from_scores`).
_MAX_SHARE_RATIO = 10.0


def error_alpha_from_scores(bins: MulticlassBins, shares: np.ndarray) -> np.ndarray:
    """Each chunk's error parameters (chunks, bins, K): each bin's reference Dirichlet moved to
    where the chunk's rows put their other scores, at the same total weight. Where a bin's rows
    put more of their other scores on class j than the reference's rows did (``shares``: the
    chunks' :func:`score_share_moments`; the reference's: :attr:`MulticlassBins.score_shares`),
    more of its wrong predictions are likely to be class j: its share is scaled by the ratio of
    the two means (for calibrated scores, a wrong prediction is class j with the row's share
    of j among the other classes). A bin the chunk has no rows in, or a class whose share is 0
    on either side, keeps the reference's. The binary calibration's within-bin slope does the
    same for the rate of positives. One tilt per chunk (the mean over bins of these log
    ratios) left the four-class departure model's macro F1 error after September at .02579,
    against the one-vs-rest point estimate's .02501; per bin, as each row's own scores do in
    that estimate, .0250 (the point estimates at the expected counts: .02574 → .02503; the
    other flights streams and the card tiers within ±.0002 or lower, a simulated K = 10
    stream's bias .0014 → .0009 and with 300-row chunks .0054 → .0011)."""
    if bins.score_shares is None:
        raise ValueError("this fit has no reference score shares (saved before they were kept)")
    reference = bins.score_shares[None]
    seen = (reference > 0) & (shares > 0)
    ratio = np.where(seen, shares, 1.0) / np.where(seen, reference, 1.0)
    # A class the reference's rows gave next to no score (1e-19 on the four-class flights)
    # has an error share that is mostly its prior's, which the ratio of two near-zero means
    # would blow up (x200 there, from 6 rows): at most ten-fold either way.
    ratio = np.clip(ratio, 1.0 / _MAX_SHARE_RATIO, _MAX_SHARE_RATIO)
    moved = bins.error_alpha[None] * ratio
    total = bins.error_alpha.sum(axis=1)[None, :, None]
    scale = moved.sum(axis=2, keepdims=True)
    out: np.ndarray = np.where(scale > 0, moved * total / np.where(scale > 0, scale, 1.0), 0.0)
    return out


def period_errors(
    bins: MulticlassBins,
    u: np.ndarray,
    truth: np.ndarray,
    right: np.ndarray,
    period: np.ndarray,
    n_periods: int,
) -> np.ndarray:
    """The reference's wrong predictions per period, bin and true class (periods, bins, K)."""
    k, b = bins.n_classes, bins.n_bins
    wrong = ~right
    cells = (period[wrong] * b + bins.bin_of(u[wrong])) * k + truth[wrong]
    counts = np.bincount(cells, minlength=n_periods * b * k).reshape(n_periods, b, k)
    out: np.ndarray = counts.astype(np.float64)
    return out


def error_share_spread(
    counts: np.ndarray, alpha: np.ndarray, tilts: np.ndarray | None = None
) -> float:
    """How far a period's error shares move from the reference's: E[v], v = 1 / (A + 1), where
    a period's shares in a bin are Dirichlet(A m) around the bin's shares m (``alpha``
    normalised) and ``counts`` (periods, bins, K) are the periods' wrong predictions per true
    class, each period's a Dirichlet-multinomial draw. Posterior on a grid of v in [0, 1/2]
    (A >= 1), prior mass :data:`STILL_PRIOR` on v = 0 (the multinomial: shares that never
    move) and the rest uniform, as for the drift's τ. ``tilts`` (periods, K): each period's
    common tilt g (:func:`error_movement`), its shares m ∘ e^g normalised. Fewer than three
    periods with errors: 0."""
    if int((counts.sum(axis=(1, 2)) > 0).sum()) < 3:
        return 0.0
    k = counts.shape[2]
    m = alpha / np.maximum(alpha.sum(axis=1, keepdims=True), 1e-300)
    if tilts is None:
        tilted = np.broadcast_to(m, counts.shape)
    else:
        tilted = m[None] * np.exp(tilts)[:, None, :]
        tilted = tilted / np.maximum(tilted.sum(axis=2, keepdims=True), 1e-300)
    shares = np.ascontiguousarray(tilted).reshape(-1, k)
    v = np.concatenate([[0.0], _SHARE_GRID])
    # Only cells with errors in them carry information (an empty one's likelihood is 1).
    cells = counts.reshape(-1, k)
    keep = cells.sum(axis=1) > 0
    log_lik = np.empty(v.shape[0])
    # v = 0: the multinomial, the Dirichlet-multinomial's limit (the same coefficient left out).
    with np.errstate(divide="ignore"):
        log_m = np.where(counts > 0, np.log(tilted), 0.0)
    log_lik[0] = float((counts * log_m).sum())
    log_lik[1:] = _core.dirichlet_multinomial_log_likelihood(
        np.ascontiguousarray(cells[keep]), np.ascontiguousarray(shares[keep]), 1.0 / v[1:] - 1.0
    )
    # Uniform on (0, 1/2]: each point gets the width between its neighbours' midpoints.
    edges = np.concatenate([[0.0], (v[1:-1] + v[2:]) / 2.0, [0.5]])
    prior = np.concatenate([[STILL_PRIOR], (1.0 - STILL_PRIOR) * np.diff(edges) / 0.5])
    top = log_lik.max()
    if not np.isfinite(top):  # errors of a class the shares rule out: nothing to learn from
        return 0.0
    weight = prior * np.exp(log_lik - top)
    return float((weight * v).sum() / weight.sum())


def _tilt_mode(
    counts: np.ndarray,
    alpha: np.ndarray,
    prior_var: np.ndarray | None,
    spread: float,
    prior_mean: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mode and marginal variances of a common tilt g (K,) of every bin's error
    shares, p_ij ∝ m_ij e^{g_j} (m: ``alpha`` normalised, 0 at the bin's predicted class), from
    wrong predictions ``counts`` (bins, K) and a prior N(``prior_mean`` (default 0),
    ``prior_var``) per class (variance 0: the class's g stays at its prior mean). Each bin's
    counts are a Dirichlet-multinomial draw around p_i: its information is the multinomial's
    over the design effect 1 + (N_i - 1) ``spread``. Damped Newton steps on the log
    posterior. ``prior_var`` None: the maximum-likelihood estimate,
    whose common level the shares cannot show (adding a constant to every g_j changes no
    share): it is taken with Σ g_j = 0, its variances those of that contrast (the
    pseudo-inverse of the information)."""
    k = counts.shape[1]
    m = alpha / np.maximum(alpha.sum(axis=1, keepdims=True), 1e-300)
    n = counts.sum(axis=1)
    design = 1.0 + np.maximum(n - 1.0, 0.0) * spread
    weight = n / design
    observed = (counts / design[:, None]).sum(axis=0)
    # A vanishing ridge keeps the maximum-likelihood steps solvable along the common level.
    precision = np.full(k, 1e-6) if prior_var is None else 1.0 / np.maximum(prior_var, 1e-300)
    free = np.ones(k, dtype=bool) if prior_var is None else prior_var > 0
    sub = np.ix_(free, free)
    centre = np.zeros(k) if prior_mean is None else prior_mean
    gamma = centre.copy()
    info = np.zeros((k, k))
    for _ in range(_TILT_STEPS):
        w = m * np.exp(gamma)
        p = w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
        gradient = observed - weight @ p - (gamma - centre) * precision
        info = np.diag(weight @ p) - np.einsum("i,ij,ik->jk", weight, p, p)
        step = np.linalg.solve(info[sub] + np.diag(precision[free]), gradient[free])
        gamma[free] += np.clip(step, -1.0, 1.0)
        if np.abs(step).max() < 1e-8:
            break
    var = np.zeros(k)
    if prior_var is None:
        # Classes no bin with errors could hold say nothing (infinite noise); the others'
        # common level is set to 0.
        seen = weight @ m > 0
        gamma = np.where(seen, gamma - gamma[seen].mean() if seen.any() else 0.0, 0.0)
        var = np.full(k, np.inf)
        var[seen] = np.diag(np.linalg.pinv(info[np.ix_(seen, seen)], hermitian=True))
    else:
        var[free] = np.diag(np.linalg.inv(info[sub] + np.diag(precision[free])))
    return gamma, var


def error_movement(counts: np.ndarray, alpha: np.ndarray) -> tuple[float, np.ndarray]:
    """How the error shares move between the reference's periods (``counts`` (periods, bins,
    K) of wrong predictions by true class, ``alpha`` the bins' Dirichlet parameters): the
    spread v of each bin's own movement (:func:`error_share_spread`) and, per class, the sd
    of the common tilt g_j that moves every bin's shares towards or away from class j together
    (a season with more late flights makes more of every bin's errors late). Per period, g's
    estimate (:func:`_tilt_mode`, a flat prior) and its noise; per class, τ_j's posterior from
    them (:func:`~probeval.labelfree.drift.tau_posterior`), the sd √E[τ²] times √(1 + 1/B)
    (the reference's shares average B periods: one sd per class from a handful of windows,
    where the restricted-likelihood estimate jumps between 0 and a few hundredths; the class
    shift's one τ for all classes takes that estimate instead, :func:`class_shift_sd`). v is
    then learned around each period's tilted shares, so that the common part is not counted
    twice. Fewer than three periods with errors: (v, 0)."""
    k = counts.shape[2]
    first = error_share_spread(counts, alpha)
    used = counts.sum(axis=(1, 2)) > 0
    if int(used.sum()) < 3:
        return first, np.zeros(k)
    sd = np.zeros(k)
    spread = first
    for _ in range(2):
        fits = [_tilt_mode(part, alpha, None, spread) for part in counts[used]]
        gamma = np.array([g for g, _ in fits])
        noise = np.array([v for _, v in fits])
        for j in range(k):
            # Periods whose errors could show class j's tilt (a finite noise); the pseudo-
            # inverse gives a class alone in its periods a noise of 0 and nothing to learn.
            shown = np.isfinite(noise[:, j]) & (noise[:, j] > 0)
            if shown.sum() < 3:
                sd[j] = 0.0
                continue
            tau, weight = tau_posterior(gamma[shown, j], noise[shown, j])
            sd[j] = math.sqrt(float((weight * tau**2).sum()) * (1.0 + 1.0 / shown.sum()))
        tilts = np.zeros((counts.shape[0], k))
        tilts[used] = gamma
        spread = error_share_spread(counts, alpha, tilts)
    return spread, sd


def chunk_error_tilts(
    sd: np.ndarray, known: np.ndarray, alpha: np.ndarray, spread: float
) -> np.ndarray:
    """Each chunk's common tilt of the error shares, as the core takes it (chunks, 2, K): the
    means and sds of g, the prior N(-v/2, v) per class updated by the chunk's known wrong
    predictions ``known`` (chunks, bins, K) (:func:`_tilt_mode`, its normal approximation).
    v is ``sd``² plus how far the labelled chunks' tilts sit from 0: the empirical-Bayes τ²
    of their maximum-likelihood tilts around 0 (:func:`~probeval.labelfree.drift.tau_estimate`;
    a class that moved by the same amount in every chunk has moved, not spread). A production
    whose classes moved further than the reference's periods did (a concept shift of one
    class) shows it in its labels. τ's posterior mean of τ² added instead the prior's 0.89
    whenever the labels said nothing (a chunk's one or two known wrong predictions): with 10
    labels in a stable 60,000-row K = 3 stream (and the confidence calibration held to the
    reference's periods) macro F1's intervals were 2.1 times as wide as without labels, now
    0.96; with 1% labelled, the rare class's recall error went from .0326 to .0186.
    ``alpha``: the bins' Dirichlet parameters (bins, K), or each chunk's (chunks, bins, K; the
    shares its scores show, :func:`error_alpha_from_scores`), around which its tilt is measured."""
    k = sd.shape[0]
    var = sd**2

    def alpha_of(chunk: int) -> np.ndarray:
        out: np.ndarray = alpha if alpha.ndim == 2 else alpha[chunk]
        return out

    labelled = known.sum(axis=(1, 2)) > 0
    fits = {
        i: _tilt_mode(known[i], alpha_of(i), None, spread)
        for i in np.flatnonzero(labelled).tolist()
    }
    if fits:
        noise = np.array([v for _, v in fits.values()])
        # Tilts of shares are free in their common level: compare them with the mean over the
        # classes the labels could show taken out of each.
        tilts = np.array([g for g, _ in fits.values()])
        seen = np.isfinite(noise)
        level = (tilts * seen).sum(axis=1) / np.maximum(seen.sum(axis=1), 1)
        tilts -= level[:, None]
        for j in range(k):
            shown = np.isfinite(noise[:, j]) & (noise[:, j] > 0)
            if shown.any():
                var[j] += tau_estimate(tilts[shown, j], noise[shown, j], centred=False) ** 2
    out = np.zeros((known.shape[0], 2, k))
    # Centred at -v/2, so that E[e^g_j] = 1 for every class and a bin's shares keep their
    # mean to first order: centred at 0, the classes of larger sd gained share (E[e^g] =
    # e^{v/2}), and the flights' per-class recall errors grew by 3-11% (label-free).
    centre = np.broadcast_to(-var / 2.0, (known.shape[0], k))
    out[:, 0], out[:, 1] = centre, np.sqrt(var)
    if not np.any(var > 0):
        return out
    for index in fits:
        mean, post = _tilt_mode(known[index], alpha_of(index), var, spread, centre[index])
        out[index, 0], out[index, 1] = mean, np.sqrt(post)
    return out


def class_shift_sd(sums: np.ndarray, predicted: np.ndarray, k: int) -> np.ndarray:
    """Per predicted class, the sd (logit) of how far the rate of its correct predictions
    moves between the reference's periods beyond the shift common to all classes. ``sums``:
    the confidence calibration's period sums (periods, bins, 5); ``predicted``: each bin's
    class. Per period and class, one Newton step of the logit shift of its bins' correct
    rates against the reference's, less the period's shift over all classes (their
    information-weighted mean). One τ for all classes (a rare class's few predictions per
    period cannot tell 0.1 logit from none, as for the bins' own sd), its restricted-
    likelihood estimate from all these residuals
    (:func:`~probeval.labelfree.drift.tau_estimate`); a class whose own periods move further
    takes its own estimate instead, when that beats the common τ on the class's residuals by
    a likelihood-ratio statistic of :data:`CLASS_OWN_SD_LR` (:func:`_own_class_tau`). Each
    times √(1 + 1/B). Fewer than three periods, or one class predicted: 0."""
    residual, weight, _ = class_shift_residuals(sums, predicted, k)
    if residual.shape[0] < 3:
        return np.zeros(k)
    seen = weight > 0
    # The restricted-likelihood estimate, not the posterior mean of τ²: on calibrated K = 3
    # simulations (five windows) the posterior mean gave 0.005-0.01 logit, and two of 400
    # population macro-F1 HDIs, their edges within 0.0004 of the truth, then reached it (0.978
    # -> 0.983); the estimate is 0 there and 0.33 on the flights (posterior mean 0.35).
    common = tau_estimate(residual[seen], 1.0 / weight[seen])
    sd = np.full(k, common)
    for j in range(k):
        shown = seen[:, j]
        if shown.sum() >= 3:
            sd[j] = _own_class_tau(residual[shown, j], 1.0 / weight[shown, j], common)
    out: np.ndarray = sd * math.sqrt(1.0 + 1.0 / residual.shape[0])
    return out


#: The likelihood-ratio statistic (2 Δ log-likelihood, restricted) by which a class's own τ
#: must beat the common one on its periods' residuals to replace it (:func:`class_shift_sd`):
#: χ²₁'s 95% point, a test that the class moves further than the rest. On the flights'
#: windows the latest class's predictions moved 0.46-0.61 logit beyond the common shift
#: against a common τ of 0.25-0.37; with the common τ its precision covered 0.73-0.86 of
#: chunks, with its own (three of four streams pass, statistics 5.7-9.6) 0.77-0.95. Without
#: the test, 43% of calibrated K = 3 simulations took an own τ and their macro F1 HDIs
#: covered 0.975 instead of 0.968; with it none did (docs/labelfree-record.md).
CLASS_OWN_SD_LR = 3.84


def _own_class_tau(residual: np.ndarray, noise: np.ndarray, common: float) -> float:
    """A class's τ (:func:`class_shift_sd`): its own restricted-likelihood estimate from its
    periods' ``residual`` shifts (noise variances ``noise``) where that is above ``common``
    and beats it by :data:`CLASS_OWN_SD_LR`; ``common`` otherwise. The common τ is read at
    the nearest grid point."""
    tau, log_lik = tau_log_likelihood(residual, noise)
    best = int(np.argmax(log_lik))
    at_common = int(np.argmin(np.abs(tau - common)))
    if tau[best] > common and 2.0 * (log_lik[best] - log_lik[at_common]) > CLASS_OWN_SD_LR:
        return float(tau[best])
    return common


def class_shift_residuals(
    sums: np.ndarray, predicted: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per period with predictions and predicted class, one Newton step of the logit shift of
    the class's correct rates against the reference's, less the period's shift over all
    classes (their information-weighted mean), and its information: (periods, K) each, 0
    where the period predicted no row of the class; and which periods these are (a mask of
    all of them). No periods when fewer than two classes are predicted. ``sums``,
    ``predicted``: as :func:`class_shift_sd` takes them."""
    pn, px = sums[..., 0], sums[..., 1]
    n, x = pn.sum(axis=0), px.sum(axis=0)
    rate = (x + 0.5) / (n + 1.0)
    member = np.eye(k)[predicted]
    weight = (pn * rate * (1.0 - rate)) @ member
    periods = weight.sum(axis=1) > 0
    if int((n @ member > 0).sum()) < 2:
        periods[:] = False
    weight = weight[periods]
    residual = (px[periods] - pn[periods] * rate) @ member
    with np.errstate(invalid="ignore", divide="ignore"):
        shift = np.where(weight > 0, residual / weight, 0.0)
    common = (weight * shift).sum(axis=1, keepdims=True) / np.maximum(
        weight.sum(axis=1, keepdims=True), 1e-300
    )
    out: np.ndarray = np.where(weight > 0, shift - common, 0.0)
    return out, weight, periods


def tilt_class_correlation(
    sums: np.ndarray,
    errors: np.ndarray,
    bins: MulticlassBins,
    spread: float,
    tilt_sd: np.ndarray,
    class_sd: np.ndarray | float,
) -> np.ndarray:
    """Per class j, the correlation of the two ways a period's labels move towards j: the shift
    of the correct rate of the predictions of j (:func:`class_shift_sd`, beyond the shift
    common to all classes) and the tilt of every bin's error shares towards j
    (:func:`error_movement`). More rows of class j (a stretch with more late flights) make
    both more predictions of j right and more of the other predictions' mistakes j; drawn
    apart, the two make a class's recall (right predictions of j over all rows of j) swing
    far more than it does, and its mean — a ratio — sits high (Jensen). Measured on the
    reference's periods (``sums``: the confidence calibration's period sums; ``errors``: the
    wrong predictions per period, bin and true class; same periods): each period's two
    estimates' cross-covariance, which their noise does not inflate (they come from different
    rows: right predictions of j, wrong predictions of the other classes), over the model's
    sds (``class_sd``, per class or one for all; ``tilt_sd``), within
    ±:data:`MAX_TILT_CORRELATION`. 0 for a class with fewer than three periods showing both,
    or whose either sd is 0."""
    k = bins.n_classes
    out = np.zeros(k)
    class_sds = np.broadcast_to(np.asarray(class_sd, dtype=np.float64), (k,))
    if not (class_sds > 0).any():
        return out
    shift, weight, periods = class_shift_residuals(sums, bins.predicted, k)
    tilts = np.full(shift.shape, np.nan)
    for row, part in enumerate(errors[periods]):
        if part.sum() <= 0:
            continue
        gamma, noise = _tilt_mode(part, bins.error_alpha, None, spread)
        shown = np.isfinite(noise) & (noise > 0)
        if shown.any():
            # Free in their common level: each period's tilts around their mean.
            tilts[row] = np.where(shown, gamma - gamma[shown].mean(), np.nan)
    for j in range(k):
        both = (weight[:, j] > 0) & np.isfinite(tilts[:, j])
        scale = float(class_sds[j]) * float(tilt_sd[j])
        # Moves of a billionth of a logit have nothing to correlate (and would overflow it).
        if both.sum() < 3 or not scale > 1e-12:
            continue
        a, b = shift[both, j], tilts[both, j]
        covariance = float(((a - a.mean()) * (b - b.mean())).sum()) / (both.sum() - 1.0)
        out[j] = min(max(covariance / scale, -MAX_TILT_CORRELATION), MAX_TILT_CORRELATION)
    return out


#: Gauss-Hermite nodes and weights (probabilists') for the mean of a rate over a normal shift.
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(24)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _mean_preserving_offset(rate: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Per bin, the logit offset μ with E[expit(logit(rate) + μ + sd Z)] = rate, Z ~ N(0, 1):
    a shift of mean 0 on the logit scale pulls a rate towards 1/2 (Newton steps, the mean
    increasing in μ)."""
    centre = np.log(rate / (1.0 - rate))
    mu = np.zeros_like(rate)
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-(centre + mu)[:, None] - sd[:, None] * _NODES[None, :]))
        value = (p * _WEIGHTS).sum(axis=1) - rate
        slope = (p * (1.0 - p) * _WEIGHTS).sum(axis=1)
        mu = np.clip(mu - value / np.maximum(slope, 1e-12), -10.0, 10.0)
    return mu


def _class_walk_moved_prior(n_chunks: int) -> np.ndarray:
    """The prior weights of the (s0, q) grid points of :func:`_class_walks` (s0 varying
    slowest) for a class of a production that moved, in a stream of ``n_chunks`` chunks: s0
    uniform over :data:`_CLASS_WALK_START`, q as described there (0 included: a class can stay put
    while the others move)."""
    step = _CLASS_WALK_STEP[1:]
    # A half-normal density times each point's width on the geometric grid (∝ q).
    density = np.exp(-0.5 * (step * math.sqrt(n_chunks) / 0.5) ** 2) * step
    step_prior = np.concatenate([[STILL_PRIOR], (1.0 - STILL_PRIOR) * density / density.sum()])
    prior = np.outer(np.full(_CLASS_WALK_START.shape[0], 1.0), step_prior).ravel()
    out: np.ndarray = prior / prior.sum()
    return out


def _class_walk_share_prior(scale: float = 1.0) -> np.ndarray:
    """The prior weights of :data:`_CLASS_WALK_SHARE`: :data:`_CLASS_WALK_NONE_MOVED` on 0, the rest
    uniform; ``scale`` multiplies the mass of some class having moved
    (:func:`~probeval.labelfree.drift.movement_prior_scale`)."""
    none = still_mass(_CLASS_WALK_NONE_MOVED, scale)
    prior = np.full(_CLASS_WALK_SHARE.shape[0], (1.0 - none) / (_CLASS_WALK_SHARE.shape[0] - 1))
    prior[0] = none
    return prior


def _class_walk_moments(
    residual: np.ndarray,
    noise: np.ndarray,
    own: float,
    start: np.ndarray,
    step: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walk's posterior per chunk for each hyperparameter point: x_c = μ_c + e_c, e_c ~
    N(0, ``own``), μ_0 ~ N(0, ``start``) and μ_c = μ_{c-1} + N(0, ``step``) (variances, one
    per point); a chunk's labels estimate x_c by ``residual`` with variance ``noise`` (inf:
    none). Returns the means and variances (chunks, points) and each point's log marginal
    likelihood (up to a constant): a Kalman filter, then the Rauch-Tung-Striebel smoother."""
    n = residual.shape[0]
    seen = np.isfinite(noise)
    level, level_var = np.zeros_like(start), start - step
    log_likelihood = np.zeros_like(start)
    filtered = np.zeros((n, start.shape[0]))
    filtered_var, predicted_var = np.zeros_like(filtered), np.zeros_like(filtered)
    for c in range(n):
        level_var = level_var + step
        predicted_var[c] = level_var
        if seen[c]:
            total = level_var + own + noise[c]
            gap = residual[c] - level
            log_likelihood -= 0.5 * (np.log(total) + gap**2 / total)
            gain = level_var / total
            level = level + gain * gap
            level_var = level_var * (1.0 - gain)
        filtered[c], filtered_var[c] = level, level_var
    smooth, smooth_var = filtered.copy(), filtered_var.copy()
    for c in range(n - 2, -1, -1):
        ahead = predicted_var[c + 1]
        back = np.divide(filtered_var[c], ahead, out=np.zeros_like(ahead), where=ahead > 0)
        smooth[c] = filtered[c] + back * (smooth[c + 1] - filtered[c])
        smooth_var[c] = filtered_var[c] + back**2 * (smooth_var[c + 1] - ahead)
    # Given its level, a chunk's own movement e_c is seen through its own labels only.
    own_gain = np.zeros(n)
    if own > 0:
        own_gain[seen] = own / (own + noise[seen])
    known = np.where(seen, residual, 0.0)
    means = (1.0 - own_gain)[:, None] * smooth + (own_gain * known)[:, None]
    variances = (1.0 - own_gain)[:, None] ** 2 * np.maximum(smooth_var, 0.0)
    variances += (own * (1.0 - own_gain))[:, None]
    return means, variances, log_likelihood


def _class_walks(
    residual: np.ndarray, noise: np.ndarray, sd: np.ndarray | float, scale: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk (in time order) and class, the posterior mean and variance of the class's shift
    given every chunk's labels (``residual`` and ``noise`` (chunks, classes), each class with
    labels in some chunk; :func:`_class_walk_moments`, e_c's sd ``sd`` the reference's periods',
    per class or one for all): production's level of a class starts off the reference by N(0,
    s0²) and walks by N(0, q²) per chunk (a concept shift from some chunk on, or a slow drift),
    averaged over (s0, q) on :data:`_CLASS_WALK_START` x :data:`_CLASS_WALK_STEP` by their
    posterior. A share π of the classes moved (:data:`_CLASS_WALK_SHARE`,
    :func:`_class_walk_share_prior`): each of those took its own (s0, q)
    (:func:`_class_walk_moved_prior`), the others stayed at s0 = q = 0, and π is learned from
    every class's labels, so that classes that clearly moved make a rare class's movement
    likelier (:data:`_CLASS_WALK_NONE_MOVED`, its complement times ``scale``). Taken at the
    marginal likelihood's maximum instead, a rare class's walk followed its few labels' noise (a
    stable stream with 1% labelled: precision error .0603 against .0282)."""
    n_chunks, k = residual.shape
    own_var = np.broadcast_to(np.asarray(sd, dtype=np.float64), (k,)) ** 2
    moved_prior = np.log(_class_walk_moved_prior(n_chunks))
    means, variances, weights, still_l, moved_l = [], [], [], [], []
    for j in range(k):
        mean, var, log_likelihood = _class_walk_moments(
            residual[:, j],
            noise[:, j],
            float(own_var[j]),
            _CLASS_WALK_START_VAR,
            _CLASS_WALK_STEP_VAR,
        )
        log_weight = log_likelihood + moved_prior
        top = log_weight.max()
        weight = np.exp(log_weight - top)
        # ln P(class j's labels | moved) and | still, each up to the same constant per class.
        moved_l.append(top + math.log(weight.sum()))
        still_l.append(float(log_likelihood[0]))
        means.append(mean)
        variances.append(var)
        weights.append(weight / weight.sum())
    # The share π of the classes that moved (prior :func:`_class_walk_share_prior`); given π, each
    # class moved or not on its own, and whether it did follows from π and its labels.
    still, moved = np.array(still_l), np.array(moved_l)
    with np.errstate(divide="ignore"):
        log_share, log_rest = np.log(_CLASS_WALK_SHARE), np.log1p(-_CLASS_WALK_SHARE)
    terms = np.logaddexp(log_rest[:, None] + still[None], log_share[:, None] + moved[None])
    total = np.log(_class_walk_share_prior(scale)) + terms.sum(axis=1)
    share = np.exp(total - total.max())
    share /= share.sum()
    # P(class j moved | π, its labels), averaged over π's posterior.
    p_moved = share @ np.exp(log_share[:, None] + moved[None] - terms)
    out_mean, out_var = np.empty((n_chunks, k)), np.empty((n_chunks, k))
    for j, (mean, var, weight) in enumerate(zip(means, variances, weights, strict=True)):
        weight = p_moved[j] * weight
        weight[0] += 1.0 - p_moved[j]
        out_mean[:, j] = mean @ weight
        out_var[:, j] = np.maximum((var + mean**2) @ weight - out_mean[:, j] ** 2, 0.0)
    return out_mean, out_var


def chunk_class_shifts(
    sd: np.ndarray | float,
    stats: tuple[np.ndarray, ...],
    bins: MulticlassBins,
    bin_sd: float,
    scale: float = 1.0,
    moved: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk's shift of each predicted class's correct rates, as the core takes it: per
    chunk and bin the mean offset (chunks, bins), per chunk and class the sd (chunks, K).
    Without labels: N(0, ``sd``²) per class (``sd``: one per class, or one for all), each
    bin's mean offset set so that its rate's
    mean stays the reference's (:func:`_mean_preserving_offset`). A chunk's known labels
    (``stats``: the core's chunk statistics, labelled right and wrong per bin) update it: per
    class, the logit shift of its bins' known correct rates, less the chunk's shift over all
    classes, each bin's information n p (1 - p) over its design effect 1 + n p (1 - p)
    ``bin_sd``² (the bins' own deviations). Every chunk's shift of a class then follows from
    all chunks' labels (:func:`_class_walks`): its own movement N(0, ``sd``²) around a level
    that production's labels can show moved off the reference, at once or chunk by chunk (a
    concept shift of one class: the card tiers' second class after theirs), so that a chunk
    learns from its neighbours' labels, not only its own few hundred; ``scale`` multiplies the
    prior of a class having moved (:func:`~probeval.labelfree.drift.movement_prior_scale`).
    ``moved`` (chunks, bins): each chunk's bins' correct rates moved by a label shift (logit,
    :mod:`~probeval.labelfree.label_shift`), around which the class shifts then move and the
    labels are read."""
    k = bins.n_classes
    n_chunks = np.asarray(stats[0]).shape[0]
    rate = _correct_rates(bins, moved)
    mean = np.zeros((n_chunks, k))
    sds = np.broadcast_to(np.asarray(sd, dtype=np.float64), (k,))
    var = np.tile(sds**2, (n_chunks, 1))
    residual, noise, _ = class_shift_evidence(stats, bins, bin_sd, moved)
    # Chunks are in time order (by size, number or period), which the walk uses.
    shown = np.isfinite(noise).any(axis=0)
    if shown.any():
        mean[:, shown], var[:, shown] = _class_walks(
            residual[:, shown], noise[:, shown], sds[shown], scale
        )
    class_sd = np.sqrt(var)
    own_sd = class_sd[:, bins.predicted]
    rates = np.broadcast_to(rate, own_sd.shape)
    centring = np.stack(
        [_mean_preserving_offset(r, row) for r, row in zip(rates, own_sd, strict=True)]
    )
    offset = centring + mean[:, bins.predicted]
    if moved is not None:
        offset = offset + moved
    return offset, class_sd


def _correct_rates(bins: MulticlassBins, moved: np.ndarray | None = None) -> np.ndarray:
    """Each confidence bin's rate of correct predictions as the class shifts read it (the
    reference's, half a row of prior each way), per chunk moved by a label shift ``moved``."""
    rate: np.ndarray = np.clip(
        (bins.correct + 0.5) / (bins.correct + bins.wrong + 1.0), 1e-6, 1 - 1e-6
    )
    if moved is not None:
        rate = np.clip(1.0 / (1.0 + (1.0 / rate - 1.0) * np.exp(-moved)), 1e-6, 1 - 1e-6)
    return rate


def class_shift_evidence(
    stats: tuple[np.ndarray, ...],
    bins: MulticlassBins,
    bin_sd: float,
    moved: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What each chunk's known labels say of each predicted class's shift (chunks, K; logit):
    the logit shift of the class's bins' known correct rates less the chunk's shift over all
    classes, each bin's information n p (1 - p) over its design effect 1 + n p (1 - p)
    ``bin_sd``² (the bins' own deviations), and its variance, the inverse of the class's
    information (inf, with a shift of 0, where the chunk has no known label of that class's
    predictions). ``moved``: as :func:`chunk_class_shifts`. Also the variance of the shift
    less the common one, which shares its labels: 1 / w_j - 1 / Σ w (inf where that is 0, a
    chunk whose known labels all fell on one class's predictions)."""
    k = bins.n_classes
    n_chunks = np.asarray(stats[0]).shape[0]
    rate = _correct_rates(bins, moved)
    right, wrong = np.asarray(stats[3]), np.asarray(stats[4])
    known = right + wrong
    member = np.eye(k)[bins.predicted]
    info = known * rate * (1.0 - rate)
    info = info / (1.0 + info * bin_sd**2)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_bin = np.where(known > 0, (right - known * rate) / (known * rate * (1 - rate)), 0.0)
        weight = info @ member
        shift = np.where(weight > 0, ((info * per_bin) @ member) / weight, 0.0)
        common = (weight * shift).sum(axis=1, keepdims=True) / np.maximum(
            weight.sum(axis=1, keepdims=True), 1e-300
        )
    seen = (known.sum(axis=1) > 0)[:, None] & (weight > 0)
    residual = np.where(seen, shift - common, 0.0).reshape(n_chunks, k)
    noise = np.where(seen, 1.0 / np.where(seen, weight, 1.0), np.inf).reshape(n_chunks, k)
    total = np.maximum(weight.sum(axis=1, keepdims=True), 1e-300)
    beyond = noise - 1.0 / total
    # A chunk whose labelled rows all predicted one class: that class is the common shift,
    # its shift beyond it is 0 whatever the labels say.
    beyond = np.where(seen & (beyond > 1e-9 * noise), beyond, np.inf).reshape(n_chunks, k)
    return residual, noise, beyond


def drifting_error_alpha(alpha: np.ndarray, spread: float) -> np.ndarray:
    """Each bin's Dirichlet of error shares with the periods' movement added: the shares'
    variance m(1 - m) / (N + 1), N the bin's total weight, plus ``spread`` m(1 - m)
    (:func:`error_share_spread`), as a Dirichlet of the same mean and that variance."""
    if spread <= 0:
        return alpha
    total = alpha.sum(axis=-1, keepdims=True)
    # A Dirichlet's variance tops out at m(1 - m) (weight 0): a bin of weight below 1 (only a
    # hand-made saved estimator has one) could ask for more. A floor of 1% of min(weight, 1)
    # keeps every share positive; fitted bins (weight >= 1, spread < 0.49) never reach it.
    floor = 0.01 * np.minimum(total, 1.0)
    weight = np.maximum(1.0 / (1.0 / (total + 1.0) + spread) - 1.0, floor)
    out: np.ndarray = alpha * np.where(total > 0, weight / np.where(total > 0, total, 1.0), 1.0)
    return out


def confidence_level_map(bins: MulticlassBins) -> tuple[np.ndarray, np.ndarray]:
    """Per bin, the offset a and scale b with confidence s = a + b u for its pseudo-scores u =
    (c + t) / K, c its predicted class and s = 1/K + t (K - 1) / K: what a calibrated model's
    pseudo-scores say of the rate of correct predictions."""
    k = bins.n_classes
    offset: np.ndarray = (1.0 - bins.predicted * (k - 1.0)) / k
    return offset, np.full(bins.n_bins, k - 1.0)


def class_move_loading(bins: MulticlassBins) -> np.ndarray:
    """How each bin's logit P(correct) moves when each class's log-odds at the same scores
    moves by eⱼ (bins, K): bin i of predicted class k moves by e_k - log Σⱼ wᵢⱼ e^eⱼ ≈
    e_k - Σⱼ wᵢⱼ eⱼ, wᵢⱼ the shares of the true classes among its wrong predictions (the
    others' share of the score mass, for calibrated scores). The core draws e once per draw
    for every bin and for the error shares' tilt (each bin's by its :func:`move_shares`), so
    that a class gaining rows makes more of its predictions right and more mistakes of it at
    once: its precision and recall move together, and the classes' moves cancel in accuracy
    as far as the predicted classes are alike (for two balanced classes, to 0)."""
    shares = bins.error_alpha / np.maximum(bins.error_alpha.sum(axis=1, keepdims=True), 1e-300)
    loading = -shares
    loading[np.arange(bins.n_bins), bins.predicted] += 1.0
    out: np.ndarray = np.ascontiguousarray(loading)
    return out


def known_errors(
    bins: MulticlassBins,
    u: np.ndarray,
    predicted: np.ndarray,
    known: np.ndarray | None,
    chunk_rows: list[np.ndarray],
) -> tuple[np.ndarray | None, np.ndarray]:
    """From the known labels (class index per row, NaN when unknown): per row whether the
    prediction is right (1, 0 or NaN, what the core's chunk statistics count), and per chunk,
    bin and true class the known wrong predictions (chunks, bins, K)."""
    k = bins.n_classes
    table = np.zeros((len(chunk_rows), bins.n_bins, k))
    if known is None:
        return None, table
    given = ~np.isnan(known)
    codes = np.where(given, known, -1).astype(np.int64)
    right = np.where(given, (codes == predicted).astype(np.float64), np.nan)
    which = bins.bin_of(u)
    for index, rows in enumerate(chunk_rows):
        wrong = rows[given[rows] & (codes[rows] != predicted[rows])]
        cells = which[wrong] * k + codes[wrong]
        table[index] = np.bincount(cells, minlength=bins.n_bins * k).reshape(bins.n_bins, k)
    return right, table


def combine_one_vs_rest(
    per_class: np.ndarray, prevalence: np.ndarray, average: str, class_index: int
) -> np.ndarray:
    """Draws of a one-vs-rest ROC AUC or average precision from each class's draws (classes,
    ...): one class, the plain mean (macro), or the mean weighted by each draw's prevalence of
    the classes (as scikit-learn weights by support)."""
    if average == "class":
        out: np.ndarray = per_class[class_index]
        return out
    if average == "macro":
        out = per_class.mean(axis=0)
        return out
    total = prevalence.sum(axis=0)
    # A realized draw of a tiny chunk can give no class any row: the plain mean then.
    weighted = (per_class * prevalence).sum(axis=0) / np.where(total > 0, total, 1.0)
    out = np.where(total > 0, weighted, per_class.mean(axis=0))
    return out


def auc_correlation(codes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Correlation (K x K) of the classes' one-vs-rest ROC AUC estimates under resampling of
    rows, from each row's first-order influence on each AUC (DeLong's structural components:
    a positive of class k counts (V_i - AUC) / p_k, a negative (W_i - AUC) / (1 - p_k), with
    V_i the share of negatives below it and W_i the share of positives above it, ties
    halved). Classes of one value only get correlation 0 with the others."""
    n, k = scores.shape
    influence = np.zeros((n, k))
    for j in range(k):
        positive = codes == j
        n_pos = int(positive.sum())
        n_neg = n - n_pos
        if n_pos == 0 or n_neg == 0:
            continue
        neg_left, neg_right, pos_left, pos_right = _class_counts_around(scores[:, j], positive)
        below = (neg_left + neg_right) / (2 * n_neg)
        above = 1.0 - (pos_left + pos_right) / (2 * n_pos)
        auc = below[positive].mean()
        influence[:, j] = np.where(positive, (below - auc) * n / n_pos, (above - auc) * n / n_neg)
    sd = influence.std(axis=0)
    centred = influence - influence.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (centred.T @ centred) / n / np.outer(sd, sd)
    out = np.where(np.isfinite(out), out, 0.0)
    np.fill_diagonal(out, 1.0)
    return np.asarray(out, dtype=np.float64)


def auc_coupling(
    sampling: np.ndarray,
    total_var: np.ndarray,
    sampling_var: np.ndarray,
    drift: float = AUC_DRIFT_CORRELATION,
) -> np.ndarray:
    """Correlation (K x K) of the classes' ROC AUC draws whose variances ``total_var`` are a
    sampling part ``sampling_var`` (correlated as ``sampling``, :func:`auc_correlation`) and a
    drift part, the rest, whose classes correlate at ``drift``: cov_ij = R_ij √(s_i s_j) +
    rho √(d_i d_j), over √(v_i v_j). A sum of two correlation matrices scaled by the shares, so
    positive semi-definite whenever ``sampling`` is and rho >= -1 / (K - 1). A class without
    variance keeps its sampling correlations (they do not matter: its draws are all equal)."""
    share = np.clip(
        np.divide(sampling_var, total_var, out=np.ones_like(total_var), where=total_var > 0),
        0.0,
        1.0,
    )
    moved = np.full_like(sampling, drift)
    np.fill_diagonal(moved, 1.0)
    root_s, root_d = np.sqrt(share), np.sqrt(1.0 - share)
    out = np.outer(root_s, root_s) * sampling + np.outer(root_d, root_d) * moved
    np.fill_diagonal(out, 1.0)
    return np.asarray(out, dtype=np.float64)


def _class_counts_around(
    s: np.ndarray, positive: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row, how many negatives score below it and at most its score, and the same for
    positives: what ``searchsorted(sorted class scores, s, "left" / "right")`` gives, from one
    sort of all rows (searching 20,000 unsorted scores 40 times was half of a K = 10 fit)."""
    order = np.argsort(s, kind="stable")
    ordered = s[order]
    # Each row's tie group, and the positions where the groups start and end in sorted order:
    # a row's "left" and "right" counts are what lies before its group's start and its end.
    starts_group = np.r_[True, ordered[1:] != ordered[:-1]]
    first = np.flatnonzero(starts_group)
    ends = np.r_[first[1:], ordered.shape[0]]
    group = np.cumsum(starts_group) - 1
    left, right = np.empty_like(order), np.empty_like(order)
    left[order], right[order] = first[group], ends[group]
    pos_before = np.r_[0, np.cumsum(positive[order])]  # positives among the first i sorted rows
    pos_left, pos_right = pos_before[left], pos_before[right]
    return left - pos_left, right - pos_right, pos_left, pos_right


def couple(
    per_class: dict[str, np.ndarray], correlation: np.ndarray, seed: int
) -> dict[str, np.ndarray]:
    """Reorder each class's ROC AUC draws (``per_class["roc_auc"]``, classes x draws) so that
    their ranks follow a Gaussian copula with ``correlation``, every other array of
    ``per_class`` reordered alongside (a class keeps the pairing of its AUC draws with its
    other draws): every class keeps exactly its own draws (Iman-Conover)."""
    draws = per_class["roc_auc"]
    k, n = draws.shape
    values, vectors = np.linalg.eigh(correlation)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))  # correlation ~= root @ root.T
    latent = np.random.default_rng(seed).standard_normal((n, k)) @ root.T
    out = {name: np.empty_like(part) for name, part in per_class.items()}
    for j in range(k):
        order = np.argsort(draws[j], kind="stable")
        slots = np.argsort(latent[:, j], kind="stable")
        for name, part in per_class.items():
            out[name][j, slots] = part[j, order]
    return out
