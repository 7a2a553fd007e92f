"""Performance without labels: reference-calibrated posterior estimation (SPEC §2.4).

Labels often arrive weeks late, or never. :class:`LabelFreeEstimator` learns, on reference data
with labels, how often each score range is right (``fit``), and then turns scores alone into
posteriors of accuracy, precision, recall, F1, ROC AUC, ... per chunk of production data
(``estimate``) — with the uncertainty of both the reference calibration and the finite data.

Two targets, both needed, and easy to confuse:

- ``target="population"`` (default): the metric of the population the data came from. It
  leaves out the noise of drawing labels, so it does *not* cover the value measured on a chunk
  once labels arrive (only about half the time, by design).
- ``target="realized"``: the posterior predictive of the value that will be measured on exactly
  these rows once their labels arrive. Compare this one with realized values.

Assumption: no concept shift — P(label | score) is the same in the reference and production
data. The score distribution may change freely (that is what the estimate tracks).
"""

from __future__ import annotations

import json
import math
import numbers
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.classes import encode, is_standard_binary, observed_classes, resolve_labels
from probeval._util.frames import is_frame, resolve
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_labels,
    as_name_list,
    as_probabilities,
    check_beta,
    check_ci,
    check_n_samples,
    check_same_length,
    check_threshold,
    check_zero_division,
    describe,
)
from probeval.base.metrics import BINARY_METRICS, DEFAULT_BINARY, canonical_name, metric_info
from probeval.base.posterior import Posterior
from probeval.base.priors import resolve_prior
from probeval.compare.decisions import Decision, decide
from probeval.labelfree.chunking import Chunk, make_chunks
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.scores import ScoreSummary

__all__ = ["LabelFreeEstimate", "LabelFreeEstimator"]

CALIBRATIONS = ("reference", "perfect")
TARGETS = ("population", "realized")
WITHIN_BIN = ("concordance", "ties")
DEFAULT_METRICS = (*DEFAULT_BINARY, "roc_auc")
#: Bins of the reference scores kept for the reference ROC AUC posterior (decisions; saved
#: with the estimator). 256 equal-frequency bins move the AUC by < 1e-4 on 5,000-500,000 rows
#: of a calibrated model, and cost an eighth of 2048.
_REFERENCE_AUC_BINS = 256
_FORMAT = "probeval.LabelFreeEstimator/1"


def _choice(name: str, value: Any, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def _check_n_bins(n_bins: Any) -> int:
    if isinstance(n_bins, (bool, np.bool_)) or not isinstance(n_bins, numbers.Integral):
        raise TypeError(f"n_bins must be an integer, got {describe(n_bins)}")
    if not 1 <= int(n_bins) <= 10_000:
        raise ValueError(f"n_bins must be between 1 and 10000, got {n_bins}")
    return int(n_bins)


def _check_metrics(metrics: Any) -> list[str]:
    names = list(DEFAULT_METRICS) if metrics is None else as_name_list("metrics", metrics)
    resolved = []
    for name in names:
        key = canonical_name(name)
        if key not in BINARY_METRICS and key != "roc_auc":
            raise ValueError(
                f"{name!r} cannot be estimated without labels; available: binary metrics "
                f"({', '.join(BINARY_METRICS)}) and roc_auc"
            )
        if key not in resolved:
            resolved.append(key)
    if not resolved:
        raise ValueError("metrics must name at least one metric")
    return resolved


class LabelFreeEstimator:
    """Estimate a binary classifier's performance on data without labels.

    Parameters
    ----------
    n_bins : int
        Equal-frequency bins of the reference scores (an edge at ``threshold`` is added, so
        that no bin mixes predictions).
    threshold : float
        Decision threshold: a row is predicted positive when its score is > threshold.
    metrics : list of str, optional
        Binary metrics and ``roc_auc``; default: accuracy, precision, recall, specificity, f1,
        mcc, balanced_accuracy, roc_auc.
    calibration : "reference" or "perfect"
        "reference" (default) learns each bin's positive rate from the reference labels, with its
        uncertainty; "perfect" trusts the scores as probabilities (narrower, and wrong when the
        model is miscalibrated).
    auc_within_bin : "concordance" or "ties"
        How ROC AUC credits pairs within one bin. "ties" (the plain algorithm) gives them ½,
        which biases the AUC low, because scores still rank within a bin; "concordance" (default)
        gives them the bin's concordance measured on the reference data (or, with perfect
        calibration, implied by the scores).

    Examples
    --------
    >>> import numpy as np, probeval as pe
    >>> rng = np.random.default_rng(0)
    >>> ref_scores = rng.beta(1.3, 2.0, 20_000)
    >>> ref_labels = rng.random(20_000) < ref_scores
    >>> estimator = pe.LabelFreeEstimator().fit(ref_labels, ref_scores)
    >>> result = estimator.estimate(rng.beta(1.3, 2.0, 5_000), n_chunks=2, rng=0)
    >>> post = result.posterior("accuracy", chunk=0)
    """

    def __init__(
        self,
        n_bins: int = 10,
        threshold: float = 0.5,
        metrics: Any = None,
        calibration: str = "reference",
        auc_within_bin: str = "concordance",
    ) -> None:
        self.n_bins: int = _check_n_bins(n_bins)
        self.threshold: float = check_threshold(threshold)
        self.metrics: list[str] = _check_metrics(metrics)
        self.calibration: str = _choice("calibration", calibration, CALIBRATIONS)
        self.auc_within_bin: str = _choice("auc_within_bin", auc_within_bin, WITHIN_BIN)
        self._fitted: dict[str, Any] | None = None

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        data: Any = None,
        /,
        y_score: Any = None,
        *,
        y_true: Any = None,
        pos_label: Any = None,
    ) -> LabelFreeEstimator:
        """Learn the calibration from reference labels and scores (probabilities in [0, 1]):
        ``fit(y_true, y_score)``, or ``fit(df, y_true="label", y_score="proba")``."""
        if is_frame(data):
            columns = resolve(data, y_true=y_true, y_score=y_score)
            y_true, y_score = columns["y_true"], columns["y_score"]
        elif data is not None:
            if y_true is not None:
                raise TypeError("pass the labels once: positionally or as y_true=..., not both")
            y_true = data
        if y_true is None or y_score is None:
            raise TypeError("fit needs the reference labels and scores: fit(y_true, y_score)")
        truth = as_labels("y_true", y_true)
        scores = as_probabilities("y_score", y_score)
        check_same_length(y_true=truth, y_score=scores)
        order = resolve_labels(observed_classes(truth), None, pos_label)
        if len(order) != 2:
            raise ValueError(f"y_true must be binary, found classes {order!r}")
        if pos_label is None and not is_standard_binary(order):
            raise ValueError(
                f"y_true has the classes {order!r}; pass pos_label=... to say which one the "
                "scores are the probability of"
            )
        positive = encode(truth, order) == 1
        calibration = _core.labelfree_fit(scores, positive, self.n_bins, self.threshold)
        # The reference's own posteriors (for "no worse than reference" decisions), from the
        # arrays validated above.
        cells = np.bincount(positive * 2 + (scores > self.threshold), minlength=4)
        values, pos_counts, neg_counts = _core.unique_scores(scores, positive, None)
        summary = ScoreSummary(values, pos_counts, neg_counts, labels=(order[0], order[1]))
        self._store(calibration, cells.astype(np.float64), summary)
        return self

    def fit_summary(self, summary: ScoreSummary) -> LabelFreeEstimator:
        """Fit from a :class:`ScoreSummary` of the reference data (unweighted) instead of its
        rows — exactly the same result as :meth:`fit` on those rows. Summaries of parts of the
        data can be built where the data live and added up (``+``): see :mod:`probeval.dask`."""
        if not isinstance(summary, ScoreSummary):
            raise TypeError(f"fit_summary needs a ScoreSummary, got {describe(summary)}")
        if summary.n_distinct == 0:
            raise ValueError("the ScoreSummary is empty")
        values, pos, neg = summary.values, summary.positives, summary.negatives
        if values[0] < 0 or values[-1] > 1:
            raise ValueError("reference scores must be probabilities in [0, 1]")
        calibration = _core.labelfree_fit_counts(values, pos, neg, self.n_bins, self.threshold)
        above = values > self.threshold
        # Cells (TN, FP, FN, TP): negatives below / above the threshold, positives likewise.
        cells = np.array([neg[~above].sum(), neg[above].sum(), pos[~above].sum(), pos[above].sum()])
        self._store(calibration, cells, summary)
        return self

    def _store(
        self, calibration: tuple[np.ndarray, ...], cells: np.ndarray, summary: ScoreSummary
    ) -> None:
        edges, pos, neg, concordance, se = calibration
        confusion = ConfusionMatrix._from_matrix(cells.reshape(2, 2), [0, 1], weighted=False)
        self._fitted = {
            "labels": list(summary.labels),
            "edges": edges,
            "positives": pos,
            "negatives": neg,
            "concordance": concordance,
            "concordance_se": se,
            "reference_confusion": confusion,
            "reference_scores": summary.binned(_REFERENCE_AUC_BINS),
        }

    @property
    def is_fitted(self) -> bool:
        return self._fitted is not None

    def _state(self) -> dict[str, Any]:
        if self._fitted is None:
            raise ValueError("this LabelFreeEstimator is not fitted yet: call fit(y_true, y_score)")
        return self._fitted

    @property
    def bin_edges(self) -> np.ndarray:
        """All bin edges, from 0 to 1 (the threshold among them)."""
        state = self._state()
        edges: np.ndarray = np.concatenate([[0.0], state["edges"], [1.0]])
        return edges

    @property
    def bin_table(self) -> Table:
        """Per bin: edges, prediction, reference counts, positive rate and concordance."""
        state = self._state()
        edges = self.bin_edges
        pos, neg = state["positives"], state["negatives"]
        return Table(
            {
                "low": edges[:-1].tolist(),
                "high": edges[1:].tolist(),
                "predicted": (edges[:-1] >= self.threshold).astype(int).tolist(),
                "positives": pos.tolist(),
                "negatives": neg.tolist(),
                "positive_rate": ((pos + 1) / (pos + neg + 2)).tolist(),
                "concordance": state["concordance"].tolist(),
            },
            title="reference calibration",
        )

    def _calibration_args(self) -> tuple[Any, ...]:
        state = self._state()
        return (
            state["edges"],
            state["positives"],
            state["negatives"],
            state["concordance"],
            state["concordance_se"],
            self.threshold,
        )

    # ------------------------------------------------------------------ estimation

    def estimate(
        self,
        data: Any = None,
        /,
        *,
        y_score: Any = None,
        target: str = "population",
        y_true: Any = None,
        chunk_size: Any = None,
        n_chunks: Any = None,
        period: Any = None,
        timestamps: Any = None,
        n_samples: int = 10_000,
        rng: Any = None,
        ci: float = 0.95,
        beta: float = 1.0,
        zero_division: Any = 0.0,
    ) -> LabelFreeEstimate:
        """Posteriors of the metrics on scores without labels, per chunk.

        Parameters
        ----------
        data : array-like or data frame
            The scores P(y = 1) in [0, 1]; or a data frame whose columns ``y_score``,
            ``y_true`` and ``timestamps`` name.
        y_score : array-like or column name, optional
            The scores by keyword, or a column of ``data``.
        target : "population" or "realized"
            The population metric, or the posterior predictive of the value these rows will
            show once labelled (see the module docstring).
        y_true : array-like, optional
            Labels of these rows, if they exist (e.g. in a backtest): each chunk then also
            reports the realized value and its with-labels posterior next to the estimate.
        chunk_size, n_chunks, period, timestamps :
            Chunking (at most one of the first three): ``chunk_size`` rows per chunk,
            ``n_chunks`` nearly equal chunks, or one chunk per ``period`` ("h", "D", "W", "M",
            "Q", "Y") of ``timestamps``. Default: one chunk.
        n_samples : int
            Posterior draws per chunk and metric.
        rng : None, int, Generator or SeedSequence
        ci : float
            Probability of the HDIs in summaries and of the "no worse than reference" decision.
        beta, zero_division :
            As in :func:`probeval.evaluate`.
        """
        self._state()  # fitted?
        if is_frame(data):
            columns = resolve(data, y_score=y_score, y_true=y_true, timestamps=timestamps)
            y_score, y_true, timestamps = (
                columns["y_score"],
                columns["y_true"],
                columns["timestamps"],
            )
        elif data is not None:
            if y_score is not None:
                raise TypeError("pass the scores once: positionally or as y_score=..., not both")
            y_score = data
        if y_score is None:
            raise TypeError("estimate needs the scores: estimate(y_score)")
        target = _choice("target", target, TARGETS)
        scores = as_probabilities("y_score", y_score)
        chunks = make_chunks(
            scores.shape[0],
            chunk_size=chunk_size,
            n_chunks=n_chunks,
            period=period,
            timestamps=timestamps,
        )
        truth = None
        if y_true is not None:
            truth = as_labels("y_true", y_true)
            check_same_length(y_true=truth, y_score=scores)
        n = check_n_samples(n_samples)
        ci = check_ci(ci)
        beta = check_beta(beta)
        zd = check_zero_division(zero_division)
        seed = seed_from(rng)
        order = np.concatenate([chunk.rows for chunk in chunks])
        starts = np.cumsum([0] + [chunk.n_rows for chunk in chunks[:-1]]).tolist()
        arranged = np.ascontiguousarray(scores[order])
        calibration = self._calibration_args()
        concordance = self.calibration == "perfect" and self.auc_within_bin == "concordance"
        stats = _core.labelfree_chunk_stats(calibration, arranged, starts, concordance)
        binary = [m for m in self.metrics if m != "roc_auc"]
        want_auc = "roc_auc" in self.metrics
        options = (target, self.calibration, self.auc_within_bin == "concordance", want_auc)
        draws = _core.labelfree_estimate(
            calibration, stats, binary, options, n, derive(seed, 0), beta, zd
        )
        names = binary + (["roc_auc"] if want_auc else [])
        results = []
        for chunk in chunks:
            estimates = {
                name: Posterior(
                    name,
                    samples=np.ascontiguousarray(draws[chunk.index, row]),
                    bounds=metric_info(name).bounds,
                )
                for row, name in enumerate(names)
            }
            realized: dict[str, tuple[float, Posterior | None]] = {}
            if truth is not None:
                realized = self._realized(
                    truth[chunk.rows], scores[chunk.rows], names, n, seed, chunk.index, beta, zd
                )
            results.append(_ChunkResult(chunk, estimates, realized))
        return LabelFreeEstimate(
            results,
            names,
            reference=lambda: self._reference_posteriors(names, n, beta, zd),
            target=target,
            calibration=self.calibration,
            ci=ci,
            counts=np.asarray(stats[0]),
        )

    def _reference_posteriors(
        self, names: list[str], n: int, beta: float, zd: float
    ) -> dict[str, Posterior]:
        """Each metric's posterior on the reference data, with its labels (§2.1, §2.3).

        A property of the fitted estimator, so it is computed once (per number of draws and
        metric settings) from a stream fixed by the reference data, not by ``rng``: a service
        that estimates per request does not pay for it every time, and a given ``rng`` still
        gives the same result whatever was estimated before."""
        state = self._state()
        key = (tuple(names), n, beta, zd)
        cache: dict[Any, dict[str, Posterior]] = state.setdefault("reference_cache", {})
        if key not in cache:
            cache[key] = self._compute_reference(names, n, beta, zd)
        return cache[key]

    def _compute_reference(
        self, names: list[str], n: int, beta: float, zd: float
    ) -> dict[str, Posterior]:
        state = self._state()
        confusion: ConfusionMatrix = state["reference_confusion"]
        seed = zlib.crc32(np.ascontiguousarray(confusion.counts).tobytes())
        result: dict[str, Posterior] = {}
        binary = [m for m in names if m != "roc_auc"]
        if binary:
            result.update(
                confusion._posteriors(
                    [confusion._spec(m) for m in binary],
                    prior=_uniform_prior(),
                    n_samples=n,
                    seed=seed,
                    beta=beta,
                    zero_division=zd,
                    joint=False,
                )
            )
        if "roc_auc" in names:
            summary: ScoreSummary = state["reference_scores"]
            result["roc_auc"] = summary.posterior("roc_auc", n_samples=n, rng=derive(seed, 1))
        return result

    def _realized(
        self,
        truth: np.ndarray,
        scores: np.ndarray,
        names: list[str],
        n: int,
        seed: int,
        chunk: int,
        beta: float,
        zd: float,
    ) -> dict[str, tuple[float, Posterior | None]]:
        """Realized value and with-labels posterior of each metric on one chunk."""
        state = self._state()
        labels = state["labels"]
        unknown = [c for c in observed_classes(truth) if c not in labels]
        if unknown:
            raise ValueError(
                f"y_true contains classes {unknown!r} that the reference did not have ({labels!r})"
            )
        positive = (encode(truth, labels) == 1).astype(np.int64)
        confusion = ConfusionMatrix.from_scores(positive, scores, threshold=self.threshold)
        out: dict[str, tuple[float, Posterior | None]] = {}
        binary = [m for m in names if m != "roc_auc"]
        if binary:
            posts = confusion._posteriors(
                [confusion._spec(m) for m in binary],
                prior=_uniform_prior(),
                n_samples=n,
                seed=derive(seed, 2 + 2 * chunk),
                beta=beta,
                zero_division=zd,
                joint=False,
            )
            for name in binary:
                out[name] = (posts[name].observed, posts[name])
        if "roc_auc" in names:
            summary = ScoreSummary.from_scores(positive, scores)
            if summary.n_positives > 0 and summary.n_negatives > 0:
                post = summary.posterior(n_samples=n, rng=derive(seed, 3 + 2 * chunk))
                out["roc_auc"] = (post.observed, post)
            else:
                out["roc_auc"] = (math.nan, None)  # one class in the chunk: undefined
        return out

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description of the fitted estimator (see :meth:`from_dict`)."""
        state = self._state()
        confusion: ConfusionMatrix = state["reference_confusion"]
        return {
            "format": _FORMAT,
            "n_bins": self.n_bins,
            "threshold": self.threshold,
            "metrics": list(self.metrics),
            "calibration": self.calibration,
            "auc_within_bin": self.auc_within_bin,
            "labels": list(state["labels"]),
            "edges": state["edges"].tolist(),
            "positives": state["positives"].tolist(),
            "negatives": state["negatives"].tolist(),
            "concordance": state["concordance"].tolist(),
            "concordance_se": state["concordance_se"].tolist(),
            "reference_confusion": confusion.counts.tolist(),
            "reference_scores": state["reference_scores"].to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabelFreeEstimator:
        """Rebuild a fitted estimator from :meth:`to_dict` output."""
        if not isinstance(data, dict):
            raise TypeError(f"from_dict needs a dict, got {describe(data)}")
        if data.get("format") != _FORMAT:
            raise ValueError(
                f"not a saved LabelFreeEstimator (format {data.get('format')!r}, "
                f"expected {_FORMAT!r})"
            )
        try:
            estimator = cls(
                n_bins=data["n_bins"],
                threshold=data["threshold"],
                metrics=data["metrics"],
                calibration=data["calibration"],
                auc_within_bin=data["auc_within_bin"],
            )
            arrays = {
                key: np.asarray(data[key], dtype=np.float64)
                for key in ("edges", "positives", "negatives", "concordance", "concordance_se")
            }
            counts = np.asarray(data["reference_confusion"], dtype=np.float64)
            summary = ScoreSummary.from_dict(data["reference_scores"])
            labels = list(data["labels"])
        except KeyError as error:
            raise ValueError(f"the saved estimator lacks the key {error.args[0]!r}") from None
        estimator._fitted = {
            "labels": labels,
            **arrays,
            "reference_confusion": ConfusionMatrix(counts, labels=[0, 1]),
            "reference_scores": summary,
        }
        # Let the core check the calibration once, now rather than at the first estimate.
        _core.labelfree_chunk_stats(estimator._calibration_args(), np.array([0.5]), [0], False)
        return estimator

    def save(self, path: str | Path) -> None:
        """Write the fitted estimator to a JSON file (no pickle)."""
        Path(path).write_text(json.dumps(self.to_dict()), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> LabelFreeEstimator:
        """Read an estimator written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def __repr__(self) -> str:
        fitted = "fitted" if self.is_fitted else "not fitted"
        return (
            f"LabelFreeEstimator(n_bins={self.n_bins}, threshold={self.threshold:g}, "
            f"calibration={self.calibration!r}, auc_within_bin={self.auc_within_bin!r}, "
            f"{fitted})"
        )


def _uniform_prior() -> Any:
    return resolve_prior(1.0, 2)


def _no_worse(estimate: Posterior, reference: Posterior, ci: float) -> Decision | None:
    """Is the chunk no worse than the reference? The ROPE runs from the reference HDI's worse
    edge to the best possible value; None for metrics with no better direction."""
    better = metric_info(estimate.metric).better
    low, high = reference.hdi(ci)
    lower, upper = estimate.bounds
    if better == "higher":
        return decide(estimate, (low, upper), ci=ci)
    if better == "lower":
        return decide(estimate, (lower, high), ci=ci)
    return None


class _ChunkResult:
    __slots__ = ("chunk", "estimates", "realized")

    def __init__(
        self,
        chunk: Chunk,
        estimates: dict[str, Posterior],
        realized: dict[str, tuple[float, Posterior | None]],
    ) -> None:
        self.chunk = chunk
        self.estimates = estimates
        self.realized = realized


class LabelFreeEstimate:
    """Estimated posteriors per chunk and metric (from :meth:`LabelFreeEstimator.estimate`).

    ``result.posterior("f1", chunk=2)`` is a :class:`Posterior`; ``chunk`` is an index or a
    chunk key (e.g. "2024-03" for monthly chunks). :meth:`summary` is the table of all chunks;
    with labels given to ``estimate`` it also shows the realized values.
    """

    def __init__(
        self,
        results: list[_ChunkResult],
        metrics: list[str],
        *,
        reference: Callable[[], dict[str, Posterior]],
        target: str,
        calibration: str,
        ci: float,
        counts: np.ndarray,
    ) -> None:
        self._results = results
        self._metrics = metrics
        # The reference posteriors (for decisions) are computed on first use.
        self._make_reference = reference
        self._reference: dict[str, Posterior] | None = None
        self.target = target
        self.calibration = calibration
        self.ci = ci
        self._counts = counts

    @property
    def metrics(self) -> list[str]:
        return list(self._metrics)

    @property
    def chunks(self) -> list[Chunk]:
        return [r.chunk for r in self._results]

    @property
    def has_labels(self) -> bool:
        return bool(self._results and self._results[0].realized)

    def bin_counts(self, chunk: Any = 0) -> np.ndarray:
        """Rows of the chunk in each calibration bin."""
        return np.asarray(self._counts[self._result(chunk).chunk.index])

    def _result(self, chunk: Any) -> _ChunkResult:
        if isinstance(chunk, (bool, np.bool_)):
            raise TypeError(f"chunk must be an index or a chunk key, got {chunk!r}")
        if isinstance(chunk, numbers.Integral):
            index = int(chunk)
            if not -len(self._results) <= index < len(self._results):
                raise IndexError(f"chunk {index} out of range ({len(self._results)} chunks)")
            return self._results[index]
        for result in self._results:
            if result.chunk.key == chunk:
                return result
        keys = ", ".join(repr(r.chunk.key) for r in self._results[:10])
        raise KeyError(
            f"no chunk {chunk!r}; chunks: {keys}{' ...' if len(self._results) > 10 else ''}"
        )

    def _metric(self, metric: Any) -> str:
        name = canonical_name(metric)
        if name not in self._metrics:
            raise KeyError(f"{metric!r} was not estimated; metrics: {', '.join(self._metrics)}")
        return name

    def posterior(self, metric: str, chunk: Any = 0) -> Posterior:
        """The estimated posterior of ``metric`` on ``chunk``."""
        return self._result(chunk).estimates[self._metric(metric)]

    def _references(self) -> dict[str, Posterior]:
        if self._reference is None:
            self._reference = self._make_reference()
        return self._reference

    def reference_posterior(self, metric: str) -> Posterior:
        """The metric's posterior on the reference data (with its labels)."""
        return self._references()[self._metric(metric)]

    def realized(self, metric: str, chunk: Any = 0) -> float | None:
        """The value measured with the chunk's labels (None without labels; nan if undefined)."""
        entry = self._result(chunk).realized.get(self._metric(metric))
        return None if entry is None else entry[0]

    def realized_posterior(self, metric: str, chunk: Any = 0) -> Posterior | None:
        """The with-labels posterior of the chunk (None without labels or when undefined)."""
        entry = self._result(chunk).realized.get(self._metric(metric))
        return None if entry is None else entry[1]

    def decision(self, metric: str, chunk: Any = 0) -> Decision | None:
        """ "No worse than the reference": accepted when the chunk's HDI lies within [the
        reference HDI's worse edge, the best value], rejected when wholly outside (None for
        prevalence and selection rate, which have no better direction)."""
        name = self._metric(metric)
        return _no_worse(self.posterior(name, chunk), self._references()[name], self.ci)

    def summary(self, ci: float | None = None) -> Table:
        """One row per chunk and metric: estimate mean, HDI, decision (and realized values)."""
        level = self.ci if ci is None else check_ci(ci)
        columns: dict[str, list[Any]] = {
            key: []
            for key in ("chunk", "metric", "n_rows", "mean", "hdi_low", "hdi_high", "decision")
        }
        if self.has_labels:
            columns.update({"realized": [], "realized_low": [], "realized_high": []})
        for result in self._results:
            for name in self._metrics:
                post = result.estimates[name]
                low, high = post.hdi(level)
                columns["chunk"].append(result.chunk.key)
                columns["metric"].append(name)
                columns["n_rows"].append(result.chunk.n_rows)
                columns["mean"].append(post.mean())
                columns["hdi_low"].append(low)
                columns["hdi_high"].append(high)
                verdict = self.decision(name, result.chunk.index)
                columns["decision"].append("" if verdict is None else verdict.status)
                if self.has_labels:
                    value, with_labels = result.realized[name]
                    interval = (
                        (math.nan, math.nan) if with_labels is None else with_labels.hdi(level)
                    )
                    columns["realized"].append(value)
                    columns["realized_low"].append(interval[0])
                    columns["realized_high"].append(interval[1])
        percent = f"{100 * level:g}"
        title = (
            f"label-free estimate ({self.target}, {self.calibration} calibration, "
            f"{percent}% HDI, {len(self._results)} chunks)"
        )
        return Table(columns, title=title)

    def to_pandas(self, ci: float | None = None) -> Any:
        """The summary as a pandas DataFrame (pandas is optional)."""
        return self.summary(ci).to_pandas()

    def to_dict(self, ci: float | None = None) -> dict[str, Any]:
        """JSON-friendly: settings, chunks and, per chunk and metric, the estimate's summary,
        the decision and the realized value."""
        level = self.ci if ci is None else check_ci(ci)
        chunks = []
        for result in self._results:
            entry: dict[str, Any] = {**result.chunk.to_dict(), "metrics": {}}
            for name in self._metrics:
                item: dict[str, Any] = {"estimate": result.estimates[name].to_dict(level)}
                verdict = self.decision(name, result.chunk.index)
                item["decision"] = None if verdict is None else verdict.to_dict()
                if name in result.realized:
                    value, with_labels = result.realized[name]
                    item["realized"] = None if math.isnan(value) else value
                    item["with_labels"] = (
                        None if with_labels is None else with_labels.to_dict(level)
                    )
                entry["metrics"][name] = item
            chunks.append(entry)
        return {
            "target": self.target,
            "calibration": self.calibration,
            "ci": level,
            "metrics": list(self._metrics),
            "reference": {name: post.to_dict(level) for name, post in self._references().items()},
            "chunks": chunks,
        }

    def __len__(self) -> int:
        return len(self._results)

    def __repr__(self) -> str:
        return str(self.summary())
