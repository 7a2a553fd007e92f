"""Reading tables for the command line: CSV with the Rust core's streaming reader, Parquet with
pyarrow (an optional dependency, imported only for .parquet files).

A file is opened for its header (:class:`TableFile`), and then only the columns a command uses
are read, in one pass: a problem in a column nobody asked for (an empty cell, a trailing
delimiter, text in a comment column) is not the user's problem.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

import numpy as np

from probeval import _core

__all__ = ["InputError", "TableFile"]

#: Bytes of the file the header line is looked for in (to guess the delimiter).
SNIFF_BYTES = 1 << 16


class InputError(ValueError):
    """A problem with an input file, worded for the command line."""


def _missing(path: Path, name: str, row: int, value: str) -> InputError:
    shown = "an empty cell" if value == "" else f"{value!r}"
    return InputError(
        f"column {name!r} of {path.name} has a missing value ({shown}) on data row {row}: "
        "every row needs a value in the columns probeval uses"
    )


def _not_a_number(path: Path, name: str, row: int, value: str) -> InputError:
    hint = ""
    if re.fullmatch(r"[-+]?\d*,\d+", value):
        hint = " (a decimal comma? write the decimal mark as '.')"
    return InputError(
        f"column {name!r} of {path.name} must hold numbers, but data row {row} holds "
        f"{value!r}{hint}"
    )


def _delimiter(path: Path) -> str:
    """The delimiter among ',', ';' and tab that the header line (the first with anything on
    it) uses most, outside quotes; ',' when it has none (a one-column file)."""
    with path.open("rb") as file:
        sample = file.read(SNIFF_BYTES)
    # Bytes that are not UTF-8 are the reader's to report, with their line, if a used column
    # holds them; here they only must not stop the guess.
    text = sample.decode("utf-8-sig", errors="ignore")
    header = next((line for line in text.splitlines() if line.strip()), "")
    header = re.sub(r'"[^"]*"', "", header)
    counts = {delimiter: header.count(delimiter) for delimiter in (",", ";", "\t")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


class TableFile:
    """A CSV or Parquet file: its column names now, the columns a command uses on demand.

    Parameters
    ----------
    path : str or Path
        A ``.parquet``/``.pq`` file (read with pyarrow), or delimited text: UTF-8, with a
        header line, ``,``, ``;`` or tab as the delimiter.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise InputError(f"no such file: {self.path}")
        if self.path.is_dir():
            raise InputError(f"{self.path} is a directory, not a file")
        self.parquet = self.path.suffix.lower() in (".parquet", ".pq")
        self.delimiter = ","
        self._first_text: dict[str, tuple[int, str]] = {}
        if self.parquet:
            self.names = self._parquet_schema()
        else:
            self.delimiter = _delimiter(self.path)
            try:
                header = _core.csv_header(str(self.path), ord(self.delimiter))
            except ValueError as error:
                raise InputError(f"{self.path}: {error}") from None
            if header is None:
                raise InputError(f"{self.path} is empty")
            self.names = header

    def read(
        self,
        names: Collection[str],
        *,
        numbers: Collection[str] = (),
        missing_ok: Collection[str] = (),
    ) -> dict[str, np.ndarray]:
        """The named columns as numpy arrays: int64 if every cell is an integer, else float64
        if every cell is a number, else an object array of strings.

        Parameters
        ----------
        names : collection of str
            Columns to read (each must be in :attr:`names`, once).
        numbers : collection of str
            Columns that must hold numbers: the error names the first cell that does not.
        missing_ok : collection of str
            Columns that may have missing cells (empty, ``NA``, ``NaN``, ``null``, ...):
            NaN in a numeric column, None in a text one. In the others a missing cell is an
            error naming its row.
        """
        wanted = list(dict.fromkeys(names))
        for name in wanted:
            count = self.names.count(name)
            if count != 1:
                problem = "no such column" if count == 0 else f"{count} columns have that name"
                raise InputError(f"column {name!r}: {problem} in {self.path}")
        if self.parquet:
            columns = self._read_parquet(wanted, missing_ok)
        else:
            columns = self._read_csv(wanted, missing_ok)
        for name in numbers:
            if columns[name].dtype.kind not in "iuf":
                row, value = self._first_text.get(name) or (1, str(columns[name][0]))
                raise _not_a_number(self.path, name, row, value)
        return columns

    def _read_csv(self, wanted: list[str], missing_ok: Collection[str]) -> dict[str, np.ndarray]:
        indices = [self.names.index(name) for name in wanted]
        try:
            read = _core.csv_columns(str(self.path), ord(self.delimiter), indices)
        except ValueError as error:
            raise InputError(f"{self.path}: {error}") from None
        columns = {}
        for name, (values, levels, first_missing, first_text) in zip(wanted, read, strict=True):
            if first_missing is not None and name not in missing_ok:
                raise _missing(self.path, name, *first_missing)
            if first_text is not None:
                self._first_text[name] = first_text
            if levels is not None:  # text: each distinct string once, the rows as codes
                values = np.array([*levels, None], dtype=object)[values]
            columns[name] = values
        if len(next(iter(columns.values()))) == 0:
            raise InputError(f"{self.path} has a header but no data rows")
        return columns

    def _pyarrow(self) -> Any:
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError(
                f'reading {self.path.name} needs pyarrow: pip install "probeval[parquet]" '
                "(or convert the file to CSV)"
            ) from None
        return pq

    def _parquet_schema(self) -> list[str]:
        pq = self._pyarrow()
        try:
            return list(pq.read_schema(self.path).names)
        except Exception as error:  # pyarrow raises several types for a bad file
            raise InputError(f"cannot read {self.path} as Parquet: {error}") from None

    def _read_parquet(
        self, wanted: list[str], missing_ok: Collection[str]
    ) -> dict[str, np.ndarray]:
        pq = self._pyarrow()
        try:
            table = pq.read_table(self.path, columns=wanted)
        except Exception as error:  # pyarrow raises several types for a bad file
            raise InputError(f"cannot read {self.path} as Parquet: {error}") from None
        if table.num_rows == 0:
            raise InputError(f"{self.path} has no data rows")
        columns = {}
        for name in wanted:
            column = table.column(name)
            if column.null_count and name not in missing_ok:
                row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
                raise _missing(self.path, name, row + 1, "null")
            columns[name] = np.asarray(column.to_numpy(zero_copy_only=False))
        return columns
