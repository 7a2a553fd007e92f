"""Self-contained HTML reports: one file to send to people who will never open Python.

``pe.report(result, "report.html")`` writes a page with the result's summary tables, its
decisions coloured by status, its figures as inline SVG (drawn with matplotlib when it is
installed; a text-only report otherwise), the settings and the probeval version. The page
loads nothing from anywhere: no script, no stylesheet, no font, no image is requested. The
CLI's ``--html FILE`` writes the same kind of page for every command.
"""

from __future__ import annotations

import datetime as _dt
import io
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from probeval._util.html import STYLE, escape, key_values
from probeval._util.table import Table
from probeval._util.validation import describe

__all__ = ["figure_svg", "has_matplotlib", "page", "report", "section"]

_PAGE_STYLE = """
body { margin: 24px auto; max-width: 1100px; padding: 0 16px; background: #ffffff; }
header.pe-head { border-bottom: 2px solid #1f5fa6; margin-bottom: 12px; }
header.pe-head h1 { font-family: system-ui, sans-serif; font-size: 22px; margin: 0 0 4px 0; }
header.pe-head p { font-family: system-ui, sans-serif; color: #616161; margin: 0 0 8px 0; }
section.pe-section { margin: 16px 0 24px 0; }
figure.pe-figure { margin: 8px 0; }
figure.pe-figure svg { max-width: 100%; height: auto; }
footer.pe-foot { font-family: system-ui, sans-serif; color: #757575; font-size: 12px;
  border-top: 1px solid #e0e0e0; padding-top: 8px; margin-top: 24px; }
"""


def figure_svg(figure: Any) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (text kept as paths, so no font is
    needed)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def page(
    title: str,
    sections: Sequence[str],
    *,
    settings: dict[str, Any] | None = None,
    subtitle: str = "",
) -> str:
    """A complete HTML document around ready-made HTML sections."""
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = "".join(f'<section class="pe-section">{part}</section>' for part in sections)
    shown = {} if not settings else {str(k): _setting(v) for k, v in settings.items()}
    settings_html = (
        f'<section class="pe-section">{key_values(shown, "settings")}</section>' if shown else ""
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}{_PAGE_STYLE}</style></head>"
        '<body><div class="pe-result">'
        f'<header class="pe-head"><h1>{escape(title)}</h1>'
        f"<p>{escape(subtitle)}</p></header>{body}{settings_html}"
        f'<footer class="pe-foot">probeval {escape(_version())} · written {when} · '
        "self-contained: this page requests nothing from the network</footer>"
        "</div></body></html>\n"
    )


def _version() -> str:
    # Read from the installed package: importing probeval's own __version__ from here would
    # make an import cycle (probeval imports this module).
    try:
        return metadata.version("probeval")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _setting(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else value


def _figures(result: Any) -> list[Any]:
    """The figures that go with a result (needs matplotlib)."""
    from probeval import plot
    from probeval.base.posterior import Posterior
    from probeval.compare.comparisons import Comparison
    from probeval.compare.ranking import Ranking
    from probeval.experiment.experiment import Experiment
    from probeval.labelfree.estimator import LabelFreeEstimate
    from probeval.labels.calibration import CalibrationReport
    from probeval.labels.curves import CurveReport
    from probeval.labels.evaluation import Evaluation
    from probeval.labels.value import DecisionCurve

    if isinstance(result, Posterior):
        return [plot.posterior(result).figure]
    if isinstance(result, Evaluation):
        return [plot.posteriors(result)]
    if isinstance(result, Comparison):
        return [plot.compare(result).figure]
    if isinstance(result, Ranking):
        return [plot.ranks(result).figure]
    if isinstance(result, LabelFreeEstimate):
        return [plot.chunks(result, metric).figure for metric in result.metrics]
    if isinstance(result, CalibrationReport):
        return [plot.reliability(result).figure]
    if isinstance(result, CurveReport):
        return [plot.curve(result, "roc").figure, plot.curve(result, "pr").figure]
    if isinstance(result, DecisionCurve):
        kinds = (["value"] if result.value is not None else []) + (
            ["net_benefit"] if result._probabilities else []
        )
        return [plot.decision_curve(result, kind).figure for kind in kinds]
    if isinstance(result, Experiment):
        return [plot.trajectory(result, metric).figure for metric in result.metrics]
    return []


def has_matplotlib() -> bool:
    """Whether matplotlib can be imported (the figures of a report need it)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def section(result: Any, *, figures: bool) -> str:
    """One result's part of a report: its HTML (tables, badges, small inline curves) and, with
    ``figures``, its matplotlib figures as inline SVG."""
    parts = [_body(result)]
    if figures:
        parts += [f'<figure class="pe-figure">{figure_svg(f)}</figure>' for f in _figures(result)]
    return "".join(parts)


def _body(result: Any) -> str:
    if isinstance(result, Table):
        return result.to_html()
    html = getattr(result, "_html", None)
    if html is None:
        raise TypeError(
            f"report needs a probeval result (an Evaluation, Comparison, LabelFreeEstimate, "
            f"...), got {describe(result)}"
        )
    return str(html())


def report(
    result: Any,
    path: str | Path | None = None,
    *,
    title: str | None = None,
    settings: dict[str, Any] | None = None,
    figures: bool = True,
) -> str:
    """A self-contained HTML report of one or more results.

    Parameters
    ----------
    result : result object or sequence of them
        What :func:`evaluate`, :func:`compare_paired`, :meth:`LabelFreeEstimator.estimate`,
        :func:`rank_models`, :func:`calibration`, ... return (or a summary :class:`Table`).
    path : str or Path, optional
        Where to write the page (UTF-8); the HTML is returned either way.
    title : str, optional
        The page's title (default: "probeval report").
    settings : dict, optional
        Named settings to list at the end (data file, seed, ...).
    figures : bool
        Draw the results' figures as inline SVG when matplotlib is installed (default); the
        report is text-only without matplotlib or with ``figures=False``.

    Returns
    -------
    str
        The HTML document.

    Examples
    --------
    >>> import probeval as pe
    >>> ev = pe.evaluate(pe.ConfusionMatrix.from_counts(tp=40, fp=9, tn=45, fn=6), rng=0)
    >>> html = pe.report(ev, figures=False)
    >>> html.startswith("<!DOCTYPE html>"), "<table>" in html
    (True, True)
    """
    results = list(result) if isinstance(result, (list, tuple)) else [result]
    if not results:
        raise ValueError("report needs at least one result")
    draw = bool(figures) and has_matplotlib()
    sections = [section(item, figures=draw) for item in results]
    note = "" if draw or not figures else "figures need matplotlib: pip install probeval[plot]"
    text = page(title or "probeval report", sections, settings=settings, subtitle=note)
    if path is not None:
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as error:
            raise ValueError(f"cannot write the report to {str(path)!r}: {error}") from None
    return text
