"""The metric catalogue: names, aliases, ranges and which metrics have an exact Beta posterior.

A *proportion* metric is the success rate of its own binomial — e.g. precision counts TP among
TP + FP — so its posterior is an exact Beta and needs no sampling. Every other metric is a
function of the whole confusion matrix and is computed from Dirichlet draws of its cells.

Undefined values (a zero denominator, e.g. precision with no predicted positives) take the value
of ``zero_division`` (0 by default, as scikit-learn's ``"warn"``). MCC is 0 when a marginal is
empty, as in scikit-learn. Likelihood ratios and the diagnostic odds ratio are ``inf`` when only
their denominator is zero. With the default prior (1 per cell) posterior draws are never
undefined; these rules matter for observed values and for a zero prior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["MetricInfo", "available_metrics", "canonical_name", "metric_info"]

CELLS = ("tp", "fp", "tn", "fn")


@dataclass(frozen=True)
class MetricInfo:
    """What probeval knows about one metric."""

    name: str
    description: str
    lower: float = 0.0
    upper: float = 1.0
    #: (success cells, failure cells) for proportion metrics, None otherwise.
    beta_cells: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    #: Needs scores (ROC AUC, average precision) rather than a confusion matrix.
    needs_scores: bool = False

    @property
    def has_beta(self) -> bool:
        """True when the posterior is an exact Beta distribution."""
        return self.beta_cells is not None

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
    MetricInfo("fpr", "FP / (FP + TN), false positive rate", beta_cells=(("fp",), ("tn",))),
    MetricInfo("fnr", "FN / (FN + TP), false negative rate", beta_cells=(("fn",), ("tp",))),
    MetricInfo("fdr", "FP / (FP + TP), false discovery rate", beta_cells=(("fp",), ("tp",))),
    MetricInfo("false_omission_rate", "FN / (FN + TN)", beta_cells=(("fn",), ("tn",))),
    MetricInfo("f1", "harmonic mean of precision and recall"),
    MetricInfo("fbeta", "F-beta score (beta= weights recall beta times as much as precision)"),
    MetricInfo("mcc", "Matthews correlation coefficient", lower=-1.0),
    MetricInfo("balanced_accuracy", "mean of recall and specificity"),
    MetricInfo("informedness", "recall + specificity - 1 (Youden's J)", lower=-1.0),
    MetricInfo("markedness", "precision + NPV - 1", lower=-1.0),
    MetricInfo("kappa", "Cohen's kappa", lower=-1.0),
    MetricInfo("jaccard", "TP / (TP + FP + FN), intersection over union"),
    MetricInfo(
        "prevalence", "fraction of actual positives", beta_cells=(("tp", "fn"), ("fp", "tn"))
    ),
    MetricInfo(
        "selection_rate", "fraction of predicted positives", beta_cells=(("tp", "fp"), ("tn", "fn"))
    ),
    MetricInfo("positive_likelihood_ratio", "recall / FPR", upper=_INF),
    MetricInfo("negative_likelihood_ratio", "FNR / specificity", upper=_INF),
    MetricInfo("diagnostic_odds_ratio", "(TP TN) / (FP FN)", upper=_INF),
    MetricInfo("gmean", "geometric mean of recall and specificity"),
]

_SCORE = [
    MetricInfo("roc_auc", "area under the ROC curve", needs_scores=True),
    MetricInfo("average_precision", "area under the precision-recall curve", needs_scores=True),
]

_CATALOGUE: dict[str, MetricInfo] = {info.name: info for info in _BINARY + _SCORE}

ALIASES = {"ppv": "precision", "tpr": "recall", "sensitivity": "recall", "tnr": "specificity"}

#: Metrics computed by the binary confusion-matrix kernel.
BINARY_METRICS: tuple[str, ...] = tuple(info.name for info in _BINARY)
#: Metrics that need scores.
SCORE_METRICS: tuple[str, ...] = tuple(info.name for info in _SCORE)
#: A stable index per metric, used to derive each metric's random stream.
STREAM_KEYS = {name: index + 1 for index, name in enumerate(_CATALOGUE)}

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
    """Catalogue entry of a metric (aliases accepted)."""
    return _CATALOGUE[canonical_name(name)]
