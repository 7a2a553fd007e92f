"""Planning an evaluation: how precise can it be, and how many labelled rows does it need.

Both questions are about the width of the HDI a future experiment will report, which is random:
it depends on the data the experiment will see. The *design* says what that data may look like:

- a number ``expected``: the metric's true value (a proportion metric; ``n`` then counts the
  metric's trials — rows for accuracy, actual positives for recall, predicted positives for
  precision);
- a :class:`~probeval.Posterior` of a proportion metric (a pilot's, a reference's): the true
  value is drawn from it — the classical *assurance* design prior, which carries the pilot's
  uncertainty into the plan;
- a :class:`~probeval.ConfusionMatrix` or :class:`~probeval.Evaluation` (a pilot or the
  reference): the cell probabilities are drawn from its Dirichlet posterior, and ``n`` counts
  rows, for any metric;
- none (in :func:`assurance_precision` only): the true value is uniform over the ROPE.

For proportion metrics whose trials are the rows (or with a number or Beta design) the
probability that the HDI is at most ``width`` wide is computed exactly: the HDI width of
``Beta(k + a0, m - k + b0)`` rises with ``k`` up to the middle and falls after it, so the
successes ``k`` that give a narrow enough HDI are two tails, found by bisection, and their
probability is a binomial tail (an incomplete beta function) averaged over the design's
quantiles. Every other metric is simulated: cell probabilities from the design, counts from the
multinomial, and each simulated posterior's HDI from the batched segment kernel — the same
posteriors :func:`~probeval.evaluate` gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.html import HtmlRepr
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_probabilities,
    check_beta,
    check_ci,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_rope,
    check_zero_division,
    describe,
)
from probeval.base.metrics import MetricSpec, is_score_metric
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior, resolve_prior
from probeval.labelfree.estimator import LabelFreeEstimator
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.evaluation import Evaluation
from probeval.labels.segments import SegmentCounts

__all__ = ["SamplePlan", "assurance_precision", "plan_sample_size"]

#: Quantile nodes of a design distribution of the true value (exact path).
DESIGN_NODES = 256
#: Simulated experiments per sample size (simulated path), and posterior draws per experiment.
DEFAULT_SIMULATIONS = 1_000
#: Simulated experiments beyond this cost minutes and change the answer in the third digit.
MAX_SIMULATIONS = 100_000
SIMULATION_DRAWS = 4_000
#: Largest sample size searched by default.
DEFAULT_MAX_N = 10_000_000

#: What ``n`` counts for a proportion metric given a number or a Beta design.
_TRIALS = {
    "accuracy": "rows",
    "precision": "predicted positives",
    "recall": "actual positives",
    "specificity": "actual negatives",
    "npv": "predicted negatives",
    "fpr": "actual negatives",
    "fnr": "actual positives",
    "fdr": "predicted positives",
    "false_omission_rate": "predicted negatives",
    "prevalence": "rows",
    "selection_rate": "rows",
}


# ---------------------------------------------------------------------------- designs


@dataclass(frozen=True)
class _BetaLaw:
    """A proportion metric: n trials, posterior Beta(k + a0, m - k + b0), true value from
    ``nodes`` (equally weighted quantiles of the design)."""

    a0: float
    b0: float
    nodes: np.ndarray
    unit: str


@dataclass(frozen=True)
class _CellLaw:
    """Any metric: cell probabilities drawn from a Dirichlet(``alpha``), optionally kept only
    when the metric lies in ``rope``; n rows."""

    spec: MetricSpec
    confusion: ConfusionMatrix
    alpha: np.ndarray
    prior: Prior


def _spec_of(metric: str, confusion: ConfusionMatrix) -> MetricSpec:
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a metric name, got {describe(metric)}")
    if is_score_metric(metric):
        raise ValueError(
            f"{metric} is a ranking metric; planning covers the confusion-matrix metrics "
            "(accuracy, precision, recall, F1, MCC, ...)"
        )
    return confusion._spec(metric.strip())


def _binary_template() -> ConfusionMatrix:
    return ConfusionMatrix.from_counts(tp=0, fp=0, tn=0, fn=0)


def _beta_nodes(a: float, b: float, lo: float, hi: float) -> np.ndarray:
    """Quantile midpoints of Beta(a, b) truncated to [lo, hi]."""
    ends = _core.beta_cdf(np.array([lo, hi]), a, b)
    if not ends[1] > ends[0]:
        raise ValueError(
            f"the design puts no probability in the ROPE [{lo:g}, {hi:g}]: the hypothesis "
            "contradicts what is expected"
        )
    q = ends[0] + (ends[1] - ends[0]) * (np.arange(DESIGN_NODES) + 0.5) / DESIGN_NODES
    return np.clip(_core.beta_ppf(np.ascontiguousarray(q), a, b), 0.0, 1.0)


def _as_design(
    metric: str,
    expected: Any,
    rope: tuple[float, float] | None,
    prior: Any,
) -> _BetaLaw | _CellLaw:
    """The design: what the experiment's data may look like."""
    if isinstance(expected, Evaluation):
        expected = expected.confusion
    if isinstance(expected, ConfusionMatrix):
        spec = _spec_of(metric, expected)
        k = expected.n_classes
        resolved = resolve_prior(prior, k)
        law = spec.exact_law(k)
        zeros = np.zeros((k, k))
        if law is not None and law.kind == "proportion" and bool((law.success | law.failure).all()):
            # Trials are the rows: the Beta marginal of the design's Dirichlet is exact.
            a, b = resolved.beta(expected.counts, law.success, law.failure, joint=True)
            a0, b0 = resolved.beta(zeros, law.success, law.failure, joint=law.marginal)
            lo, hi = (0.0, 1.0) if rope is None else rope
            return _BetaLaw(a0, b0, _beta_nodes(a, b, max(lo, 0.0), min(hi, 1.0)), "rows")
        alpha = resolved.dirichlet(expected.counts)
        return _CellLaw(spec, expected, alpha, resolved)
    template = _binary_template()
    spec = _spec_of(metric, template)
    law = spec.exact_law(2)
    if law is None or law.kind != "proportion":
        raise ValueError(
            f"{metric} is not a proportion: give expected= a ConfusionMatrix (a pilot's or the "
            "reference's counts), from which whole confusion matrices are simulated"
        )
    resolved = resolve_prior(prior, 2)
    a0, b0 = resolved.beta(np.zeros((2, 2)), law.success, law.failure, joint=law.marginal)
    unit = _TRIALS.get(spec.name, "trials")
    lo, hi = (0.0, 1.0) if rope is None else (max(rope[0], 0.0), min(rope[1], 1.0))
    if expected is None:
        if rope is None:
            raise TypeError("give expected=... (the value you expect, or a pilot)")
        if not hi > lo:
            raise ValueError(f"the ROPE [{rope[0]:g}, {rope[1]:g}] leaves no value in [0, 1]")
        nodes = lo + (hi - lo) * (np.arange(DESIGN_NODES) + 0.5) / DESIGN_NODES
        return _BetaLaw(a0, b0, nodes, unit)
    if isinstance(expected, Posterior):
        if expected.metric != spec.name:
            raise ValueError(
                f"expected is a posterior of {expected.metric}, but the plan is for {spec.name}"
            )
        params = expected.beta_params
        if params is not None and str(expected.exact_law).startswith("Beta("):
            return _BetaLaw(a0, b0, _beta_nodes(*params, lo, hi), unit)
        samples = np.sort(expected.samples)
        samples = samples[(samples >= lo) & (samples <= hi)]
        if samples.size == 0:
            raise ValueError("the expected posterior has no draw in the ROPE")
        q = (np.arange(DESIGN_NODES) + 0.5) / DESIGN_NODES
        return _BetaLaw(a0, b0, np.quantile(samples, q), unit)
    if isinstance(expected, (bool, np.bool_)) or not isinstance(expected, (int, float, np.number)):
        raise TypeError(
            "expected must be a number, a Posterior, a ConfusionMatrix or an Evaluation, got "
            f"{describe(expected)}"
        )
    value = float(expected)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"expected must be a value of {spec.name} in [0, 1], got {value!r}")
    return _BetaLaw(a0, b0, np.array([value]), unit)


# ---------------------------------------------------------------------------- exact path


def _beta_width(k: int, m: int, law: _BetaLaw, ci: float) -> float:
    low, high = _core.beta_hdi(k + law.a0, m - k + law.b0, ci)
    return high - low


def _narrow_tails(m: int, width: float, law: _BetaLaw, ci: float) -> tuple[int, int]:
    """(k1, k2): the HDI is at most ``width`` wide for k <= k1 and k >= k2 (k1 = -1, k2 =
    m + 1 when no such k); k1 >= k2 - 1 means every k."""
    middle = min(max(round((m + law.b0 - law.a0) / 2), 0), m)
    if _beta_width(middle, m, law, ci) <= width:
        return m, 0
    lo, hi = -1, middle  # width(lo) <= w (or lo = -1), width(hi) > w
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _beta_width(mid, m, law, ci) <= width:
            lo = mid
        else:
            hi = mid
    k1 = lo
    lo, hi = middle, m + 1  # width(lo) > w, width(hi) <= w (or hi = m + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _beta_width(mid, m, law, ci) <= width:
            hi = mid
        else:
            lo = mid
    return k1, hi


def _binomial_cdf(k: int, m: int, theta: np.ndarray) -> np.ndarray:
    """P(K <= k) for K ~ Binomial(m, theta), elementwise in theta."""
    if k < 0:
        return np.zeros_like(theta)
    if k >= m:
        return np.ones_like(theta)
    return _core.beta_cdf(np.ascontiguousarray(1.0 - theta), float(m - k), float(k + 1))


def _exact_probability(m: int, width: float, law: _BetaLaw, ci: float) -> float:
    """P(HDI width <= width) after m trials, averaged over the design's nodes."""
    k1, k2 = _narrow_tails(m, width, law, ci)
    if k1 >= k2 - 1:
        return 1.0
    theta = law.nodes
    below = _binomial_cdf(k1, m, theta)
    above = 1.0 - _binomial_cdf(k2 - 1, m, theta)
    return float(np.mean(np.clip(below + above, 0.0, 1.0)))


def _lowest_probability(m1: int, m2: int, width: float, law: _BetaLaw, ci: float) -> float:
    """A lower bound of :func:`_exact_probability` at every size from ``m1`` to ``m2`` (the
    exact probability when they are equal; needs ``m2 <= 2 * m1``).

    At m1 the HDI is narrow enough for k <= k1 successes and for f <= f2 failures. A posterior
    whose mean is at most 1/2 narrows as failures are added (its variance a b / ((a + b)^2
    (a + b + 1)) falls with b when b >= a), so those counts stay narrow enough at every larger
    size; below m2 <= 2 m1 each count k <= m / 2 is on the successes' side and each larger one on
    the failures' (both sides are checked at m2). A count's chance of staying at or below a
    bound falls as trials are added, so P(m) >= P(K(m2) <= k1 or F(m2) <= f2)."""
    k1, k2 = _narrow_tails(m1, width, law, ci)
    if m1 == m2:
        if k1 >= k2 - 1:
            return 1.0
        low, high = k1, k2
    else:
        f2 = m1 - k2
        low, high = k1, m2 - f2
        narrow = all(_beta_width(k, m2, law, ci) <= width for k in (low, high) if 0 <= k <= m2)
        if not narrow:
            return 0.0
        if low >= high - 1:
            return 1.0
    below = _binomial_cdf(low, m2, law.nodes)
    above = 1.0 - _binomial_cdf(high - 1, m2, law.nodes)
    return float(np.mean(np.clip(below + above, 0.0, 1.0)))


def _settled_n(
    n: int, n_max: int, width: float, law: _BetaLaw, assurance: float, ci: float
) -> int | None:
    """The smallest size from which every size up to ``n_max`` reaches ``assurance``, given
    ``n``, a size that reaches it where the one before misses (where a bisection crossed).

    An exact probability saw-tooths with the size (the HDI widths of k successes step as the
    size grows): for accuracy 0.85 and width 0.03 it is 0.8014 at 2,248 rows, 0.7989 and 0.7964
    at 2,249 and 2,250. Sizes from ``n`` on are certified in blocks by
    :func:`_lowest_probability`: a block that cannot be is halved, down to single sizes, and a
    single size that misses moves the answer past it. Blocks double while they are certified,
    so sizes far beyond the saw-tooth's reach cost a few blocks."""
    start = m1 = n
    span = 1
    while m1 <= n_max:
        m2 = min(n_max, m1 + min(span, m1) - 1)
        if _lowest_probability(m1, m2, width, law, ci) >= assurance:
            m1, span = m2 + 1, 2 * span
        elif m2 > m1:
            span = max(1, (m2 - m1 + 1) // 2)
        else:
            start = m1 = m1 + 1
            span = 1
    return start if start <= n_max else None


def _exact_width_quantile(m: int, assurance: float, law: _BetaLaw, ci: float) -> float:
    """The smallest width that at least ``assurance`` of the experiments reach at m trials."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _exact_probability(m, mid, law, ci) >= assurance:
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------- simulated path


def _metric_of_cells(law: _CellLaw, probabilities: np.ndarray) -> np.ndarray:
    """The metric's value for each row of cell probabilities (s, K*K)."""
    labels = list(law.confusion.labels)
    k = len(labels)
    values = np.empty(probabilities.shape[0])
    for i, row in enumerate(probabilities):
        cm = ConfusionMatrix._from_matrix(row.reshape(k, k), labels, weighted=True)
        values[i] = cm._observed([law.spec], 1.0, math.nan)[0]
    return values


def _design_cells(
    law: _CellLaw, rope: tuple[float, float] | None, n_sims: int, seed: int
) -> np.ndarray:
    """Cell probabilities of ``n_sims`` simulated experiments: the design's Dirichlet, kept only
    where the metric lies in the ROPE (the hypothesis holds)."""
    rng = np.random.default_rng(derive(seed, 1))
    flat = law.alpha.reshape(-1)
    keep = flat > 0
    kept: list[np.ndarray] = []
    drawn = 0
    while sum(len(x) for x in kept) < n_sims:
        batch = np.zeros((max(n_sims, 256), flat.size))
        batch[:, keep] = rng.dirichlet(flat[keep], size=batch.shape[0])
        drawn += batch.shape[0]
        if rope is not None:
            values = _metric_of_cells(law, batch)
            batch = batch[(values >= rope[0]) & (values <= rope[1])]
        kept.append(batch)
        if drawn >= 100 * n_sims and sum(len(x) for x in kept) < n_sims:
            raise ValueError(
                f"the design puts under 1% of its probability in the ROPE [{rope[0]:g}, "  # type: ignore[index]
                f"{rope[1]:g}]: the hypothesis contradicts what is expected"  # type: ignore[index]
            )
    return np.concatenate(kept)[:n_sims]


def _simulated_widths(
    law: _CellLaw,
    cells: np.ndarray,
    n: int,
    ci: float,
    seed: int,
    beta: float,
    zero_division: float,
) -> np.ndarray:
    """HDI widths of the posteriors of experiments of n rows with the given cell probabilities
    (the same multinomial stream for every n, so that the curve over n is smooth)."""
    rng = np.random.default_rng(derive(seed, 2))
    counts = np.stack([rng.multinomial(n, p) for p in cells]).astype(np.float64)
    k = law.confusion.n_classes
    evaluation = SegmentCounts(
        list(range(len(cells))), list(law.confusion.labels), counts.reshape(-1, k, k)
    ).evaluate(
        metrics=[law.spec.name],
        prior=law.prior,
        n_samples=SIMULATION_DRAWS,
        rng=derive(seed, 3),
        ci=ci,
        beta=beta,
        zero_division=zero_division,
        summaries_only=True,
    )
    summary = evaluation[law.spec.name]
    return np.asarray(summary["hdi_high"] - summary["hdi_low"], dtype=np.float64)


# ---------------------------------------------------------------------------- public API


def assurance_precision(
    metric: str,
    n: int,
    *,
    rope: Any,
    expected: Any = None,
    assurance: float = 0.8,
    ci: float = 0.95,
    prior: Any = None,
    n_sims: int = DEFAULT_SIMULATIONS,
    beta: float = 1.0,
    zero_division: Any = 0.0,
    rng: Any = None,
) -> float:
    """The default required precision of an experiment: the HDI width that ``assurance`` of
    the planned experiments reach when the hypothesis holds.

    Assume the hypothesis holds: draw the metric's true value from the ROPE (the design
    restricted to it), simulate an experiment of ``n`` observations, compute its posterior and
    the HDI width. The precision is the ``assurance`` quantile of those widths, so that an
    experiment of the planned size reaches a final answer with probability ``assurance``.

    Parameters
    ----------
    metric : str
        A confusion-matrix metric.
    n : int
        The planned observations: rows with a confusion-matrix design, else the metric's
        trials (see :func:`plan_sample_size`).
    rope : (lo, hi)
        The hypothesis' region of practical equivalence.
    expected : None, number, Posterior, ConfusionMatrix or Evaluation
        The design (module docstring); None draws the true value uniformly from the ROPE.
    assurance : float
        Share of planned experiments that should reach the precision.
    ci : float
        Probability of the HDI.
    prior : optional
        The experiment's prior, as in :func:`~probeval.evaluate`.
    n_sims : int
        Simulated experiments (metrics without a closed form only).
    beta, zero_division :
        As in :func:`~probeval.evaluate`.
    rng : None, int or Generator
        Randomness of the simulated path.

    Returns
    -------
    float
        The required HDI width.

    Examples
    --------
    >>> import probeval as pe
    >>> round(pe.assurance_precision("accuracy", 1000, rope=(0.85, 1.0)), 4)
    0.0403
    """
    n = check_positive_int("n", n)
    interval = check_rope(rope)
    assurance = check_open_unit("assurance", assurance)
    ci = check_ci(ci)
    if isinstance(expected, LabelFreeEstimator):
        # Without labels the width hardly depends on where in the ROPE the metric lies (it is
        # the calibration's and the chunk's uncertainty): the assurance quantile of the widths
        # of chunks of n rows like the reference's.
        sims = min(check_positive_int("n_sims", n_sims, maximum=MAX_SIMULATIONS), 200)
        chunks = _LabelFreeWidths(expected, metric, None, "population", ci, seed_from(rng))
        return float(np.quantile(chunks(n, sims), assurance, method="inverted_cdf"))
    law = _as_design(metric, expected, interval, prior)
    if isinstance(law, _BetaLaw):
        return _exact_width_quantile(n, assurance, law, ci)
    seed = seed_from(rng)
    sims = check_positive_int("n_sims", n_sims, maximum=MAX_SIMULATIONS)
    cells = _design_cells(law, interval, sims, seed)
    widths = _simulated_widths(
        law, cells, n, ci, seed, check_beta(beta), check_zero_division(zero_division)
    )
    return float(np.quantile(widths, assurance, method="inverted_cdf"))


@dataclass(frozen=True)
class SamplePlan(HtmlRepr):
    """The result of :func:`plan_sample_size`."""

    metric: str
    width: float
    assurance: float
    ci: float
    #: The number of observations at which P(HDI width <= width) reaches the assurance, or
    #: None when it is not reached within ``n_max``. Exact plans: the smallest size from which
    #: every larger one up to ``n_max`` reaches it too (the exact probability saw-tooths with
    #: the size: a size can reach it by the luck of the steps while the next ones miss);
    #: simulated plans: where the probability crosses it.
    n: int | None
    #: What ``n`` counts: "rows", or a proportion metric's trials ("actual positives", ...).
    unit: str
    #: "exact" (proportion metrics) or "simulated".
    method: str
    #: Sample sizes and the probability that the HDI is at most ``width`` wide at each.
    curve_n: np.ndarray
    curve_probability: np.ndarray
    #: Without labels: the HDI width a chunk of ever more rows tends to (the calibration's
    #: uncertainty, which more unlabelled rows cannot remove); None with labels.
    floor: float | None = None

    def curve(self) -> Table:
        """The probability of reaching the width at each evaluated sample size."""
        return Table(
            {"n": self.curve_n.tolist(), "probability": self.curve_probability.tolist()},
            title=f"P({self.ci:.0%} HDI width of {self.metric} <= {self.width:g})",
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "width": self.width,
            "assurance": self.assurance,
            "ci": self.ci,
            "n": self.n,
            "unit": self.unit,
            "method": self.method,
            "curve_n": self.curve_n.tolist(),
            "curve_probability": self.curve_probability.tolist(),
            "floor": self.floor,
        }

    def __repr__(self) -> str:
        if self.n is None and self.floor is not None and self.width <= self.floor:
            return (
                f"SamplePlan({self.metric}: never — without labels the {self.ci:.0%} HDI does not "
                f"get narrower than {self.floor:.4g}, the uncertainty of the reference's "
                f"calibration and of its drift; label rows, or fit on a larger reference)"
            )
        if self.n is None:
            return (
                f"SamplePlan({self.metric}: a {self.ci:.0%} HDI of width {self.width:g} is not "
                f"reached with probability {self.assurance:g} within {int(self.curve_n.max()):,} "
                f"{self.unit})"
            )
        return (
            f"SamplePlan({self.metric}: n = {self.n:,} {self.unit} give a {self.ci:.0%} HDI of "
            f"width <= {self.width:g} with probability {self.assurance:g}; {self.method})"
        )


def plan_sample_size(
    metric: str,
    width: float,
    *,
    expected: Any,
    assurance: float = 0.8,
    ci: float = 0.95,
    prior: Any = None,
    n_max: int = DEFAULT_MAX_N,
    n_sims: int = DEFAULT_SIMULATIONS,
    beta: float = 1.0,
    zero_division: Any = 0.0,
    rng: Any = None,
    scores: Any = None,
    target: str = "population",
) -> SamplePlan:
    """How many observations give an HDI at most ``width`` wide with probability
    ``assurance``: labelled rows, or unlabelled rows through a fitted label-free estimator.

    Parameters
    ----------
    metric : str
        A confusion-matrix metric.
    width : float
        The HDI width wanted.
    expected : number, Posterior, ConfusionMatrix, Evaluation or LabelFreeEstimator
        The design (module docstring): the value you expect (``n`` counts the metric's trials),
        a pilot's posterior of the metric, or a pilot's confusion matrix (``n`` counts rows).
        A fitted :class:`~probeval.LabelFreeEstimator`: ``n`` counts unlabelled rows per
        chunk, simulated by drawing scores like the reference's (or ``scores``) and estimating;
        the answer may be "never" (``n`` None with ``floor`` >= ``width``): the calibration
        learnt from the reference is uncertain, and no number of unlabelled rows removes that.
    assurance : float
        The probability of reaching the width.
    ci : float
        Probability of the HDI.
    prior : optional
        The prior the evaluation will use, as in :func:`~probeval.evaluate`.
    n_max : int
        Largest sample size considered.
    n_sims : int
        Simulated experiments per sample size (metrics without a closed form).
    beta, zero_division :
        As in :func:`~probeval.evaluate`.
    rng : None, int or Generator
        Randomness of the simulated path.
    scores : array-like, optional
        Without labels: production scores to draw the simulated chunks from (default: the
        reference's scores, as the estimator keeps them).
    target : {"population", "realized"}
        Without labels: the estimate's target, as in :meth:`LabelFreeEstimator.estimate`.

    Returns
    -------
    SamplePlan
        ``.n`` (None when ``n_max`` is not enough), ``.unit``, ``.method`` and the curve of
        the probability against ``n`` (:meth:`SamplePlan.curve`).

    Examples
    --------
    >>> import probeval as pe
    >>> pe.plan_sample_size("accuracy", 0.05, expected=0.9).n
    605
    """
    width = check_positive("width", width)
    assurance = check_open_unit("assurance", assurance)
    ci = check_ci(ci)
    n_max = check_positive_int("n_max", n_max)
    if isinstance(expected, LabelFreeEstimator):
        return _plan_label_free(
            metric,
            width,
            expected,
            assurance=assurance,
            ci=ci,
            n_max=n_max,
            scores=scores,
            target=target,
            n_sims=check_positive_int("n_sims", n_sims, maximum=MAX_SIMULATIONS),
            rng=rng,
        )
    if scores is not None:
        raise TypeError("scores= goes with expected= a fitted LabelFreeEstimator")
    law = _as_design(metric, expected, None, prior)
    name = law.spec.name if isinstance(law, _CellLaw) else _spec_of(metric, _binary_template()).name
    if isinstance(law, _BetaLaw):
        method, unit = "exact", law.unit

        def probability(m: int) -> float:
            return _exact_probability(m, width, law, ci)
    else:
        method, unit = "simulated", "rows"
        seed = seed_from(rng)
        cells = _design_cells(
            law, None, check_positive_int("n_sims", n_sims, maximum=MAX_SIMULATIONS), seed
        )
        bz = (check_beta(beta), check_zero_division(zero_division))

        def probability(m: int) -> float:
            widths = _simulated_widths(law, cells, m, ci, seed, *bz)
            return float(np.mean(widths <= width))

    seen: dict[int, float] = {}

    def at(m: int) -> float:
        if m not in seen:
            seen[m] = probability(m)
        return seen[m]

    n = _smallest_n(at, assurance, n_max, start=1, resolution=lambda low: 1)
    if n is not None and isinstance(law, _BetaLaw):
        n = _settled_n(n, n_max, width, law, assurance, ci)
        if n is not None:
            at(n)
    top = n_max if n is None else max(4 * n, 16)
    for m in np.unique(np.geomspace(1, top, 24).round().astype(int)):
        at(int(m))
    sizes = np.array(sorted(seen))
    return SamplePlan(
        metric=name,
        width=width,
        assurance=assurance,
        ci=ci,
        n=n,
        unit=unit,
        method=method,
        curve_n=sizes,
        curve_probability=np.array([seen[int(m)] for m in sizes]),
    )


#: Rows of the one big chunk whose HDI width stands for the label-free floor.
_FLOOR_ROWS = 1_000_000
#: Rows simulated per sample size at most (chunks of n rows: max(20, this // n) of them).
_LABEL_FREE_ROWS = 200_000
#: Simulated chunks per sample size at most: the 80th percentile of 200 widths is within a few
#: percent of its limit, and each chunk costs a label-free estimate.
_LABEL_FREE_CHUNKS = 200
_LABEL_FREE_DRAWS = 2_000


def _smallest_n(
    at: Callable[[int], float],
    assurance: float,
    n_max: int,
    *,
    start: int,
    resolution: Callable[[int], int],
) -> int | None:
    """The smallest n with ``at(n) >= assurance`` (None if not within ``n_max``): double from
    ``start`` until it is reached, then bisect between the last two sizes until they are at most
    ``resolution(low)`` apart."""
    low, high = 0, start
    while at(high) < assurance:
        if high >= n_max:
            return None
        low, high = high, min(2 * high, n_max)
    while high - low > resolution(low):
        mid = (low + high) // 2
        if at(mid) >= assurance:
            high = mid
        else:
            low = mid
    return high


def _plan_label_free(
    metric: str,
    width: float,
    estimator: LabelFreeEstimator,
    *,
    assurance: float,
    ci: float,
    n_max: int,
    scores: Any,
    target: str,
    n_sims: int,
    rng: Any,
) -> SamplePlan:
    """plan_sample_size without labels: chunks of n scores through the fitted estimator."""
    widths = _LabelFreeWidths(estimator, metric, scores, target, ci, seed_from(rng))

    floor = float(np.median(widths(min(_FLOOR_ROWS, max(n_max, 1)), 1)))
    seen: dict[int, float] = {}

    def at(m: int) -> float:
        if m not in seen:
            sims = int(min(n_sims, _LABEL_FREE_CHUNKS, max(20, _LABEL_FREE_ROWS // m)))
            seen[m] = float(np.mean(widths(m, sims) <= width))
        return seen[m]

    n: int | None = None
    if width > floor:
        # To 2% of n: each size costs a simulation of up to 200 chunks.
        n = _smallest_n(at, assurance, n_max, start=16, resolution=lambda low: max(1, low // 50))
    top = min(n_max, _FLOOR_ROWS) if n is None else max(4 * n, 64)
    for m in np.unique(np.geomspace(16, top, 12).round().astype(int)):
        at(int(m))
    sizes = np.array(sorted(seen))
    return SamplePlan(
        metric=metric,
        width=width,
        assurance=assurance,
        ci=ci,
        n=n,
        unit="unlabelled rows per chunk",
        method="label-free (simulated)",
        curve_n=sizes,
        curve_probability=np.array([seen[int(m)] for m in sizes]),
        floor=floor,
    )


class _LabelFreeWidths:
    """HDI widths of a fitted estimator's metric on simulated chunks of m rows, their scores
    drawn from ``scores`` or the reference's."""

    def __init__(
        self,
        estimator: LabelFreeEstimator,
        metric: str,
        scores: Any,
        target: str,
        ci: float,
        seed: int,
    ) -> None:
        if not estimator.is_fitted:
            raise ValueError("expected must be a fitted LabelFreeEstimator: call fit(...) first")
        if metric not in estimator.metrics:
            raise ValueError(
                f"metric must be one of the estimator's {estimator.metrics}, got {metric!r}"
            )
        self.weights: np.ndarray | None = None
        if scores is None:
            self.pool, self.weights = estimator.reference_score_pool()
        else:
            self.pool = as_probabilities("scores", scores)
        self.estimator, self.metric, self.target, self.ci = estimator, metric, target, ci
        self.seed = seed
        self.generator = np.random.default_rng(seed)

    def __call__(self, m: int, sims: int) -> np.ndarray:
        drawn = self.generator.choice(self.pool, size=m * sims, p=self.weights)
        result = self.estimator.estimate(
            drawn,
            chunk_size=m,
            target=self.target,
            n_samples=_LABEL_FREE_DRAWS,
            rng=self.seed,
            ci=self.ci,
        )
        table = result.summary(self.ci)
        mask = np.asarray(table["metric"]) == self.metric
        high = np.asarray(table["hdi_high"], dtype=np.float64)[mask]
        low = np.asarray(table["hdi_low"], dtype=np.float64)[mask]
        return np.asarray(high - low, dtype=np.float64)
