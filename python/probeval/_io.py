"""Reading tables for the command line: CSV with the standard library, Parquet with pyarrow
(an optional dependency, imported only for .parquet files)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

__all__ = ["read_table"]


class InputError(ValueError):
    """A problem with an input file, worded for the command line."""


def _convert(name: str, values: list[str]) -> np.ndarray:
    """Integers if every value is one, else floats if every value is a number, else strings.
    Empty cells are errors: a missing label or score has no meaning here."""
    for row, value in enumerate(values):
        if value.strip() == "":
            raise InputError(f"column {name!r} has an empty value on data row {row + 1}")
    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except ValueError:
        pass
    try:
        return np.array([float(v) for v in values], dtype=np.float64)
    except ValueError:
        return np.array(values, dtype=object)


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{path} is not UTF-8 text: {error.reason}") from None
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    rows = [row for row in rows if row]  # blank lines
    if not rows:
        raise InputError(f"{path} is empty")
    header, body = rows[0], rows[1:]
    if not body:
        raise InputError(f"{path} has a header but no data rows")
    if len(set(header)) != len(header):
        raise InputError(f"{path} has repeated column names: {header}")
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise InputError(
                f"{path}, line {number}: {len(row)} fields where the header has {len(header)}"
            )
    return {name: _convert(name, [row[i] for row in body]) for i, name in enumerate(header)}


def _read_parquet(path: Path) -> dict[str, np.ndarray]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f'reading {path.name} needs pyarrow: pip install "probeval[parquet]" '
            "(or convert the file to CSV)"
        ) from None
    try:
        table = pq.read_table(path)
    except Exception as error:  # pyarrow raises several types for a bad file
        raise InputError(f"cannot read {path} as Parquet: {error}") from None
    columns = {}
    for name in table.column_names:
        column = table.column(name)
        if column.null_count:
            raise InputError(f"column {name!r} of {path} has {column.null_count} missing values")
        columns[name] = np.asarray(column.to_numpy(zero_copy_only=False))
    if not columns or len(next(iter(columns.values()))) == 0:
        raise InputError(f"{path} has no data rows")
    return columns


def read_table(path: str | Path) -> dict[str, np.ndarray]:
    """Columns of a CSV (or .parquet) file as numpy arrays."""
    file = Path(path)
    if not file.exists():
        raise InputError(f"no such file: {file}")
    if file.is_dir():
        raise InputError(f"{file} is a directory, not a file")
    if file.suffix.lower() in (".parquet", ".pq"):
        return _read_parquet(file)
    return _read_csv(file)
