"""``evaluate``: posteriors of several metrics at once, and the :class:`Evaluation` holding them."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from probeval._util.arrays import LabelledDraws
from probeval._util.classes import encode, observed_classes, resolve_labels
from probeval._util.equality import ValueEquality
from probeval._util.frames import is_frame, resolve
from probeval._util.html import HtmlRepr
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_count,
    as_labels,
    as_name_list,
    as_probabilities,
    as_weights,
    check_beta,
    check_ci,
    check_memory,
    check_n_samples,
    check_same_length,
    check_some_weight,
    check_threshold,
    check_zero_division,
    describe,
)
from probeval.base.metrics import (
    DEFAULT_BINARY,
    DEFAULT_BINARY_SCORES,
    DEFAULT_MULTICLASS,
    DEFAULT_MULTICLASS_SCORES,
    MetricSpec,
    is_score_metric,
    resolve_score_metric,
)
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior, resolve_prior
from probeval.labels.audit import check_audit
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.scores import (
    DEFAULT_MAX_BINS,
    ScoreSummary,
    _Setting,
    check_max_bins,
    check_score_prior,
    multiclass_score_posteriors,
)
from probeval.labels.stratified import centred_prior, stratified_posteriors

#: Stream key of the score metrics' draws (the confusion metrics use the seed's others).
_SCORE_STREAM = 1 << 41

__all__ = ["Evaluation", "evaluate"]


class Evaluation(HtmlRepr, LabelledDraws, ValueEquality, Mapping[str, Posterior]):
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
        scores: ScoreSummary | None = None,
        score_setting: _Setting | None = None,
    ) -> None:
        self._confusion = confusion
        self._posteriors = posteriors
        self._prior = prior
        self._n_samples = n_samples
        self._joint = joint
        self._scores = scores
        self._score_setting = score_setting

    @property
    def confusion(self) -> ConfusionMatrix:
        """The confusion matrix the posteriors were computed from."""
        return self._confusion

    @property
    def scores(self) -> ScoreSummary | None:
        """The binary scores' :class:`ScoreSummary` (None without binary scores)."""
        return self._scores

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
        key: str | None = None
        try:
            if is_score_metric(name):
                cm = self._confusion
                key = resolve_score_metric(name, cm.labels, binary=cm.is_binary).name
            else:
                key = self._confusion._spec(name).name
        except (TypeError, ValueError):
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
            "scores": None
            if self._score_setting is None
            else {
                "max_bins": self._score_setting.max_bins,
                "score_prior": self._score_setting.prior,
            },
            "ci": check_ci(ci),
            "metrics": {name: p.to_dict(ci) for name, p in self._posteriors.items()},
        }

    def to_pandas(self, ci: float = 0.95) -> Any:
        """The summary as a pandas DataFrame indexed by metric (pandas is optional)."""
        return self.summary(ci).to_pandas().set_index("metric")

    def as_prior(self) -> Prior:
        """The prior for the next batch of data: sequential updating."""
        return self._prior.updated(self._confusion.counts)

    def _draws(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """One variable per metric (drawn jointly when ``joint=True``)."""
        variables = {name: ((), post.samples) for name, post in self._posteriors.items()}
        observed = {name: post.observed for name, post in self._posteriors.items()}
        return variables, {}, observed

    def _html(self) -> str:
        densities = [post.density_svg() for post in self._posteriors.values()]
        return (
            f"<h3>evaluation</h3>{self.summary().to_html({'density': densities})}"
            f"{self._confusion._html()}"
        )

    def __repr__(self) -> str:
        return str(self.summary())


def _resolve_metrics(
    metrics: Any, confusion: ConfusionMatrix, *, with_scores: bool, defaults_with_scores: bool
) -> tuple[list[MetricSpec], list[MetricSpec]]:
    """(all specs in the requested order, those of them that need scores)."""
    binary = confusion.is_binary and not confusion._ambiguous_positive
    if metrics is None:
        names = list(DEFAULT_BINARY if binary else DEFAULT_MULTICLASS)
        if with_scores and defaults_with_scores:
            names += DEFAULT_BINARY_SCORES if confusion.is_binary else DEFAULT_MULTICLASS_SCORES
    else:
        names = as_name_list("metrics", metrics)
    specs = []
    for name in names:
        if is_score_metric(name):
            if not with_scores:
                raise ValueError(
                    f"{name!r} needs scores: pass y_score (the predictions alone do not rank rows)"
                )
            specs.append(resolve_score_metric(name, confusion.labels, binary=confusion.is_binary))
        else:
            specs.append(confusion._spec(name))
    unique = list({s.name: s for s in specs}.values())  # de-duplicate, keep order
    return unique, [s for s in unique if s.kernel == "scores"]


def score_matrix(y_score: Any, name: str = "y_score") -> np.ndarray | None:
    """``y_score`` as an (n, K) float array when it is two-dimensional, else None."""
    if isinstance(y_score, (str, bytes)) or y_score is None:
        return None
    array = np.asarray(y_score)
    if array.ndim != 2:
        return None
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {array.dtype}")
    if array.shape[0] == 0 or array.shape[1] < 2:
        raise ValueError(
            f"a two-dimensional {name} must have shape (n, K) with n >= 1 and K >= 2, got "
            f"{array.shape}"
        )
    matrix = np.ascontiguousarray(array, dtype=np.float64)
    if not np.isfinite(matrix).all():
        row, column = (int(i[0]) for i in np.nonzero(~np.isfinite(matrix)))
        bad = float(matrix[row, column])
        raise ValueError(f"{name} must be finite, found {bad!r} at row {row}, column {column}")
    return matrix


def column_labels(y_true: Any, n_columns: int, labels: Any) -> tuple[np.ndarray, list[Any]]:
    """Labels and the class order the columns of a (n, K) y_score follow."""
    truth = as_labels("y_true", y_true)
    order = resolve_labels(observed_classes(truth), labels, None)
    if len(order) != n_columns:
        raise ValueError(
            f"y_score has {n_columns} columns but there are {len(order)} classes {order!r}; "
            "the columns must follow labels (default: the sorted classes of y_true) — pass "
            "labels=[...] naming every column's class"
        )
    return truth, order


def evaluate(
    data: Any = None,
    /,
    y_pred: Any = None,
    y_score: Any = None,
    *,
    y_true: Any = None,
    threshold: float = 0.5,
    metrics: Any = None,
    prior: Any = None,
    n_samples: int = 10_000,
    rng: Any = None,
    sample_weight: Any = None,
    joint: bool = False,
    beta: float = 1.0,
    zero_division: Any = 0.0,
    labels: Any = None,
    pos_label: Any = None,
    max_bins: int | None = DEFAULT_MAX_BINS,
    score_prior: float = 0.0,
    audit: Any = None,
    strata: Any = None,
    stratum_sizes: Any = None,
) -> Evaluation:
    """Posterior distributions of a classifier's performance metrics.

    Parameters
    ----------
    data : array-like, ConfusionMatrix or data frame
        The true labels (positional), or a :class:`ConfusionMatrix` of counts (then omit
        ``y_pred``/``y_score``), or a pandas/polars data frame whose columns ``y_true``,
        ``y_pred``, ``y_score`` and ``sample_weight`` name: ``evaluate(df, y_true="label",
        y_score="proba")``.
    y_true : array-like or column name, optional
        The true labels by keyword (``evaluate(y_true=y, y_pred=p)``), or a column of ``data``.
    y_pred : array-like, optional
        Predicted labels.
    y_score : array-like, optional
        Binary: scores of the positive class, shape (n,) — probabilities, or any real scores
        when ``y_pred`` is given. Multiclass: shape (n, K), one column per class in ``labels``
        order (the sorted classes by default), as from ``predict_proba``. Without ``y_pred``
        the prediction is ``y_score > threshold`` (binary) or the column of the highest score.
        Scores add ROC AUC and average precision to the default metrics (one-vs-rest macro and
        weighted ROC AUC for multiclass data).
    threshold : float
        Decision threshold for binary ``y_score``.
    metrics : str or list of str, optional
        Metric names (see :func:`probeval.available_metrics`); default: accuracy, precision,
        recall, specificity, f1, mcc, balanced_accuracy (plus roc_auc and average_precision
        with scores). Multiclass score metrics: ``roc_auc_macro``, ``roc_auc_weighted``,
        ``roc_auc[class]`` and the same for ``average_precision``.
    prior : None, float, str, array, Prior or a previous posterior
        Pseudo-counts on the cells of one Dirichlet behind every metric (see
        :class:`~probeval.Prior`). A number c puts c on each class's diagonal cell and c spread
        over the rest of its row, so each class's recall and precision get a Beta(c, c) prior.
        Default: 1 ("uniform") for binary data, 0.5 ("jeffreys") for K >= 3 classes. With
        ``strata``: pseudo-counts per cell of each stratum, and the default centres each
        stratum's positive rate on its labelled rows' mean score (or the design-weighted rate
        of its predicted class) with half a row's weight, because a uniform prior per stratum,
        added up over many strata with few labels each, biases the population's metrics
        towards 1/2.
    n_samples : int
        Posterior draws per sampled metric.
    rng : None, int, numpy Generator or SeedSequence
        Source of randomness; the same value gives identical results on any number of threads.
    sample_weight : array-like, optional
        Non-negative weight per row.
    joint : bool
        Draw every confusion-matrix metric from the same Dirichlet draws, so that differences
        between metrics (say precision - recall) are coherent posteriors. Proportion metrics
        then follow the Dirichlet's Beta marginal.
    beta : float
        The beta of the ``fbeta`` metric.
    zero_division : 0, 1, nan or "warn"
        Value of a metric whose denominator is zero (scikit-learn's convention).
    labels, pos_label :
        Class order and positive class, as in :meth:`ConfusionMatrix.from_predictions`.
    max_bins : int or None
        Score bins for ROC AUC and average precision: the distinct scores when there are at
        most this many, else equal-frequency bins; None keeps every distinct score (the exact
        per-row Bayesian bootstrap). See :class:`ScoreSummary`. Multiclass scores: with bins,
        each class's posterior is its binary one-vs-rest posterior and the classes are joined
        by the shared-weight bootstrap's correlations (O(bins) per draw); None draws that
        bootstrap row by row (O(n K) per draw).
    score_prior : float
        Pseudo-count per occupied score bin (binary scores; 0 is the Bayesian bootstrap).
    audit : LabelAudit, optional
        Counts of audited mislabelled TPs/FPs (and TNs/FNs): every draw corrects the counts
        for them (see :class:`probeval.LabelAudit`). Binary confusion-matrix metrics only;
        the score metrics are then left out of the defaults.
    strata : array-like or column name, optional
        The stratum of each row of a stratified sample (rows labelled at different rates in
        different strata, as :func:`probeval.labelling_plan` chooses them). The posterior is
        then that of the whole population: each stratum's cell shares get their own Dirichlet
        posterior and are weighted by the stratum's size (see :mod:`probeval.labels.stratified`),
        so the sample is neither biased towards the strata sampled most nor as narrow as if
        every row had been labelled. Binary confusion-matrix metrics only. ``sample_weight``
        then holds the design weights (a stratum's size over its rows in the sample), which
        give the sizes unless ``stratum_sizes`` does.
    stratum_sizes : mapping of stratum to size, optional
        The number of rows of each stratum in the population (strata without a labelled row
        may be listed too). Default: the sum of the design weights of each stratum's rows.

    Returns
    -------
    Evaluation
        A mapping from metric name to :class:`Posterior`, with :meth:`Evaluation.summary`.
    """
    if is_frame(data):
        if y_true is None:
            raise TypeError("with a data frame, name the label column: y_true='...'")
        columns = resolve(
            data, y_true=y_true, y_pred=y_pred, y_score=y_score, sample_weight=sample_weight
        )
        y_true, y_pred = columns["y_true"], columns["y_pred"]
        y_score, sample_weight = columns["y_score"], columns["sample_weight"]
        if strata is not None:
            strata = resolve(data, strata=strata)["strata"]
    elif data is not None and y_true is not None:
        raise TypeError("pass the true labels once: positionally or as y_true=..., not both")
    elif data is not None:
        y_true = data
    elif y_true is None:
        raise TypeError(
            "evaluate needs the true labels y_true (or a ConfusionMatrix, or a data frame)"
        )
    if sample_weight is not None and not isinstance(y_true, ConfusionMatrix):
        check_some_weight("sample_weight", sample_weight)
    matrix = score_matrix(y_score)
    weights = None
    truth: np.ndarray | None = None
    order: list[Any] = []
    if isinstance(y_true, ConfusionMatrix):
        if y_pred is not None or y_score is not None or sample_weight is not None:
            raise TypeError(
                "with a ConfusionMatrix as y_true, omit y_pred, y_score and sample_weight"
            )
        confusion = y_true
    elif matrix is not None:
        truth, order = column_labels(y_true, matrix.shape[1], labels)
        weights = (
            None
            if sample_weight is None
            else as_weights("sample_weight", sample_weight, len(truth))
        )
        if matrix.shape[0] != len(truth):
            raise ValueError(
                f"inputs must have the same length: y_true has {len(truth)}, y_score has "
                f"{matrix.shape[0]} rows"
            )
        if len(order) == 2:
            # Binary data as predict_proba gives them: the positive class's column.
            if pos_label is not None and pos_label not in order:
                raise ValueError(f"pos_label={pos_label!r} is not one of the classes {order!r}")
            if pos_label is not None and pos_label == order[0]:
                order = [order[1], order[0]]
                matrix = matrix[:, ::-1]
            y_score, matrix = np.ascontiguousarray(matrix[:, 1]), None
            labels, pos_label = order, order[1]
        if y_pred is not None:
            confusion = ConfusionMatrix.from_predictions(
                truth, y_pred, labels=order, sample_weight=weights, pos_label=pos_label
            )
        elif matrix is not None:
            predicted = np.asarray(order, dtype=object)[np.argmax(matrix, axis=1)]
            confusion = ConfusionMatrix.from_predictions(
                truth, predicted, labels=order, sample_weight=weights
            )
        else:
            confusion = ConfusionMatrix.from_scores(
                truth,
                y_score,
                threshold=check_threshold(threshold),
                sample_weight=weights,
                pos_label=pos_label,
            )
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

    checked_audit = check_audit(audit)
    if strata is not None:
        return _stratified(
            confusion,
            y_true,
            y_pred,
            y_score,
            strata,
            stratum_sizes,
            sample_weight=sample_weight,
            threshold=threshold,
            metrics=metrics,
            prior=prior,
            n_samples=n_samples,
            rng=rng,
            beta=beta,
            zero_division=zero_division,
            audit=checked_audit,
        )
    if stratum_sizes is not None:
        raise TypeError("stratum_sizes goes with strata=...: give the stratum of each row")
    with_scores = y_score is not None
    specs, score_specs = _resolve_metrics(
        metrics, confusion, with_scores=with_scores, defaults_with_scores=checked_audit is None
    )
    if checked_audit is not None and score_specs:
        raise ValueError(
            "a label audit corrects the confusion matrix; ROC AUC and average precision cannot "
            "be corrected with it: leave them out of metrics=..."
        )
    resolved_prior = resolve_prior(prior, confusion.n_classes)
    n = check_n_samples(n_samples)
    seed = seed_from(rng)
    setting = _Setting(check_max_bins(max_bins), check_score_prior(score_prior))
    confusion_specs = [s for s in specs if s.kernel != "scores"]
    posteriors = confusion._posteriors(
        confusion_specs,
        prior=resolved_prior,
        n_samples=n,
        seed=seed,
        beta=check_beta(beta),
        zero_division=check_zero_division(zero_division),
        joint=bool(joint),
        audit=checked_audit,
    )
    summary = None
    if score_specs and matrix is not None:
        if setting.prior != 0:
            raise ValueError(
                f"score_prior applies to binary scores; multiclass scores use the per-row "
                f"bootstrap, got score_prior={score_prior!r}"
            )
        assert truth is not None
        codes = encode(truth, order)
        row_weights = np.ones(len(truth)) if weights is None else weights
        posteriors.update(
            multiclass_score_posteriors(
                codes,
                matrix,
                row_weights,
                score_specs,
                max_bins=setting.max_bins,
                n_samples=n,
                seed=derive(seed, _SCORE_STREAM),
            )
        )
    elif score_specs:
        if confusion._ambiguous_positive:
            raise ValueError(
                f"y_true has the classes {list(confusion.labels)!r}; pass pos_label=... to say "
                "which one the scores are the probability of"
            )
        summary = ScoreSummary.from_scores(
            y_true,
            y_score,
            labels=list(confusion.labels),
            sample_weight=sample_weight if weights is None else weights,
        )
        if metrics is None and not (summary.n_positives > 0 and summary.n_negatives > 0):
            warnings.warn(
                "y_true holds one class only, so ROC AUC and average precision are undefined "
                "and left out of the evaluation",
                UserWarning,
                stacklevel=2,
            )
            specs = [s for s in specs if s.kernel != "scores"]
        else:
            names = [s.name for s in score_specs]
            posteriors.update(summary._posteriors(names, setting, n, derive(seed, _SCORE_STREAM)))
    ordered = {s.name: posteriors[s.name] for s in specs}
    return Evaluation(
        confusion,
        ordered,
        prior=resolved_prior,
        n_samples=n,
        joint=bool(joint),
        scores=summary,
        score_setting=setting if score_specs else None,
    )


def _stratified(
    confusion: ConfusionMatrix,
    y_true: Any,
    y_pred: Any,
    y_score: Any,
    strata: Any,
    stratum_sizes: Any,
    *,
    sample_weight: Any,
    threshold: float,
    metrics: Any,
    prior: Any,
    n_samples: int,
    rng: Any,
    beta: float,
    zero_division: Any,
    audit: Any,
    target: str = "population",
    stratum_predictions: Mapping[Any, int] | None = None,
    stratum_prior: Mapping[Any, np.ndarray] | None = None,
) -> Evaluation:
    """``evaluate(..., strata=...)``: the population's posteriors from a stratified sample."""
    if isinstance(y_true, ConfusionMatrix) or not confusion.is_binary:
        raise ValueError(
            "strata= takes the rows of a binary classifier's stratified sample (labels and "
            "predictions or scores), not a ConfusionMatrix or multiclass data"
        )
    if audit is not None:
        raise ValueError("strata= and audit= cannot be combined")
    specs, score_specs = _resolve_metrics(
        metrics, confusion, with_scores=y_score is not None, defaults_with_scores=False
    )
    if score_specs or not specs:
        raise ValueError(
            "a stratified sample gives confusion-matrix metrics (precision, recall, f1, ...); "
            "ROC AUC and average precision of a stratified sample are not available"
        )
    order = list(confusion.labels)
    truth = encode(as_labels("y_true", y_true), order) == 1
    if y_pred is not None:
        predicted = encode(as_labels("y_pred", y_pred), order) == 1
    else:
        predicted = as_probabilities("y_score", y_score) > check_threshold(threshold)
    keys = as_labels("strata", strata, role="stratum")
    check_same_length(y_true=truth, strata=keys)
    known: list[Any] = []
    if stratum_sizes is not None:
        if not isinstance(stratum_sizes, Mapping):
            raise TypeError(
                f"stratum_sizes must be a mapping of stratum to size, got {describe(stratum_sizes)}"
            )
        known = list(stratum_sizes)
    names = sorted(set(known) | set(observed_classes(keys)), key=repr)
    codes = encode(keys, names)
    if stratum_sizes is not None:
        sizes = np.array(
            [
                as_count(f"stratum_sizes[{k!r}]", stratum_sizes.get(k))
                if k in stratum_sizes
                else np.nan
                for k in names
            ]
        )
        missing = [k for k, v in zip(names, sizes, strict=True) if np.isnan(v)]
        if missing:
            raise ValueError(f"stratum_sizes has no size for the strata {missing[:5]!r}")
    elif sample_weight is None:
        raise TypeError(
            "strata= needs the design weights (sample_weight=...) or stratum_sizes=... to know "
            "how large each stratum is"
        )
    else:
        weights = as_weights("sample_weight", sample_weight, len(keys))
        sizes = np.bincount(codes, weights=weights, minlength=len(names))
    if not np.any(sizes > 0):
        raise ValueError("the strata have no size: every design weight is zero")
    hints = None
    if stratum_predictions is not None:
        hints = np.array([stratum_predictions.get(k, -1) for k in names])
    resolved_prior = resolve_prior(0.5 if prior is None else prior, 2)
    cell_prior: Prior | np.ndarray = resolved_prior
    if stratum_prior is not None:
        cell_prior = np.array([stratum_prior[k] for k in names], dtype=np.float64)
    elif prior is None:
        scores = None if y_score is None else as_probabilities("y_score", y_score)
        cell_prior = _centred_stratum_prior(truth, predicted, codes, sizes, scores)
    n = check_n_samples(n_samples)
    bz = (check_beta(beta), check_zero_division(zero_division))
    check_memory(
        n * len(names) * 8,
        request=f"n_samples={n:,} for {len(names):,} strata",
        alternative="ask for fewer n_samples, or merge strata",
    )
    posteriors, cells = stratified_posteriors(
        truth,
        predicted,
        codes,
        sizes,
        specs,
        prior=cell_prior,
        n_samples=n,
        seed=seed_from(rng),
        target=target,
        stratum_predictions=hints,
        beta=bz[0],
        zero_division=bz[1],
    )
    # The confusion matrix the population is estimated to have (the design-weighted counts).
    tp, fp, tn, fn = cells
    estimated = ConfusionMatrix._from_matrix(np.array([[tn, fp], [fn, tp]]), order, weighted=True)
    return Evaluation(estimated, posteriors, prior=resolved_prior, n_samples=n, joint=True)


def _centred_stratum_prior(
    truth: np.ndarray,
    predicted: np.ndarray,
    codes: np.ndarray,
    sizes: np.ndarray,
    scores: np.ndarray | None,
) -> np.ndarray:
    """The default prior of a stratified sample: each stratum's positive rate centred on a
    guess (its labelled rows' mean score, or without scores the population's design-weighted
    rate among rows of the same prediction) and worth about half a row
    (:func:`~probeval.labels.stratified.centred_prior`); a stratum with both predictions among
    its labelled rows gets 0.5 per cell (Jeffreys)."""
    count = sizes.shape[0]
    labelled = np.bincount(codes, minlength=count).astype(float)
    positive_rows = np.bincount(codes, weights=predicted, minlength=count)
    positive = positive_rows > 0
    pure = (positive_rows == 0) | (positive_rows == labelled)
    if scores is not None:
        total = np.bincount(codes, weights=scores, minlength=count)
        rate = (total + 0.5) / (labelled + 1.0)
    else:
        hits = np.bincount(codes, weights=truth, minlength=count)
        share = np.divide(hits, labelled, out=np.zeros(count), where=labelled > 0)
        rate = np.empty(count)
        for side in (True, False):
            chosen = pure & (positive == side) & (labelled > 0)
            weight = sizes[chosen].sum()
            raw = (sizes[chosen] * share[chosen]).sum() / weight if weight > 0 else 0.5
            n_side = labelled[chosen].sum()
            rate[positive == side] = (raw * n_side + 0.5) / (n_side + 1.0)
    prior = centred_prior(rate, positive)
    prior[~pure] = 0.5
    return prior
