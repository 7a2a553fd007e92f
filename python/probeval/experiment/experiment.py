"""Evaluation as an experiment: evidence that accumulates batch by batch until it decides.

An :class:`Experiment` holds one hypothesis per metric — a region of practical equivalence
(ROPE): "no worse than the reference" (from the reference posterior's worse 95% HDI edge to the
metric's best value) or "within range" (an explicit ROPE) — and a required precision (the HDI
width at which a decision is final). Each :meth:`Experiment.update` adds a batch: labelled rows,
unlabelled scores (through a fitted :class:`~probeval.LabelFreeEstimator`), or scores with the
labels known so far. After every batch each metric's posterior is that of all the data so far
(sequential updating equals evaluating the pooled batches: the state is the pooled confusion
counts, or the pooled rows where ranking metrics or the estimator need them), and its status is

- ``"accepted"``: the HDI lies inside the ROPE and is at most the required precision wide;
- ``"rejected"``: the HDI lies wholly outside the ROPE and is at most that wide;
- ``"ongoing"``: otherwise — the answer may still change as data arrive.

The experiment keeps its trajectory (rows, HDI, status after each batch) and travels as plain
JSON (:meth:`Experiment.to_json` / :meth:`Experiment.from_json`), so a service can keep one per
model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probeval._util.html import HtmlRepr, escape
from probeval._util.rng import seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_1d,
    as_name_list,
    check_beta,
    check_ci,
    check_n_samples,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_rope,
    check_same_length,
    check_threshold,
    check_zero_division,
    describe,
    missing_mask,
)
from probeval.base.metrics import canonical_name, is_multiclass_name, is_score_metric
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior
from probeval.compare.decisions import Decision, decide, no_worse_rope
from probeval.experiment.labelling import LabellingPlan
from probeval.labelfree.estimator import LabelFreeEstimator
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.evaluation import Evaluation, evaluate

__all__ = ["Experiment", "MetricStatus"]

_FORMAT = "probeval.experiment/1"
STATUSES = ("accepted", "rejected", "ongoing")
TARGETS = ("population", "realized")


@dataclass(frozen=True)
class MetricStatus(HtmlRepr):
    """Where one metric of an :class:`Experiment` stands after a batch."""

    metric: str
    #: "no worse than reference" or "within range".
    hypothesis: str
    rope: tuple[float, float]
    #: Rows seen so far, and how many of them were labelled.
    n: int
    n_labelled: int
    mean: float
    hdi: tuple[float, float]
    width: float
    #: Required HDI width for a final answer (None: any width).
    precision: float | None
    precision_reached: bool
    #: The HDI + ROPE rule on the current HDI: "accepted", "rejected" or "undecided".
    decision: str
    #: "accepted" or "rejected" once the decision is final, "ongoing" before.
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "hypothesis": self.hypothesis,
            "rope_low": self.rope[0],
            "rope_high": self.rope[1],
            "n": self.n,
            "n_labelled": self.n_labelled,
            "mean": self.mean,
            "hdi_low": self.hdi[0],
            "hdi_high": self.hdi[1],
            "width": self.width,
            "precision": self.precision,
            "precision_reached": self.precision_reached,
            "decision": self.decision,
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricStatus:
        return cls(
            metric=str(data["metric"]),
            hypothesis=str(data["hypothesis"]),
            rope=(float(data["rope_low"]), float(data["rope_high"])),
            n=int(data["n"]),
            n_labelled=int(data["n_labelled"]),
            mean=float(data["mean"]),
            hdi=(float(data["hdi_low"]), float(data["hdi_high"])),
            width=float(data["width"]),
            precision=None if data["precision"] is None else float(data["precision"]),
            precision_reached=bool(data["precision_reached"]),
            decision=str(data["decision"]),
            status=str(data["status"]),
        )

    @classmethod
    def of(
        cls,
        posterior: Posterior,
        decision: Decision,
        hypothesis: str,
        n: int,
        n_labelled: int,
    ) -> MetricStatus:
        decided = decision.status in ("accepted", "rejected")
        return cls(
            metric=posterior.metric,
            hypothesis=hypothesis,
            rope=decision.rope,
            n=n,
            n_labelled=n_labelled,
            mean=posterior.mean(),
            hdi=decision.hdi,
            width=decision.width,
            precision=decision.precision,
            precision_reached=decision.final,
            decision=decision.status,
            status=decision.status if decided and decision.final else "ongoing",
        )


def _metric_names(metrics: Any) -> list[str]:
    names = []
    for name in as_name_list("metrics", metrics):
        key = name.strip() if is_multiclass_name(name) else canonical_name(name)
        if key not in names:
            names.append(key)
    return names


def _reference_posteriors(
    reference: Any,
    metrics: list[str],
    *,
    prior: Any,
    n_samples: int,
    seed: int,
    beta: float,
    zero_division: float,
) -> dict[str, Posterior]:
    """The reference's posterior of each metric (those it has)."""
    if isinstance(reference, ConfusionMatrix):
        wanted = [m for m in metrics if not is_score_metric(m)]
        if not wanted:
            return {}
        reference = evaluate(
            reference,
            metrics=wanted,
            prior=prior,
            n_samples=n_samples,
            rng=seed,
            beta=beta,
            zero_division=zero_division,
        )
    if isinstance(reference, LabelFreeEstimator):
        known = [m for m in metrics if m in reference.metrics]
        return (
            reference.reference_posteriors(
                known, n_samples=n_samples, beta=beta, zero_division=zero_division
            )
            if known
            else {}
        )
    if isinstance(reference, (Evaluation, Mapping)):
        found: dict[str, Posterior] = {}
        for metric in metrics:
            if metric in reference:
                posterior = reference[metric]
                if not isinstance(posterior, Posterior):
                    raise TypeError(
                        f"reference[{metric!r}] must be a Posterior, got {describe(posterior)}"
                    )
                found[metric] = posterior
        return found
    raise TypeError(
        "reference must be an Evaluation, a ConfusionMatrix, a fitted LabelFreeEstimator or a "
        f"dict of metric name to Posterior, got {describe(reference)}"
    )


def _per_metric(name: str, value: Any, metrics: list[str]) -> dict[str, Any]:
    """A setting given once for every metric, or as a dict per metric (keys checked)."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in metrics]
        if unknown:
            raise ValueError(f"{name} names metrics {unknown} that are not among {metrics}")
        return {m: value.get(m) for m in metrics}
    return dict.fromkeys(metrics, value)


def _experiment_rope(metric: str, rope: Any) -> tuple[float, float]:
    if isinstance(rope, (int, float)) and not isinstance(rope, bool):
        raise TypeError(
            f"rope for {metric} must be a pair (lo, hi) of metric values, got {rope!r} (a "
            "single number is the half-width of a ROPE around 0, which is for differences)"
        )
    return check_rope(rope)


def _prior_dict(prior: Any) -> Any:
    if isinstance(prior, Prior):
        return {"prior": prior.to_dict()}
    if isinstance(prior, np.ndarray):
        return prior.tolist()
    return prior


def _prior_from_dict(data: Any) -> Any:
    if isinstance(data, dict) and "prior" in data:
        inner = data["prior"]
        base = inner["base"]
        absorbed = inner.get("absorbed")
        return Prior(
            np.asarray(base, dtype=float) if isinstance(base, list) else base,
            None if absorbed is None else np.asarray(absorbed, dtype=float),
            inner.get("label", "custom"),
        )
    if isinstance(data, list):
        return np.asarray(data, dtype=float)
    return data


def _plain_labels(values: np.ndarray) -> list[Any]:
    """Labels as JSON values (numpy scalars to Python ones; missing labels as None)."""
    missing = missing_mask(values)
    plain = values.tolist()
    return [None if gone else value for value, gone in zip(plain, missing, strict=True)]


class Experiment(HtmlRepr):
    """Evidence that accumulates batch by batch, and the decision it supports.

    Parameters
    ----------
    metrics : str or list of str, optional
        The metrics under test. Default: those of ``reference`` (an Evaluation's metrics) or of
        ``estimator``.
    rope : (lo, hi) or dict of metric to (lo, hi), optional
        "Within range": the region of practical equivalence of each metric. Metrics without one
        are tested "no worse than the reference" (:func:`~probeval.no_worse_rope`).
    reference : Evaluation, ConfusionMatrix, LabelFreeEstimator or dict of Posterior, optional
        The reference performance for "no worse than the reference" (default: the estimator's
        reference data).
    precision : float or dict of metric to float, optional
        Required HDI width for a final answer. Default: by assurance
        (:func:`~probeval.assurance_precision`) at ``planned_n`` rows, for labelled experiments
        with a reference confusion matrix (so that ``assurance`` of the experiments planned
        reach a final answer); with an estimator and ``planned_n``, the width that chunks of
        ``planned_n`` unlabelled rows like the reference's reach with probability
        ``assurance``; otherwise no requirement (status follows the HDI alone).
    planned_n : int, optional
        Rows the experiment plans to see, for the default precision. Default: as many as the
        reference has (labelled experiments); none (an estimator's).
    assurance : float
        Share of planned experiments that should reach the default precision.
    estimator : LabelFreeEstimator, optional
        A fitted estimator: batches may then be scores without labels (or with the labels
        known so far), and the posterior is the estimator's for all the scores seen.
    target : "population" or "realized"
        The estimator's target (see :meth:`LabelFreeEstimator.estimate`).
    ci : float
        Probability of the HDIs.
    prior, threshold, labels, pos_label, beta, zero_division :
        As in :func:`probeval.evaluate`.
    n_samples : int
        Posterior draws per sampled metric.
    seed : None or int
        Seed of every posterior (drawn once and kept, so the JSON form reproduces the results).

    Examples
    --------
    >>> import numpy as np, probeval as pe
    >>> reference = pe.ConfusionMatrix.from_counts(tp=400, fp=40, tn=500, fn=60)
    >>> exp = pe.Experiment(["accuracy", "recall"], reference=reference, precision=0.05, seed=0)
    >>> rng = np.random.default_rng(1)
    >>> for _ in range(3):
    ...     y = rng.random(500) < 0.46
    ...     pred = np.where(rng.random(500) < 0.9, y, ~y)
    ...     _ = exp.update(y, pred)
    >>> exp.status
    {'accuracy': 'accepted', 'recall': 'accepted'}
    """

    def __init__(
        self,
        metrics: Any = None,
        *,
        rope: Any = None,
        reference: Any = None,
        precision: Any = None,
        planned_n: int | None = None,
        assurance: float = 0.8,
        estimator: LabelFreeEstimator | None = None,
        design: LabellingPlan | None = None,
        target: str = "population",
        ci: float = 0.95,
        prior: Any = None,
        threshold: float = 0.5,
        labels: Any = None,
        pos_label: Any = None,
        beta: float = 1.0,
        zero_division: Any = 0.0,
        n_samples: int = 10_000,
        seed: int | None = None,
    ) -> None:
        if estimator is not None:
            if not isinstance(estimator, LabelFreeEstimator):
                raise TypeError(
                    f"estimator must be a fitted LabelFreeEstimator, got {describe(estimator)}"
                )
            if not estimator.is_fitted:
                raise ValueError("estimator must be fitted: call estimator.fit(...) first")
        if target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
        if design is not None:
            if not isinstance(design, LabellingPlan):
                raise TypeError(
                    f"design must be a LabellingPlan (pe.labelling_plan), got {describe(design)}"
                )
            if estimator is not None:
                raise TypeError("give an estimator or a design (labelling plan), not both")
            threshold = design.threshold
            if metrics is None:
                metrics = [design.metric]
        self.design = design
        self.ci = check_ci(ci)
        self.n_samples = check_n_samples(n_samples)
        self.seed = seed_from(seed) if seed is None else _check_seed(seed)
        self.threshold = check_threshold(threshold)
        self.beta = check_beta(beta)
        self.zero_division = check_zero_division(zero_division)
        self.prior = prior
        self.labels = None if labels is None else list(labels)
        self.pos_label = pos_label
        self.target = target
        self.estimator = estimator
        if metrics is None:
            if isinstance(reference, Evaluation):
                metrics = reference.metrics
            elif estimator is not None:
                metrics = estimator.metrics
            else:
                raise TypeError("name the metrics under test: Experiment(['accuracy', ...], ...)")
        self.metrics = _metric_names(metrics)
        if estimator is not None:
            unknown = [m for m in self.metrics if m not in estimator.metrics]
            if unknown:
                raise ValueError(f"the estimator was not fitted for {unknown}")
        ropes = _per_metric("rope", rope, self.metrics)
        if reference is None and estimator is not None:
            reference = estimator
        references = (
            {}
            if reference is None
            else _reference_posteriors(
                reference,
                self.metrics,
                prior=prior,
                n_samples=self.n_samples,
                seed=self.seed,
                beta=self.beta,
                zero_division=self.zero_division,
            )
        )
        self.ropes: dict[str, tuple[float, float]] = {}
        self.hypotheses: dict[str, str] = {}
        for metric in self.metrics:
            if ropes[metric] is not None:
                self.ropes[metric] = _experiment_rope(metric, ropes[metric])
                self.hypotheses[metric] = "within range"
            elif metric in references:
                self.ropes[metric] = no_worse_rope(references[metric], self.ci)
                self.hypotheses[metric] = "no worse than reference"
            else:
                raise ValueError(
                    f"{metric} has no hypothesis: give rope={{'{metric}': (lo, hi)}} or a "
                    "reference that has this metric"
                )
        self.precision = self._resolve_precision(
            precision, planned_n, assurance, reference, estimator
        )
        self._confusion: ConfusionMatrix | None = None
        self._rows: dict[str, list[Any]] = {"y_true": [], "y_pred": [], "y_score": []}
        self._weights: list[np.ndarray | None] = []
        # A design's labels, by position in the plan (None until reviewed).
        self._design_labels: np.ndarray | None = (
            None if design is None else np.full(design.rows.shape[0], None, dtype=object)
        )
        self._n = 0
        self._n_labelled = 0
        self._latest: dict[str, MetricStatus] = {}
        self._trajectory: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ set-up

    def _resolve_precision(
        self,
        precision: Any,
        planned_n: Any,
        assurance: Any,
        reference: Any,
        estimator: LabelFreeEstimator | None,
    ) -> dict[str, float | None]:
        given = _per_metric("precision", precision, self.metrics)
        resolved: dict[str, float | None] = {}
        assurance = check_open_unit("assurance", assurance)
        design = None
        if isinstance(reference, LabelFreeEstimator):
            design = reference.reference_confusion
        elif isinstance(reference, ConfusionMatrix):
            design = reference
        elif isinstance(reference, Evaluation):
            design = reference.confusion
        chunk_rows = None  # without labels, only a planned chunk size gives a default precision
        if planned_n is not None:
            planned_n = check_positive_int("planned_n", planned_n)
            chunk_rows = planned_n
        elif design is not None:
            planned_n = max(1, round(design.total))
        for metric in self.metrics:
            value = given[metric]
            if value is not None:
                resolved[metric] = check_positive(f"precision[{metric!r}]", value)
            elif estimator is not None and chunk_rows is not None and metric in estimator.metrics:
                from probeval.experiment.planning import assurance_precision

                # Without labels: the width that chunks of planned_n rows like the reference's
                # reach with probability `assurance`.
                resolved[metric] = assurance_precision(
                    metric,
                    chunk_rows,
                    rope=self.ropes[metric],
                    expected=estimator,
                    assurance=assurance,
                    ci=self.ci,
                    rng=self.seed,
                )
            elif (
                estimator is None
                and design is not None
                and planned_n is not None
                and not is_score_metric(metric)
            ):
                from probeval.experiment.planning import assurance_precision

                resolved[metric] = assurance_precision(
                    metric,
                    planned_n,
                    rope=self.ropes[metric],
                    expected=design,
                    assurance=assurance,
                    ci=self.ci,
                    prior=self.prior,
                    beta=self.beta,
                    zero_division=self.zero_division,
                    rng=self.seed,
                )
            else:
                resolved[metric] = None
        return resolved

    # ------------------------------------------------------------------ data

    @property
    def needs_rows(self) -> bool:
        """Whether the experiment keeps the rows (ranking metrics or an estimator need them);
        otherwise its state is the pooled confusion matrix, whatever the number of rows."""
        return (
            self.estimator is not None
            or self.design is not None
            or any(is_score_metric(m) for m in self.metrics)
        )

    def update(
        self,
        y_true: Any = None,
        y_pred: Any = None,
        y_score: Any = None,
        *,
        sample_weight: Any = None,
        rows: Any = None,
    ) -> dict[str, MetricStatus]:
        """Add a batch and return every metric's status on all the data so far.

        Parameters
        ----------
        y_true : array-like, optional
            Labels of the batch. Without an estimator they are required; with one they are
            optional and may be partly missing (NaN, None or pandas NA: the labels known so
            far, used as :meth:`LabelFreeEstimator.estimate`'s ``partial_labels``).
        y_pred : array-like, optional
            Predicted labels (labelled experiments without ranking metrics).
        y_score : array-like, optional
            Scores: thresholded at ``threshold`` when there is no ``y_pred``; required for
            ranking metrics and for an estimator.
        sample_weight : array-like, optional
            Row weights (labelled experiments only).
        rows : array-like of int, optional
            With a ``design`` (labelling plan): the rows the labels ``y_true`` are for, as
            positions in the scores the plan was made from (values of ``design.rows``). The
            predictions come from the plan; give neither ``y_pred`` nor ``y_score``.

        Returns
        -------
        dict of str to MetricStatus
        """
        if self.design is not None:
            if y_pred is not None or y_score is not None or sample_weight is not None:
                raise TypeError(
                    "a design's experiment takes labels and their rows: update(y_true, rows=...)"
                )
            self._add_reviewed(y_true, rows)
            return self._step()
        if rows is not None:
            raise TypeError("rows= goes with a design (labelling plan): Experiment(design=plan)")
        if self.estimator is not None:
            self._add_unlabelled(y_true, y_pred, y_score, sample_weight)
        elif self.needs_rows:
            self._add_ranked(y_true, y_pred, y_score, sample_weight)
        else:
            self._add_counts(y_true, y_pred, y_score, sample_weight)
        return self._step()

    def _add_counts(self, y_true: Any, y_pred: Any, y_score: Any, weights: Any) -> None:
        if y_true is None:
            raise TypeError(
                "this experiment has no estimator, so every batch needs labels: "
                "update(y_true, y_pred) or update(y_true, y_score=...)"
            )
        batch = evaluate(
            y_true,
            y_pred,
            y_score,
            metrics=list(self.metrics),
            threshold=self.threshold,
            sample_weight=weights,
            labels=self.labels,
            pos_label=self.pos_label,
            n_samples=1,
            rng=0,
        ).confusion
        self._confusion = batch if self._confusion is None else self._confusion + batch
        if self.labels is None and len(batch.labels) > 2:
            self.labels = list(self._confusion.labels)
        rows = len(as_1d("y_true", y_true))
        self._n += rows
        self._n_labelled += rows

    def _add_ranked(self, y_true: Any, y_pred: Any, y_score: Any, weights: Any) -> None:
        if y_true is None or y_score is None:
            raise TypeError(
                "ranking metrics need labels and scores in every batch: update(y_true, y_score=...)"
            )
        if self._n and (y_pred is None) != (self._rows["y_pred"][0] is None):
            raise ValueError("give y_pred in every batch or in none")
        if self._n and (weights is None) != (self._weights[0] is None):
            raise ValueError("give sample_weight in every batch or in none")
        truth = as_1d("y_true", y_true)
        scores = np.asarray(y_score)
        # Checked as evaluate checks them, on this batch alone (a bad batch is not kept).
        evaluate(
            truth,
            y_pred,
            scores,
            metrics=self.metrics,
            threshold=self.threshold,
            sample_weight=weights,
            labels=self.labels,
            pos_label=self.pos_label,
            n_samples=1,
            rng=0,
        )
        self._rows["y_true"].append(truth)
        self._rows["y_pred"].append(None if y_pred is None else as_1d("y_pred", y_pred))
        self._rows["y_score"].append(scores)
        self._weights.append(None if weights is None else np.asarray(weights, dtype=float))
        self._n += len(truth)
        self._n_labelled += len(truth)

    def _add_unlabelled(self, y_true: Any, y_pred: Any, y_score: Any, weights: Any) -> None:
        if y_pred is not None:
            raise TypeError("an estimator's experiment takes scores (y_score), not y_pred")
        if weights is not None:
            raise TypeError("sample_weight is not supported with an estimator")
        if y_score is None:
            raise TypeError("every batch needs scores: update(y_score=...)")
        scores = np.asarray(y_score)
        known = None
        if y_true is not None:
            known = (
                np.asarray(y_true, dtype=object) if not isinstance(y_true, np.ndarray) else y_true
            )
            if known.ndim != 1 or len(known) != len(scores):
                raise ValueError(
                    f"y_true must be one label per score ({len(scores)}), got shape {known.shape}"
                )
        assert self.estimator is not None
        # Checked as estimate checks them, on this batch alone (a bad batch is not kept).
        self.estimator.estimate(scores, partial_labels=known, n_samples=1, rng=0)
        self._rows["y_score"].append(scores)
        self._rows["y_true"].append(known)
        self._n += len(scores)
        self._n_labelled += 0 if known is None else int((~missing_mask(known)).sum())

    def _add_reviewed(self, y_true: Any, rows: Any) -> None:
        assert self.design is not None
        assert self._design_labels is not None
        if y_true is None or rows is None:
            raise TypeError(
                "a design's batch needs labels and their rows: update(y_true, rows=...)"
            )
        labels = as_1d("y_true", y_true)
        where = as_1d("rows", rows)
        if where.dtype.kind not in "iu":
            raise TypeError(f"rows must be integer row positions, got dtype {where.dtype}")
        check_same_length(y_true=labels, rows=where)
        position = {int(r): i for i, r in enumerate(self.design.rows.tolist())}
        outside = [int(r) for r in where.tolist() if int(r) not in position]
        if outside:
            raise ValueError(f"rows holds rows that are not in the plan, e.g. {outside[:3]!r}")
        index = np.array([position[int(r)] for r in where.tolist()], dtype=np.intp)
        if len(set(index.tolist())) < index.size or any(
            v is not None for v in self._design_labels[index].tolist()
        ):
            raise ValueError("rows holds a row that is already labelled (or the same row twice)")
        if missing_mask(labels).any():
            raise ValueError("y_true holds missing labels: update with the reviewed rows only")
        trial = self._design_labels.copy()
        trial[index] = labels.tolist()
        # Checked as the posterior will use them, on the labels so far (a bad batch is not kept).
        self.design.evaluate(trial, self.metrics, pos_label=self.pos_label, n_samples=1, rng=0)
        self._design_labels = trial
        self._n += labels.shape[0]
        self._n_labelled += labels.shape[0]

    def _pooled_weights(self) -> np.ndarray | None:
        # Batches are either all weighted or all unweighted (update refuses a mix).
        parts = [w for w in self._weights if w is not None]
        return np.concatenate(parts) if parts and len(parts) == len(self._weights) else None

    def _pooled(self, key: str) -> np.ndarray | None:
        parts = self._rows[key]
        if not parts or (parts[0] is None and all(p is None for p in parts)):
            return None
        if key == "y_true" and any(p is None for p in parts):
            parts = [
                np.full(len(s), None, dtype=object) if p is None else p
                for p, s in zip(parts, self._rows["y_score"], strict=True)
            ]
        if len({p.dtype.kind for p in parts}) > 1:
            parts = [np.asarray(p, dtype=object) for p in parts]
        return np.concatenate(parts)

    def posteriors(self) -> dict[str, Posterior]:
        """Every metric's posterior on all the data so far (the pooled data's posterior)."""
        if self._n == 0:
            raise ValueError("the experiment has no data yet: call update(...) first")
        if self.design is not None:
            assert self._design_labels is not None
            evaluation = self.design.evaluate(
                self._design_labels,
                self.metrics,
                target=self.target,
                prior="scores" if self.prior is None else self.prior,
                n_samples=self.n_samples,
                rng=self.seed,
                beta=self.beta,
                zero_division=self.zero_division,
                pos_label=self.pos_label,
            )
            return {m: evaluation[m] for m in self.metrics}
        if self.estimator is not None:
            result = self.estimator.estimate(
                self._pooled("y_score"),
                partial_labels=self._pooled("y_true"),
                target=self.target,
                n_samples=self.n_samples,
                rng=self.seed,
                ci=self.ci,
                beta=self.beta,
                zero_division=self.zero_division,
            )
            return {m: result.posterior(m) for m in self.metrics}
        if self._confusion is not None:
            evaluation = evaluate(
                self._confusion,
                metrics=self.metrics,
                prior=self.prior,
                n_samples=self.n_samples,
                rng=self.seed,
                beta=self.beta,
                zero_division=self.zero_division,
            )
        else:
            weights = self._pooled_weights()
            evaluation = evaluate(
                self._pooled("y_true"),
                self._pooled("y_pred"),
                self._pooled("y_score"),
                metrics=self.metrics,
                threshold=self.threshold,
                prior=self.prior,
                n_samples=self.n_samples,
                rng=self.seed,
                sample_weight=weights,
                labels=self.labels,
                pos_label=self.pos_label,
                beta=self.beta,
                zero_division=self.zero_division,
            )
        return {m: evaluation[m] for m in self.metrics}

    def posterior(self, metric: str) -> Posterior:
        """One metric's posterior on all the data so far."""
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {self.metrics}, got {metric!r}")
        return self.posteriors()[metric]

    def _step(self) -> dict[str, MetricStatus]:
        posteriors = self.posteriors()
        latest = {}
        for metric in self.metrics:
            decision = decide(
                posteriors[metric],
                self.ropes[metric],
                ci=self.ci,
                precision=self.precision[metric],
            )
            latest[metric] = MetricStatus.of(
                posteriors[metric], decision, self.hypotheses[metric], self._n, self._n_labelled
            )
        self._latest = latest
        self._trajectory.append(
            {"batch": len(self._trajectory) + 1, **{m: s.to_dict() for m, s in latest.items()}}
        )
        return dict(latest)

    # ------------------------------------------------------------------ results

    @property
    def n(self) -> int:
        """Rows seen so far."""
        return self._n

    @property
    def n_batches(self) -> int:
        return len(self._trajectory)

    @property
    def status(self) -> dict[str, str]:
        """Each metric's status: "accepted", "rejected" or "ongoing"."""
        return {m: self._latest[m].status if self._latest else "ongoing" for m in self.metrics}

    @property
    def done(self) -> bool:
        """Whether every metric has a final answer."""
        return all(s != "ongoing" for s in self.status.values())

    def summary(self) -> Table:
        """One row per metric: hypothesis, ROPE, rows, posterior mean, HDI, width, required
        precision, status."""
        if not self._latest:
            raise ValueError("the experiment has no data yet: call update(...) first")
        rows = [self._latest[m].to_dict() for m in self.metrics]
        return Table(
            {key: [row[key] for row in rows] for key in rows[0]},
            title=f"experiment after {self.n_batches} batch(es), {self._n:,} rows",
        )

    def trajectory(self, metric: str | None = None) -> Table:
        """One row per batch (and metric): rows so far, HDI, width, status."""
        names = self.metrics if metric is None else [metric]
        for name in names:
            if name not in self.metrics:
                raise ValueError(f"metric must be one of {self.metrics}, got {name!r}")
        rows = [
            {"batch": step["batch"], **step[name]} for step in self._trajectory for name in names
        ]
        keys = ["batch", *MetricStatus.__dataclass_fields__]
        flat = {key: [row[key] for row in rows] for key in ["batch", *rows[0]]} if rows else {}
        if not rows:
            flat = {key: [] for key in keys}
        return Table(flat, title="experiment trajectory")

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-friendly state: settings, pooled data and trajectory (see
        :meth:`from_dict`)."""
        rows: dict[str, Any] | None = None
        if self.needs_rows and self._n and self.design is None:
            truth = self._pooled("y_true")
            pred = self._pooled("y_pred")
            scores = self._pooled("y_score")
            assert scores is not None
            weights = self._pooled_weights()
            rows = {
                "y_true": None if truth is None else _plain_labels(truth),
                "y_pred": None if pred is None else _plain_labels(pred),
                "y_score": scores.tolist(),
                "sample_weight": None if weights is None else weights.tolist(),
            }
        return {
            "format": _FORMAT,
            "metrics": list(self.metrics),
            "hypotheses": dict(self.hypotheses),
            "ropes": {m: list(r) for m, r in self.ropes.items()},
            "precision": dict(self.precision),
            "ci": self.ci,
            "prior": _prior_dict(self.prior),
            "threshold": self.threshold,
            "labels": self.labels,
            "pos_label": self.pos_label,
            "beta": self.beta,
            "zero_division": self.zero_division,
            "n_samples": self.n_samples,
            "seed": self.seed,
            "target": self.target,
            "estimator": None if self.estimator is None else self.estimator.to_dict(),
            "design": None if self.design is None else self.design.to_dict(),
            "design_labels": None
            if self._design_labels is None
            else _plain_labels(self._design_labels),
            "n": self._n,
            "n_labelled": self._n_labelled,
            "confusion": None if self._confusion is None else self._confusion.to_dict(),
            "rows": rows,
            "trajectory": self._trajectory,
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """The :meth:`to_dict` state as JSON text, also written to ``path`` if given."""
        text = json.dumps(self.to_dict(), allow_nan=True)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Experiment:
        """Rebuild an experiment from :meth:`to_dict` output."""
        if not isinstance(data, Mapping):
            raise TypeError(f"from_dict needs a dict, got {describe(data)}")
        if data.get("format") != _FORMAT:
            raise ValueError(f"not a saved experiment (format {data.get('format')!r})")
        estimator = (
            None if data["estimator"] is None else LabelFreeEstimator.from_dict(data["estimator"])
        )
        ropes = {m: tuple(r) for m, r in data["ropes"].items()}
        design = None if data.get("design") is None else LabellingPlan.from_dict(data["design"])
        experiment = cls(
            data["metrics"],
            rope=ropes,
            precision={m: p for m, p in data["precision"].items() if p is not None} or None,
            estimator=estimator,
            design=design,
            target=data["target"],
            ci=data["ci"],
            prior=_prior_from_dict(data["prior"]),
            threshold=data["threshold"],
            labels=data["labels"],
            pos_label=data["pos_label"],
            beta=data["beta"],
            zero_division=data["zero_division"],
            n_samples=data["n_samples"],
            seed=data["seed"],
        )
        experiment.hypotheses = dict(data["hypotheses"])
        experiment.precision = {m: data["precision"].get(m) for m in experiment.metrics}
        if data["confusion"] is not None:
            experiment._confusion = ConfusionMatrix.from_dict(data["confusion"])
        rows = data["rows"]
        if rows is not None:
            scores = np.asarray(rows["y_score"], dtype=float)
            truth = rows["y_true"]
            experiment._rows["y_score"].append(scores)
            experiment._rows["y_true"].append(
                None
                if truth is None
                else np.asarray(truth, dtype=object)
                if any(v is None for v in truth)
                else np.asarray(truth)
            )
            pred = rows["y_pred"]
            experiment._rows["y_pred"].append(None if pred is None else np.asarray(pred))
            weights = rows["sample_weight"]
            experiment._weights.append(None if weights is None else np.asarray(weights))
        if design is not None:
            experiment._design_labels = np.array(data["design_labels"], dtype=object)
        experiment._n = int(data["n"])
        experiment._n_labelled = int(data["n_labelled"])
        experiment._trajectory = list(data["trajectory"])
        if experiment._trajectory:
            last = experiment._trajectory[-1]
            experiment._latest = {m: MetricStatus.from_dict(last[m]) for m in experiment.metrics}
        return experiment

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> Experiment:
        """Rebuild an experiment from :meth:`to_json` text or a file holding it."""
        text = str(text_or_path)
        if not text.lstrip().startswith("{"):
            text = Path(text_or_path).read_text(encoding="utf-8")
        return cls.from_dict(json.loads(text))

    def _html(self) -> str:
        if not self._latest:
            return f"<pre>{escape(repr(self))}</pre>"
        return f"<h3>experiment</h3>{self.summary().to_html()}"

    def __repr__(self) -> str:
        if not self._latest:
            return f"Experiment(metrics={self.metrics}, no data yet)"
        return str(self.summary())


def _check_seed(seed: Any) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be None or an integer >= 0, got {describe(seed)}")
    if int(seed) < 0:
        raise ValueError(f"seed must be >= 0, got {int(seed)}")
    return int(seed)
