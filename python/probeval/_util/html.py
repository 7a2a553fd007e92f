"""HTML for notebooks and reports, built with numpy only: tables, small inline SVG curves and
densities, coloured decision badges.

Every public result object renders in Jupyter through :class:`HtmlRepr`: its ``_html()`` gives
the body, and ``_repr_html_`` wraps it with a scoped style block (a notebook output cannot load
a stylesheet). :func:`probeval.report` puts the same bodies into a self-contained page.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "STYLE",
    "HtmlRepr",
    "badge",
    "curve_svg",
    "density_svg",
    "escape",
    "format_cell",
    "html_table",
    "key_values",
]

BLUE, LIGHT_BLUE, GREY, ORANGE = "#1f5fa6", "#a9c6e8", "#9e9e9e", "#e07b00"

#: Status colours: (text, background).
_STATUS = {
    "accepted": ("#1b5e20", "#dcedc8"),
    "rejected": ("#b71c1c", "#ffcdd2"),
    "undecided": ("#8d5b00", "#ffecb3"),
    "ongoing": ("#8d5b00", "#ffecb3"),
    "alert": ("#b71c1c", "#ffcdd2"),
    "ok": ("#1b5e20", "#dcedc8"),
}

#: Styles scoped to the ``pe-result`` class, so that a notebook's own styles are untouched.
STYLE = """
.pe-result { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 13px;
  color: #212121; margin: 4px 0; }
.pe-result h3, .pe-result h4 { margin: 8px 0 4px 0; font-weight: 600; }
.pe-result h3 { font-size: 15px; } .pe-result h4 { font-size: 13px; }
.pe-result table { border-collapse: collapse; margin: 4px 0 8px 0; }
.pe-result caption { text-align: left; font-weight: 600; padding: 2px 0 4px 0; }
.pe-result th { text-align: left; border-bottom: 1px solid #9e9e9e; padding: 2px 10px 2px 0; }
.pe-result td { padding: 2px 10px 2px 0; border-bottom: 1px solid #eeeeee;
  vertical-align: middle; }
.pe-result td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pe-result .pe-badge { border-radius: 3px; padding: 1px 6px; font-weight: 600; }
.pe-result .pe-note { color: #616161; margin: 2px 0; }
.pe-result pre { font-size: 12px; margin: 4px 0; }
"""


def escape(text: Any) -> str:
    """Text as HTML (quotes included)."""
    return html.escape(str(text), quote=True)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def format_cell(value: Any) -> str:
    """A table cell as text: 4 decimals, or 4 significant digits for very large or small
    numbers; booleans as yes/no."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:.4f}"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def html_table(
    columns: dict[str, list[Any]],
    title: str | None = None,
    extra: dict[str, Sequence[str]] | None = None,
) -> str:
    """Named columns as an HTML table (``title`` as caption). ``extra`` adds columns of
    ready-made HTML (badges, inline SVG), one entry per row; "status" and "decision" columns
    are shown as coloured badges."""
    names = list(columns)
    extra = extra or {}
    head = "".join(f"<th>{escape(n)}</th>" for n in [*names, *extra])
    length = len(next(iter(columns.values()), []))
    body = []
    for i in range(length):
        cells = []
        for name in names:
            value = columns[name][i]
            value = value.item() if isinstance(value, np.generic) else value
            css = ' class="num"' if _is_number(value) else ""
            shown = badge(value) if name in ("status", "decision") and value else None
            cells.append(f"<td{css}>{shown or escape(format_cell(value))}</td>")
        cells.extend(f"<td>{column[i]}</td>" for column in extra.values())
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = "" if title is None else f"<caption>{escape(title)}</caption>"
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def key_values(items: dict[str, Any], title: str | None = None) -> str:
    """A two-column table of named values."""
    return html_table({"": list(items), "value": list(items.values())}, title)


def badge(status: Any) -> str:
    """A decision or status as a coloured label."""
    text = str(status)
    colour, background = _STATUS.get(text.lower(), ("#424242", "#eeeeee"))
    return (
        f'<span class="pe-badge" style="color:{colour};background:{background}">'
        f"{escape(text)}</span>"
    )


def _points(xs: np.ndarray, ys: np.ndarray) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))


def density_svg(
    grid: np.ndarray,
    density: np.ndarray,
    *,
    hdi: tuple[float, float] | None = None,
    marks: Sequence[tuple[float, str]] = (),
    band: tuple[float, float] | None = None,
    width: int = 180,
    height: int = 40,
) -> str:
    """A small density curve: the HDI shaded, vertical marks (value, colour) such as the
    observed value, and an optional band (e.g. a ROPE) behind it."""
    grid = np.asarray(grid, dtype=np.float64)
    density = np.nan_to_num(np.asarray(density, dtype=np.float64), nan=0.0, posinf=0.0)
    low, high = float(grid[0]), float(grid[-1])
    span = high - low if high > low else 1.0
    top = float(density.max()) if density.size and density.max() > 0 else 1.0

    def x(v: float) -> float:
        return 1.0 + (width - 2.0) * (v - low) / span

    ys = height - 2.0 - (height - 4.0) * density / top
    xs = np.array([x(float(v)) for v in grid])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">'
    ]
    if band is not None:
        b0, b1 = (min(max(v, low), high) for v in band)
        if b1 > b0:
            parts.append(
                f'<rect x="{x(b0):.1f}" y="0" width="{x(b1) - x(b0):.1f}" height="{height}" '
                f'fill="{ORANGE}" fill-opacity="0.15"/>'
            )
    if hdi is not None:
        inside = (grid >= hdi[0]) & (grid <= hdi[1])
        if inside.any():
            area_x = np.r_[xs[inside][0], xs[inside], xs[inside][-1]]
            area_y = np.r_[height - 2.0, ys[inside], height - 2.0]
            parts.append(f'<polygon points="{_points(area_x, area_y)}" fill="{LIGHT_BLUE}"/>')
    parts.append(
        f'<polyline points="{_points(xs, ys)}" fill="none" stroke="{BLUE}" stroke-width="1.4"/>'
    )
    for value, colour in marks:
        if math.isfinite(value) and low <= value <= high:
            parts.append(
                f'<line x1="{x(value):.1f}" x2="{x(value):.1f}" y1="1" y2="{height - 1}" '
                f'stroke="{colour}" stroke-width="1.2"/>'
            )
    parts.append(
        f'<line x1="1" x2="{width - 1}" y1="{height - 1.5}" y2="{height - 1.5}" '
        f'stroke="{GREY}" stroke-width="0.8"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


def curve_svg(
    x: Any,
    median: Any,
    low: Any,
    high: Any,
    *,
    reference: tuple[Any, Any] | None = None,
    width: int = 220,
    height: int = 160,
    x_label: str = "",
    y_label: str = "",
) -> str:
    """A curve with its pointwise band (and an optional grey reference curve), in the unit
    square of its own ranges, with the axes' ranges written at the corners."""
    xs = np.asarray(x, dtype=np.float64)
    curves = [np.asarray(c, dtype=np.float64) for c in (median, low, high)]
    y_all = np.concatenate(
        curves + ([np.asarray(reference[1], dtype=np.float64)] if reference else [])
    )
    y_low, y_high = float(np.nanmin(y_all)), float(np.nanmax(y_all))
    if y_high <= y_low:
        y_high = y_low + 1.0
    x_low, x_high = float(xs.min()), float(xs.max())
    if x_high <= x_low:
        x_high = x_low + 1.0
    pad = 16.0

    def sx(v: np.ndarray) -> np.ndarray:
        return pad + (width - 2 * pad) * (v - x_low) / (x_high - x_low)

    def sy(v: np.ndarray) -> np.ndarray:
        return height - pad - (height - 2 * pad) * (v - y_low) / (y_high - y_low)

    med, lo, hi = curves
    band_x = np.r_[sx(xs), sx(xs)[::-1]]
    band_y = np.r_[sy(hi), sy(lo)[::-1]]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">',
        f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" '
        f'fill="none" stroke="{GREY}" stroke-width="0.8"/>',
        f'<polygon points="{_points(band_x, band_y)}" fill="{LIGHT_BLUE}" fill-opacity="0.8"/>',
    ]
    if reference is not None:
        rx, ry = (np.asarray(v, dtype=np.float64) for v in reference)
        parts.append(
            f'<polyline points="{_points(sx(rx), sy(ry))}" fill="none" stroke="{GREY}" '
            'stroke-width="1" stroke-dasharray="3,2"/>'
        )
    parts.append(
        f'<polyline points="{_points(sx(xs), sy(med))}" fill="none" stroke="{BLUE}" '
        'stroke-width="1.5"/>'
    )
    font = 'font-size="9" fill="#616161" font-family="sans-serif"'
    parts += [
        f'<text x="{pad}" y="{height - 4}" {font}>{format_cell(x_low)}</text>',
        f'<text x="{width - pad}" y="{height - 4}" text-anchor="end" {font}>'
        f"{format_cell(x_high)}</text>",
        f'<text x="{width / 2}" y="{height - 4}" text-anchor="middle" {font}>'
        f"{escape(x_label)}</text>",
        f'<text x="2" y="{pad - 4}" {font}>{escape(y_label)} {format_cell(y_high)}</text>',
        f'<text x="2" y="{height - pad + 10}" {font}>{format_cell(y_low)}</text>',
        "</svg>",
    ]
    return "".join(parts)


class HtmlRepr:
    """Mixin: ``_repr_html_`` for Jupyter from the subclass's ``_html()``."""

    __slots__ = ()

    def _html(self) -> str:
        return f"<pre>{escape(repr(self))}</pre>"

    def _repr_html_(self) -> str:
        return f'<div class="pe-result"><style>{STYLE}</style>{self._html()}</div>'
