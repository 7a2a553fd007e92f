"""Plots of posteriors, comparisons and label-free estimates (needs matplotlib: the ``plot``
extra, ``pip install "probeval[plot]"``).

Every function draws on the ``ax`` it is given, or on a new figure (built without pyplot, so no
global state and no GUI backend is touched), and returns the Axes (or, for grids, the Figure):

- :func:`posterior`: density with the HDI shaded, the median and an optional ROPE band;
- :func:`posteriors`: a grid of metric posteriors (an :class:`Evaluation` or a mapping);
- :func:`updates`: the posterior narrowing as data arrive (after n = 10, 100, 1,000, ... rows);
- :func:`compare`: the difference of a :class:`Comparison`, its ROPE and probabilities;
- :func:`chunks`: label-free estimates over chunks with HDI band, realized values, the
  reference band and the chunks that fail "no worse than reference";
- :func:`trajectory`: an :class:`Experiment`'s HDI narrowing against its ROPE, batch by batch;
- :func:`ranks`: P(rank) of every model of a :class:`Ranking`, best expected rank first;
- :func:`reliability`: a reliability diagram with a credible band per bin;
- :func:`curve`: a ROC or precision-recall curve with its pointwise credible band.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from probeval._util.validation import check_ci, describe
from probeval.base.posterior import Posterior

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from probeval.compare.comparisons import Comparison
    from probeval.compare.ranking import Ranking
    from probeval.experiment.experiment import Experiment
    from probeval.labelfree.estimator import LabelFreeEstimate
    from probeval.labels.calibration import CalibrationReport
    from probeval.labels.curves import CurveReport
    from probeval.labels.value import DecisionCurve

__all__ = [
    "chunks",
    "compare",
    "curve",
    "decision_curve",
    "posterior",
    "posteriors",
    "ranks",
    "reliability",
    "trajectory",
    "updates",
]

#: Colours: posterior, HDI, ROPE, realized values, alerts.
BLUE, LIGHT_BLUE, GREY, ORANGE, RED = "#1f5fa6", "#a9c6e8", "#bdbdbd", "#e07b00", "#c62828"


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError('probeval.plot needs matplotlib: pip install "probeval[plot]"') from error
    return matplotlib


def _new_axes(ax: Any, figsize: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax  # type: ignore[no-any-return]
    _matplotlib()
    from matplotlib.figure import Figure

    axes: Axes = Figure(figsize=figsize, layout="constrained").subplots()
    return axes


def _density(post: Posterior, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """A grid over the bulk of the posterior and the density on it."""
    low, high = post.quantile(np.array([0.0005, 0.9995]))
    span = max(high - low, 1e-9)
    lower, upper = post.bounds
    grid = np.linspace(max(lower, low - 0.15 * span), min(upper, high + 0.15 * span), 400)
    return grid, np.asarray(post.pdf(grid), dtype=np.float64)


def _rope(rope: Any) -> tuple[float, float] | None:
    if rope is None:
        return None
    if isinstance(rope, (int, float)):
        return (-abs(float(rope)), abs(float(rope)))
    low, high = rope
    return (float(low), float(high))


def posterior(
    post: Posterior,
    *,
    ax: Any = None,
    ci: float = 0.95,
    rope: Any = None,
    color: str = BLUE,
    label: str | None = None,
) -> Axes:
    """Density of a posterior with its HDI shaded, the median marked and an optional ROPE."""
    if not isinstance(post, Posterior):
        raise TypeError(f"posterior needs a Posterior, got {describe(post)}")
    ci = check_ci(ci)
    axes = _new_axes(ax, (5.0, 3.0))
    grid, density = _density(post, ci)
    low, high = post.hdi(ci)
    axes.plot(grid, density, color=color, lw=1.8, label=label or post.metric)
    inside = (grid >= low) & (grid <= high)
    axes.fill_between(
        grid, density, where=inside, color=color, alpha=0.25, lw=0, label=f"{ci:.0%} HDI"
    )
    median = float(post.median())
    axes.axvline(median, color=color, lw=1, ls="--")
    band = _rope(rope)
    if band is not None:
        axes.axvspan(band[0], band[1], color=GREY, alpha=0.35, lw=0, label="ROPE")
    if not math.isnan(post.observed):
        axes.axvline(post.observed, color=ORANGE, lw=1, label="observed")
    axes.set_xlabel(post.metric)
    axes.set_ylabel("density")
    axes.set_title(f"{post.metric}: median {median:.3f}, {ci:.0%} HDI [{low:.3f}, {high:.3f}]")
    axes.set_ylim(bottom=0)
    axes.legend(frameon=False, fontsize="small")
    return axes


def posteriors(
    items: Any, *, ci: float = 0.95, ncols: int = 3, figsize: tuple[float, float] | None = None
) -> Figure:
    """A grid of posteriors: an :class:`Evaluation`, a mapping name -> Posterior or a list."""
    if isinstance(items, Mapping):
        entries = list(items.values())
    elif isinstance(items, Sequence) and not isinstance(items, str):
        entries = list(items)
    else:
        raise TypeError(
            f"posteriors needs a mapping or a list of Posteriors, got {describe(items)}"
        )
    if not entries or not all(isinstance(p, Posterior) for p in entries):
        raise ValueError("posteriors needs at least one Posterior, and only Posteriors")
    if isinstance(ncols, bool) or not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    _matplotlib()
    from matplotlib.figure import Figure

    cols = min(ncols, len(entries))
    rows = math.ceil(len(entries) / cols)
    figure = Figure(figsize=figsize or (3.6 * cols, 2.6 * rows), layout="constrained")
    grid = figure.subplots(rows, cols, squeeze=False)
    for axes, post in zip(grid.flat, entries, strict=False):
        posterior(post, ax=axes, ci=ci)
        low, high = post.hdi(ci)
        axes.set_title(f"{post.metric}\n[{low:.3f}, {high:.3f}]", fontsize="medium")
        axes.set_xlabel("")
        axes.legend().remove()
    for axes in list(grid.flat)[len(entries) :]:
        axes.set_visible(False)
    return figure


def updates(
    y_true: Any,
    y_pred: Any = None,
    *,
    y_score: Any = None,
    metric: str = "accuracy",
    steps: Sequence[int] = (10, 100, 1_000, 10_000),
    ax: Any = None,
    ci: float = 0.95,
    rng: Any = 0,
) -> Axes:
    """The posterior narrowing as data arrive: the metric's posterior after the first n rows,
    for each n in ``steps`` (those not above the number of rows)."""
    from probeval.labels.evaluation import evaluate

    truth = np.asarray(y_true)
    count = truth.shape[0] if truth.ndim == 1 else 0
    sizes = [int(n) for n in steps if 0 < int(n) <= count]
    if not sizes:
        raise ValueError(f"steps must include a size between 1 and the {count} rows, got {steps!r}")
    ci = check_ci(ci)
    axes = _new_axes(ax, (6.0, 3.4))
    colors = _matplotlib().colormaps["Blues"](np.linspace(0.35, 1.0, len(sizes)))
    for n, color in zip(sizes, colors, strict=True):
        pred = None if y_pred is None else np.asarray(y_pred)[:n]
        score = None if y_score is None else np.asarray(y_score)[:n]
        post = evaluate(truth[:n], pred, score, metrics=[metric], rng=rng)[metric]
        grid, density = _density(post, ci)
        low, high = post.hdi(ci)
        axes.plot(grid, density, color=color, lw=1.6, label=f"n = {n:,}: [{low:.3f}, {high:.3f}]")
        axes.fill_between(
            grid, density, where=(grid >= low) & (grid <= high), color=color, alpha=0.15, lw=0
        )
    axes.set_xlabel(metric)
    axes.set_ylabel("density")
    axes.set_ylim(bottom=0)
    axes.set_title(f"the posterior of {metric} narrows as data arrive ({ci:.0%} HDIs)")
    axes.legend(frameon=False, fontsize="small")
    return axes


def compare(comparison: Comparison, *, ax: Any = None, ci: float = 0.95) -> Axes:
    """The posterior of a - b with its HDI, the ROPE, zero, and the decision probabilities."""
    from probeval.compare.comparisons import Comparison

    if not isinstance(comparison, Comparison):
        raise TypeError(f"compare needs a Comparison, got {describe(comparison)}")
    ci = check_ci(ci)
    axes = _new_axes(ax, (6.0, 3.4))
    difference = comparison.difference
    estimate = difference.kde()
    grid, density = estimate.grid, estimate.density
    low, high = comparison.hdi(ci)
    axes.plot(grid, density, color=BLUE, lw=1.8, label="a - b")
    axes.fill_between(
        grid,
        density,
        where=(grid >= low) & (grid <= high),
        color=BLUE,
        alpha=0.25,
        lw=0,
        label=f"{ci:.0%} HDI",
    )
    lo, hi = comparison.rope
    if hi > lo:
        axes.axvspan(lo, hi, color=GREY, alpha=0.35, lw=0, label="ROPE")
    axes.axvline(0.0, color="black", lw=0.8)
    text = (
        f"P(direction) = {comparison.p_direction:.3f}\n"
        f"P(ROPE) = {comparison.p_rope:.3f}\n"
        f"P(a better) = {comparison.p_sig_pos:.3f}\n"
        f"P(b better) = {comparison.p_sig_neg:.3f}"
    )
    axes.text(0.02, 0.97, text, transform=axes.transAxes, va="top", fontsize="small")
    kind = "paired" if comparison.paired else "independent"
    axes.set_title(f"{comparison.metric}: a - b ({kind}), {ci:.0%} HDI [{low:+.3f}, {high:+.3f}]")
    axes.set_xlabel(f"difference in {comparison.metric}")
    axes.set_ylabel("density")
    axes.set_ylim(bottom=0)
    axes.legend(frameon=False, fontsize="small", loc="upper right")
    return axes


def chunks(result: LabelFreeEstimate, metric: str, *, ax: Any = None) -> Axes:
    """Label-free estimates over chunks: posterior mean and HDI band, the realized values (when
    labels were given), the reference posterior's HDI as a band, and the chunks whose
    "no worse than reference" decision is "rejected", shaded, the chunks whose scores are
    unlike the reference's (see :meth:`LabelFreeEstimate.score_shift_alerts`), and hatched,
    those whose labels put their calibration where the reference's never went
    (:meth:`LabelFreeEstimate.label_alerts`)."""
    from probeval.labelfree.estimator import SCORE_SHIFT_ALERT, LabelFreeEstimate

    if not isinstance(result, LabelFreeEstimate):
        raise TypeError(f"chunks needs a LabelFreeEstimate, got {describe(result)}")
    axes = _new_axes(ax, (7.0, 3.4))
    keys = [c.key for c in result.chunks]
    x = np.arange(len(keys))
    posts = [result.posterior(metric, i) for i in range(len(keys))]
    means = np.array([p.mean() for p in posts])
    intervals = np.array([p.hdi(result.ci) for p in posts])
    reference = result.reference_posterior(metric)
    ref_low, ref_high = reference.hdi(result.ci)
    axes.axhspan(ref_low, ref_high, color=GREY, alpha=0.35, lw=0, label="reference HDI")
    axes.fill_between(
        x,
        intervals[:, 0],
        intervals[:, 1],
        color=LIGHT_BLUE,
        alpha=0.6,
        lw=0,
        label=f"{result.ci:.0%} HDI",
    )
    axes.plot(x, means, "o-", color=BLUE, ms=4, lw=1.5, label=f"estimate ({result.target})")
    if result.has_labels:
        realized = np.array([result.realized(metric, i) for i in range(len(keys))], dtype=float)
        axes.plot(x, realized, "s", color=ORANGE, ms=4, label="realized")
    alerts = [
        i
        for i in range(len(keys))
        if (d := result.decision(metric, i)) is not None and d.status == "rejected"
    ]
    if alerts:
        axes.plot(
            x[alerts], means[alerts], "x", color=RED, ms=9, mew=2, label="worse than reference"
        )
    for n, i in enumerate(result.score_shift_alerts()):
        # Shade the chunk: its scores are unlike the reference's, so is its estimate's footing.
        axes.axvspan(
            i - 0.5,
            i + 0.5,
            color=RED,
            alpha=0.08,
            lw=0,
            label=f"scores unlike reference (p < {SCORE_SHIFT_ALERT:g})" if n == 0 else None,
        )
    for n, i in enumerate(result.label_alerts()):
        # Hatch the chunk: its labels put its calibration where the reference's never went.
        axes.axvspan(
            i - 0.5,
            i + 0.5,
            facecolor="none",
            edgecolor=ORANGE,
            hatch="///",
            alpha=0.5,
            lw=0,
            label=f"labels unlike reference (p < {SCORE_SHIFT_ALERT:g})" if n == 0 else None,
        )
    axes.set_xticks(
        x, keys, rotation=45 if len(keys) > 6 else 0, ha="right" if len(keys) > 6 else "center"
    )
    axes.set_ylabel(metric)
    axes.set_xlabel("chunk")
    axes.set_title(f"{metric} without labels, per chunk")
    axes.legend(frameon=False, fontsize="small", ncols=2)
    return axes


def trajectory(experiment: Experiment, metric: str | None = None, *, ax: Any = None) -> Axes:
    """An experiment's HDI narrowing against its ROPE: the HDI band and posterior mean after each
    batch over the rows seen so far, the ROPE shaded, the batch at which the status became final
    marked, and (when set) the precision the HDI has to reach noted in the title.

    Parameters
    ----------
    experiment : Experiment
        An experiment with at least one batch.
    metric : str, optional
        One of the experiment's metrics (default: its first).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib Axes
    """
    from probeval.experiment.experiment import Experiment

    if not isinstance(experiment, Experiment):
        raise TypeError(f"trajectory needs an Experiment, got {describe(experiment)}")
    name = experiment.metrics[0] if metric is None else metric
    table = experiment.trajectory(name)
    if len(table["n"]) == 0:
        raise ValueError("the experiment has no batch yet: call update(...) first")
    n = np.asarray(table["n"], dtype=float)
    low = np.asarray(table["hdi_low"], dtype=float)
    high = np.asarray(table["hdi_high"], dtype=float)
    status = [str(s) for s in table["status"]]
    rope = experiment.ropes[name]
    axes = _new_axes(ax, (6.5, 3.4))
    axes.axhspan(
        rope[0], rope[1], color=GREY, alpha=0.35, lw=0, label=f"ROPE {rope[0]:.3g}-{rope[1]:.3g}"
    )
    axes.fill_between(
        n,
        low,
        high,
        color=LIGHT_BLUE,
        alpha=0.7,
        lw=0,
        label=f"{experiment.ci:.0%} HDI",
    )
    axes.plot(n, table["mean"], "o-", color=BLUE, ms=4, lw=1.5, label="posterior mean")
    final = [i for i, s in enumerate(status) if s != "ongoing"]
    if final:
        first = final[0]
        color = RED if status[first] == "rejected" else BLUE
        axes.axvline(
            n[first],
            color=color,
            ls="--",
            lw=1.2,
            label=f"{status[first]} at n = {int(n[first]):,}",
        )
    # Zoom on the HDIs: a ROPE edge far from them (a "no worse" ROPE reaching 1) is not drawn
    # to scale, but the one the HDIs approach is.
    bottom, top = float(low.min()), float(high.max())
    span = max(top - bottom, 1e-9)
    for edge in rope:
        if bottom - 0.5 * span <= edge <= top + 0.5 * span:
            bottom, top = min(bottom, edge), max(top, edge)
    pad = 0.08 * (top - bottom or 1e-3)
    axes.set_ylim(bottom - pad, top + pad)
    axes.set_xscale("log" if n[-1] / max(n[0], 1.0) > 20 else "linear")
    axes.set_xlabel("rows so far")
    axes.set_ylabel(name)
    precision = experiment.precision.get(name)
    wanted = "" if precision is None else f", HDI width wanted <= {precision:.3g}"
    axes.set_title(f"{name}: {experiment.hypotheses[name]} ({status[-1]}{wanted})")
    axes.legend(frameon=False, fontsize="small", loc="best")
    return axes


def ranks(ranking: Ranking, *, ax: Any = None) -> Axes:
    """The posterior of every model's rank: one row per model (best expected rank on top), one
    column per rank, shaded and labelled with P(rank).

    Parameters
    ----------
    ranking : Ranking
        The result of :func:`probeval.rank_models`.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib Axes
    """
    from probeval.compare.ranking import Ranking

    if not isinstance(ranking, Ranking):
        raise TypeError(f"ranks needs a Ranking (pe.rank_models), got {describe(ranking)}")
    probabilities = ranking.rank_probabilities()
    order = np.argsort(ranking.ranks.mean(axis=1), kind="stable")
    m = len(ranking.names)
    axes = _new_axes(ax, (1.2 + 0.9 * m, 0.8 + 0.45 * m))
    image = probabilities[order]
    axes.imshow(image, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    for i in range(m):
        for j in range(m):
            value = image[i, j]
            axes.text(
                j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize="small",
                color="white" if value > 0.6 else "black",
            )
    axes.set_xticks(range(m), [str(r) for r in range(1, m + 1)])
    axes.set_yticks(range(m), [ranking.names[i] for i in order])
    axes.set_xlabel("rank (1 = best)")
    axes.set_title(f"P(rank) by {ranking.metric}")
    return axes


def reliability(report: CalibrationReport, *, ax: Any = None) -> Axes:
    """A reliability diagram with uncertainty: each bin's observed positive rate against its
    mean score, with the HDI of the rate as an error bar, the diagonal of perfect calibration,
    and the ECE (with a calibrated model's ECE on the same bins) in the title.

    Parameters
    ----------
    report : CalibrationReport
        The result of :func:`probeval.calibration`.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib Axes
    """
    from probeval.labels.calibration import CalibrationReport

    if not isinstance(report, CalibrationReport):
        raise TypeError(
            f"reliability needs a CalibrationReport (pe.calibration), got {describe(report)}"
        )
    table = report.bins()
    x = np.asarray(table["mean_score"], dtype=float)
    rate = np.asarray(table["rate"], dtype=float)
    low = np.asarray(table["hdi_low"], dtype=float)
    high = np.asarray(table["hdi_high"], dtype=float)
    axes = _new_axes(ax, (4.6, 4.2))
    axes.plot([0, 1], [0, 1], color=GREY, lw=1, ls="--", label="perfectly calibrated")
    axes.fill_between(
        x,
        low,
        high,
        color=LIGHT_BLUE,
        alpha=0.6,
        lw=0,
        label=f"{report.ci:.0%} HDI of each bin's rate",
    )
    axes.errorbar(
        x,
        rate,
        yerr=[rate - low, high - rate],
        fmt="o",
        color=BLUE,
        ms=4,
        lw=1,
        capsize=2,
        label="observed rate",
    )
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_xlabel("mean score in the bin")
    axes.set_ylabel("positive rate")
    ece_low, ece_high = report.ece.hdi(report.ci)
    axes.set_title(
        f"ECE {report.ece.mean():.3f} [{ece_low:.3f}, {ece_high:.3f}]; calibrated: "
        f"{report.ece_perfect.mean():.3f}",
        fontsize="medium",
    )
    axes.legend(frameon=False, fontsize="small", loc="upper left")
    return axes


def _median_band(axes: Axes, x: np.ndarray, table: Any, ci: float, label: str) -> None:
    """A posterior median over ``x`` and its pointwise band (columns median, low, high)."""
    axes.fill_between(
        x,
        table["low"],
        table["high"],
        color=LIGHT_BLUE,
        alpha=0.7,
        lw=0,
        label=f"{ci:.0%} pointwise band",
    )
    axes.plot(x, table["median"], color=BLUE, lw=1.6, label=label)


def curve(report: CurveReport, kind: str = "roc", *, ax: Any = None, ci: float = 0.95) -> Axes:
    """A ROC (``kind="roc"``) or precision-recall (``"pr"``) curve: the posterior median and its
    pointwise credible band (see :func:`probeval.curves`).

    Parameters
    ----------
    report : CurveReport
        The result of :func:`probeval.curves`.
    kind : {"roc", "pr"}
        Which curve.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    ci : float
        Probability of the pointwise band.

    Returns
    -------
    matplotlib Axes
    """
    from probeval.labels.curves import CurveReport

    if not isinstance(report, CurveReport):
        raise TypeError(f"curve needs a CurveReport (pe.curves), got {describe(report)}")
    if kind not in ("roc", "pr"):
        raise ValueError(f"kind must be 'roc' or 'pr', got {describe(kind)}")
    table = report.roc_band(ci) if kind == "roc" else report.pr_band(ci)
    x = np.asarray(table["fpr" if kind == "roc" else "recall"], dtype=float)
    axes = _new_axes(ax, (4.6, 4.2))
    if kind == "roc":
        axes.plot([0, 1], [0, 1], color=GREY, lw=1, ls="--", label="random")
    _median_band(axes, x, table, ci, "posterior median")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.01)
    axes.set_xlabel("false positive rate" if kind == "roc" else "recall")
    axes.set_ylabel("true positive rate" if kind == "roc" else "precision")
    axes.set_title("ROC curve" if kind == "roc" else "precision-recall curve")
    axes.legend(frameon=False, fontsize="small", loc="lower right" if kind == "roc" else "best")
    return axes


def decision_curve(
    report: DecisionCurve, kind: str = "net_benefit", *, ax: Any = None, ci: float = 0.95
) -> Axes:
    """A decision curve (see :func:`probeval.decision_curve`): net benefit of the model, of
    treating everyone and of treating no one over the threshold probabilities
    (``kind="net_benefit"``, Vickers & Elkin), or the expected value per row over the thresholds
    with the value-maximising threshold's posterior (``kind="value"``); posterior medians with
    pointwise credible bands.

    Parameters
    ----------
    report : DecisionCurve
        The result of :func:`probeval.decision_curve`.
    kind : {"net_benefit", "value"}
        Which curve.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    ci : float
        Probability of the pointwise bands.

    Returns
    -------
    matplotlib Axes
    """
    from probeval.labels.value import DecisionCurve

    if not isinstance(report, DecisionCurve):
        raise TypeError(
            f"decision_curve needs a DecisionCurve (pe.decision_curve), got {describe(report)}"
        )
    if kind not in ("net_benefit", "value"):
        raise ValueError(f"kind must be 'net_benefit' or 'value', got {describe(kind)}")
    axes = _new_axes(ax, (5.2, 4.0))
    x = np.asarray(report.thresholds, dtype=float)
    if kind == "net_benefit":
        table = report.net_benefit_band(ci)
        axes.fill_between(
            x, table["treat_all_low"], table["treat_all_high"], color=GREY, alpha=0.35, lw=0
        )
        axes.plot(x, table["treat_all"], color=GREY, lw=1.2, label="treat all")
        axes.axhline(0.0, color="black", lw=0.8, label="treat none")
        _median_band(axes, x, table, ci, "model (posterior median)")
        top = float(np.max(table["high"]))
        axes.set_ylim(min(-0.05 * max(top, 1e-9), float(np.min(table["low"]))), 1.15 * top)
        axes.set_xlabel("threshold probability")
        axes.set_ylabel("net benefit")
        axes.set_title("decision curve")
    else:
        table = report.value_band(ci)
        _median_band(axes, x, table, ci, "posterior median")
        low, high = report.best_threshold().hdi(ci)
        axes.axvspan(low, high, color=ORANGE, alpha=0.15, lw=0, label="best threshold (HDI)")
        axes.set_xlabel("threshold")
        axes.set_ylabel("expected value per row")
        axes.set_title("value of the decisions")
    axes.legend(frameon=False, fontsize="small", loc="best")
    return axes
