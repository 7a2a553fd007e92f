"""``evaluate``: posteriors of several metrics at once, and the :class:`Evaluation` holding them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ._random import seed_from
from ._table import Table
from ._validation import (
    as_name_list,
    check_beta,
    check_ci,
    check_n_samples,
    check_threshold,
    check_zero_division,
)
from .confusion import ConfusionMatrix
from .metrics import DEFAULT_BINARY, DEFAULT_MULTICLASS, MetricSpec
from .posterior import Posterior
from .priors import Prior, resolve_prior

__all__ = ["Evaluation", "evaluate"]


class Evaluation(Mapping[str, Posterior]):
    """Posteriors of several metrics of one classifier, by metric name.

    ``ev["f1"]`` is a :class:`Posterior` (aliases such as ``"ppv"`` work too);
    :meth:`summary` gives the table of observed values, posterior means, medians and HDIs.
    """

    def __init__(
        self,
        confusion: ConfusionMatrix,
        posteriors: dict[str, Posterior],
        *,
        prior: Prior,
        n_samples: int,
        joint: bool,
    ) -> None:
        self._confusion = confusion
        self._posteriors = posteriors
        self._prior = prior
        self._n_samples = n_samples
        self._joint = joint

    @property
    def confusion(self) -> ConfusionMatrix:
        """The confusion matrix the posteriors were computed from."""
        return self._confusion

    @property
    def metrics(self) -> list[str]:
        return list(self._posteriors)

    @property
    def prior(self) -> Prior:
        return self._prior

    @property
    def joint(self) -> bool:
        """True when every metric was drawn from the same Dirichlet draws."""
        return self._joint

    def __getitem__(self, name: str) -> Posterior:
        if name in self._posteriors:
            return self._posteriors[name]
        try:
            key: str | None = self._confusion._spec(name).name
        except ValueError:
            key = None
        if key not in self._posteriors:
            raise KeyError(
                f"{name!r} was not evaluated; metrics here: {', '.join(self._posteriors)}"
            )
        return self._posteriors[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._posteriors)

    def __len__(self) -> int:
        return len(self._posteriors)

    def summary(self, ci: float = 0.95) -> Table:
        """One row per metric: observed, mean, median, std, HDI bounds and width."""
        ci = check_ci(ci)
        rows = [p.summary(ci) for p in self._posteriors.values()]
        columns = ["metric", "observed", "mean", "median", "std", "hdi_low", "hdi_high", "width"]
        percent = f"{100 * ci:g}"
        title = f"posterior summary ({percent}% HDI, n = {self._confusion.total:g})"
        return Table({c: [r[c] for r in rows] for c in columns}, title=title)

    def to_dict(self, ci: float = 0.95) -> dict[str, Any]:
        """JSON-friendly: confusion counts, settings and each metric's summary."""
        return {
            "confusion": self._confusion.to_dict(),
            "prior": repr(self._prior),
            "n_samples": self._n_samples,
            "joint": self._joint,
            "ci": check_ci(ci),
            "metrics": {name: p.to_dict(ci) for name, p in self._posteriors.items()},
        }

    def to_pandas(self, ci: float = 0.95) -> Any:
        """The summary as a pandas DataFrame indexed by metric (pandas is optional)."""
        return self.summary(ci).to_pandas().set_index("metric")

    def as_prior(self) -> Prior:
        """The prior for the next batch of data: sequential updating."""
        return self._prior.updated(self._confusion.counts)

    def __repr__(self) -> str:
        return str(self.summary())


def _resolve_metrics(metrics: Any, confusion: ConfusionMatrix) -> list[MetricSpec]:
    if metrics is None:
        names = DEFAULT_BINARY if confusion.is_binary else DEFAULT_MULTICLASS
        if confusion.is_binary and confusion._ambiguous_positive:
            names = DEFAULT_MULTICLASS  # no positive class to speak of: multiclass-style names
        metrics = list(names)
    specs = [confusion._spec(m) for m in as_name_list("metrics", metrics)]
    return list({s.name: s for s in specs}.values())  # de-duplicate, keep order


def evaluate(
    y_true: Any,
    y_pred: Any = None,
    y_score: Any = None,
    *,
    threshold: float = 0.5,
    metrics: Any = None,
    prior: Any = 1.0,
    n_samples: int = 10_000,
    rng: Any = None,
    sample_weight: Any = None,
    joint: bool = False,
    beta: float = 1.0,
    zero_division: Any = 0.0,
    labels: Any = None,
    pos_label: Any = None,
) -> Evaluation:
    """Posterior distributions of a classifier's performance metrics.

    Parameters
    ----------
    y_true : array-like or ConfusionMatrix
        True labels, or a :class:`ConfusionMatrix` of counts (then omit ``y_pred``/``y_score``).
    y_pred : array-like, optional
        Predicted labels.
    y_score : array-like, optional
        Scores P(y = 1); without ``y_pred`` the prediction is ``y_score > threshold``.
    threshold : float
        Decision threshold for ``y_score``.
    metrics : str or list of str, optional
        Metric names (see :func:`probeval.available_metrics`); default: accuracy, precision,
        recall, specificity, f1, mcc, balanced_accuracy.
    prior : float, str, array, Prior or a previous posterior
        Pseudo-counts per cell (see :mod:`probeval.priors`); 1 (uniform) by default.
    n_samples : int
        Posterior draws per sampled metric.
    rng : None, int, numpy Generator or SeedSequence
        Source of randomness; the same value gives identical results on any number of threads.
    sample_weight : array-like, optional
        Non-negative weight per row.
    joint : bool
        Draw every metric from the same Dirichlet draws, so that differences between metrics
        (say precision - recall) are coherent posteriors. Proportion metrics then follow the
        Dirichlet's Beta marginal (e.g. accuracy ~ Beta(TP + TN + 2c, FP + FN + 2c)).
    beta : float
        The beta of the ``fbeta`` metric.
    zero_division : 0, 1, nan or "warn"
        Value of a metric whose denominator is zero (scikit-learn's convention).
    labels, pos_label :
        Class order and positive class, as in :meth:`ConfusionMatrix.from_predictions`.

    Returns
    -------
    Evaluation
        A mapping from metric name to :class:`Posterior`, with :meth:`Evaluation.summary`.
    """
    if isinstance(y_true, ConfusionMatrix):
        if y_pred is not None or y_score is not None or sample_weight is not None:
            raise TypeError(
                "with a ConfusionMatrix as y_true, omit y_pred, y_score and sample_weight"
            )
        confusion = y_true
    elif y_pred is not None:
        confusion = ConfusionMatrix.from_predictions(
            y_true, y_pred, labels=labels, sample_weight=sample_weight, pos_label=pos_label
        )
    elif y_score is not None:
        confusion = ConfusionMatrix.from_scores(
            y_true,
            y_score,
            threshold=check_threshold(threshold),
            sample_weight=sample_weight,
            pos_label=pos_label,
        )
    else:
        raise TypeError("evaluate needs y_pred or y_score (or a ConfusionMatrix as y_true)")

    specs = _resolve_metrics(metrics, confusion)
    resolved_prior = resolve_prior(prior, confusion.n_classes)
    n = check_n_samples(n_samples)
    posteriors = confusion._posteriors(
        specs,
        prior=resolved_prior,
        n_samples=n,
        seed=seed_from(rng),
        beta=check_beta(beta),
        zero_division=check_zero_division(zero_division),
        joint=bool(joint),
    )
    return Evaluation(confusion, posteriors, prior=resolved_prior, n_samples=n, joint=bool(joint))
