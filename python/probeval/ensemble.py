"""Ensembles: label stability, jitter, epistemic and aleatoric uncertainty, and group gaps
(SPEC §2.5).

``proba`` holds P(y = 1) from m models (e.g. a bootstrap ensemble, see
:func:`bootstrap_ensemble`) for n test samples, shape (m, n). A model predicts 1 iff its
probability is *strictly greater* than the threshold. Per sample x, with kₓ of the m models
predicting 1:

- ``label_stability`` = |kₓ - (m - kₓ)| / m (1: unanimous, 0: split evenly);
- ``jitter`` = 2 kₓ (m - kₓ) / (m (m - 1)), the fraction of model pairs that disagree (the
  closed form of the pairwise average, O(m) per sample);
- ``epistemic`` = the population variance across models of P(y = 1); ``std`` its square root;
- ``aleatoric`` = the mean across models of the binary entropy of P(y = 1), in bits;
- ``predictive_entropy`` = the entropy of the mean probability; ``mutual_information`` =
  predictive - aleatoric;
- ``iqr`` = the interquartile range across models (numpy's linear percentiles).

The report gives each as the mean over samples and as the per-sample array, plus accuracy, F1
and selection rate of the ensemble-mean prediction with their posteriors (§2.1), and — with
``groups`` — every metric per group and posteriors of the gaps between groups.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.classes import (
    encode,
    is_standard_binary,
    observed_classes,
    python_value,
    resolve_labels,
)
from probeval._util.equality import ValueEquality
from probeval._util.html import HtmlRepr
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_labels,
    check_ci,
    check_n_samples,
    check_positive,
    check_threshold,
    describe,
)
from probeval.base.posterior import Posterior
from probeval.compare.decisions import Decision, decide
from probeval.labels.confusion import ConfusionMatrix

__all__ = ["EnsembleReport", "Gap", "bootstrap_ensemble", "ensemble_report"]

#: Headline statistics, in report order.
STATISTICS = (
    "label_stability",
    "jitter",
    "epistemic",
    "aleatoric",
    "predictive_entropy",
    "mutual_information",
    "std",
    "iqr",
)
#: Metrics of the ensemble-mean prediction (with labels; selection rate needs none).
METRICS = ("accuracy", "f1", "selection_rate")
#: Group metrics whose gaps are reported.
GAP_METRICS = ("tpr", "fpr", "accuracy", "selection_rate")
_CATALOGUE_NAME = {"tpr": "recall", "fpr": "fpr", "accuracy": "accuracy", "f1": "f1"}


def _as_proba(proba: Any) -> np.ndarray:
    if isinstance(proba, (str, bytes)) or proba is None:
        raise TypeError(f"proba must be an (n_models, n_samples) array, got {describe(proba)}")
    array = np.asarray(proba)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"proba must hold numbers, got dtype {array.dtype}")
    if array.ndim != 2 or array.shape[0] < 2 or array.shape[1] < 1:
        raise ValueError(
            f"proba must have shape (n_models, n_samples) with at least 2 models and 1 sample, "
            f"got shape {array.shape}"
        )
    # The core checks the values (in [0, 1], no NaN) in its own pass, naming the first bad one.
    return np.ascontiguousarray(array, dtype=np.float64)


@dataclass(frozen=True)
class Gap:
    """The posterior of a gap between a group and the reference group.

    ``kind`` is "difference" (group - reference), "ratio" (group / reference) or "max_abs"
    (equalized odds: max(|ΔTPR|, |ΔFPR|)); ``metric`` is tpr, fpr, accuracy, selection_rate or
    equalized_odds. Statistical
    parity difference is the selection-rate difference, disparate impact its ratio, equal
    opportunity difference the TPR difference.
    """

    group: Any
    reference: Any
    metric: str
    kind: str
    posterior: Posterior
    rope: tuple[float, float]
    ci: float

    @property
    def hdi(self) -> tuple[float, float]:
        return self.posterior.hdi(self.ci)

    @property
    def no_effect(self) -> float:
        """The value meaning "no gap": 0 for differences, 1 for ratios."""
        return 1.0 if self.kind == "ratio" else 0.0

    @property
    def p_direction(self) -> float:
        """max(P(gap > no effect), P(gap < no effect)); nan for equalized odds, which is a
        maximum of absolute differences and has no direction."""
        if self.kind == "max_abs":
            return math.nan
        samples = self.posterior.samples
        above = float(np.mean(samples > self.no_effect))
        below = float(np.mean(samples < self.no_effect))
        return max(above, below)

    @property
    def p_rope(self) -> float:
        """P(the gap lies within the ROPE)."""
        samples = self.posterior.samples
        return float(np.mean((samples >= self.rope[0]) & (samples <= self.rope[1])))

    @property
    def decision(self) -> Decision:
        """HDI + ROPE: "accepted" (no practical gap), "rejected" (a gap) or "undecided"."""
        return decide(self.posterior, self.rope, ci=self.ci)

    def to_dict(self) -> dict[str, Any]:
        low, high = self.hdi
        return {
            "group": python_value(self.group),
            "reference": python_value(self.reference),
            "metric": self.metric,
            "kind": self.kind,
            "mean": self.posterior.mean(),
            "hdi_low": low,
            "hdi_high": high,
            "p_direction": self.p_direction,
            "rope": list(self.rope),
            "p_rope": self.p_rope,
            "decision": self.decision.status,
        }


@dataclass(frozen=True)
class GroupResult:
    """One group: its size, mean statistics and metric posteriors."""

    group: Any
    n: int
    statistics: dict[str, float]
    metrics: dict[str, Posterior]


class EnsembleReport(HtmlRepr, ValueEquality):
    """Everything :func:`ensemble_report` computes; ``summary()`` and ``gaps_table()`` print it."""

    def __init__(
        self,
        *,
        statistics: dict[str, float],
        per_sample: dict[str, np.ndarray],
        metrics: dict[str, Posterior],
        confusion: ConfusionMatrix | None,
        groups: dict[Any, GroupResult],
        gaps: list[Gap],
        n_models: int,
        threshold: float,
        ci: float,
    ) -> None:
        self.statistics = statistics
        self.per_sample = per_sample
        self.metrics = metrics
        self.confusion = confusion
        self.groups = groups
        self.gaps = gaps
        self.n_models = n_models
        self.threshold = threshold
        self.ci = ci

    @property
    def n_samples(self) -> int:
        return int(self.per_sample["mean_proba"].shape[0])

    def summary(self) -> Table:
        """Headline statistics (means over samples) and metric posteriors (mean and HDI)."""
        names: list[str] = []
        values: list[float] = []
        lows: list[float] = []
        highs: list[float] = []
        for name in STATISTICS:
            names.append(name)
            values.append(self.statistics[name])
            lows.append(math.nan)
            highs.append(math.nan)
        for name, post in self.metrics.items():
            low, high = post.hdi(self.ci)
            names.append(name)
            values.append(post.observed)
            lows.append(low)
            highs.append(high)
        title = (
            f"ensemble of {self.n_models} models on {self.n_samples} samples "
            f"(threshold {self.threshold:g}, {100 * self.ci:g}% HDI)"
        )
        return Table(
            {"name": names, "value": values, "hdi_low": lows, "hdi_high": highs}, title=title
        )

    def groups_table(self) -> Table:
        """Per group: size, headline statistics and metric values."""
        rows = list(self.groups.values())
        columns: dict[str, list[Any]] = {
            "group": [str(r.group) for r in rows],
            "n": [r.n for r in rows],
        }
        for name in STATISTICS:
            columns[name] = [r.statistics[name] for r in rows]
        for name in rows[0].metrics if rows else []:
            columns[name] = [r.metrics[name].observed for r in rows]
        return Table(columns, title="per group")

    def gaps_table(self) -> Table:
        """One row per gap: posterior mean, HDI, p_direction, P(ROPE) and the decision."""
        entries = [g.to_dict() for g in self.gaps]
        columns = [
            "group",
            "metric",
            "kind",
            "mean",
            "hdi_low",
            "hdi_high",
            "p_direction",
            "p_rope",
        ]
        data: dict[str, list[Any]] = {c: [e[c] for e in entries] for c in columns}
        data["group"] = [str(v) for v in data["group"]]
        data["decision"] = [e["decision"] for e in entries]
        reference = str(self.gaps[0].reference) if self.gaps else ""
        return Table(data, title=f"gaps against the reference group {reference!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (per-sample arrays left out; see :attr:`per_sample`)."""
        return {
            "n_models": self.n_models,
            "n_samples": self.n_samples,
            "threshold": self.threshold,
            "ci": self.ci,
            "statistics": dict(self.statistics),
            "metrics": {name: post.to_dict(self.ci) for name, post in self.metrics.items()},
            "groups": [
                {
                    "group": python_value(r.group),
                    "n": r.n,
                    "statistics": r.statistics,
                    "metrics": {k: p.to_dict(self.ci) for k, p in r.metrics.items()},
                }
                for r in self.groups.values()
            ],
            "gaps": [g.to_dict() for g in self.gaps],
        }

    def _html(self) -> str:
        gaps = self.gaps_table().to_html() if self.gaps else ""
        return f"<h3>ensemble</h3>{self.summary().to_html()}{gaps}"

    def __repr__(self) -> str:
        text = str(self.summary())
        if self.gaps:
            text += "\n\n" + str(self.gaps_table())
        return text


def _metric_posteriors(
    positive: np.ndarray | None,
    predicted: np.ndarray,
    names: Sequence[str],
    n_samples: int,
    seed: int,
) -> tuple[dict[str, Posterior], ConfusionMatrix | None]:
    """Posteriors of the ensemble-mean prediction's metrics on some rows."""
    result: dict[str, Posterior] = {}
    selected = float(predicted.sum())
    if "selection_rate" in names:
        rate = selected / predicted.shape[0]
        result["selection_rate"] = Posterior.from_beta(
            selected + 1,
            predicted.shape[0] - selected + 1,
            metric="selection_rate",
            n_samples=n_samples,
            rng=derive(seed, 1),
            observed=rate,
        )
    if positive is None:
        return result, None
    cells = np.bincount(positive.astype(np.intp) * 2 + predicted, minlength=4)
    confusion = ConfusionMatrix._from_matrix(
        cells.astype(np.float64).reshape(2, 2), [0, 1], weighted=False
    )
    for name in names:
        if name == "selection_rate":
            continue
        catalogue = _CATALOGUE_NAME[name]
        post = confusion.posterior(catalogue, n_samples=n_samples, rng=derive(seed, 2))
        post.metric = name
        result[name] = post
    return result, confusion


def ensemble_report(
    proba: Any,
    y_true: Any = None,
    *,
    threshold: float = 0.5,
    groups: Any = None,
    reference_group: Any = None,
    pos_label: Any = None,
    rope: float = 0.05,
    ratio_rope: tuple[float, float] = (0.8, 1.25),
    ci: float = 0.95,
    n_samples: int = 10_000,
    rng: Any = None,
) -> EnsembleReport:
    """Stability and uncertainty of an ensemble, its metrics, and gaps between groups.

    Parameters
    ----------
    proba : array-like of shape (n_models, n_samples)
        P(y = 1) from each model for each sample.
    y_true : array-like, optional
        Binary labels of the samples: enables accuracy, F1, TPR, FPR and their posteriors.
    threshold : float
        A model predicts 1 iff its probability is > threshold (ties at the threshold are 0).
    groups : array-like, optional
        A group label per sample (e.g. a protected attribute): every statistic and metric per
        group, and posteriors of the gaps between each group and the reference group.
    reference_group : optional
        The group the others are compared with (default: the largest group).
    pos_label : optional
        The positive class of ``y_true`` (default 1 or True).
    rope : float
        Region of practical equivalence for differences: [-rope, rope] (for equalized odds
        [0, rope]).
    ratio_rope : (low, high)
        Region of practical equivalence for ratios; the default (0.8, 1.25) is the
        "four-fifths rule" of disparate impact, made symmetric.
    ci : float
        HDI probability.
    n_samples : int
        Posterior draws.
    rng : None, int, Generator or SeedSequence

    Returns
    -------
    EnsembleReport
    """
    matrix = _as_proba(proba)
    threshold = check_threshold(threshold)
    ci = check_ci(ci)
    n = check_n_samples(n_samples)
    rope = check_positive("rope", rope, allow_zero=True)
    low_ratio, high_ratio = _ratio_rope(ratio_rope)
    seed = seed_from(rng)
    m, count = matrix.shape
    rows = _core.ensemble_stats(matrix, threshold)
    names = _core.ensemble_statistic_names()
    per_sample = {name: rows[i] for i, name in enumerate(names)}
    per_sample["mean_proba"] = per_sample.pop("mean")
    for array in per_sample.values():
        array.setflags(write=False)
    predicted = (per_sample["mean_proba"] > threshold).astype(np.intp)
    per_sample["predicted"] = predicted
    positive = None if y_true is None else _positive(y_true, pos_label, count)
    metric_names = METRICS if positive is not None else ("selection_rate",)
    metrics, confusion = _metric_posteriors(positive, predicted, metric_names, n, derive(seed, 0))
    statistics = {name: float(np.mean(per_sample[name])) for name in STATISTICS}

    group_results: dict[Any, GroupResult] = {}
    gaps: list[Gap] = []
    if groups is not None:
        keys = as_labels("groups", groups)
        if keys.shape[0] != count:
            raise ValueError(f"groups has {keys.shape[0]} values but proba has {count} samples")
        order = observed_classes(keys)
        codes = encode(keys, order)
        sizes = np.bincount(codes, minlength=len(order))
        gap_names = (
            ("tpr", "fpr", "accuracy", "selection_rate")
            if positive is not None
            else ("selection_rate",)
        )
        for index, group in enumerate(order):
            mask = codes == index
            group_metrics, _ = _metric_posteriors(
                None if positive is None else positive[mask],
                predicted[mask],
                gap_names,
                n,
                derive(seed, 100 + index),
            )
            group_results[group] = GroupResult(
                group,
                int(sizes[index]),
                {name: float(np.mean(per_sample[name][mask])) for name in STATISTICS},
                group_metrics,
            )
        reference = _reference(reference_group, order, sizes)
        gaps = _gaps(
            group_results, reference, gap_names, rope, (low_ratio, high_ratio), ci, n, seed
        )
    return EnsembleReport(
        statistics=statistics,
        per_sample=per_sample,
        metrics=metrics,
        confusion=confusion,
        groups=group_results,
        gaps=gaps,
        n_models=m,
        threshold=threshold,
        ci=ci,
    )


def _ratio_rope(value: Any) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"ratio_rope must be a pair (low, high), got {describe(value)}")
    low = check_positive("ratio_rope[0]", value[0])
    high = check_positive("ratio_rope[1]", value[1])
    if not low <= 1.0 <= high:
        raise ValueError(f"ratio_rope must contain 1 (no gap), got ({low}, {high})")
    return low, high


def _positive(y_true: Any, pos_label: Any, count: int) -> np.ndarray:
    truth = as_labels("y_true", y_true)
    if truth.shape[0] != count:
        raise ValueError(f"y_true has {truth.shape[0]} values but proba has {count} samples")
    order = resolve_labels(observed_classes(truth), None, pos_label)
    if len(order) != 2:
        raise ValueError(f"y_true must be binary, found classes {order!r}")
    if pos_label is None and not is_standard_binary(order):
        raise ValueError(
            f"y_true has the classes {order!r}; pass pos_label=... to say which one proba is "
            "the probability of"
        )
    positive: np.ndarray = encode(truth, order) == 1
    return positive


def _reference(reference_group: Any, order: list[Any], sizes: np.ndarray) -> Any:
    if reference_group is None:
        return order[int(np.argmax(sizes))]
    matches = [g for g in order if g == reference_group]
    if not matches:
        shown = ", ".join(repr(g) for g in order[:10])
        raise ValueError(f"reference_group={reference_group!r} is not one of the groups: {shown}")
    return matches[0]


def _gaps(
    results: dict[Any, GroupResult],
    reference: Any,
    names: Sequence[str],
    rope: float,
    ratio_rope: tuple[float, float],
    ci: float,
    n: int,
    seed: int,
) -> list[Gap]:
    """Difference and ratio posteriors of each group against the reference. The groups are
    disjoint rows, so their posteriors are independent: each is redrawn from its own stream."""
    base = results[reference]
    gaps: list[Gap] = []
    for index, (group, result) in enumerate(results.items()):
        if group == reference:
            continue
        diffs: dict[str, np.ndarray] = {}
        for j, name in enumerate(names):
            ours = result.metrics[name]._draw_independent(n, derive(seed, 10_000 + 64 * index + j))
            theirs = base.metrics[name]._draw_independent(n, derive(seed, 20_000 + 64 * index + j))
            diffs[name] = ours - theirs
            gaps.append(
                Gap(
                    group,
                    reference,
                    name,
                    "difference",
                    Posterior.from_samples(
                        ours - theirs, metric=f"{name} difference", bounds=(-1.0, 1.0)
                    ),
                    (-rope, rope),
                    ci,
                )
            )
            ratio = ours / theirs
            if np.isfinite(ratio).all():
                gaps.append(
                    Gap(
                        group,
                        reference,
                        name,
                        "ratio",
                        Posterior.from_samples(ratio, metric=f"{name} ratio", bounds=None),
                        ratio_rope,
                        ci,
                    )
                )
        if "tpr" in diffs and "fpr" in diffs:
            worst = np.maximum(np.abs(diffs["tpr"]), np.abs(diffs["fpr"]))
            gaps.append(
                Gap(
                    group,
                    reference,
                    "equalized_odds",
                    "max_abs",
                    Posterior.from_samples(worst, metric="equalized_odds", bounds=(0.0, 1.0)),
                    (0.0, rope),
                    ci,
                )
            )
    return gaps


#: Limits that keep a mistyped argument from running for days or exhausting memory.
MAX_BOOTSTRAP_MEMBERS = 10_000
MAX_BOOTSTRAP_FRACTION = 100.0


def bootstrap_ensemble(
    estimator: Any,
    X: Any,
    y: Any,
    X_predict: Any,
    *,
    n_estimators: int = 10,
    fraction: float = 1.0,
    rng: Any = None,
) -> np.ndarray:
    """Fit ``n_estimators`` clones of a scikit-learn style classifier on bootstrap resamples
    and return their P(y = 1) on ``X_predict``, shape (n_estimators, n_predict).

    Needs scikit-learn (``pip install "probeval[sklearn]"``) for ``clone``. Each member gets
    its own resample (``fraction`` of the rows, drawn with replacement) and, when the estimator
    has a ``random_state``, its own seed. ``X`` and ``X_predict`` are 2-d feature arrays,
    ``n_estimators`` is at most 10,000 and ``fraction`` at most 100.
    """
    try:
        from sklearn.base import clone
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            'bootstrap_ensemble needs scikit-learn: pip install "probeval[sklearn]"'
        ) from error
    if isinstance(n_estimators, (bool, np.bool_)) or not isinstance(
        n_estimators, (int, np.integer)
    ):
        raise TypeError(f"n_estimators must be an integer, got {describe(n_estimators)}")
    if not 2 <= n_estimators <= MAX_BOOTSTRAP_MEMBERS:
        raise ValueError(
            f"n_estimators must be between 2 and {MAX_BOOTSTRAP_MEMBERS:,}, got {n_estimators}"
        )
    fraction = check_positive("fraction", fraction)
    if fraction > MAX_BOOTSTRAP_FRACTION:
        raise ValueError(f"fraction must be at most {MAX_BOOTSTRAP_FRACTION:g}, got {fraction!r}")
    if not hasattr(estimator, "fit") or not hasattr(estimator, "predict_proba"):
        raise TypeError(f"estimator must have fit and predict_proba, got {describe(estimator)}")
    X = np.asarray(X)
    y = np.asarray(y)
    X_predict = np.asarray(X_predict)
    for name, array in (("X", X), ("X_predict", X_predict)):
        if array.ndim != 2 or array.shape[0] < 1:
            raise ValueError(f"{name} must be a 2-d array with at least one row, got {array.shape}")
    if y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"y must be 1-d with one label per row of X ({X.shape[0]}), got {y.shape}")
    generator = np.random.default_rng(seed_from(rng))
    size = max(1, round(fraction * X.shape[0]))
    members = []
    for _ in range(int(n_estimators)):
        rows = generator.integers(0, X.shape[0], size)
        member = clone(estimator)
        if "random_state" in member.get_params():
            member.set_params(random_state=int(generator.integers(0, 2**31 - 1)))
        member.fit(X[rows], y[rows])
        classes = list(member.classes_)
        if len(classes) != 2:
            raise ValueError(
                f"a bootstrap resample has classes {classes}: the classifier must be binary and "
                "every resample needs both classes (use more rows or a larger fraction)"
            )
        members.append(member.predict_proba(X_predict)[:, 1])
    return np.vstack(members)
