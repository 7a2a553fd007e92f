"""The command line's file reader (probeval._io): CSV dialects against Python's csv module as
the writer, missing values and text in number columns, Parquet."""

from __future__ import annotations

import csv
import importlib.util
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probeval._io import InputError, TableFile

MISSING = {"", "NA", "N/A", "n/a", "NaN", "nan", "NAN", "null", "NULL", "None", "#N/A", "<NA>"}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# Text cells: no surrounding spaces (cells are trimmed), not a number ("inf" is one), not a
# missing-value marker.
WORDS = st.text(alphabet=string.ascii_letters + " ,;\t\"'\n-éß", min_size=1, max_size=12).filter(
    lambda w: w.strip() == w and w not in MISSING and not _is_number(w)
)


@st.composite
def tables(draw: st.DrawFn) -> dict[str, list[object]]:
    rows = draw(st.integers(1, 40))
    # At least two columns: a one-column file has no delimiter in its header to tell which it
    # is (it is read as comma-separated, documented in docs/cli.md).
    kinds = draw(st.lists(st.sampled_from(["int", "float", "text"]), min_size=2, max_size=5))
    columns: dict[str, list[object]] = {}
    for i, kind in enumerate(kinds):
        if kind == "int":
            values = draw(st.lists(st.integers(-(2**62), 2**62), min_size=rows, max_size=rows))
        elif kind == "float":
            finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
            values = draw(st.lists(finite, min_size=rows, max_size=rows))
            values[0] = 0.5  # at least one value that is not an integer
        else:
            values = draw(st.lists(WORDS, min_size=rows, max_size=rows))
        columns[f"{kind} {i}"] = values
    return columns


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    table=tables(),
    delimiter=st.sampled_from([",", ";", "\t"]),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
    terminator=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
    trailing=st.booleans(),
)
def test_csv_dialects_read_back_what_was_written(
    tmp_path: Path,
    table: dict[str, list[object]],
    delimiter: str,
    quoting: int,
    terminator: str,
    bom: bool,
    trailing: bool,
) -> None:
    """Whatever Python's csv module writes (delimiter, quoting, line ends, a byte-order mark,
    a trailing delimiter on every line) reads back as the same values and types."""
    path = tmp_path / "t.csv"
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as out:
        writer = csv.writer(out, delimiter=delimiter, quoting=quoting, lineterminator=terminator)
        names = list(table)
        writer.writerow(names + ([""] if trailing else []))
        for row in zip(*table.values(), strict=True):
            writer.writerow(list(row) + ([""] if trailing else []))
    file = TableFile(path)
    assert file.names[: len(names)] == names
    got = file.read(names)
    for name, values in table.items():
        column = got[name]
        if name.startswith("int"):
            assert column.dtype == np.int64
            np.testing.assert_array_equal(column, np.array(values, dtype=np.int64))
        elif name.startswith("float"):
            assert column.dtype == np.float64
            np.testing.assert_array_equal(column, np.array(values, dtype=np.float64))
        else:
            assert column.dtype == object
            assert list(column) == values


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("marker", ["", "NA", "N/A", "NaN", "nan", "null", "None", "#N/A", "<NA>"])
def test_missing_cells_name_column_and_row_unless_allowed(tmp_path: Path, marker: str) -> None:
    path = _write(tmp_path, f"label,score\n1,0.5\n0,0.25\n{marker},0.75\n")
    with pytest.raises(InputError, match=r"column 'label' of t.csv has a missing value .* row 3"):
        TableFile(path).read(["label", "score"])
    labels = TableFile(path).read(["label"], missing_ok=["label"])["label"]
    assert labels.dtype == np.float64
    np.testing.assert_array_equal(labels, [1.0, 0.0, np.nan])


def test_text_in_a_number_column_names_the_first_cell(tmp_path: Path) -> None:
    path = _write(tmp_path, "label;score\nyes;0.5\nno;0,25\nyes;oops\n")
    file = TableFile(path)
    assert list(file.read(["label"])["label"]) == ["yes", "no", "yes"]
    with pytest.raises(InputError, match=r"data row 2 holds '0,25' \(a decimal comma"):
        file.read(["label", "score"], numbers=["score"])


def test_unknown_or_repeated_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, "a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="'c': no such column"):
        TableFile(path).read(["c"])
    with pytest.raises(InputError, match="'a': 2 columns have that name"):
        TableFile(path).read(["a"])
    assert TableFile(path).read(["b"])["b"].tolist() == [2]


def test_text_missing_values_are_none(tmp_path: Path) -> None:
    path = _write(tmp_path, "label\nyes\n\nno\nNA\n")  # the empty line is blank: skipped
    column = TableFile(path).read(["label"], missing_ok=["label"])["label"]
    assert list(column) == ["yes", "no", None]


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="needs pyarrow")
def test_parquet_reads_only_the_used_columns_and_names_a_null(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3], "b": [0.5, None, 0.25], "c": ["x", None, "y"]}), path)
    file = TableFile(path)
    assert file.names == ["a", "b", "c"]
    assert file.read(["a"])["a"].tolist() == [1, 2, 3]
    with pytest.raises(InputError, match=r"column 'b' of t.parquet has a missing value .* row 2"):
        file.read(["a", "b"])
    assert np.isnan(file.read(["b"], missing_ok=["b"])["b"][1])
