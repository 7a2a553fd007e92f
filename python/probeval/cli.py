"""The ``probeval`` command line (also ``python -m probeval``).

Subcommands: ``evaluate``, ``compare``, ``estimate``, ``ensemble``, ``experiment``, ``plan``,
``label-plan`` and ``demo``. Input files are
CSV (read by the Rust core, only the columns a command uses) or Parquet (with pyarrow). Output
is a table for humans (``--format table``, the default), or ``json`` (schema below) or ``csv``
for machines.

JSON schema (stable; new keys may be added, existing ones keep their meaning)::

    {"probeval": "<version>", "command": "<subcommand>",
     "settings": {"samples": int, "seed": int | null, "ci": float, ...subcommand options},
     "result": {...}}

``result`` is ``Evaluation.to_dict()`` for evaluate, ``Comparison.to_dict()`` plus
``"decision"`` for compare, ``LabelFreeEstimate.to_dict()`` for estimate,
``EnsembleReport.to_dict()`` for ensemble, ``{"status", "done", "summary", "trajectory"}`` for
experiment, ``SamplePlan.to_dict()`` for plan, ``LabellingPlan.to_dict()`` for label-plan, and
``{"evaluation", "comparison", "estimate"}`` for demo. Bad input exits with status 2 and one
line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import sys
import textwrap
import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from probeval import __version__
from probeval._io import TableFile
from probeval._util.jsonable import json_safe
from probeval._util.table import Table
from probeval.labelfree.drift import DRIFT_PER_SHIFT, UNSEEN_DRIFT

DESCRIPTION = """\
Posterior distributions of classifier performance: how good is the model, how sure are we,
is it better than the other one, and how is it doing where labels have not arrived yet?"""

EPILOG = "Run 'probeval COMMAND --help' for a command's options; 'probeval demo' for a tour."


class UsageError(ValueError):
    """A command-line problem: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# ------------------------------------------------------------------------------ output


@dataclass
class Output:
    """What a subcommand produced: tables for humans and CSV, a JSON result, a plot."""

    command: str
    settings: dict[str, Any]
    result: dict[str, Any]
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plot: Callable[[str], None] | None = None
    preamble: str = ""
    #: Text printed under each table (by position) in the human format: what to read in it.
    captions: list[str] = field(default_factory=list)
    #: The result objects, for the HTML report (their tables, badges and figures).
    objects: list[Any] = field(default_factory=list)


def _estimate_warnings(result: Any) -> list[str]:
    """Warnings about a label-free estimate: chunks whose scores are unlike the reference's,
    and labels in production that show a calibration the reference never did, chunk by chunk
    and all chunks together (``LabelFreeEstimate.label_check``)."""
    from probeval.labelfree.estimator import SCORE_SHIFT_ALERT

    def chunks(indices: list[int]) -> str:
        keys = [str(result.chunks[i].key) for i in indices]
        return f"chunk(s) {', '.join(keys[:10])}{' ...' if len(keys) > 10 else ''}"

    notes = []
    if unlike := result.score_shift_alerts():
        notes.append(
            f"\nwarning: the scores of {chunks(unlike)} are unlike anything the reference "
            f"periods showed (score_shift_p < {SCORE_SHIFT_ALERT:g}): the drift learned there "
            "may not hold; label a sample of those rows (partial labels) before trusting these "
            "estimates"
        )
    if off := result.label_alerts():
        notes.append(
            f"\nwarning: the labels of {chunks(off)} put their calibration where the "
            f"reference's periods never went (labels_p < {SCORE_SHIFT_ALERT:g}): those "
            "estimates follow the labels"
        )
    check = result.label_check()
    if check is not None and check["p"] < SCORE_SHIFT_ALERT:
        tilt = "" if math.isnan(check["tilt_z"]) else f", tilt z {check['tilt_z']:+.1f}"
        # A multiclass model's class that moved furthest from the others.
        shown = {c: z for c, z in check.get("class_z", {}).items() if not math.isnan(z)}
        if shown:
            furthest = max(shown, key=lambda c: abs(shown[c]))
            tilt += f", class {furthest} z {shown[furthest]:+.1f}"
        notes.append(
            f"\nwarning: the {check['n_labelled']:,} labels of {check['n_chunks']} chunk(s) taken "
            f"together show production's calibration moved beyond the reference's drift "
            f"(shift z {check['shift_z']:+.1f}{tilt}, p = {check['p']:.1g}); "
            "chunks with few labels lean on the reference's drift and may be off by more than "
            "their intervals say: label more rows, or fit on recent labelled ones"
        )
    return notes


def _emit(args: argparse.Namespace, output: Output) -> None:
    if args.format == "json":
        payload = {
            "probeval": __version__,
            "command": output.command,
            "settings": output.settings,
            "result": output.result,
        }
        print(json.dumps(json_safe(payload), indent=2, allow_nan=False))
    elif args.format == "csv":
        for i, table in enumerate(output.tables):
            if len(output.tables) > 1:
                print(("\n" if i else "") + f"# {table.title or f'table {i + 1}'}")
            print(table.to_csv(), end="")
    else:
        if output.preamble:
            print(output.preamble)
        for i, table in enumerate(output.tables):
            print(("\n" if i else "") + str(table))
            if i < len(output.captions) and output.captions[i]:
                print(output.captions[i])
        for note in output.notes:
            print(note)
    if args.plot:
        if output.plot is None:
            raise UsageError(f"{output.command} has no plot")
        output.plot(args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    if args.html:
        _write_html(args.html, output)
        print(f"report written to {args.html}", file=sys.stderr)


def _write_html(path: str, output: Output) -> None:
    """The command's self-contained HTML report: its result objects (tables, decisions,
    figures as inline SVG when matplotlib is installed), notes and settings."""
    from probeval._util.html import escape
    from probeval.reporting import has_matplotlib, page, section

    figures = has_matplotlib()
    parts = [f"<pre>{escape(output.preamble)}</pre>"] if output.preamble else []
    if output.objects:
        parts += [section(obj, figures=figures) for obj in output.objects]
    else:
        parts += [table.to_html() for table in output.tables]
    notes = "".join(
        f'<p class="pe-note">{escape(n.strip())}</p>' for n in output.notes if n.strip()
    )
    if notes:
        parts.append(notes)
    subtitle = "" if figures else "figures need matplotlib: pip install probeval[plot]"
    text = page(
        f"probeval {output.command}",
        parts,
        settings={"command": output.command, **output.settings},
        subtitle=subtitle,
    )
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write the report to {path}: {error}") from None


def _save(figure: Any, path: str) -> None:
    try:
        figure.savefig(path, dpi=110, metadata={"Software": None})
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot write the plot to {path}: {error}") from None


class Progress:
    """Steps of a run on stderr, only when stderr is a terminal (no dependency needed)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.enabled = sys.stderr.isatty()

    def step(self, label: str) -> None:
        if not self.enabled:
            return
        self.done += 1
        width = 24
        filled = round(width * self.done / self.total)
        bar = "#" * filled + "." * (width - filled)
        end = "\n" if self.done >= self.total else ""
        print(
            f"\r[{bar}] {self.done}/{self.total} {label:<32}", end=end, file=sys.stderr, flush=True
        )


# ------------------------------------------------------------------------------ inputs


def _read(
    table: TableFile,
    options: dict[str, str | list[str] | None],
    *,
    numbers: Collection[str] = (),
    missing_ok: Collection[str] = (),
) -> dict[str, Any]:
    """The columns the options name (option -> column name, a list of names, or None when the
    option was not given), read from the file in one pass. A list of names gives their
    (n, K) matrix (several --y-score columns: a multiclass model's, in class order), or the
    one column. ``numbers`` and ``missing_ok`` are options, as in :meth:`TableFile.read`."""

    def names_of(option: str) -> list[str]:
        value = options[option]
        return [] if value is None else [value] if isinstance(value, str) else value

    for option in options:
        for name in names_of(option):
            if name not in table.names:
                shown = ", ".join(table.names[:20])
                raise UsageError(
                    f"{option} {name!r}: no such column in {table.path} (columns: {shown})"
                )
    data = table.read(
        [name for option in options for name in names_of(option)],
        numbers=[name for option in numbers for name in names_of(option)],
        missing_ok=[name for option in missing_ok for name in names_of(option)],
    )
    result: dict[str, Any] = {}
    for option, value in options.items():
        columns = [data[name] for name in names_of(option)]
        if value is None:
            result[option] = None
        elif isinstance(value, str) or len(columns) == 1:
            result[option] = columns[0]
        else:
            result[option] = np.column_stack(columns)
    return result


def _as_label(value: str | None, column: np.ndarray, option: str) -> Any:
    """A label given on the command line, as the column's own type (an integer column
    compares with integers)."""
    if value is None:
        return None
    kind = {"i": "integer", "u": "integer", "f": "number"}.get(column.dtype.kind)
    if kind is None:
        return value
    try:
        return int(value) if kind == "integer" else float(value)
    except ValueError:
        raise UsageError(
            f"{option} {value!r} is not one of the labels: they are {kind}s in this file"
        ) from None


def _pos_label(value: str | None, column: np.ndarray) -> Any:
    """--pos-label as the column's own type."""
    return _as_label(value, column, "--pos-label")


def _is_score(column: np.ndarray) -> bool:
    """A float column in [0, 1] that is not all whole numbers holds scores, not labels."""
    return (
        column.dtype.kind == "f"
        and bool(np.all((column >= 0) & (column <= 1)))
        and not bool(np.all(column == np.round(column)))
    )


def _metrics(value: list[str] | None) -> list[str] | None:
    if value is None:
        return None
    names = [name.strip() for item in value for name in item.split(",") if name.strip()]
    if not names:
        raise UsageError("--metrics needs at least one metric name")
    return names


def _settings(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    return {"samples": args.samples, "seed": args.seed, "ci": args.ci, **extra}


# ------------------------------------------------------------------------------ commands


def _evaluate(args: argparse.Namespace) -> Output:
    from probeval.labels.evaluation import evaluate

    progress = Progress(3)
    if args.y_pred is None and args.y_score is None:
        raise UsageError("give --y-pred COL, --y-score COL or both")
    if (args.strata is None) != (args.weights is None):
        raise UsageError("a stratified sample needs both --strata COL and --weights COL")
    columns = _read(
        TableFile(args.file),
        {
            "--y-true": args.y_true,
            "--y-pred": args.y_pred,
            "--y-score": args.y_score,
            "--strata": args.strata,
            "--weights": args.weights,
        },
        numbers=["--y-score", "--weights"],
    )
    progress.step("read")
    truth, pred, score, strata, weights = columns.values()
    ev = evaluate(
        truth,
        pred,
        score,
        threshold=args.threshold,
        metrics=_metrics(args.metrics),
        n_samples=args.samples,
        rng=args.seed,
        pos_label=_pos_label(args.pos_label, truth),
        strata=strata,
        sample_weight=weights,
    )
    progress.step("posteriors")
    summary = ev.summary(ci=args.ci)
    progress.step("summaries")
    tables = [summary]
    result = ev.to_dict(ci=args.ci)
    objects: list[Any] = [ev]
    if args.calibration:
        from probeval.labels.calibration import calibration

        if score is None:
            raise UsageError("--calibration needs --y-score COL (probabilities)")
        report = calibration(
            truth,
            score,
            n_samples=min(args.samples, 4_000),
            rng=args.seed,
            ci=args.ci,
            pos_label=_pos_label(args.pos_label, truth),
        )
        tables += [report.summary(), report.bins()]
        result["calibration"] = report.to_dict()
        objects.append(report)
    if args.value is not None:
        from probeval.labels.value import PROBABILITY_GRID, decision_curve

        if score is None:
            raise UsageError("--value needs --y-score COL (probabilities)")
        v_tp, v_fp, v_tn, v_fn = args.value
        curve = decision_curve(
            truth,
            score,
            value={"tp": v_tp, "fp": v_fp, "tn": v_tn, "fn": v_fn},
            thresholds=np.union1d(PROBABILITY_GRID, [args.threshold]),
            n_samples=min(args.samples, 4_000),
            rng=args.seed,
            pos_label=_pos_label(args.pos_label, truth),
        )
        value_table = curve.summary(args.threshold, ci=args.ci)
        tables.append(value_table)
        result["value"] = value_table.to_dict()
        objects.append(curve)

    def plot(path: str) -> None:
        from probeval.plot import posteriors

        _save(posteriors(ev, ci=args.ci), path)

    settings = _settings(
        args,
        file=args.file,
        y_true=args.y_true,
        y_pred=args.y_pred,
        y_score=args.y_score,
        threshold=args.threshold,
        strata=args.strata,
        weights=args.weights,
        calibration=args.calibration,
        value=args.value,
    )
    return Output(
        "evaluate", settings, result, tables, [f"\n{ev.confusion}"], plot, objects=objects
    )


def _compare(args: argparse.Namespace) -> Output:
    from probeval.base.metrics import canonical_name
    from probeval.compare.comparisons import compare, compare_paired
    from probeval.compare.decisions import decide
    from probeval.labels.scores import ScoreSummary

    progress = Progress(3)
    columns = _read(
        TableFile(args.file),
        {"--y-true": args.y_true, "--model-a": args.model_a, "--model-b": args.model_b},
    )
    progress.step("read")
    truth, a, b = columns.values()
    metric = canonical_name(args.metric)
    pos_label = _pos_label(args.pos_label, truth)
    if metric in ("roc_auc", "average_precision") and not (_is_score(a) and _is_score(b)):
        raise UsageError(f"{metric} needs scores in [0, 1] in --model-a and --model-b")
    if metric in ("roc_auc", "average_precision") and not args.independent:
        comparison = compare_paired(
            truth,
            y_score_a=a,
            y_score_b=b,
            metric=metric,
            rope=args.rope,
            n_samples=args.samples,
            rng=args.seed,
            pos_label=pos_label,
        )
        note = "paired comparison: one Bayesian-bootstrap weight per row, shared by A and B"
    elif metric in ("roc_auc", "average_precision"):
        posts = [
            ScoreSummary.from_scores(truth, s, pos_label=pos_label).posterior(
                metric, n_samples=args.samples, rng=args.seed
            )
            for s in (a, b)
        ]
        comparison = compare(posts[0], posts[1], rope=args.rope, rng=args.seed)
        note = "independent comparison (as if the models were scored on different rows)"
    else:
        preds = [(s > args.threshold).astype(np.int64) if _is_score(s) else s for s in (a, b)]
        if args.independent:
            from probeval.labels.confusion import ConfusionMatrix

            posts = [
                ConfusionMatrix.from_predictions(truth, p, pos_label=pos_label).posterior(
                    metric, n_samples=args.samples, rng=args.seed
                )
                for p in preds
            ]
            comparison = compare(posts[0], posts[1], rope=args.rope, rng=args.seed)
            note = "independent comparison (as if the models were scored on different rows)"
        else:
            comparison = compare_paired(
                truth,
                preds[0],
                preds[1],
                metric=metric,
                rope=args.rope,
                n_samples=args.samples,
                rng=args.seed,
                pos_label=pos_label,
            )
            note = "paired comparison: one Dirichlet over (truth, prediction A, prediction B)"
    progress.step("posteriors")
    decision = decide(comparison, ci=args.ci)
    summary = comparison.summary(args.ci)
    rows = Table(
        {
            "quantity": [
                f"{metric} of A ({args.model_a})",
                f"{metric} of B ({args.model_b})",
                "A - B: mean",
                f"A - B: {100 * args.ci:g}% HDI low",
                f"A - B: {100 * args.ci:g}% HDI high",
                "P(direction)",
                f"P(|A - B| <= {args.rope:g})",
                f"P(A better by > {args.rope:g})",
                f"P(B better by > {args.rope:g})",
            ],
            "value": [
                summary["observed_a"],
                summary["observed_b"],
                summary["mean"],
                summary["hdi_low"],
                summary["hdi_high"],
                summary["p_direction"],
                summary["p_rope"],
                summary["p_sig_pos"],
                summary["p_sig_neg"],
            ],
        },
        title=f"compare {args.model_a} (A) with {args.model_b} (B) on {metric}",
    )
    progress.step("summaries")
    verdict = {
        "accepted": "practically equivalent (the HDI lies inside the ROPE)",
        "rejected": "different (the HDI lies outside the ROPE)",
        "undecided": "undecided (the HDI overlaps the ROPE's edge): more data needed",
    }[decision.status]
    result = comparison.to_dict(args.ci)
    result["decision"] = decision.to_dict()

    def plot(path: str) -> None:
        from probeval.plot import compare as compare_plot

        _save(compare_plot(comparison, ci=args.ci).figure, path)

    settings = _settings(
        args,
        file=args.file,
        y_true=args.y_true,
        model_a=args.model_a,
        model_b=args.model_b,
        metric=metric,
        rope=args.rope,
        paired=comparison.paired,
    )
    notes = [f"\n{note}", f"decision: {verdict}"]
    return Output("compare", settings, result, [rows], notes, plot, objects=[comparison])


def _rank(args: argparse.Namespace) -> Output:
    from probeval.base.metrics import canonical_name
    from probeval.compare.ranking import rank_models

    progress = Progress(3)
    if len(args.models) < 2 or len(set(args.models)) < len(args.models):
        raise UsageError("--models needs at least two distinct columns")
    options: dict[str, str | list[str] | None] = {"--y-true": args.y_true}
    options.update({f"--models {name}": name for name in args.models})
    columns = _read(TableFile(args.file), options)
    progress.step("read")
    truth = columns["--y-true"]
    metric = canonical_name(args.metric)
    by_scores = metric in ("roc_auc", "average_precision")
    models: dict[str, np.ndarray] = {}
    for name in args.models:
        column = columns[f"--models {name}"]
        if by_scores and not _is_score(column):
            raise UsageError(f"{metric} needs scores in [0, 1] in --models {name}")
        threshold = _is_score(column) and not by_scores
        models[name] = (column > args.threshold).astype(np.int64) if threshold else column
    ranking = rank_models(
        truth,
        models,
        metric=metric,
        rope=args.rope,
        n_samples=args.samples,
        rng=args.seed,
        pos_label=_pos_label(args.pos_label, truth),
    )
    progress.step("posteriors")
    better = ranking.p_better()
    pairs = Table(
        {
            "model": list(ranking.names),
            **{
                f"P(better than {name})": better[:, j].tolist()
                for j, name in enumerate(ranking.names)
            },
        },
        title=f"P(row model better than column model by > {args.rope:g})",
    )
    progress.step("summaries")

    def plot(path: str) -> None:
        from probeval.plot import ranks

        _save(ranks(ranking).figure, path)

    settings = _settings(
        args, file=args.file, y_true=args.y_true, models=args.models, metric=metric, rope=args.rope
    )
    note = (
        "one joint posterior: one bootstrap weight per row shared by every model"
        if by_scores
        else "one joint posterior: one Dirichlet over the rows' joint outcomes"
    )
    return Output(
        "rank",
        settings,
        ranking.to_dict(args.ci),
        [ranking.summary(args.ci), pairs],
        [f"\n{note}"],
        plot,
        objects=[ranking],
    )


def _estimate(args: argparse.Namespace) -> Output:
    from probeval.labelfree.estimator import LabelFreeEstimator, has_missing

    progress = Progress(4)
    if args.period is not None and args.timestamp is None:
        raise UsageError("--period needs --timestamp COL")
    if args.period is None and args.timestamp is not None:
        raise UsageError("--timestamp needs --period (h, D, W, M, Q or Y)")
    reference = _read(
        TableFile(args.reference),
        {"--y-true": args.y_true, "--y-score": args.y_score},
        numbers=["--y-score"],
    )
    analysis_file = TableFile(args.analysis)
    analysis = _read(
        analysis_file,
        {
            "--y-score": args.y_score,
            "--timestamp": args.timestamp,
            # A backtest when the column is there; labels arriving when some are missing.
            "--y-true": args.y_true if args.y_true in analysis_file.names else None,
        },
        numbers=["--y-score"],
        missing_ok=["--y-true"],
    )
    progress.step("read")
    ref_truth, ref_score = reference["--y-true"], reference["--y-score"]
    score, stamps = analysis["--y-score"], analysis["--timestamp"]
    classes = None
    if args.labels is not None:
        if len(args.y_score) < 2:
            raise UsageError("--labels names the classes of several --y-score columns")
        classes = [_as_label(value, ref_truth, "--labels") for value in args.labels]
    labels = analysis["--y-true"]  # a backtest: labels exist
    partial = None
    if labels is not None and has_missing(labels):
        # Labels arriving: the known ones update the estimate, the missing ones are predicted.
        partial, labels = labels, None
    estimator = LabelFreeEstimator(
        n_bins=args.n_bins,
        threshold=args.threshold,
        metrics=_metrics(args.metrics),
        calibration=args.calibration,
        method=args.method,
        unseen_drift=args.unseen_drift,
        drift_per_shift=args.drift_per_shift,
        shift=args.shift,
    )
    estimator.fit(
        ref_truth, ref_score, pos_label=_pos_label(args.pos_label, ref_truth), labels=classes
    )
    progress.step("fit")
    result = estimator.estimate(
        score,
        target=args.target,
        y_true=labels,
        partial_labels=partial,
        chunk_size=args.chunk_size,
        n_chunks=args.n_chunks,
        period=args.period,
        timestamps=stamps,
        n_samples=args.samples,
        rng=args.seed,
        ci=args.ci,
    )
    progress.step("estimate")
    tables = [result.summary()]
    if labels is not None and args.target == "realized":
        # A backtest: how the intervals did against the labels, per metric (also in the JSON).
        tables.append(result.backtest())
    progress.step("summaries")

    def plot(path: str) -> None:
        from probeval.plot import chunks

        _save(chunks(result, result.metrics[-1]).figure, path)

    notes = []
    if labels is not None and args.target == "population":
        notes.append(
            "\nnote: realized values scatter around the population estimate beyond its HDI by "
            "design; compare them with --target realized"
        )
    notes.extend(_estimate_warnings(result))
    settings = _settings(
        args,
        reference=args.reference,
        analysis=args.analysis,
        y_true=args.y_true,
        y_score=args.y_score,
        target=args.target,
        calibration=args.calibration,
        method=args.method,
        shift=args.shift,
        n_bins=args.n_bins,
        threshold=args.threshold,
    )
    return Output("estimate", settings, result.to_dict(), tables, notes, plot, objects=[result])


def _ensemble(args: argparse.Namespace) -> Output:
    from probeval.ensemble import ensemble_report

    progress = Progress(3)
    table = TableFile(args.file)
    patterns = [p.strip() for p in args.proba_cols.split(",") if p.strip()]
    names = [c for c in table.names if any(fnmatch.fnmatchcase(c, p) for p in patterns)]
    if len(names) < 2:
        raise UsageError(
            f"--proba-cols {args.proba_cols!r} matches {len(names)} column(s) ({names}); an "
            "ensemble needs at least 2 (use a glob such as 'model_*' or a comma-separated list)"
        )
    columns = _read(
        table,
        {"--proba-cols": names, "--y-true": args.y_true, "--group": args.group},
        numbers=["--proba-cols"],
    )
    progress.step("read")
    proba = np.asarray(columns["--proba-cols"], dtype=np.float64).T
    truth, groups = columns["--y-true"], columns["--group"]
    reference = args.reference_group
    if groups is not None:
        reference = _as_label(reference, groups, "--reference-group")
    report = ensemble_report(
        proba,
        truth,
        threshold=args.threshold,
        groups=groups,
        reference_group=reference,
        pos_label=None if truth is None else _pos_label(args.pos_label, truth),
        rope=args.rope,
        ci=args.ci,
        n_samples=args.samples,
        rng=args.seed,
    )
    progress.step("statistics")
    tables = [report.summary()]
    if report.groups:
        tables += [report.groups_table(), report.gaps_table()]
    progress.step("summaries")

    def plot(path: str) -> None:
        from probeval.plot import posteriors

        items = dict(report.metrics)
        items.update({f"{g.metric} {g.kind} ({g.group})": g.posterior for g in report.gaps[:6]})
        _save(posteriors(items, ci=args.ci), path)

    settings = _settings(
        args, file=args.file, proba_cols=names, y_true=args.y_true, group=args.group
    )
    return Output("ensemble", settings, report.to_dict(), tables, [], plot, objects=[report])


def _demo(args: argparse.Namespace) -> Output:
    from probeval.compare.comparisons import compare_paired
    from probeval.compare.decisions import decide
    from probeval.datasets import load_demo
    from probeval.labelfree.estimator import LabelFreeEstimator
    from probeval.labels.evaluation import evaluate

    progress = Progress(4)
    data = load_demo()
    y, a, b = data["y_true"], data["score_a"], data["score_b"]
    reference = data["period"] == "reference"
    ev = evaluate(
        y[reference],
        y_score=a[reference],
        metrics=["accuracy", "precision", "recall", "f1", "mcc", "roc_auc"],
        n_samples=args.samples,
        rng=args.seed,
    )
    progress.step("evaluation")
    cmp = compare_paired(
        y[reference],
        a[reference] > 0.5,
        b[reference] > 0.5,
        metric="f1",
        rope=0.01,
        n_samples=args.samples,
        rng=args.seed,
    )
    decision = decide(cmp, ci=args.ci)
    progress.step("comparison")
    estimator = LabelFreeEstimator(metrics=["accuracy", "f1", "roc_auc"])
    estimator.fit(y[reference], a[reference])
    result = estimator.estimate(
        a[~reference],
        target="realized",
        y_true=y[~reference],
        period="W",
        timestamps=data["date"][~reference],
        n_samples=args.samples,
        rng=args.seed,
        ci=args.ci,
    )
    progress.step("label-free estimate")
    summary = cmp.summary(args.ci)
    comparison = Table(
        {
            "quantity": [
                "f1 of A",
                "f1 of B",
                "A - B (mean)",
                "HDI low",
                "HDI high",
                "P(A better by > 0.01)",
                "decision",
            ],
            "value": [
                summary["observed_a"],
                summary["observed_b"],
                summary["mean"],
                summary["hdi_low"],
                summary["hdi_high"],
                summary["p_sig_pos"],
                decision.status,
            ],
        },
        title="2. Is A better than B? Paired comparison of F1 on the same rows (ROPE +-0.01)",
    )
    estimate = result.summary()
    keys = [chunk.key for chunk in result.chunks]
    estimate.title = (
        f"3. Weeks 9-16 ({keys[0]} ... {keys[-1]}) without labels: estimated from the scores "
        "alone (realized target), next to the values measured once the labels arrived"
    )
    evaluation = ev.summary(ci=args.ci)
    evaluation.title = f"1. Model A on weeks 1-8: {evaluation.title}"
    captions = [
        _demo_evaluation_caption(args.ci),
        _demo_comparison_caption(summary, decision.status, args.ci),
        _demo_estimate_caption(estimate, result.score_shift_alerts(p=0.05), keys, args.ci),
    ]
    progress.step("tables")

    def plot(path: str) -> None:
        from probeval.plot import chunks

        _save(chunks(result, "roc_auc").figure, path)

    payload = {
        "evaluation": ev.to_dict(ci=args.ci),
        "comparison": {**cmp.to_dict(args.ci), "decision": decision.to_dict()},
        "estimate": result.to_dict(),
    }
    preamble = (
        "probeval demo: 8,000 labelled rows of two binary classifiers (A and B) over 16 weeks;\n"
        "weeks 1-8 are the reference, weeks 9-16 drift towards riskier cases.\n"
    )
    tables = [evaluation, comparison, estimate]
    return Output(
        "demo",
        _settings(args),
        payload,
        tables,
        plot=plot,
        preamble=preamble,
        captions=captions,
        objects=[ev, cmp, result],
    )


def _experiment(args: argparse.Namespace) -> Output:
    from probeval.experiment.experiment import Experiment
    from probeval.labels.evaluation import evaluate

    if (args.y_pred is None) == (args.y_score is None):
        raise UsageError("give --y-pred COL or --y-score COL")
    if args.rope is None and args.reference is None:
        raise UsageError(
            "say what to test: --rope LO HI (within range) or --reference FILE (no worse than "
            "the reference, a labelled file with the same columns)"
        )
    options = {
        "--y-true": args.y_true,
        "--y-pred": args.y_pred,
        "--y-score": args.y_score,
        "--batch": args.batch,
    }
    columns = _read(TableFile(args.file), options, numbers=["--y-score"])
    truth, pred, score, batch = columns.values()
    pos_label = _pos_label(args.pos_label, truth)
    metrics = _metrics(args.metrics)
    reference = None
    if args.reference is not None:
        ref = _read(
            TableFile(args.reference),
            {k: v for k, v in options.items() if k != "--batch"},
            numbers=["--y-score"],
        )
        reference = evaluate(
            ref["--y-true"],
            ref["--y-pred"],
            ref["--y-score"],
            threshold=args.threshold,
            metrics=metrics,
            n_samples=args.samples,
            rng=args.seed,
            pos_label=pos_label,
        )
    experiment = Experiment(
        metrics if metrics is not None else (list(reference) if reference is not None else None),
        rope=None if args.rope is None else tuple(args.rope),
        reference=reference,
        precision=args.precision,
        planned_n=args.planned_n,
        ci=args.ci,
        threshold=args.threshold,
        pos_label=pos_label,
        n_samples=args.samples,
        seed=args.seed,
    )
    # Batches in the order they first appear in the file (a file in time order keeps it).
    keys, first = np.unique(batch.astype(str), return_index=True)
    order = keys[np.argsort(first)]
    labels = batch.astype(str)
    progress = Progress(len(order))
    for key in order:
        rows = labels == key
        experiment.update(
            truth[rows],
            None if pred is None else pred[rows],
            None if score is None else score[rows],
        )
        progress.step(f"batch {key}")
    if args.state is not None:
        try:
            experiment.to_json(args.state)
        except OSError as error:
            raise UsageError(f"cannot write the state to {args.state}: {error}") from None
    trajectory = experiment.trajectory()
    trajectory.title = "trajectory (one line per batch and metric)"
    summary = experiment.summary()

    def plot(path: str) -> None:
        from probeval.plot import trajectory as draw

        _save(draw(experiment).figure, path)

    settings = _settings(
        args,
        file=args.file,
        batch=args.batch,
        rope=args.rope,
        reference=args.reference,
        precision=args.precision,
        batches=[str(k) for k in order],
    )
    result = {
        "status": experiment.status,
        "done": experiment.done,
        "summary": summary.to_dict(),
        "trajectory": trajectory.to_dict(),
    }
    notes = [] if args.state is None else [f"state written to {args.state}"]
    return Output(
        "experiment", settings, result, [summary, trajectory], notes, plot, objects=[experiment]
    )


def _plan(args: argparse.Namespace) -> Output:
    from probeval.experiment.planning import plan_sample_size
    from probeval.labels.confusion import ConfusionMatrix

    given = [v is not None for v in (args.expected, args.pilot, args.reference)]
    if sum(given) != 1:
        raise UsageError(
            "give one of: the value you expect (--expected V), a pilot's counts (--pilot TP FP "
            "TN FN), or a labelled reference file for a label-free plan (--reference FILE)"
        )
    expected: Any = args.expected
    if args.pilot is not None:
        tp, fp, tn, fn = args.pilot
        expected = ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
    if args.reference is not None:
        from probeval.labelfree.estimator import LabelFreeEstimator

        if args.y_true is None or args.y_score is None:
            raise UsageError("a label-free plan needs --y-true COL and --y-score COL")
        ref = _read(
            TableFile(args.reference),
            {"--y-true": args.y_true, "--y-score": args.y_score},
            numbers=["--y-score"],
        )
        expected = LabelFreeEstimator(metrics=[args.metric], threshold=args.threshold).fit(
            ref["--y-true"], ref["--y-score"], pos_label=_pos_label(None, ref["--y-true"])
        )
    plan = plan_sample_size(
        args.metric,
        args.width,
        expected=expected,
        assurance=args.assurance,
        ci=args.ci,
        n_max=args.n_max,
        rng=args.seed,
    )
    curve = plan.curve()
    curve.title = f"P(HDI width <= {args.width:g}) against the labelled rows"
    answer = (
        f"{plan.n:,} labelled {plan.unit} give a {args.ci:.0%} HDI of {args.metric} no wider "
        f"than {args.width:g} with probability >= {args.assurance:g} ({plan.method})"
        if plan.n is not None
        else repr(plan)
    )

    def plot(path: str) -> None:
        from probeval.plot import _new_axes

        axes = _new_axes(None, (6.0, 3.2))
        axes.plot(curve["n"], curve["probability"], "o-", ms=3)
        axes.axhline(args.assurance, color="grey", ls="--", lw=1)
        axes.set_xscale("log")
        axes.set_xlabel("labelled rows")
        axes.set_ylabel(f"P(width <= {args.width:g})")
        axes.set_title(f"sample size for {args.metric}")
        _save(axes.figure, path)

    settings = _settings(
        args,
        metric=args.metric,
        width=args.width,
        expected=args.expected,
        pilot=args.pilot,
        reference=args.reference,
        assurance=args.assurance,
        n_max=args.n_max,
    )
    return Output(
        "plan", settings, plan.to_dict(), [curve], [f"\n{answer}"], plot, objects=[plan, curve]
    )


def _label_plan(args: argparse.Namespace) -> Output:
    from probeval.experiment.labelling import labelling_plan

    columns = _read(TableFile(args.file), {"--y-score": args.y_score}, numbers=["--y-score"])
    scores = columns["--y-score"]
    plan = labelling_plan(
        scores,
        args.budget,
        metric=args.metric,
        threshold=args.threshold,
        n_bins=args.n_bins,
        rng=args.seed,
    )
    rows = Table(
        {
            "row": plan.rows.tolist(),
            "stratum": plan.strata.tolist(),
            "weight": plan.weights.tolist(),
            "score": scores[plan.rows].tolist(),
        },
        title="rows to label (0-based positions in the file, in random order)",
    )
    notes = []
    if args.out is not None:
        try:
            with open(args.out, "w", encoding="utf-8") as handle:
                handle.write(rows.to_csv())
        except OSError as error:
            raise UsageError(f"cannot write the rows to {args.out}: {error}") from None
        notes.append(
            f"\n{plan.budget:,} rows written to {args.out}; once labelled, evaluate them with "
            f"'probeval evaluate FILE --y-true COL --y-score score --threshold {plan.threshold:g}"
            " --strata stratum --weights weight'"
        )
    settings = _settings(
        args,
        file=args.file,
        y_score=args.y_score,
        budget=args.budget,
        metric=args.metric,
        threshold=args.threshold,
        n_bins=args.n_bins,
        out=args.out,
    )
    tables = [plan.table()] if args.out is not None else [plan.table(), rows]
    return Output("label-plan", settings, plan.to_dict(), tables, notes, objects=[plan])


def _percent(ci: float) -> str:
    return f"{100 * ci:g}%"


def _demo_evaluation_caption(ci: float) -> str:
    return _caption(
        f"Each metric is a posterior: its mean, and the {_percent(ci)} HDI (the narrowest "
        f"interval holding {_percent(ci)} of the probability); width says how sure we are."
    )


def _demo_comparison_caption(summary: Any, status: str, ci: float) -> str:
    low, high = float(summary["hdi_low"]), float(summary["hdi_high"])
    why = {
        "undecided": (
            f"its {_percent(ci)} HDI [{low:.4f}, {high:.4f}] still reaches into the ROPE "
            "[-0.01, 0.01] of differences too small to matter, so more rows could still change "
            f"the answer; P(A better by > 0.01) = {float(summary['p_sig_pos']):.2f} says which "
            "way it leans"
        ),
        "accepted": f"its {_percent(ci)} HDI [{low:.4f}, {high:.4f}] lies outside the ROPE",
        "rejected": f"its {_percent(ci)} HDI [{low:.4f}, {high:.4f}] lies inside the ROPE",
    }.get(status, f"its {_percent(ci)} HDI is [{low:.4f}, {high:.4f}]")
    return _caption(
        "decision: HDI + ROPE. It is final only once the whole HDI of A - B is on one side "
        f"of the ROPE (or inside it); here it is {status}: {why}."
    )


def _demo_estimate_caption(estimate: Any, shifted: list[int], keys: list[str], ci: float) -> str:
    inside = sum(
        low <= realized <= high
        for low, high, realized in zip(
            estimate["hdi_low"], estimate["hdi_high"], estimate["realized"], strict=True
        )
    )
    moved = [keys[i] for i in shifted]
    drift = (
        f"The scores of {', '.join(moved)} differ from the reference's (score_shift_p < 0.05): "
        "the drift. The estimates follow the scores there"
        if moved
        else "No week's scores differ from the reference's (all score_shift_p >= 0.05)"
    )
    total = len(estimate["realized"])
    verdict = (
        "the estimates, made without a single label, held"
        if inside >= 0.9 * total
        else "more than a tenth missed: label a sample of these weeks (partial labels)"
    )
    return _caption(
        "decision: 'no worse than the reference' - accepted when the week's whole HDI lies "
        "above the lower edge of the reference's HDI, rejected when wholly below it, undecided "
        f"otherwise. {drift}, and {inside} of the {total} values measured later lie inside "
        f"their {_percent(ci)} HDIs: {verdict}."
    )


def _caption(text: str) -> str:
    """A table's explanation, wrapped and indented under it."""
    return textwrap.fill(text, width=100, initial_indent="   ", subsequent_indent="   ")


# ------------------------------------------------------------------------------ parser


def _common(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("common options")
    group.add_argument(
        "--samples", type=int, default=10_000, metavar="N", help="posterior draws (default 10000)"
    )
    group.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    group.add_argument(
        "--ci", type=float, default=0.95, metavar="P", help="interval probability (default 0.95)"
    )
    group.add_argument(
        "--format",
        choices=("table", "json", "csv"),
        default="table",
        help="output: aligned tables (default), JSON (stable schema) or CSV",
    )
    group.add_argument(
        "--plot", metavar="OUT.png", help="also draw a figure to this file (needs matplotlib)"
    )
    group.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write a self-contained HTML report (figures as inline SVG with matplotlib; "
        "nothing is loaded from the network)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="probeval", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"probeval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    ev = commands.add_parser(
        "evaluate",
        help="posteriors of a classifier's metrics from a labelled file",
        description="Posteriors of the metrics of one classifier from a CSV/Parquet file with "
        "true labels and predictions and/or scores.",
    )
    ev.add_argument("file", help="CSV or Parquet file")
    ev.add_argument("--y-true", required=True, metavar="COL", help="column of true labels")
    ev.add_argument("--y-pred", metavar="COL", help="column of predicted labels")
    ev.add_argument("--y-score", metavar="COL", help="column of scores P(y=1) (adds ROC AUC, AP)")
    ev.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        metavar="T",
        help="score threshold (default 0.5; predicted 1 iff score > T)",
    )
    ev.add_argument(
        "--metrics", nargs="+", metavar="M", help="metric names (space or comma separated)"
    )
    ev.add_argument("--pos-label", metavar="L", help="the positive class (default 1 / True)")
    ev.add_argument(
        "--strata",
        metavar="COL",
        help="a stratified sample's stratum column (as 'probeval label-plan' writes it): the "
        "posterior is the whole population's",
    )
    ev.add_argument("--weights", metavar="COL", help="the stratified sample's design weights")
    ev.add_argument(
        "--calibration",
        action="store_true",
        help="also the calibration: reliability bins with credible bands, ECE (and a "
        "calibrated model's), Brier score and log-loss posteriors (needs --y-score)",
    )
    ev.add_argument(
        "--value",
        nargs=4,
        type=float,
        metavar=("TP", "FP", "TN", "FN"),
        help="the value of one row in each cell (costs negative): the expected value per row at "
        "--threshold, the value-maximising threshold and what --threshold loses against it "
        "(needs --y-score)",
    )
    _common(ev)
    ev.set_defaults(handler=_evaluate)

    cmp = commands.add_parser(
        "compare",
        help="is model A better than model B? (paired by default)",
        description="Compare two models scored on the same rows: the posterior of A - B, "
        "P(direction), P(ROPE) and a decision. Model columns hold labels or scores.",
    )
    cmp.add_argument("file", help="CSV or Parquet file")
    cmp.add_argument("--y-true", required=True, metavar="COL", help="column of true labels")
    cmp.add_argument(
        "--model-a", required=True, metavar="COL", help="predictions or scores of model A"
    )
    cmp.add_argument(
        "--model-b", required=True, metavar="COL", help="predictions or scores of model B"
    )
    cmp.add_argument("--metric", default="accuracy", metavar="M", help="metric (default accuracy)")
    cmp.add_argument(
        "--rope",
        type=float,
        default=0.01,
        metavar="E",
        help="practical equivalence: |A - B| <= E (default 0.01)",
    )
    cmp.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        metavar="T",
        help="threshold for score columns (default 0.5)",
    )
    cmp.add_argument("--pos-label", metavar="L", help="the positive class (default 1 / True)")
    mode = cmp.add_mutually_exclusive_group()
    mode.add_argument(
        "--paired", action="store_true", default=None, help="same rows: joint posterior (default)"
    )
    mode.add_argument("--independent", action="store_true", help="treat the two as independent")
    _common(cmp)
    cmp.set_defaults(handler=_compare)

    rank = commands.add_parser(
        "rank",
        help="rank several models scored on the same rows",
        description="Rank several models scored on the same rows from one joint posterior: "
        "each model's metric, P(best), the expected rank and P(better) for every pair. Model "
        "columns hold labels or scores (thresholded at --threshold; scores as they are for "
        "roc_auc and average_precision).",
    )
    rank.add_argument("file", help="CSV or Parquet file")
    rank.add_argument("--y-true", required=True, metavar="COL", help="column of true labels")
    rank.add_argument(
        "--models", required=True, nargs="+", metavar="COL", help="the models' columns"
    )
    rank.add_argument("--metric", default="accuracy", metavar="M", help="metric (default accuracy)")
    rank.add_argument(
        "--rope",
        type=float,
        default=0.0,
        metavar="E",
        help="differences within E count as equivalent, not better (default 0)",
    )
    rank.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        metavar="T",
        help="threshold for score columns with label metrics (default 0.5)",
    )
    rank.add_argument("--pos-label", metavar="L", help="the positive class (default 1 / True)")
    _common(rank)
    rank.set_defaults(handler=_rank)

    est = commands.add_parser(
        "estimate",
        help="performance without labels, per chunk",
        description="Fit on labelled reference data, estimate on scores without labels, per "
        "chunk. If the analysis file also has the label column, realized values are shown.",
    )
    est.add_argument("--reference", required=True, metavar="FILE", help="labelled reference data")
    est.add_argument("--analysis", required=True, metavar="FILE", help="data to estimate on")
    est.add_argument("--y-true", required=True, metavar="COL", help="label column (reference)")
    est.add_argument(
        "--y-score",
        required=True,
        nargs="+",
        metavar="COL",
        help="score column (both files); a multiclass model's columns, one per class in "
        "--labels order",
    )
    est.add_argument(
        "--labels",
        nargs="+",
        metavar="L",
        help="the class of each --y-score column (default: the sorted classes of --y-true)",
    )
    chunking = est.add_mutually_exclusive_group()
    chunking.add_argument("--chunk-size", type=int, metavar="N", help="rows per chunk")
    chunking.add_argument("--n-chunks", type=int, metavar="N", help="number of chunks")
    chunking.add_argument(
        "--period",
        choices=("h", "D", "W", "M", "Q", "Y"),
        help="one chunk per period of --timestamp",
    )
    est.add_argument("--timestamp", metavar="COL", help="timestamp column for --period")
    est.add_argument(
        "--metrics",
        nargs="+",
        metavar="M",
        help="binary metrics and roc_auc; multiclass: accuracy, f1_macro, recall[cat], "
        "roc_auc_macro, ...",
    )
    est.add_argument(
        "--target",
        choices=("population", "realized"),
        default="population",
        help="population metric or the realized value's prediction (default population)",
    )
    est.add_argument(
        "--calibration",
        choices=("reference", "perfect"),
        default="reference",
        help="learn positive rates from the reference (default) or trust the scores",
    )
    est.add_argument(
        "--method",
        choices=("hierarchical", "pooled"),
        default="hierarchical",
        help="let the calibration drift as much as the reference periods did (default), or the "
        "pooled reference calibration unchanged",
    )
    est.add_argument(
        "--shift",
        choices=("covariate", "label"),
        default="covariate",
        help="what moved between the reference and production: the mix of scores, P(y | score) "
        "carrying over (default); or the prevalence, each class's scores carrying over (a "
        "label shift, read from each chunk's scores; binary scores only)",
    )
    est.add_argument(
        "--unseen-drift",
        type=float,
        default=UNSEEN_DRIFT,
        metavar="SD",
        help=f"sd (logit) of production's calibration shift that the reference periods cannot "
        f"show, where its scores vary from the reference's more than the reference periods do "
        f"(default {UNSEEN_DRIFT:g}; 0 when the reference spans production's conditions; "
        "a binary model's separation moves by half of it; the shift is left out once the "
        "label column has labels)",
    )
    est.add_argument(
        "--drift-per-shift",
        type=float,
        default=DRIFT_PER_SHIFT,
        metavar="SD",
        help=f"further sd (logit) of a chunk's calibration shift per unit of how far its scores "
        f"moved beyond the reference periods' spread (default {DRIFT_PER_SHIFT:g}; a quarter of "
        "it once the label column has labels; 0: none)",
    )
    est.add_argument(
        "--n-bins", type=int, default=10, metavar="B", help="equal-frequency bins (default 10)"
    )
    est.add_argument(
        "--threshold", type=float, default=0.5, metavar="T", help="decision threshold (default 0.5)"
    )
    est.add_argument("--pos-label", metavar="L", help="the positive class (default 1 / True)")
    _common(est)
    est.set_defaults(handler=_estimate)

    ens = commands.add_parser(
        "ensemble",
        help="stability and uncertainty of an ensemble, gaps between groups",
        description="Label stability, jitter, epistemic and aleatoric uncertainty of an "
        "ensemble whose members' P(y=1) are columns of the file; with --group, Bayesian gaps "
        "between groups.",
    )
    ens.add_argument("file", help="CSV or Parquet file")
    ens.add_argument(
        "--proba-cols",
        required=True,
        metavar="PATTERN",
        help="columns of the members' P(y=1): a glob such as 'model_*' or a comma-separated list",
    )
    ens.add_argument(
        "--y-true", metavar="COL", help="column of true labels (enables accuracy, F1, TPR, FPR)"
    )
    ens.add_argument("--group", metavar="COL", help="column of group labels")
    ens.add_argument(
        "--reference-group",
        metavar="G",
        help="group to compare the others with (default the largest)",
    )
    ens.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        metavar="T",
        help="a member predicts 1 iff P > T (default 0.5)",
    )
    ens.add_argument(
        "--rope",
        type=float,
        default=0.05,
        metavar="E",
        help="practical equivalence for gaps (default 0.05)",
    )
    ens.add_argument("--pos-label", metavar="L", help="the positive class (default 1 / True)")
    _common(ens)
    ens.set_defaults(handler=_ensemble)

    exp = commands.add_parser(
        "experiment",
        help="an experiment over batches: accepted, rejected or ongoing after each",
        description="Feed the file's batches (a batch column, in order of first appearance) "
        "to an experiment: after each batch every metric's posterior, HDI and status "
        "(accepted / rejected once the HDI is decisive and narrow enough, ongoing before).",
    )
    exp.add_argument("file", help="CSV or Parquet file")
    exp.add_argument("--y-true", required=True, metavar="COL", help="column of true labels")
    exp.add_argument("--y-pred", metavar="COL", help="column of predicted labels")
    exp.add_argument("--y-score", metavar="COL", help="column of scores P(y=1)")
    exp.add_argument("--batch", required=True, metavar="COL", help="column naming each row's batch")
    exp.add_argument("--metrics", nargs="+", metavar="M", help="metric names")
    exp.add_argument(
        "--rope", type=float, nargs=2, metavar=("LO", "HI"), help="within range: the ROPE"
    )
    exp.add_argument(
        "--reference",
        metavar="FILE",
        help="no worse than this labelled reference file (same columns): the ROPE runs from "
        "the reference HDI's lower edge (upper, for lower-is-better metrics)",
    )
    exp.add_argument(
        "--precision",
        type=float,
        metavar="W",
        help="HDI width a final answer needs (default with --reference: by assurance)",
    )
    exp.add_argument(
        "--planned-n", type=int, metavar="N", help="planned rows, for the default precision"
    )
    exp.add_argument(
        "--threshold", type=float, default=0.5, metavar="T", help="score threshold (default 0.5)"
    )
    exp.add_argument("--pos-label", metavar="L", help="the positive class (default 1 / True)")
    exp.add_argument(
        "--state", metavar="OUT.json", help="write the experiment's state (JSON) to resume it"
    )
    _common(exp)
    exp.set_defaults(handler=_experiment)

    plan = commands.add_parser(
        "plan",
        help="how many labelled rows for a given HDI width?",
        description="The smallest number of labelled rows whose HDI of the metric is no wider "
        "than --width with probability --assurance (exact for proportions, simulated for F1, "
        "MCC, ...).",
    )
    plan.add_argument("--metric", required=True, metavar="M", help="metric name")
    plan.add_argument("--width", required=True, type=float, metavar="W", help="HDI width wanted")
    plan.add_argument("--expected", type=float, metavar="V", help="the value you expect")
    plan.add_argument(
        "--pilot",
        type=float,
        nargs=4,
        metavar=("TP", "FP", "TN", "FN"),
        help="a pilot's confusion counts instead of --expected",
    )
    plan.add_argument(
        "--reference",
        metavar="FILE",
        help="without labels: a labelled reference file to fit a label-free estimator on; n "
        "then counts unlabelled rows per chunk (the answer may be 'never')",
    )
    plan.add_argument("--y-true", metavar="COL", help="label column of --reference")
    plan.add_argument("--y-score", metavar="COL", help="score column of --reference")
    plan.add_argument(
        "--threshold", type=float, default=0.5, metavar="T", help="decision threshold (default 0.5)"
    )
    plan.add_argument(
        "--assurance", type=float, default=0.8, metavar="P", help="probability (default 0.8)"
    )
    plan.add_argument(
        "--n-max", type=int, default=10_000_000, metavar="N", help="largest n tried (default 1e7)"
    )
    _common(plan)
    plan.set_defaults(handler=_plan)

    lab = commands.add_parser(
        "label-plan",
        help="which rows to send to reviewers, for one metric",
        description="Stratify the scores (bins on each side of the threshold) and allocate a "
        "label budget to make one metric's posterior as narrow as possible (Neyman "
        "allocation). The rows come with their stratum and design weight, for "
        "'probeval evaluate --strata --weights' once labelled.",
    )
    lab.add_argument("file", help="CSV or Parquet file with the production scores")
    lab.add_argument("--y-score", required=True, metavar="COL", help="column of scores P(y=1)")
    lab.add_argument("--budget", required=True, type=int, metavar="N", help="rows to label")
    lab.add_argument("--metric", default="precision", metavar="M", help="(default precision)")
    lab.add_argument(
        "--threshold", type=float, default=0.5, metavar="T", help="decision threshold (default 0.5)"
    )
    lab.add_argument(
        "--n-bins", type=int, default=10, metavar="B", help="strata per side (default 10)"
    )
    lab.add_argument("--out", metavar="ROWS.csv", help="write the rows to label to this file")
    _common(lab)
    lab.set_defaults(handler=_label_plan)

    demo = commands.add_parser(
        "demo",
        help="the whole story on bundled data, in seconds",
        description="Evaluation with labels, a paired comparison of two models and a label-free "
        "estimate over weekly chunks next to the realized values, on bundled data.",
    )
    _common(demo)
    demo.set_defaults(handler=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2

    def show(message: Any, category: Any, *_: Any, **__: Any) -> None:
        # One line, like the errors: no source line and path of the code that warned.
        print(f"probeval {args.command}: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show
            output = args.handler(args)
            _emit(args, output)
    except ImportError as error:  # an optional dependency (matplotlib, pyarrow)
        print(f"probeval {args.command}: error: {error}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, KeyError, IndexError) as error:
        message = error.args[0] if error.args else str(error)
        print(f"probeval {args.command}: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `probeval demo | head`
        return 0
    except KeyboardInterrupt:  # Ctrl-C: the shell's convention, 128 + SIGINT, no traceback
        print(f"probeval {args.command}: interrupted", file=sys.stderr)
        return 130
    except MemoryError as error:
        print(f"probeval {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
