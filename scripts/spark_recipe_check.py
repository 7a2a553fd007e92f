"""Run the README's Spark recipe on a local Spark and check it against the in-memory path.

Not part of CI (pyspark is ~450 MB and needs a JVM). Run it where both exist:
``pip install pyspark && python scripts/spark_recipe_check.py``. It exits non-zero when the
merged summary differs from the one computed in memory.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from functools import reduce

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession

import probeval as pe


def summarise(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """The README's executor function: one ScoreSummary per pandas batch, as JSON."""
    for pdf in frames:
        part = pe.ScoreSummary.from_scores(pdf["label"].to_numpy(), pdf["proba"].to_numpy())
        yield pd.DataFrame({"stats": [json.dumps(part.to_dict())]})


def main() -> int:
    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    )
    rng = np.random.default_rng(0)
    n = 1_000_000
    label = rng.integers(0, 2, n)
    proba = np.clip(rng.normal(0.35 + 0.3 * label, 0.2), 0, 1)
    sdf = spark.createDataFrame(pd.DataFrame({"label": label, "proba": proba})).repartition(8)

    rows = sdf.select("label", "proba").mapInPandas(summarise, "stats string").collect()
    parts = (pe.ScoreSummary.from_dict(json.loads(r.stats)) for r in rows)
    merged = reduce(lambda a, b: a + b, parts)
    spark.stop()

    local = pe.ScoreSummary.from_scores(label, proba)
    same_stats = merged.to_dict() == local.to_dict()
    same_draws = np.array_equal(
        merged.posterior("roc_auc", rng=1).samples, local.posterior("roc_auc", rng=1).samples
    )
    print(f"{len(rows)} partial summaries from Spark; statistics equal: {same_stats}")
    print(f"ROC AUC posterior bit-identical for the same seed: {same_draws}")
    print("95% HDI of ROC AUC:", merged.posterior("roc_auc", rng=1).hdi())
    return 0 if same_stats and same_draws else 1


if __name__ == "__main__":
    sys.exit(main())
