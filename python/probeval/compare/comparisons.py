"""Comparisons: is model B better than model A, and how sure are we?

* :func:`compare` — two independent posteriors (different test sets): the posterior of
  their difference ``a - b``.
* :func:`compare_paired` — two models scored on the *same* rows. One Dirichlet over the joint
  table of (truth, prediction A, prediction B) gives both confusion matrices from the same
  draw, so whatever the two models get right or wrong together cancels out of the difference.
  Treating the two posteriors as independent instead (as peer libraries do) ignores that
  correlation and gives a much wider interval for the difference.
* :func:`vs_random` — a model against the random classifier on the same data.

A comparison's difference feeds :func:`probeval.decide` (module :mod:`probeval.compare.decisions`).

Every comparison reports, for ``d = a - b`` and a ROPE ``[lo, hi]``:

* ``p_direction = max(P(d > 0), P(d < 0))``;
* ``p_rope = P(lo <= d <= hi)``, ``p_sig = 1 - p_rope``, ``p_sig_pos = P(d > hi)``,
  ``p_sig_neg = P(d < lo)``;
* ``bf_sig = p_sig / p_sig_random``: how much more often the real difference lands outside the
  ROPE than the difference between two random classifiers on the same data does (when both
  sides know their random baselines; ``inf`` when the random difference never does).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.arrays import LabelledDraws
from probeval._util.classes import encode, is_standard_binary, observed_classes, resolve_labels
from probeval._util.equality import ValueEquality
from probeval._util.frames import is_frame, resolve
from probeval._util.html import HtmlRepr, badge, escape, key_values
from probeval._util.rng import derive, seed_from
from probeval._util.validation import (
    Interval,
    as_float_1d,
    as_labels,
    as_weights,
    check_beta,
    check_ci,
    check_memory,
    check_n_samples,
    check_rope,
    check_same_length,
    check_some_weight,
    check_zero_division,
    describe,
)
from probeval.base.metrics import is_score_metric, resolve_score_metric
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior, resolve_prior
from probeval.compare.decisions import Decision, decide
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.evaluation import column_labels, score_matrix
from probeval.labels.scores import joint_score_posteriors

__all__ = [
    "Comparison",
    "DifferenceSummary",
    "compare",
    "compare_paired",
    "difference_html",
    "vs_random",
]


class DifferenceSummary:
    """What a posterior of a difference and its ROPE tell: summaries, the probabilities of
    direction and practical significance, and the HDI + ROPE decision. Subclasses provide
    ``difference`` (a :class:`Posterior`) and ``rope``."""

    __slots__ = ()
    rope: Interval

    @property
    def difference(self) -> Posterior:
        raise NotImplementedError

    @property
    def samples(self) -> np.ndarray:
        return self.difference.samples

    def mean(self) -> float:
        return self.difference.mean()

    def median(self) -> float:
        return self.difference.median()

    def std(self) -> float:
        return self.difference.std()

    def hdi(self, ci: float = 0.95) -> Interval:
        """HDI of the difference."""
        return self.difference.hdi(ci)

    def eti(self, ci: float = 0.95) -> Interval:
        return self.difference.eti(ci)

    @property
    def p_direction(self) -> float:
        """max(P(d > 0), P(d < 0)): how sure we are of the sign of the difference."""
        d = self.samples
        return float(max(np.mean(d > 0), np.mean(d < 0)))

    @property
    def p_rope(self) -> float:
        """P(lo <= d <= hi): probability that the difference is practically zero."""
        d = self.samples
        low, high = self.rope
        return float(np.mean((d >= low) & (d <= high)))

    @property
    def p_sig(self) -> float:
        """1 - p_rope: probability of a practically significant difference."""
        return 1.0 - self.p_rope

    @property
    def p_sig_pos(self) -> float:
        """P(d > hi): probability that a is practically better than b."""
        return float(np.mean(self.samples > self.rope[1]))

    @property
    def p_sig_neg(self) -> float:
        """P(d < lo): probability that a is practically worse than b."""
        return float(np.mean(self.samples < self.rope[0]))

    def decide(self, ci: float = 0.95, precision: float | None = None) -> Decision:
        """HDI + ROPE decision about the difference (see :func:`decide`)."""
        return decide(self, ci=ci, precision=precision)

    def _difference_summary(self, ci: float) -> dict[str, Any]:
        """The difference's summary and probabilities, for the subclasses' ``summary()``."""
        low, high = self.hdi(ci)
        return {
            "mean": self.mean(),
            "median": self.median(),
            "hdi_low": low,
            "hdi_high": high,
            "rope_low": self.rope[0],
            "rope_high": self.rope[1],
            "p_direction": self.p_direction,
            "p_rope": self.p_rope,
            "p_sig": self.p_sig,
            "p_sig_pos": self.p_sig_pos,
            "p_sig_neg": self.p_sig_neg,
        }


def difference_html(title: str, result: DifferenceSummary, observed: dict[str, float]) -> str:
    """A difference's density (the ROPE behind it), its summary and its decision, as HTML."""
    low, high = result.hdi(0.95)
    decision = result.decide()
    shown = {
        **{f"observed {k}": v for k, v in observed.items()},
        "mean difference": result.mean(),
        "95% HDI low": low,
        "95% HDI high": high,
        "P(direction)": result.p_direction,
        "P(ROPE)": result.p_rope,
        "P(a better by more than the ROPE)": result.p_sig_pos,
        "P(b better by more than the ROPE)": result.p_sig_neg,
    }
    return (
        f"<h4>{escape(title)}</h4>"
        f"{result.difference.density_svg(band=result.rope, width=240, height=56)}"
        f"{key_values(shown)}<p>decision: {badge(decision.status)} "
        f"(ROPE [{result.rope[0]:g}, {result.rope[1]:g}])</p>"
    )


class Comparison(HtmlRepr, LabelledDraws, DifferenceSummary, ValueEquality):
    """The posterior of the difference ``a - b`` of one metric between two classifiers."""

    __slots__ = ("_difference", "a", "b", "metric", "paired", "random", "rope")

    def __init__(
        self,
        a: Posterior,
        b: Posterior,
        *,
        samples_a: np.ndarray,
        samples_b: np.ndarray,
        rope: Interval,
        paired: bool,
        random: Comparison | None = None,
    ) -> None:
        self.metric = a.metric
        self.a = a
        self.b = b
        self.rope = rope
        self.paired = paired
        self.random = random
        low_a, high_a = a.bounds
        low_b, high_b = b.bounds
        self._difference = Posterior(
            f"{a.metric} difference",
            samples=np.ascontiguousarray(samples_a - samples_b),
            observed=a.observed - b.observed,
            bounds=(low_a - high_b, high_a - low_b),
        )

    @property
    def difference(self) -> Posterior:
        """Posterior of ``a - b`` (samples)."""
        return self._difference

    @property
    def bf_sig(self) -> float | None:
        """p_sig / p_sig of the two random baselines; None without baselines."""
        if self.random is None:
            return None
        p_sig, p_random = self.p_sig, self.random.p_sig
        if p_random == 0.0:
            return math.inf if p_sig > 0 else math.nan
        return p_sig / p_random

    # ------------------------------------------------------------------ reporting

    def summary(self, ci: float = 0.95) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "paired": self.paired,
            "observed_a": self.a.observed,
            "observed_b": self.b.observed,
            **self._difference_summary(ci),
            "bf_sig": self.bf_sig,
        }

    def to_dict(self, ci: float = 0.95) -> dict[str, Any]:
        """JSON-friendly summary (``bf_sig`` inf/nan become strings "inf"/"nan")."""
        result = self.summary(ci)
        result["ci"] = check_ci(ci)
        result["n_samples"] = int(self.samples.shape[0])
        bf = result["bf_sig"]
        if bf is not None and not math.isfinite(bf):
            result["bf_sig"] = str(bf)
        return result

    def _draws(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        variables = {
            "a": ((), self.a.samples),
            "b": ((), self.b.samples),
            "difference": ((), self.samples),
        }
        observed = {"a": self.a.observed, "b": self.b.observed}
        return variables, {}, observed

    def _html(self) -> str:
        kind = "paired" if self.paired else "independent"
        return difference_html(
            f"{self.metric}: a - b ({kind})", self, {"a": self.a.observed, "b": self.b.observed}
        )

    def __repr__(self) -> str:
        low, high = self.hdi(0.95)
        kind = "paired" if self.paired else "independent"
        bf = "" if self.bf_sig is None else f", bf_sig={self.bf_sig:.3g}"
        return (
            f"Comparison({self.metric}, {kind}: a - b mean={self.mean():+.4f}, "
            f"95% HDI=[{low:+.4f}, {high:+.4f}], p_direction={self.p_direction:.3f}, "
            f"rope=[{self.rope[0]:g}, {self.rope[1]:g}], p_rope={self.p_rope:.3f}{bf})"
        )


def _n_for(a: Posterior, b: Posterior, n_samples: int | None) -> int:
    if n_samples is not None:
        return check_n_samples(n_samples)
    fixed = [p.n_samples for p in (a, b) if p._origin is None and p._beta is None]
    return fixed[0] if fixed else max(a.n_samples, b.n_samples)


def compare(
    a: Posterior,
    b: Posterior,
    *,
    rope: Any = 0.0,
    n_samples: int | None = None,
    rng: Any = None,
) -> Comparison:
    """Compare two independent posteriors (e.g. two models on different test sets).

    Both sides are redrawn from independent random streams derived from ``rng`` — two
    posteriors computed with the same seed share their random numbers, and subtracting those
    samples would understate the uncertainty. Posteriors built from raw samples are used as
    they are.

    Parameters
    ----------
    a, b : Posterior
        Posteriors of the same metric.
    rope : float or (lo, hi)
        Region of practical equivalence for ``a - b``: ``eps`` means [-eps, eps].
    n_samples : int, optional
        Draws per side (default: the larger of the two posteriors' sample counts).
    rng : None, int, Generator or SeedSequence

    Returns
    -------
    Comparison
        With ``bf_sig`` when both posteriors come from confusion matrices.
    """
    if not isinstance(a, Posterior) or not isinstance(b, Posterior):
        raise TypeError(f"compare needs two Posteriors, got {describe(a)} and {describe(b)}")
    interval = check_rope(rope)
    n = _n_for(a, b, n_samples)
    seed = seed_from(rng)
    samples_a = a._draw_independent(n, derive(seed, 1))
    samples_b = b._draw_independent(n, derive(seed, 2))
    random = None
    if (
        a._origin is not None
        and b._origin is not None
        and a._origin.has_random_baseline
        and b._origin.has_random_baseline
    ):
        ra = a.random_baseline(n_samples=n, rng=derive(seed, 3))
        rb = b.random_baseline(n_samples=n, rng=derive(seed, 4))
        random = Comparison(
            ra, rb, samples_a=ra.samples, samples_b=rb.samples, rope=interval, paired=False
        )
    return Comparison(
        a, b, samples_a=samples_a, samples_b=samples_b, rope=interval, paired=False, random=random
    )


def vs_random(
    confusion: ConfusionMatrix,
    metric: str,
    *,
    rope: Any = 0.0,
    prior: Any = None,
    n_samples: int = 10_000,
    rng: Any = None,
    beta: float = 1.0,
    zero_division: Any = 0.0,
) -> Comparison:
    """Compare a classifier with the random classifier on the same data.

    The random classifier keeps the true-class totals and spreads each class evenly over the
    predicted classes (:meth:`ConfusionMatrix.random_baseline`). ``bf_sig`` compares the
    model-vs-random difference with the difference between two random classifiers.
    """
    if not isinstance(confusion, ConfusionMatrix):
        raise TypeError(f"confusion must be a ConfusionMatrix, got {describe(confusion)}")
    seed = seed_from(rng)
    post = confusion.posterior(
        metric,
        prior=prior,
        n_samples=n_samples,
        rng=derive(seed, 1),
        beta=beta,
        zero_division=zero_division,
    )
    n = post.n_samples
    baseline = post.random_baseline(n_samples=n, rng=derive(seed, 2))
    other = post.random_baseline(n_samples=n, rng=derive(seed, 3))
    random = Comparison(
        baseline,
        other,
        samples_a=baseline.samples,
        samples_b=other.samples,
        rope=check_rope(rope),
        paired=False,
    )
    return Comparison(
        post,
        baseline,
        samples_a=post.samples,
        samples_b=baseline.samples,
        rope=random.rope,
        paired=False,
        random=random,
    )


def compare_paired(
    data: Any = None,
    /,
    y_pred_a: Any = None,
    y_pred_b: Any = None,
    *,
    y_true: Any = None,
    metric: str = "accuracy",
    rope: Any = 0.0,
    prior: Any = None,
    n_samples: int = 10_000,
    rng: Any = None,
    sample_weight: Any = None,
    labels: Any = None,
    pos_label: Any = None,
    beta: float = 1.0,
    zero_division: Any = 0.0,
    y_score_a: Any = None,
    y_score_b: Any = None,
) -> Comparison:
    """Compare two classifiers scored on the same rows.

    One Dirichlet over the joint table of (true class, prediction of A, prediction of B)
    gives both confusion matrices from each draw. The prior's pseudo-counts P (see
    :class:`~probeval.Prior`) are spread over the joint cells as ``P[y, a] P[y, b] / P[y].sum()``,
    so that each model's own confusion matrix gets exactly the Dirichlet :func:`evaluate` gives
    it (for binary data: ``prior / 2`` per joint cell); only the dependence between the two is
    added. Accepts the same names and label
    conventions as :func:`evaluate` (binary or multiclass).

    The labels come first (positionally or as ``y_true=``); with a data frame first,
    ``y_true``, ``y_pred_a``, ``y_pred_b`` and ``sample_weight`` name its columns:
    ``compare_paired(df, y_true="label", y_pred_a="model_a", y_pred_b="model_b")``.

    ROC AUC and average precision are compared on the two models' scores (``y_score_a``,
    ``y_score_b``) by the per-row Bayesian bootstrap with one weight per row and draw shared by
    both models, so the difference keeps their correlation (two independent posteriors ignore
    it). Binary data take one score per row (``metric="roc_auc"`` or ``"average_precision"``);
    multiclass data take (n, K) score matrices whose columns follow ``labels`` (default: the
    sorted classes) and a one-vs-rest name: ``roc_auc_macro``, ``roc_auc_weighted``,
    ``average_precision_macro``, ``roc_auc[cat]``. O(rows x columns) per draw; the spread of
    a binary AUC difference agrees with DeLong's paired test.

    Returns
    -------
    Comparison
        ``a`` and ``b`` hold each model's posterior; ``difference`` is ``a - b``; ``bf_sig``
        compares with two random classifiers on the same data.
    """
    if is_frame(data):
        if y_true is None:
            raise TypeError("with a data frame, name the label column: y_true='...'")
        columns = resolve(
            data, y_true=y_true, y_pred_a=y_pred_a, y_pred_b=y_pred_b, sample_weight=sample_weight
        )
        y_true, y_pred_a = columns["y_true"], columns["y_pred_a"]
        y_pred_b, sample_weight = columns["y_pred_b"], columns["sample_weight"]
    elif data is not None and y_true is not None:
        raise TypeError("pass the true labels once: positionally or as y_true=..., not both")
    elif data is not None:
        y_true = data
    if y_score_a is not None or y_score_b is not None:
        if y_true is None or y_score_a is None or y_score_b is None:
            raise TypeError("a paired ranking comparison needs y_true, y_score_a and y_score_b")
        if y_pred_a is not None or y_pred_b is not None:
            raise TypeError("give the models' scores or their predictions, not both")
        return _paired_scores(
            y_true,
            y_score_a,
            y_score_b,
            metric,
            rope,
            n_samples,
            rng,
            sample_weight,
            labels,
            pos_label,
        )
    if y_true is None or y_pred_a is None or y_pred_b is None:
        raise TypeError("compare_paired needs y_true, y_pred_a and y_pred_b")
    truth = as_labels("y_true", y_true)
    pred_a = as_labels("y_pred_a", y_pred_a)
    pred_b = as_labels("y_pred_b", y_pred_b)
    check_same_length(y_true=truth, y_pred_a=pred_a, y_pred_b=pred_b)
    weights = (
        None if sample_weight is None else as_weights("sample_weight", sample_weight, len(truth))
    )
    if weights is not None:
        check_some_weight("sample_weight", weights)
    order = resolve_labels(observed_classes(truth, pred_a, pred_b), labels, pos_label)
    k = len(order)
    codes = (encode(truth, order) * k + encode(pred_a, order)) * k + encode(pred_b, order)
    joint = np.bincount(codes, weights=weights, minlength=k**3).astype(np.float64)
    joint = joint.reshape(k, k, k)
    weighted = weights is not None
    binary_standard = k == 2 and (
        labels is not None or pos_label is not None or is_standard_binary(order)
    )
    cm_a = ConfusionMatrix._from_matrix(
        joint.sum(axis=2),
        order,
        weighted=weighted,
        ambiguous_positive=k == 2 and not binary_standard,
    )
    cm_b = ConfusionMatrix._from_matrix(
        joint.sum(axis=1),
        order,
        weighted=weighted,
        ambiguous_positive=k == 2 and not binary_standard,
    )
    spec = cm_a._spec(metric)
    resolved = resolve_prior(prior, k)
    if isinstance(resolved.base, np.ndarray) or resolved.data is not None:
        raise ValueError(
            "compare_paired takes a number or a name as prior (per-cell and sequential priors "
            "are defined on one confusion matrix, not on the joint table)"
        )
    n = check_n_samples(n_samples)
    beta = check_beta(beta)
    zd = check_zero_division(zero_division)
    seed = seed_from(rng)
    pseudo = resolved.pseudo_counts(k)
    # P[y, a] P[y, b] / P[y].sum(): summed over b (or a) it gives back P, each model's prior.
    # (A zero prior spreads nothing.)
    rows = pseudo.sum(axis=1)[:, None, None]
    products = pseudo[:, :, None] * pseudo[:, None, :]
    spread = np.divide(products, rows, out=np.zeros_like(products), where=rows > 0)
    alpha = np.ascontiguousarray(joint + spread)
    if spec.kernel == "binary":
        kernel_spec = ("binary", spec.name, "", 0)
    else:
        name, average, index = spec.core_spec()
        kernel_spec = ("multiclass", name, average, index)
    check_memory(
        2 * n,
        request=f"n_samples={n:,} for two paired posteriors",
        alternative="ask for fewer n_samples",
    )
    draws = _core.paired_metric_draws(alpha, joint, kernel_spec, n, derive(seed, 0), beta, zd)
    observed = (cm_a._observed([spec], beta, zd)[0], cm_b._observed([spec], beta, zd)[0])
    common = Prior(resolved.base, label=resolved.label)
    post_a, post_b = (
        Posterior(spec.name, samples=np.ascontiguousarray(row), observed=value, bounds=spec.bounds)
        for row, value in zip(draws, observed, strict=True)
    )
    random_a, random_b = (
        cm._posteriors(
            [spec],
            prior=common,
            n_samples=n,
            seed=derive(seed, key),
            beta=beta,
            zero_division=zd,
            joint=False,
        )[spec.name]
        for cm, key in ((cm_a.random_baseline(), 1), (cm_b.random_baseline(), 2))
    )
    random = Comparison(
        random_a,
        random_b,
        samples_a=random_a.samples,
        samples_b=random_b.samples,
        rope=check_rope(rope),
        paired=False,
    )
    return Comparison(
        post_a,
        post_b,
        samples_a=post_a.samples,
        samples_b=post_b.samples,
        rope=random.rope,
        paired=True,
        random=random,
    )


def _paired_scores(
    y_true: Any,
    y_score_a: Any,
    y_score_b: Any,
    metric: str,
    rope: Any,
    n_samples: int,
    rng: Any,
    sample_weight: Any,
    labels: Any,
    pos_label: Any,
) -> Comparison:
    """ROC AUC or average precision of two models on the same rows, one Bayesian-bootstrap
    weight per row shared by both (binary scores, or one-vs-rest on (n, K) multiclass scores)."""
    if not is_score_metric(metric):
        raise ValueError(
            "paired comparisons of scores cover roc_auc and average_precision (binary) and "
            f"their _macro, _weighted and [class] forms (multiclass), got metric={metric!r}"
        )
    matrix_a = score_matrix(y_score_a, "y_score_a")
    matrix_b = score_matrix(y_score_b, "y_score_b")
    if (matrix_a is None) != (matrix_b is None):
        raise ValueError("y_score_a and y_score_b must both be one score per row or both (n, K)")
    if matrix_a is not None and matrix_b is not None:
        truth, order = column_labels(y_true, matrix_a.shape[1], labels)
        if matrix_b.shape != matrix_a.shape:
            raise ValueError(
                f"y_score_a and y_score_b must have the same shape, got {matrix_a.shape} "
                f"and {matrix_b.shape}"
            )
        check_same_length(y_true=truth, y_score_a=matrix_a, y_score_b=matrix_b)
        models = [matrix_a, matrix_b]
        if len(order) == 2:
            # Binary data as predict_proba gives them: the positive class's column.
            if pos_label is not None and pos_label == order[0]:
                order, models = order[::-1], [m[:, ::-1] for m in models]
            models = [np.column_stack([-m[:, 1], m[:, 1]]) for m in models]
    else:
        truth = as_labels("y_true", y_true)
        a = as_float_1d("y_score_a", y_score_a)
        b = as_float_1d("y_score_b", y_score_b)
        check_same_length(y_true=truth, y_score_a=a, y_score_b=b)
        order = resolve_labels(observed_classes(truth), labels, pos_label)
        if len(order) != 2:
            raise ValueError(
                f"one score per row needs binary y_true, found the classes {order!r}; give "
                "multiclass models as (n, K) score matrices"
            )
        if labels is None and pos_label is None and not is_standard_binary(order):
            raise ValueError(
                f"y_true has the classes {order!r}; pass pos_label=... to say which one the "
                "scores are the probability of"
            )
        models = [np.column_stack([-a, a]), np.column_stack([-b, b])]
    spec = resolve_score_metric(metric, order, binary=len(order) == 2)
    weights = (
        np.ones(len(truth))
        if sample_weight is None
        else as_weights("sample_weight", sample_weight, len(truth))
    )
    check_some_weight("sample_weight", weights)
    post_a, post_b = joint_score_posteriors(
        encode(truth, order).astype(np.intp),
        models,
        weights,
        spec,
        n_samples=check_n_samples(n_samples),
        seed=derive(seed_from(rng), 0),
    )
    return Comparison(
        post_a,
        post_b,
        samples_a=post_a.samples,
        samples_b=post_b.samples,
        rope=check_rope(rope),
        paired=True,
    )
