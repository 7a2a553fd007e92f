"""Which rows to send to reviewers: a stratified labelling plan for one metric.

Labels cost money, and a simple random sample spends most of them where the metric is not
decided: at 2 % prevalence, precision depends only on the predicted positives, which a random
sample of 1,000 rows meets about 30 times. :func:`labelling_plan` cuts the scores into strata
(equal-frequency score bins on each side of the threshold, so that a stratum holds one predicted
class), predicts each stratum's positive rate from its scores (as if they were calibrated — only
the allocation uses this; the posterior does not), and allocates the budget to minimise the
variance of the chosen metric: Neyman allocation, ``n_h ∝ |∂metric/∂θ_h| sqrt(θ_h (1 - θ_h))``
where ``θ_h`` is stratum h's positive rate. The plan's :meth:`LabellingPlan.evaluate` (or
``evaluate(..., strata=..., sample_weight=plan.weights)``) then gives the posterior of the
whole population from the labelled rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.html import HtmlRepr
from probeval._util.rng import seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_1d,
    as_probabilities,
    check_beta,
    check_positive_int,
    check_threshold,
    check_zero_division,
    describe,
    missing_mask,
)
from probeval.base.metrics import resolve_metric
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.evaluation import Evaluation, _stratified
from probeval.labels.stratified import TARGETS, centred_prior

__all__ = ["LabellingPlan", "labelling_plan"]

#: Step of the numerical derivative of the metric in a stratum's positive rate.
_STEP = 1e-6


@dataclass(frozen=True, eq=False)
class LabellingPlan(HtmlRepr):
    """The rows to label, their strata and design weights (see :func:`labelling_plan`).

    Attributes
    ----------
    metric : str
        The metric the allocation minimises the posterior variance of.
    threshold : float
        Scores above it are predicted positive.
    rows : ndarray of int
        Positions (into the ``y_score`` the plan was made from) of the rows to label, in random
        order: reviewers who label from the top keep, at every point, a random sample of each
        stratum.
    strata : ndarray of int
        The stratum of each row in ``rows``.
    weights : ndarray of float
        The design weight of each row in ``rows``: its stratum's size over its rows in the plan.
    stratum_sizes : dict of int to int
        Rows of each stratum in the population.
    allocation : dict of int to int
        Rows to label in each stratum.
    stratum_predictions : dict of int to int
        The predicted class (1 positive, 0 negative) of each stratum.
    score_ranges : dict of int to (float, float)
        The lowest and highest score in each stratum.
    expected_rates : dict of int to float
        Each stratum's mean score: its positive rate if the scores are calibrated.
    """

    metric: str
    threshold: float
    rows: np.ndarray
    strata: np.ndarray
    weights: np.ndarray
    stratum_sizes: dict[int, int]
    allocation: dict[int, int]
    stratum_predictions: dict[int, int]
    score_ranges: dict[int, tuple[float, float]]
    expected_rates: dict[int, float]

    @property
    def budget(self) -> int:
        """Rows to label (less than asked for when the relevant strata hold fewer rows)."""
        return int(self.rows.shape[0])

    def table(self) -> Table:
        """One line per stratum: predicted class, score range, size, expected rate, labels."""
        keys = list(self.stratum_sizes)
        return Table(
            {
                "stratum": keys,
                "predicted": [self.stratum_predictions[k] for k in keys],
                "score_low": [self.score_ranges[k][0] for k in keys],
                "score_high": [self.score_ranges[k][1] for k in keys],
                "size": [self.stratum_sizes[k] for k in keys],
                "expected_rate": [self.expected_rates[k] for k in keys],
                "labels": [self.allocation[k] for k in keys],
            },
            title=f"labelling plan for {self.metric} ({self.budget:,} rows)",
        )

    def evaluate(
        self,
        y_true: Any,
        metrics: Any = None,
        *,
        target: str = "realized",
        prior: Any = "scores",
        n_samples: int = 10_000,
        rng: Any = None,
        beta: float = 1.0,
        zero_division: Any = 0.0,
        pos_label: Any = None,
    ) -> Evaluation:
        """Posteriors for the whole population from the plan's labels.

        Parameters
        ----------
        y_true : array-like
            The labels of the plan's rows, in the order of :attr:`rows`; rows not labelled
            yet are missing (None, NaN or pandas NA) and left out — the labelled rows of a
            stratum are still a random sample of it when reviewers work through the plan in
            any order that does not depend on the labels.
        metrics : str or list of str, optional
            Confusion-matrix metrics; default: the plan's metric.
        target : {"realized", "population"}
            ``"realized"``: the metric on the population's rows (the labelled rows exactly, the
            rest predicted); ``"population"``: the rate the rows were drawn from.
        prior : "scores", float or str
            The prior of each stratum's positive rate. ``"scores"`` (default): a Beta prior
            whose mean is the stratum's mean score, worth half a row of evidence, or more when
            the stratum is rare-sided, so that the rarer outcome's shape is at least 0.2
            (:func:`probeval.labels.stratified.centred_prior`). A stratum with a handful of
            labels among thousands of rows (the low-score bins of rare positives) would
            otherwise get the uniform prior's positive rate of about 1/2, many times the truth;
            or, with a tiny shape, a rate that collapses to 0 when its few labels are all
            negative. Where the scores are not calibrated the stratum's own labels outweigh the
            prior (measured with rates ``s ** 1.4``: the posterior median's bias is 0.05
            posterior standard deviations for precision, 0.11 for recall). A number or name:
            that many pseudo-counts on every cell (1: a uniform prior on each rate).
        n_samples, rng, beta, zero_division :
            As in :func:`probeval.evaluate`.
        pos_label : optional
            The positive class when the labels are not 0/1 or booleans.

        Returns
        -------
        Evaluation
            Its :attr:`~Evaluation.confusion` is the population's estimated matrix.
        """
        if target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {describe(target)}")
        score_prior = isinstance(prior, str) and prior == "scores"
        labels = as_1d("y_true", y_true)
        if labels.shape[0] != self.rows.shape[0]:
            raise ValueError(
                f"y_true must hold the labels of the plan's {self.rows.shape[0]:,} rows, in "
                f"order, got {labels.shape[0]:,}"
            )
        known = ~missing_mask(labels)
        if not known.any():
            raise ValueError("y_true holds no label yet: every value is missing")
        truth = labels[known]
        if truth.dtype == object:
            truth = np.array(truth.tolist())
        classes = set(np.unique(truth).tolist())
        if pos_label is None:
            if not classes <= {0, 1}:
                raise ValueError(
                    f"y_true has the classes {sorted(classes, key=repr)!r}; pass pos_label=... "
                    "to say which one is positive"
                )
            pos_label = 1
        if len(classes - {pos_label}) > 1:
            raise ValueError(f"y_true must be binary, found the classes {sorted(classes)!r}")
        positive = truth == pos_label
        predicted = np.array([self.stratum_predictions[s] for s in self.strata[known].tolist()])
        return _stratified(
            ConfusionMatrix.from_predictions(positive, predicted == 1, labels=[False, True]),
            positive,
            predicted == 1,
            None,
            self.strata[known],
            self.stratum_sizes,
            sample_weight=None,
            threshold=self.threshold,
            metrics=self.metric if metrics is None else metrics,
            prior=None if score_prior else prior,
            n_samples=n_samples,
            rng=rng,
            beta=beta,
            zero_division=zero_division,
            audit=None,
            target=target,
            stratum_predictions=self.stratum_predictions,
            stratum_prior=self._score_prior() if score_prior else None,
        )

    def _score_prior(self) -> dict[int, np.ndarray]:
        """Pseudo-counts (tp, fp, tn, fn) of each stratum centred on its mean score."""
        keys = list(self.expected_rates)
        size = np.array([self.stratum_sizes[h] for h in keys], dtype=float)
        mean = np.array([self.expected_rates[h] for h in keys])
        # As in the allocation, a stratum's scores of exactly 0 (or 1) do not make its rate
        # certain: half a positive and half a negative more keep it off the edges.
        rate = (mean * size + 0.5) / (size + 1.0)
        positive = np.array([self.stratum_predictions[h] == 1 for h in keys])
        return dict(zip(keys, centred_prior(rate, positive), strict=True))

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: the rows, strata, weights and the per-stratum table."""
        return {
            "metric": self.metric,
            "threshold": self.threshold,
            "rows": self.rows.tolist(),
            "strata": self.strata.tolist(),
            "weights": self.weights.tolist(),
            "table": self.table().to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> LabellingPlan:
        """Rebuild a plan from :meth:`to_dict` output."""
        if not isinstance(data, dict) or "table" not in data:
            raise TypeError(f"from_dict needs a LabellingPlan.to_dict() dict, got {describe(data)}")
        table = data["table"]
        keys = [int(k) for k in table["stratum"]]

        def column(name: str) -> list[Any]:
            return list(table[name])

        return cls(
            metric=str(data["metric"]),
            threshold=float(data["threshold"]),
            rows=np.asarray(data["rows"], dtype=np.intp),
            strata=np.asarray(data["strata"], dtype=np.intp),
            weights=np.asarray(data["weights"], dtype=np.float64),
            stratum_sizes=dict(zip(keys, map(int, column("size")), strict=True)),
            allocation=dict(zip(keys, map(int, column("labels")), strict=True)),
            stratum_predictions=dict(zip(keys, map(int, column("predicted")), strict=True)),
            score_ranges={
                k: (float(lo), float(hi))
                for k, lo, hi in zip(keys, column("score_low"), column("score_high"), strict=True)
            },
            expected_rates=dict(zip(keys, map(float, column("expected_rate")), strict=True)),
        )

    def _html(self) -> str:
        return f"<h3>labelling plan</h3>{self.table().to_html()}"

    def __repr__(self) -> str:
        return repr(self.table())


def _side_strata(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-frequency bins of one side's scores (ties stay together)."""
    if scores.size == 0:
        return np.zeros(0, dtype=np.intp)
    edges = np.unique(np.quantile(scores, np.linspace(0, 1, n_bins + 1)[1:-1]))
    codes = np.searchsorted(edges, scores, side="right")
    _, dense = np.unique(codes, return_inverse=True)
    return np.asarray(dense, dtype=np.intp)


def _neyman(need: np.ndarray, sizes: np.ndarray, budget: int, floor: int) -> np.ndarray:
    """Whole labels per stratum: ``clip(λ need_h, floor, size_h)`` for the strata the metric
    depends on (``need`` > 0), with λ such that they add up to the budget (or to all their
    rows), then rounded by largest remainder."""
    relevant = need > 0
    sizes = sizes.astype(float)
    low = np.where(relevant, np.minimum(floor, sizes), 0.0)
    high = np.where(relevant, sizes, 0.0)
    total = min(float(budget), high.sum())

    def spent(scale: float) -> np.ndarray:
        return np.clip(scale * need, low, high)

    if low.sum() >= total:
        # Not even the floors fit: the neediest strata get theirs first.
        alloc = np.zeros(sizes.size, dtype=np.int64)
        left = int(total)
        for h in np.argsort(-need, kind="stable"):
            alloc[h] = min(int(low[h]), left)
            left -= int(alloc[h])
        return alloc
    lo, hi = 0.0, 1.0
    while spent(hi).sum() < total:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if spent(mid).sum() < total else (lo, mid)
    share = spent(hi)
    alloc = np.floor(share).astype(np.int64)
    left = round(total) - int(alloc.sum())
    for h in np.argsort(-(share - alloc), kind="stable"):
        if left <= 0:
            break
        if relevant[h] and alloc[h] < high[h]:
            alloc[h] += 1
            left -= 1
    return np.asarray(alloc, dtype=np.int64)


def labelling_plan(
    y_score: Any,
    budget: int,
    *,
    metric: str = "precision",
    threshold: float = 0.5,
    n_bins: int = 10,
    min_per_stratum: int = 2,
    beta: float = 1.0,
    zero_division: Any = 0.0,
    rng: Any = None,
) -> LabellingPlan:
    """Choose which rows to label so that one metric's posterior is as narrow as possible.

    Parameters
    ----------
    y_score : array-like of shape (n,)
        The production scores (probabilities of the positive class) of the rows that could be
        labelled: the population the evaluation is about.
    budget : int
        How many rows the reviewers can label.
    metric : str
        A binary confusion-matrix metric (precision, recall, f1, accuracy, ...).
    threshold : float
        Scores above it are predicted positive.
    n_bins : int
        Equal-frequency score bins on each side of the threshold (ties are never split).
    min_per_stratum : int
        Labels every stratum the metric depends on gets at least (so that no stratum's rate
        rests on the scores alone).
    beta, zero_division :
        As in :func:`probeval.evaluate`.
    rng : None, int, numpy Generator or SeedSequence
        Which rows within each stratum are chosen.

    Returns
    -------
    LabellingPlan
        ``rows`` to label, their ``strata`` and design ``weights``; ``evaluate(y_true)`` turns
        their labels into posteriors for the whole population.

    Notes
    -----
    The allocation predicts each stratum's positive rate from its mean score; scores that are
    not calibrated make the allocation less efficient, never the posterior biased, because the
    posterior uses only the labels (each stratum's labelled rows are a simple random sample of
    it). Strata the metric does not depend on (the predicted negatives, for precision) get no
    labels, so other metrics evaluated from the same plan rest on their prior there.

    Examples
    --------
    >>> import numpy as np
    >>> import probeval as pe
    >>> scores = np.random.default_rng(0).beta(0.3, 12, 50_000)
    >>> plan = pe.labelling_plan(scores, 400, metric="precision", threshold=0.2, rng=1)
    >>> plan.budget, sorted(set(plan.stratum_predictions[s] for s in plan.strata.tolist()))
    (400, [1])
    """
    scores = as_probabilities("y_score", y_score)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"y_score must be a non-empty 1-D array of scores, got {scores.shape}")
    budget = check_positive_int("budget", budget)
    bins = check_positive_int("n_bins", n_bins, maximum=10_000)
    floor = check_positive_int("min_per_stratum", min_per_stratum)
    threshold = check_threshold(threshold)
    spec = resolve_metric(metric, [False, True], binary=True)
    if spec.kernel != "binary":
        raise ValueError(
            f"metric must be a binary confusion-matrix metric (precision, recall, f1, ...), got "
            f"{metric!r}"
        )
    bz = (check_beta(beta), check_zero_division(zero_division))
    positive = scores > threshold
    strata = np.empty(scores.size, dtype=np.intp)
    negative_codes = _side_strata(scores[~positive], bins)
    n_negative = int(negative_codes.max()) + 1 if negative_codes.size else 0
    strata[~positive] = negative_codes
    strata[positive] = _side_strata(scores[positive], bins) + n_negative
    n_strata = int(strata.max()) + 1
    sizes = np.bincount(strata, minlength=n_strata)
    sums = np.bincount(strata, weights=scores, minlength=n_strata)
    # The calibrated rate of each stratum, kept off 0 and 1 so that no stratum looks certain.
    rate = (sums + 0.5) / (sizes + 1.0)
    predicted = np.arange(n_strata) >= n_negative
    need = _need(spec.name, rate, sizes, predicted, bz)
    alloc = _neyman(need, sizes, budget, floor)
    generator = np.random.default_rng(seed_from(rng))
    chosen = []
    for h in range(n_strata):
        if alloc[h]:
            members = np.flatnonzero(strata == h)
            chosen.append(np.sort(generator.choice(members, size=int(alloc[h]), replace=False)))
    if not chosen:
        raise ValueError(f"{spec.name} does not depend on any stratum of these scores")
    # In random order: reviewers who work from the top keep a random sample of every stratum.
    rows = generator.permutation(np.concatenate(chosen))
    row_strata = strata[rows]
    weights = sizes[row_strata] / alloc[row_strata]
    keys = range(n_strata)
    return LabellingPlan(
        metric=spec.name,
        threshold=threshold,
        rows=rows,
        strata=row_strata,
        weights=weights.astype(np.float64),
        stratum_sizes={h: int(sizes[h]) for h in keys},
        allocation={h: int(alloc[h]) for h in keys},
        stratum_predictions={h: int(predicted[h]) for h in keys},
        score_ranges={
            h: (float(scores[strata == h].min()), float(scores[strata == h].max())) for h in keys
        },
        expected_rates={h: float(sums[h] / sizes[h]) for h in keys},
    )


def _need(
    metric: str,
    rate: np.ndarray,
    sizes: np.ndarray,
    predicted: np.ndarray,
    bz: tuple[float, float],
) -> np.ndarray:
    """Neyman's |∂metric/∂θ_h| sqrt(θ_h (1 - θ_h)) per stratum, at the calibrated rates."""
    share = sizes / sizes.sum()
    pos, neg = share * rate, share * (1 - rate)
    base = np.array(
        [
            pos[predicted].sum(),  # tp
            neg[predicted].sum(),  # fp
            neg[~predicted].sum(),  # tn
            pos[~predicted].sum(),  # fn
        ]
    )
    # Moving θ_h by ε moves share_h ε from fp to tp (predicted positive) or tn to fn.
    step = np.zeros((2 * rate.size, 4))
    up, down = step[: rate.size], step[rate.size :]
    cols = np.where(predicted[:, None], [0, 1], [3, 2])
    for rows, sign in ((up, 1.0), (down, -1.0)):
        rows[np.arange(rate.size), cols[:, 0]] = sign * _STEP * share
        rows[np.arange(rate.size), cols[:, 1]] = -sign * _STEP * share
    cells = np.clip(base + step, 0.0, None)
    values = _core.binary_metric_rows(np.ascontiguousarray(cells), [metric], *bz)[0]
    gradient = (values[: rate.size] - values[rate.size :]) / (2 * _STEP)
    return np.asarray(np.abs(gradient) * np.sqrt(rate * (1 - rate)), dtype=np.float64)
