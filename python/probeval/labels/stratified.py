"""Posteriors from a stratified sample: labelled rows drawn at different rates from the strata of
a population (score bins, segments), as :func:`probeval.labelling_plan` chooses them.

Pooling such a sample as if it were a simple random one biases every metric towards the strata
sampled most; weighting its counts by the design weights fixes the point estimate but makes the
posterior as narrow as if every row of the population had been labelled. The model here keeps
the two apart. Within stratum h the labelled rows are a simple random sample, so the shares of
its confusion cells get their own posterior, ``p_h ~ Dirichlet(counts_h + c)`` over the cells the
stratum can hold (both predicted classes, or one when every labelled row of the stratum has the
same prediction — a score bin on one side of the threshold); the strata's sizes ``N_h`` are
known. The population's cell shares are then ``sum_h (N_h / N) p_h`` (``target="population"``),
and the rows actually in the population (``target="realized"``) add to the labelled counts of
each stratum a multinomial draw of its ``N_h - n_h`` unlabelled rows. Binary data only.
"""

from __future__ import annotations

import numpy as np

from probeval import _core
from probeval._util.validation import describe
from probeval.base.metrics import MetricSpec
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior

__all__ = ["PRIOR_ROWS", "RARE_SHAPE", "TARGETS", "centred_prior", "stratified_posteriors"]

TARGETS = ("population", "realized")
#: Rows' worth of evidence in the default prior of a stratum's positive rate (centred on a
#: guess of it). With many strata and few labels each, a uniform prior per stratum adds up: 12
#: labels per stratum at rates near 0.9 pull the population's precision down by 0.03, more than
#: its posterior standard deviation.
PRIOR_ROWS = 0.5
#: The rarer outcome's Beta shape in that prior, at least: a stratum of rate 1e-4 whose few
#: labelled rows are all negative then keeps a rate of order 1e-4 instead of collapsing to 0
#: (shape 0.5 x 1e-4), which made recall's posterior too sure (89 % coverage in simulation).
RARE_SHAPE = 0.2
#: Cells in the kernels' order; a stratum predicted positive holds (tp, fp), negative (tn, fn).
_POSITIVE_CELLS = np.array([True, True, False, False])


def centred_prior(rate: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Pseudo-counts (tp, fp, tn, fn) per stratum: a Beta prior on each stratum's positive rate
    with mean ``rate`` (kept inside (0, 1) by the caller), worth ``PRIOR_ROWS`` rows or more so
    that the rarer outcome's shape is at least ``RARE_SHAPE``, on the cells of the stratum's
    predicted class (``positive``: True for predicted positive)."""
    rare = np.minimum(rate, 1.0 - rate)
    rows = np.maximum(PRIOR_ROWS, RARE_SHAPE / rare)
    yes, no = rows * rate, rows * (1.0 - rate)
    zero = np.zeros_like(rate)
    return np.where(
        positive[:, None],
        np.column_stack([yes, no, zero, zero]),
        np.column_stack([zero, zero, no, yes]),
    )


def _prior_per_cell(prior: Prior) -> float:
    if isinstance(prior.base, np.ndarray) or prior.data is not None:
        raise ValueError(
            "a stratified sample takes a number or a named prior (pseudo-counts per cell of each "
            f"stratum), got {prior!r}"
        )
    return float(prior.pseudo_counts(2)[0, 0])


def stratified_posteriors(
    truth: np.ndarray,
    predicted: np.ndarray,
    strata: np.ndarray,
    sizes: np.ndarray,
    specs: list[MetricSpec],
    *,
    prior: Prior | np.ndarray,
    n_samples: int,
    seed: int,
    target: str = "population",
    stratum_predictions: np.ndarray | None = None,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> tuple[dict[str, Posterior], np.ndarray]:
    """Posteriors of binary metrics from a stratified sample (see the module docstring), and
    the population's estimated cells (tp, fp, tn, fn): each stratum's labelled shares times its
    size, which give the metrics' observed values.

    ``truth`` and ``predicted`` are booleans (positive or not) per labelled row, ``strata`` the
    stratum code (0 .. H-1) of each row and ``sizes`` the H strata's sizes in the population.
    ``stratum_predictions`` (optional, H values of 1, 0 or -1 for mixed) says which predicted
    class a stratum holds when none of its rows is labelled yet. ``prior`` is a number-valued
    :class:`Prior` (the same pseudo-count on every cell a stratum can hold) or an (H, 4) array of
    pseudo-counts per stratum and cell (tp, fp, tn, fn), as a labelling plan centres them on
    each stratum's scores.
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {describe(target)}")
    n_strata = sizes.shape[0]
    cell = np.where(predicted, np.where(truth, 0, 1), np.where(truth, 3, 2))
    counts = np.zeros((n_strata, 4))
    np.add.at(counts, (strata, cell), 1.0)
    labelled = counts.sum(axis=1)
    if np.any(labelled > sizes + 1e-9):
        h = int(np.argmax(labelled - sizes))
        raise ValueError(
            f"stratum {h} has {int(labelled[h])} labelled rows but a size of {sizes[h]:g}: the "
            "design weights (or stratum sizes) must add up to at least the rows labelled"
        )
    has_positive = counts[:, :2].sum(axis=1) > 0
    has_negative = counts[:, 2:].sum(axis=1) > 0
    if stratum_predictions is not None:
        has_positive |= stratum_predictions != 0
        has_negative |= stratum_predictions != 1
    unknown = ~(has_positive | has_negative)
    has_positive |= unknown
    has_negative |= unknown
    possible = np.where(_POSITIVE_CELLS, has_positive[:, None], has_negative[:, None])
    pseudo = _prior_per_cell(prior) if isinstance(prior, Prior) else prior
    alpha = np.where(possible, counts + pseudo, 0.0)
    if np.any(possible & (alpha <= 0)):
        raise ValueError(
            "a stratum cell with no count needs a prior > 0 (prior=0 leaves its share undefined)"
        )
    names = [s.name for s in specs]
    scale = np.divide(sizes, labelled, out=np.zeros_like(sizes), where=labelled > 0)
    estimated = (counts * scale[:, None]).sum(axis=0)
    _check_no_blind_strata(names, estimated, possible, sizes, labelled, beta, zero_division)
    generator = np.random.default_rng(seed)
    gammas = generator.standard_gamma(np.broadcast_to(alpha, (n_samples, n_strata, 4)))
    shares = gammas / gammas.sum(axis=2, keepdims=True)
    if target == "population":
        cells = np.einsum("shc,h->sc", shares, sizes / sizes.sum())
    else:
        rest = np.rint(np.maximum(sizes - labelled, 0.0)).astype(np.int64)
        unseen = generator.multinomial(np.broadcast_to(rest, (n_samples, n_strata)), shares)
        cells = (counts[None] + unseen).sum(axis=1)
    rows = _core.binary_metric_rows(
        np.ascontiguousarray(cells, dtype=np.float64), names, beta, zero_division
    )
    observed = _core.binary_metric_rows(estimated[None, :], names, beta, zero_division)[:, 0]
    posteriors = {
        spec.name: Posterior(
            spec.name, samples=np.ascontiguousarray(row), observed=value, bounds=spec.bounds
        )
        for spec, row, value in zip(specs, rows, observed, strict=True)
    }
    return posteriors, estimated


def _check_no_blind_strata(
    names: list[str],
    estimated: np.ndarray,
    possible: np.ndarray,
    sizes: np.ndarray,
    labelled: np.ndarray,
    beta: float,
    zero_division: float,
) -> None:
    """Refuse a metric that depends on a stratum no row of which is labelled: its posterior
    would be that stratum's prior (a positive rate of about 1/2), not evidence."""
    blind = np.flatnonzero((labelled == 0) & (sizes > 0))
    if blind.size == 0:
        return
    # Put each blind stratum's rows all in one possible cell, then all in another: a metric
    # that moves depends on the stratum.
    trials = []
    for h in blind:
        cells = np.flatnonzero(possible[h])
        for c in cells:
            moved = estimated.copy()
            moved[c] += sizes[h]
            trials.append(moved)
    values = _core.binary_metric_rows(np.array(trials), names, beta, zero_division)
    for name, row in zip(names, values, strict=True):
        if np.ptp(row) > 1e-12 * max(1.0, float(np.abs(row).max())):
            raise ValueError(
                f"{name} depends on strata with no labelled row ({blind.size} of "
                f"{sizes.size}, e.g. stratum {int(blind[0])}); label some of their rows (a "
                f"labelling plan made for {name}), or leave {name} out of metrics=..."
            )
