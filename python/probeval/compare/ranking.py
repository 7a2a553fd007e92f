"""More than two models on the same rows: the posterior of each model's rank.

``pe.rank_models`` draws every model's metric from one joint posterior, so that the models'
correlation (they are scored on the same rows) is kept in every draw, and ranks them draw by
draw: P(rank = r) for every model, P(best), the expected rank, and for every pair the
probability that one is better and that they are practically equivalent (ROPE).

* Predicted labels: one Dirichlet over the rows' joint outcomes (true class and every model's
  prediction) — the M-model version of :func:`~probeval.compare_paired`'s joint table, with
  the prior spread so that each model's own confusion matrix gets the Dirichlet
  :func:`~probeval.evaluate` gives it. Binary data.
* Scores with ``metric="roc_auc"`` or ``"average_precision"``: the per-row Bayesian bootstrap,
  one weight per row and draw shared by every model (as in the paired comparison of scores).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.arrays import LabelledDraws
from probeval._util.classes import encode, is_standard_binary, observed_classes, resolve_labels
from probeval._util.equality import ValueEquality
from probeval._util.html import HtmlRepr, escape, html_table
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_float_1d,
    as_labels,
    check_beta,
    check_memory,
    check_n_samples,
    check_same_length,
    check_zero_division,
    describe,
)
from probeval.base.metrics import (
    is_score_metric,
    metric_info,
    resolve_metric,
    resolve_score_metric,
)
from probeval.base.posterior import Posterior
from probeval.base.priors import resolve_prior
from probeval.labels.scores import joint_score_posteriors

__all__ = ["Ranking", "rank_models"]


class Ranking(HtmlRepr, LabelledDraws, ValueEquality):
    """The joint posterior of several models' metric and of their ranks (see
    :func:`rank_models`)."""

    def __init__(
        self,
        metric: str,
        names: list[str],
        samples: np.ndarray,
        rope: float,
        observed: np.ndarray | None = None,
    ) -> None:
        self.metric = metric
        self.names = names
        #: (models, draws) samples of the metric, from one joint posterior.
        self.samples = samples
        #: Each model's metric on the data themselves (NaN when not known).
        self.observed = (
            np.full(samples.shape[0], np.nan) if observed is None else np.asarray(observed)
        )
        self.rope = rope
        better = metric_info(metric).better
        if better == "neither":
            raise ValueError(f"{metric} has no better direction to rank models by")
        sign = 1.0 if better == "higher" else -1.0
        # Rank 1 = best; ties (equal draws) share the better rank's order by model position.
        order = np.argsort(-sign * samples, axis=0, kind="stable")
        ranks = np.empty_like(order)
        m = samples.shape[0]
        ranks[order, np.arange(samples.shape[1])] = np.arange(1, m + 1)[:, None]
        #: (models, draws) rank of each model in each draw (1 = best).
        self.ranks = ranks
        self._sign = sign

    def posterior(self, name: str) -> Posterior:
        """One model's metric posterior (its marginal of the joint draws)."""
        i = self._index(name)
        return Posterior(
            self.metric,
            samples=np.ascontiguousarray(self.samples[i]),
            observed=float(self.observed[i]),
        )

    def _index(self, name: str) -> int:
        if name not in self.names:
            raise KeyError(f"no model {name!r}; models: {', '.join(self.names)}")
        return self.names.index(name)

    def rank_probabilities(self) -> np.ndarray:
        """(models, ranks) array: P(model i has rank r + 1); rows and columns sum to 1."""
        m = len(self.names)
        return np.stack([(self.ranks == r).mean(axis=1) for r in range(1, m + 1)], axis=1)

    def p_best(self) -> dict[str, float]:
        """P(each model is the best)."""
        return dict(zip(self.names, self.rank_probabilities()[:, 0].tolist(), strict=True))

    def expected_rank(self) -> dict[str, float]:
        """Posterior mean rank of each model (1 = best)."""
        return dict(zip(self.names, self.ranks.mean(axis=1).tolist(), strict=True))

    def p_better(self) -> np.ndarray:
        """(models, models) array: P(row model better than column model by more than the
        ROPE); the diagonal is 0."""
        diff = self._sign * (self.samples[:, None, :] - self.samples[None, :, :])
        return np.asarray((diff > self.rope).mean(axis=2), dtype=np.float64)

    def p_rope(self) -> np.ndarray:
        """(models, models) array: P(abs(difference) <= ROPE); the diagonal is 1."""
        diff = np.abs(self.samples[:, None, :] - self.samples[None, :, :])
        return np.asarray((diff <= self.rope).mean(axis=2), dtype=np.float64)

    def summary(self, ci: float = 0.95) -> Table:
        """One line per model, best expected rank first: mean, HDI, P(best), expected rank."""
        probabilities = self.rank_probabilities()
        expected = self.ranks.mean(axis=1)
        order = np.argsort(expected, kind="stable")
        columns: dict[str, list[Any]] = {
            "model": [],
            "mean": [],
            "hdi_low": [],
            "hdi_high": [],
            "p_best": [],
            "expected_rank": [],
        }
        for i in order.tolist():
            post = self.posterior(self.names[i])
            low, high = post.hdi(ci)
            columns["model"].append(self.names[i])
            columns["mean"].append(post.mean())
            columns["hdi_low"].append(low)
            columns["hdi_high"].append(high)
            columns["p_best"].append(float(probabilities[i, 0]))
            columns["expected_rank"].append(float(expected[i]))
        return Table(columns, title=f"ranking by {self.metric} ({len(self.names)} models)")

    def to_dict(self, ci: float = 0.95) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "models": list(self.names),
            "rope": self.rope,
            "summary": self.summary(ci).to_dict(),
            "rank_probabilities": self.rank_probabilities().tolist(),
            "p_better": self.p_better().tolist(),
            "p_rope": self.p_rope().tolist(),
        }

    def _draws(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        variables = {
            self.metric: (("model",), self.samples.T),
            "rank": (("model",), self.ranks.T.astype(np.float64)),
        }
        observed = {self.metric: (("model",), self.observed)}
        return variables, {"model": list(self.names)}, observed

    def _html(self) -> str:
        table = self.summary()
        densities = [self.posterior(name).density_svg() for name in table["model"]]
        better = self.p_better()
        pairs: dict[str, list[Any]] = {"model": list(self.names)}
        for j, name in enumerate(self.names):
            pairs[f"P(better than {name})"] = better[:, j].tolist()
        return (
            f"<h3>ranking by {escape(self.metric)}</h3>{table.to_html({'density': densities})}"
            f"{html_table(pairs, f'P(row model better than column model by > {self.rope:g})')}"
        )

    def __repr__(self) -> str:
        return str(self.summary())


def _named(predictions: Any) -> tuple[list[str], list[Any]]:
    if isinstance(predictions, Mapping):
        names = [str(k) for k in predictions]
        columns = list(predictions.values())
    elif (isinstance(predictions, Sequence) and not isinstance(predictions, (str, bytes))) or (
        isinstance(predictions, np.ndarray) and predictions.ndim == 2
    ):
        columns = list(predictions)
        names = [f"model_{i}" for i in range(len(columns))]
    else:
        raise TypeError(
            "predictions must be a dict of model name to predictions (or scores), or a list of "
            f"them, got {describe(predictions)}"
        )
    if len(columns) < 2:
        raise ValueError(f"ranking needs at least 2 models, got {len(columns)}")
    if len(set(names)) < len(names):
        raise ValueError("model names must be distinct")
    return names, columns


def rank_models(
    y_true: Any,
    predictions: Any,
    *,
    metric: str = "accuracy",
    rope: float = 0.0,
    prior: Any = None,
    n_samples: int = 10_000,
    rng: Any = None,
    pos_label: Any = None,
    beta: float = 1.0,
    zero_division: Any = 0.0,
) -> Ranking:
    """Rank several classifiers scored on the same rows, with the posterior of every rank.

    Parameters
    ----------
    y_true : array-like
        Binary true labels.
    predictions : dict of name to array-like, or list of array-like
        Each model's predicted labels — or, with ``metric="roc_auc"`` or
        ``"average_precision"``, its scores.
    metric : str
        A binary confusion-matrix metric, or ``"roc_auc"`` / ``"average_precision"`` for
        scores. Lower-is-better metrics (fpr, fnr, ...) rank the lowest first.
    rope : float
        Differences within ``rope`` count as practically equivalent in :meth:`Ranking.p_rope`
        and not as better in :meth:`Ranking.p_better`.
    prior : None, float or str
        Pseudo-counts per confusion-matrix cell of each model, as in :func:`~probeval.evaluate`
        (spread over the joint outcomes as :func:`~probeval.compare_paired` does).
    n_samples : int
        Joint posterior draws.
    rng : None, int, numpy Generator or SeedSequence
        Source of randomness.
    pos_label :
        The positive class, when the labels are not 0/1 or booleans.
    beta, zero_division :
        As in :func:`~probeval.evaluate`.

    Returns
    -------
    Ranking
        ``rank_probabilities()``, ``p_best()``, ``expected_rank()``, ``p_better()``,
        ``p_rope()``, ``summary()``, and each model's ``posterior(name)``.

    Examples
    --------
    >>> import numpy as np
    >>> import probeval as pe
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2_000)
    >>> models = {f"m{q}": np.where(rng.random(2_000) < q, y, 1 - y) for q in (0.80, 0.82, 0.9)}
    >>> ranking = pe.rank_models(y, models, metric="accuracy", rng=0)
    >>> {k: round(v, 3) for k, v in ranking.p_best().items()}
    {'m0.8': 0.0, 'm0.82': 0.0, 'm0.9': 1.0}
    """
    names, columns = _named(predictions)
    truth = as_labels("y_true", y_true)
    n = check_n_samples(n_samples)
    seed = seed_from(rng)
    rope_value = float(rope)
    if not (np.isfinite(rope_value) and rope_value >= 0):
        raise ValueError(f"rope must be a number >= 0, got {rope!r}")
    check_memory(
        len(names) * n * 3,
        request=f"n_samples={n:,} for {len(names)} models",
        alternative="ask for fewer n_samples",
    )
    order, positive = _binary_truth(truth, pos_label)
    if is_score_metric(metric):
        spec = resolve_score_metric(metric, order, binary=True)
        scores = []
        for name, column in zip(names, columns, strict=True):
            values = as_float_1d(f"predictions[{name!r}]", column)
            check_same_length(y_true=truth, **{f"predictions[{name!r}]": values})
            scores.append(np.column_stack([-values, values]))
        posteriors = joint_score_posteriors(
            positive.astype(np.intp),
            scores,
            np.ones(len(truth)),
            spec,
            n_samples=n,
            seed=derive(seed, 0),
        )
        return Ranking(
            spec.name,
            names,
            np.array([p.samples for p in posteriors]),
            rope_value,
            np.array([p.observed for p in posteriors]),
        )
    spec = resolve_metric(metric, order, binary=True)
    if spec.kernel != "binary":
        raise ValueError(
            "metric must be a binary confusion-matrix metric, roc_auc or average_precision, "
            f"got {metric!r}"
        )
    predicted = []
    for name, column in zip(names, columns, strict=True):
        labels = as_labels(f"predictions[{name!r}]", column)
        check_same_length(y_true=truth, **{f"predictions[{name!r}]": labels})
        unknown = set(observed_classes(labels)) - set(order)
        if unknown:
            raise ValueError(
                f"predictions[{name!r}] holds classes not in y_true: {sorted(unknown, key=repr)!r}"
            )
        predicted.append(encode(labels, order) == 1)
    said = np.array(predicted)
    checked_beta, zd = check_beta(beta), check_zero_division(zero_division)
    samples = _label_samples(positive, said, spec.name, prior, n, seed, checked_beta, zd)
    counts = np.column_stack(
        [
            (said & positive).sum(axis=1),
            (said & ~positive).sum(axis=1),
            (~said & ~positive).sum(axis=1),
            (~said & positive).sum(axis=1),
        ]
    ).astype(np.float64)
    observed = _core.binary_metric_rows(counts, [spec.name], checked_beta, zd)[0]
    return Ranking(spec.name, names, samples, rope_value, observed)


def _binary_truth(truth: np.ndarray, pos_label: Any) -> tuple[list[Any], np.ndarray]:
    """The class order of binary labels and which rows are positive."""
    order = resolve_labels(observed_classes(truth), None, pos_label)
    if len(order) != 2 or (pos_label is None and not is_standard_binary(order)):
        raise ValueError(
            f"rank_models ranks binary classifiers; y_true has the classes {order!r} (pass "
            "pos_label=... for labels other than 0/1)"
        )
    return order, encode(truth, order) == 1


def _label_samples(
    positive: np.ndarray,
    predicted: np.ndarray,
    metric: str,
    prior: Any,
    n: int,
    seed: int,
    beta: float,
    zero_division: float,
) -> np.ndarray:
    """Draws of every model's metric from one Dirichlet over the joint outcomes."""
    m = predicted.shape[0]
    # Outcome code of each row: the true class, then every model's prediction, as bits.
    bits = np.vstack([positive, predicted]).astype(np.int64)
    codes = (bits * (1 << np.arange(m + 1))[:, None]).sum(axis=0)
    counts = np.bincount(codes, minlength=1 << (m + 1)).astype(np.float64)
    present = np.flatnonzero(counts)
    resolved = resolve_prior(prior, 2)
    if isinstance(resolved.base, np.ndarray) or resolved.data is not None:
        raise ValueError("rank_models takes a number or a name as prior")
    c = float(resolved.pseudo_counts(2)[0, 0])
    # Each model's (true, predicted) cell gets c in total, as evaluate gives it: spread over the
    # joint outcomes that share the true class (2^m of them), c / 2^(m - 1) each — the
    # M-model form of compare_paired's P[y, a] P[y, b] / P[y].sum().
    cells = np.arange(1 << (m + 1))
    alpha = counts + c / (1 << (m - 1))
    if c == 0:
        cells, alpha = present, counts[present]
    generator = np.random.default_rng(seed)
    samples = np.empty((m, n))
    truth_bit = (cells & 1).astype(bool)
    for start in range(0, n, 4096):
        stop = min(n, start + 4096)
        gammas = generator.standard_gamma(np.broadcast_to(alpha, (stop - start, alpha.size)))
        shares = gammas / gammas.sum(axis=1, keepdims=True)
        for j in range(m):
            says = ((cells >> (j + 1)) & 1).astype(bool)
            tp = shares[:, truth_bit & says].sum(axis=1)
            fp = shares[:, ~truth_bit & says].sum(axis=1)
            tn = shares[:, ~truth_bit & ~says].sum(axis=1)
            fn = shares[:, truth_bit & ~says].sum(axis=1)
            table = np.ascontiguousarray(np.column_stack([tp, fp, tn, fn]))
            samples[j, start:stop] = _core.binary_metric_rows(table, [metric], beta, zero_division)[
                0
            ]
    return samples
