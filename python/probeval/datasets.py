"""The bundled demo dataset."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["load_demo"]

_NUMERIC = {"row_id": np.int64, "y_true": np.int64, "score_a": np.float64, "score_b": np.float64}


def load_demo() -> dict[str, np.ndarray]:
    """Load the demo data: 8,000 rows of a binary classifier over 16 weeks.

    Columns: ``row_id``, ``date`` (ISO), ``period`` ("reference" for weeks 1-8, "analysis" for
    weeks 9-16, which drift towards riskier cases), ``segment`` (north/south/west), ``y_true``,
    ``score_a`` (a calibrated model) and ``score_b`` (a weaker model scored on the same rows).

    Returns
    -------
    dict of str to ndarray
        One array per column.
    """
    # Imported here: importlib.resources alone can cost 30 ms at `import probeval` time.
    import csv
    from importlib import resources

    text = resources.files("probeval").joinpath("data/demo.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(text.splitlines()))
    header, body = rows[0], rows[1:]
    columns: dict[str, Any] = {name: [row[i] for row in body] for i, name in enumerate(header)}
    return {
        name: np.asarray(values, dtype=_NUMERIC.get(name, object))
        for name, values in columns.items()
    }
