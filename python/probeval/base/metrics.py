"""The metric catalogue: names, aliases, ranges and which metrics have an exact Beta posterior.

A *proportion* metric is the success rate of its own binomial — e.g. precision counts TP among
TP + FP — so its posterior is an exact Beta and needs no sampling. Every other metric is a
function of the whole confusion matrix and is computed from Dirichlet draws of its cells — except
jaccard and F1, whose laws under that Dirichlet are known in closed form: the Jaccard index
TP / (TP + FP + FN) is a Beta marginal of the Dirichlet, and F1 = 2J / (1 + J).

Undefined values (a zero denominator, e.g. precision with no predicted positives) take the value
of ``zero_division`` (0 by default, as scikit-learn's ``"warn"``). MCC is 0 when a marginal is
empty, as in scikit-learn. Likelihood ratios and the diagnostic odds ratio are ``inf`` when only
their denominator is zero. With the default prior (1 per cell) posterior draws are never
undefined; these rules matter for observed values and for a zero prior.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = [
    "ExactLaw",
    "MetricInfo",
    "MetricSpec",
    "available_metrics",
    "canonical_name",
    "metric_info",
]

CELLS = ("tp", "fp", "tn", "fn")

#: Position of each binary cell in the 2 x 2 matrix [[TN, FP], [FN, TP]].
BINARY_CELL_INDEX = {"tn": (0, 0), "fp": (0, 1), "fn": (1, 0), "tp": (1, 1)}


@dataclass(frozen=True)
class MetricInfo:
    """What probeval knows about one metric."""

    name: str
    description: str
    lower: float = 0.0
    upper: float = 1.0
    #: (success cells, failure cells) for proportion metrics, None otherwise.
    beta_cells: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    #: For f1 and jaccard: (success cells, failure cells) of the Beta marginal of the Dirichlet
    #: behind them. J = p_TP / (p_TP + p_FP + p_FN) is Beta(a_TP, a_FP + a_FN) by the
    #: aggregation property, and F1 = 2J / (1 + J), so both are exact without sampling.
    jaccard_cells: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    #: Needs scores (ROC AUC, average precision) rather than a confusion matrix.
    needs_scores: bool = False
    #: "higher" or "lower" is better, or "neither" (prevalence, selection rate).
    better: str = "higher"

    @property
    def has_beta(self) -> bool:
        """True when the posterior is an exact Beta distribution."""
        return self.beta_cells is not None

    @property
    def exact(self) -> bool:
        """True when the binary posterior is known in closed form (no sampling): the Beta
        metrics, jaccard and F1."""
        return self.beta_cells is not None or self.jaccard_cells is not None

    @property
    def bounds(self) -> tuple[float, float]:
        return (self.lower, self.upper)


_INF = math.inf

_BINARY = [
    MetricInfo(
        "accuracy", "fraction of correct predictions", beta_cells=(("tp", "tn"), ("fp", "fn"))
    ),
    MetricInfo(
        "precision", "TP / (TP + FP), positive predictive value", beta_cells=(("tp",), ("fp",))
    ),
    MetricInfo(
        "recall", "TP / (TP + FN), sensitivity, true positive rate", beta_cells=(("tp",), ("fn",))
    ),
    MetricInfo("specificity", "TN / (TN + FP), true negative rate", beta_cells=(("tn",), ("fp",))),
    MetricInfo("npv", "TN / (TN + FN), negative predictive value", beta_cells=(("tn",), ("fn",))),
    MetricInfo(
        "fpr", "FP / (FP + TN), false positive rate", beta_cells=(("fp",), ("tn",)), better="lower"
    ),
    MetricInfo(
        "fnr", "FN / (FN + TP), false negative rate", beta_cells=(("fn",), ("tp",)), better="lower"
    ),
    MetricInfo(
        "fdr", "FP / (FP + TP), false discovery rate", beta_cells=(("fp",), ("tp",)), better="lower"
    ),
    MetricInfo(
        "false_omission_rate", "FN / (FN + TN)", beta_cells=(("fn",), ("tn",)), better="lower"
    ),
    MetricInfo(
        "f1", "harmonic mean of precision and recall", jaccard_cells=(("tp",), ("fp", "fn"))
    ),
    MetricInfo("fbeta", "F-beta score (beta= weights recall beta times as much as precision)"),
    MetricInfo("mcc", "Matthews correlation coefficient", lower=-1.0),
    MetricInfo("balanced_accuracy", "mean of recall and specificity"),
    MetricInfo("informedness", "recall + specificity - 1 (Youden's J)", lower=-1.0),
    MetricInfo("markedness", "precision + NPV - 1", lower=-1.0),
    MetricInfo("kappa", "Cohen's kappa", lower=-1.0),
    MetricInfo(
        "jaccard",
        "TP / (TP + FP + FN), intersection over union",
        jaccard_cells=(("tp",), ("fp", "fn")),
    ),
    MetricInfo(
        "prevalence",
        "fraction of actual positives",
        beta_cells=(("tp", "fn"), ("fp", "tn")),
        better="neither",
    ),
    MetricInfo(
        "selection_rate",
        "fraction of predicted positives",
        beta_cells=(("tp", "fp"), ("tn", "fn")),
        better="neither",
    ),
    MetricInfo("positive_likelihood_ratio", "recall / FPR", upper=_INF),
    MetricInfo("negative_likelihood_ratio", "FNR / specificity", upper=_INF, better="lower"),
    MetricInfo("diagnostic_odds_ratio", "(TP TN) / (FP FN)", upper=_INF),
    MetricInfo("gmean", "geometric mean of recall and specificity"),
]

_SCORE = [
    MetricInfo("roc_auc", "area under the ROC curve", needs_scores=True),
    MetricInfo("average_precision", "area under the precision-recall curve", needs_scores=True),
]

_CATALOGUE: dict[str, MetricInfo] = {info.name: info for info in _BINARY + _SCORE}

ALIASES = {
    "ppv": "precision",
    "tpr": "recall",
    "sensitivity": "recall",
    "tnr": "specificity",
    "auc": "roc_auc",
    "auroc": "roc_auc",
    "ap": "average_precision",
}

#: Metrics computed by the binary confusion-matrix kernel.
BINARY_METRICS: tuple[str, ...] = tuple(info.name for info in _BINARY)
#: Metrics that need scores.
SCORE_METRICS: tuple[str, ...] = tuple(info.name for info in _SCORE)
DEFAULT_BINARY_SCORES = ("roc_auc", "average_precision")
DEFAULT_MULTICLASS_SCORES = ("roc_auc_macro", "roc_auc_weighted")

DEFAULT_BINARY = (
    "accuracy",
    "precision",
    "recall",
    "specificity",
    "f1",
    "mcc",
    "balanced_accuracy",
)


def available_metrics() -> list[str]:
    """Canonical names of every metric (aliases excluded)."""
    return list(_CATALOGUE)


def canonical_name(name: str) -> str:
    """Resolve aliases (``ppv``, ``tpr``, ``sensitivity``, ``tnr``); reject unknown names."""
    if not isinstance(name, str):
        raise TypeError(f"metric names must be strings, got {name!r}")
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in _CATALOGUE:
        valid = ", ".join(available_metrics())
        aliases = ", ".join(f"{alias} ({target})" for alias, target in ALIASES.items())
        raise ValueError(f"unknown metric {name!r}; valid metrics: {valid}; aliases: {aliases}")
    return key


def metric_info(name: str) -> MetricInfo:
    """Catalogue entry of a metric (aliases accepted).

    Multiclass names get the entry of their base metric with their own name and description:
    ``f1_macro`` (averaged over classes, ``macro``/``weighted``/``micro``), ``recall[cat]``
    (one class against the rest), ``roc_auc_macro``.
    """
    if not isinstance(name, str):
        raise TypeError(f"metric names must be strings, got {name!r}")
    key = name.strip().lower()
    bracket = _CLASS_SYNTAX.match(name)
    if bracket and ALIASES.get(bracket.group(1).lower(), bracket.group(1).lower()) in (
        *PER_CLASS,
        *SCORE_METRICS,
    ):
        info = _CATALOGUE[canonical_name(bracket.group(1))]
        return replace(
            info,
            name=name.strip(),
            description=f"{info.description}, class {bracket.group(2).strip()} against the rest",
            beta_cells=None,
        )
    base, _, average = key.rpartition("_")
    base = ALIASES.get(base, base)
    if (base in PER_CLASS and average in AVERAGES) or (
        base in SCORE_METRICS and average in ("macro", "weighted")
    ):
        info = _CATALOGUE[base]
        return replace(
            info,
            name=key,
            description=f"{info.description}, {average} average over classes",
            beta_cells=None,
        )
    return _CATALOGUE[canonical_name(name)]


# ---------------------------------------------------------------------------------------------
# Multiclass names
# ---------------------------------------------------------------------------------------------

#: Metrics of a whole K x K matrix.
WHOLE_MATRIX = ("accuracy", "balanced_accuracy", "mcc", "kappa")
#: One-vs-rest metrics, computed per class and then averaged or selected.
PER_CLASS = (
    "precision",
    "recall",
    "f1",
    "fbeta",
    "specificity",
    "npv",
    "jaccard",
    "fpr",
    "fnr",
    "fdr",
    "false_omission_rate",
)
AVERAGES = ("macro", "weighted", "micro")
DEFAULT_MULTICLASS = (
    "accuracy",
    "balanced_accuracy",
    "precision_macro",
    "recall_macro",
    "f1_macro",
    "mcc",
    "kappa",
)

#: (success, failure) cells of per-class proportion metrics for class k, as functions of
#: (row index == k, column index == k): the metric is successes / (successes + failures).
_CLASS_BETA: dict[str, tuple[str, str]] = {
    # name: (success region, failure region) with regions "kk", "k*" (row k off-diagonal),
    # "*k" (column k off-diagonal) and "**" (neither row nor column k).
    "precision": ("kk", "*k"),
    "recall": ("kk", "k*"),
    "specificity": ("**", "*k"),
    "npv": ("**", "k*"),
    "fpr": ("*k", "**"),
    "fnr": ("k*", "kk"),
    "fdr": ("*k", "kk"),
    "false_omission_rate": ("k*", "**"),
}
#: Per-class metrics whose micro average is accuracy (single-label data: every FP is an FN).
_MICRO_IS_ACCURACY = ("precision", "recall", "f1", "fbeta")


def _region(region: str, k: int, n_classes: int) -> np.ndarray:
    rows = np.arange(n_classes)[:, None] == k
    cols = np.arange(n_classes)[None, :] == k
    regions: dict[str, np.ndarray] = {
        "kk": rows & cols,
        "k*": rows & ~cols,
        "*k": ~rows & cols,
        "**": ~rows & ~cols,
    }
    return regions[region]


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric, resolved: what to compute and how to name it.

    ``kernel`` is "binary" (the 2 x 2 catalogue) or "multiclass" (K x K: whole-matrix metrics,
    per-class metrics with ``average`` "macro", "weighted", "micro" or "class").
    """

    name: str
    base: str
    kernel: str
    average: str = ""
    class_index: int = -1

    @property
    def info(self) -> MetricInfo:
        return _CATALOGUE[self.base]

    @property
    def bounds(self) -> tuple[float, float]:
        return self.info.bounds

    @property
    def stream_key(self) -> int:
        """A stable key for this metric's own random stream (exact posteriors' lazy samples)."""
        return 1 + zlib.crc32(self.name.encode("utf-8"))

    def core_spec(self) -> tuple[str, str, int]:
        """(name, average, class index) as the Rust multiclass kernel takes them."""
        return (self.base, self.average, max(self.class_index, 0))

    def exact_law(self, n_classes: int) -> ExactLaw | None:
        """The closed-form posterior of this metric on a K x K matrix, or None (sampled).

        The one rule for every path (evaluate, segments, services, audits): proportion metrics
        — binary ones, accuracy and the micro averages equal to it, per-class precision,
        recall, specificity, NPV and their complements — are a Beta over their success cells
        against their failure cells; jaccard (binary or per class) is the Beta marginal
        J = p_TP / (p_TP + p_FP + p_FN) of the Dirichlet, and F1 = 2J / (1 + J) of it.
        """
        diagonal = np.eye(n_classes, dtype=bool)
        if self.kernel == "binary":
            info = self.info
            if info.beta_cells is not None:
                cells = info.beta_cells
                return ExactLaw(_binary_mask(cells[0]), _binary_mask(cells[1]), "proportion")
            if info.jaccard_cells is not None:
                cells = info.jaccard_cells
                return ExactLaw(_binary_mask(cells[0]), _binary_mask(cells[1]), self.base)
            return None
        if self.base == "accuracy" or (self.average == "micro" and self.base in _MICRO_IS_ACCURACY):
            return ExactLaw(diagonal, ~diagonal, "proportion")
        if self.average != "class":
            return None
        k = self.class_index
        if self.base in _CLASS_BETA:
            success, failure = _CLASS_BETA[self.base]
            return ExactLaw(
                _region(success, k, n_classes), _region(failure, k, n_classes), "proportion"
            )
        if self.base in ("f1", "jaccard"):
            errors = _region("k*", k, n_classes) | _region("*k", k, n_classes)
            return ExactLaw(_region("kk", k, n_classes), errors, self.base)
        return None


@dataclass(frozen=True, eq=False)
class ExactLaw:
    """A metric's posterior in closed form: ``X ~ Beta(a, b)`` with ``a`` summed over the cells
    ``success`` and ``b`` over ``failure`` (counts plus pseudo-counts), and the metric is
    ``X`` itself (``kind`` "proportion" or "jaccard") or ``2X / (1 + X)`` ("f1")."""

    success: np.ndarray
    failure: np.ndarray
    kind: str

    @property
    def marginal(self) -> bool:
        """Always the Dirichlet's Beta marginal (the Jaccard index aggregates cells); a binary
        proportion may instead take the prior once per side (see :class:`~probeval.Prior`)."""
        return self.kind != "proportion"

    def admits(self, a: float, b: float) -> bool:
        """Whether the exact summaries hold for Beta(a, b): a proper Beta; for F1 also
        a, b >= 1, where its density is unimodal (below, F1 is drawn from the Dirichlet)."""
        if self.kind == "f1":
            return min(a, b) >= 1.0
        return (a, b) != (0.0, 0.0) or self.kind == "proportion"


def f1_of_jaccard(j: Any) -> Any:
    """F1 from the Jaccard index: 2J / (1 + J)."""
    return 2.0 * j / (1.0 + j)


def jaccard_of_f1(f: Any) -> Any:
    """The Jaccard index from F1 (in [0, 1]): F1 / (2 - F1)."""
    return f / (2.0 - f)


def _binary_mask(names: tuple[str, ...]) -> np.ndarray:
    """A 2 x 2 boolean mask selecting the named binary cells."""
    mask = np.zeros((2, 2), dtype=bool)
    for cell in names:
        mask[BINARY_CELL_INDEX[cell]] = True
    return mask


def _multiclass_help(labels: Sequence[Any]) -> str:
    shown = ", ".join(str(label) for label in list(labels)[:20])
    more = "" if len(labels) <= 20 else f", ... ({len(labels)} classes)"
    return (
        f"for multiclass data use {', '.join(WHOLE_MATRIX)}, or a per-class metric "
        f"({', '.join(PER_CLASS)}) with _macro, _weighted, _micro or [class], e.g. f1_macro "
        f"or recall[{labels[0]}]; classes: {shown}{more}"
    )


_CLASS_SYNTAX = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]\s*$")


def _score_base(name: str) -> tuple[str, str, str] | None:
    """(base, average, class text) when ``name`` is a score metric (``roc_auc``,
    ``roc_auc_macro``, ``average_precision[cat]``, ...), else None."""
    match = _CLASS_SYNTAX.match(name)
    if match:
        base = ALIASES.get(match.group(1).lower(), match.group(1).lower())
        return (base, "class", match.group(2).strip()) if base in SCORE_METRICS else None
    key = name.strip().lower()
    for average in ("macro", "weighted"):
        stem = key.removesuffix("_" + average)
        if stem != key and ALIASES.get(stem, stem) in SCORE_METRICS:
            return ALIASES.get(stem, stem), average, ""
    key = ALIASES.get(key, key)
    return (key, "", "") if key in SCORE_METRICS else None


def is_score_metric(name: Any) -> bool:
    """True for names of metrics that need scores (ROC AUC, average precision)."""
    return isinstance(name, str) and _score_base(name) is not None


def is_multiclass_name(name: str) -> bool:
    """Whether ``name`` names a multiclass metric — whole-matrix, per-class with an average or
    a ``[class]``, or a one-vs-rest score metric — whatever the classes turn out to be."""
    match = _CLASS_SYNTAX.match(name)
    if match:
        base = ALIASES.get(match.group(1).lower(), match.group(1).lower())
        return base in PER_CLASS or base in SCORE_METRICS
    parsed = _score_base(name)
    if parsed is not None:
        return parsed[1] in ("macro", "weighted")
    key = name.strip().lower()
    for average in AVERAGES:
        stem = key.removesuffix("_" + average)
        if stem != key:
            return ALIASES.get(stem, stem) in PER_CLASS
    return ALIASES.get(key, key) in WHOLE_MATRIX


def resolve_score_metric(name: str, labels: Sequence[Any], *, binary: bool) -> MetricSpec:
    """Resolve a score metric: ``roc_auc`` / ``average_precision`` for binary data;
    ``_macro``, ``_weighted`` or ``[class]`` (one-vs-rest) for multiclass data."""
    parsed = _score_base(name)
    if parsed is None:
        raise ValueError(f"{name!r} is not a score metric; score metrics: {SCORE_METRICS}")
    base, average, wanted = parsed
    if binary:
        if average:
            raise ValueError(
                f"{name!r}: binary data have one {base}; use {base!r} (averages and [class] "
                "are for multiclass scores)"
            )
        return MetricSpec(base, base, "scores")
    if average == "class":
        hits = [i for i, label in enumerate(labels) if str(label) == wanted]
        if len(hits) != 1:
            problem = "no class" if not hits else "more than one class"
            raise ValueError(
                f"{problem} is written {wanted!r} in {name!r}; classes: "
                f"{', '.join(repr(str(label)) for label in labels)}"
            )
        return MetricSpec(f"{base}[{labels[hits[0]]}]", base, "scores", "class", hits[0])
    if not average:
        raise ValueError(
            f"{base!r} of multiclass scores is one-vs-rest per class: use {base}_macro, "
            f"{base}_weighted or {base}[class], e.g. {base}[{labels[0]}]"
        )
    return MetricSpec(f"{base}_{average}", base, "scores", average)


def resolve_metric(name: str, labels: Sequence[Any], *, binary: bool) -> MetricSpec:
    """Resolve a metric name for a confusion matrix with classes ``labels``.

    Binary data accept the binary catalogue (``precision``, ``f1``, ...) and multiclass-style
    names; multiclass data accept whole-matrix names and per-class names with an average
    (``f1_macro``) or a class (``recall[cat]``, matched against ``str(label)``).
    """
    if not isinstance(name, str):
        raise TypeError(f"metric names must be strings, got {name!r}")
    if is_score_metric(name):
        raise ValueError(
            f"{name!r} needs scores, not a confusion matrix: use evaluate(y_true, y_score=...) "
            "or ScoreSummary"
        )
    match = _CLASS_SYNTAX.match(name)
    if match:
        base = ALIASES.get(match.group(1).lower(), match.group(1).lower())
        if base not in PER_CLASS:
            raise ValueError(
                f"unknown per-class metric {match.group(1)!r} in {name!r}; "
                + _multiclass_help(labels)
            )
        wanted = match.group(2).strip()
        hits = [i for i, label in enumerate(labels) if str(label) == wanted]
        if len(hits) != 1:
            problem = "no class" if not hits else "more than one class"
            raise ValueError(
                f"{problem} is written {wanted!r} in {name!r}; classes: "
                f"{', '.join(repr(str(label)) for label in labels)}"
            )
        return MetricSpec(f"{base}[{labels[hits[0]]}]", base, "multiclass", "class", hits[0])
    key = name.strip().lower()
    for average in AVERAGES:
        suffix = "_" + average
        if key.endswith(suffix):
            base = ALIASES.get(key[: -len(suffix)], key[: -len(suffix)])
            if base in PER_CLASS:
                return MetricSpec(f"{base}_{average}", base, "multiclass", average)
            raise ValueError(f"unknown metric {name!r}; {_multiclass_help(labels)}")
    key = ALIASES.get(key, key)
    if binary and key in _CATALOGUE and not _CATALOGUE[key].needs_scores:
        return MetricSpec(key, key, "binary")
    if key in WHOLE_MATRIX:
        return MetricSpec(key, key, "multiclass")
    if key in PER_CLASS:
        raise ValueError(
            f"{key!r} is per class: say how to combine the classes; {_multiclass_help(labels)}"
        )
    if key in _CATALOGUE:
        raise ValueError(f"{key!r} is defined for binary data only; {_multiclass_help(labels)}")
    if binary:
        canonical_name(name)  # raises the catalogue's unknown-metric error, listing the names
    raise ValueError(f"unknown metric {name!r}; {_multiclass_help(labels)}")
