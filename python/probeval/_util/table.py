"""A small column table for summaries: prints aligned, converts to dicts, pandas and CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from probeval._util.html import STYLE, format_cell, html_table

__all__ = ["Table"]


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


class Table:
    """Named columns of equal length, one row per item (e.g. per metric or per chunk)."""

    __slots__ = ("_columns", "title")

    def __init__(self, columns: Mapping[str, Sequence[Any]], title: str | None = None) -> None:
        lengths = {len(values) for values in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns have different lengths: {sorted(lengths)}")
        self._columns = {name: list(values) for name, values in columns.items()}
        self.title = title

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def __len__(self) -> int:
        return len(next(iter(self._columns.values()), []))

    def __getitem__(self, column: str) -> np.ndarray:
        """One column as an array."""
        if column not in self._columns:
            raise KeyError(f"no column {column!r}; columns are {self.columns}")
        return np.asarray(self._columns[column])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows())

    def rows(self) -> list[dict[str, Any]]:
        """Rows as dicts."""
        names = self.columns
        return [{name: _plain(self._columns[name][i]) for name in names} for i in range(len(self))]

    def to_dict(self, orient: str = "list") -> Any:
        """``orient="list"``: {column: [values]}; ``"records"``: [{column: value}, ...]."""
        if orient == "list":
            return {name: [_plain(v) for v in values] for name, values in self._columns.items()}
        if orient == "records":
            return self.rows()
        raise ValueError(f'orient must be "list" or "records", got {orient!r}')

    def to_pandas(self) -> Any:
        """A pandas DataFrame (pandas is optional and imported only here)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame(self._columns)

    def to_csv(self) -> str:
        """CSV text with a header row."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows():
            writer.writerow(row.values())
        return buffer.getvalue()

    def __str__(self) -> str:
        names = self.columns
        cells = [[format_cell(v) for v in self._columns[name]] for name in names]
        widths = [
            max([len(name)] + [len(c) for c in column])
            for name, column in zip(names, cells, strict=True)
        ]
        numeric = [
            all(
                isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                for v in self._columns[name]
            )
            for name in names
        ]

        def line(values: list[str]) -> str:
            parts = [
                v.rjust(w) if is_number else v.ljust(w)
                for v, w, is_number in zip(values, widths, numeric, strict=True)
            ]
            return "  ".join(parts).rstrip()

        out = [] if self.title is None else [self.title]
        out.append(line(names))
        out.append("  ".join("-" * w for w in widths))
        for i in range(len(self)):
            out.append(line([column[i] for column in cells]))
        return "\n".join(out)

    def __repr__(self) -> str:
        return str(self)

    def to_html(self, extra: dict[str, Sequence[str]] | None = None) -> str:
        """The table as an HTML table (its title as caption); ``extra`` adds columns of
        ready-made HTML, one entry per row."""
        return html_table(self._columns, self.title, extra)

    def _repr_html_(self) -> str:
        return f'<div class="pe-result"><style>{STYLE}</style>{self.to_html()}</div>'
