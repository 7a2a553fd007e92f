"""probeval.dask on a local cluster: 10,000,000 rows in 20 partitions give exactly the counts
and the same posteriors (same seed) as the in-memory path."""

from __future__ import annotations

import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pytest

import probeval as pe
import probeval.dask as ped

ROWS, PARTITIONS = 10_000_000, 20


@pytest.fixture(scope="module")
def client() -> object:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as connection:
        yield connection
    cluster.close()


@pytest.fixture(scope="module")
def data() -> tuple[object, object]:
    """The same rows twice: lazily on the cluster (generated inside the partitions) and in
    memory."""
    rng = da.random.default_rng(42)
    chunks = ROWS // PARTITIONS
    score = rng.random(ROWS, chunks=chunks)
    label = (rng.random(ROWS, chunks=chunks) < score).astype(np.int64)
    segment = (rng.random(ROWS, chunks=chunks) * 50).astype(np.int64)
    stacked = da.stack([label, da.round(score, 3), segment], axis=1)
    frame = dd.from_dask_array(stacked, columns=["label", "score", "segment"])
    frame = frame.astype({"label": "int64", "segment": "int64"})
    return frame, frame.compute()


def test_cluster_and_memory_agree_exactly(client: object, data: tuple[object, object]) -> None:
    frame, local = data
    assert frame.npartitions == PARTITIONS
    y = local["label"].to_numpy()
    s = local["score"].to_numpy()
    seg = local["segment"].to_numpy()

    cm = ped.confusion_matrix(frame, y_true="label", y_score="score")
    assert cm == pe.ConfusionMatrix.from_scores(y, s)
    assert cm.total == ROWS
    a = pe.evaluate(cm, metrics=["f1", "mcc"], rng=7)
    b = pe.evaluate(pe.ConfusionMatrix.from_scores(y, s), metrics=["f1", "mcc"], rng=7)
    np.testing.assert_array_equal(a["f1"].samples, b["f1"].samples)

    summary = ped.score_summary(frame, y_true="label", y_score="score")
    assert summary == pe.ScoreSummary.from_scores(y, s)
    np.testing.assert_array_equal(
        summary.posterior(rng=3).samples, pe.ScoreSummary.from_scores(y, s).posterior(rng=3).samples
    )

    counts = ped.segment_counts(frame, y_true="label", y_score="score", by="segment")
    local_counts = pe.SegmentCounts.from_rows(y, y_score=s, by=seg)
    assert counts == local_counts
    remote = counts.evaluate(metrics=["f1"], rng=1, summaries_only=True)
    memory = pe.evaluate_by(y, y_score=s, by=seg, metrics=["f1"], rng=1, summaries_only=True)
    np.testing.assert_array_equal(remote["f1"]["hdi_low"], memory["f1"]["hdi_low"])

    estimator = ped.fit_label_free(pe.LabelFreeEstimator(), frame, y_true="label", y_score="score")
    local = pe.LabelFreeEstimator().fit_summary(pe.ScoreSummary.from_scores(y, s))
    assert estimator.to_dict() == local.to_dict()
    rows = pe.LabelFreeEstimator().fit(y, s).to_dict()
    # The same calibration; only the rows have a time order to learn the drift from.
    drift_keys = {"period_sums", "periods_declared"}
    assert {k: v for k, v in estimator.to_dict().items() if k not in drift_keys} == {
        k: v for k, v in rows.items() if k not in drift_keys
    }


def test_dask_arrays_and_errors(client: object) -> None:
    y = da.from_array(np.array([0, 1, 1, 0, 1, 0] * 50), chunks=60)
    p = da.from_array(np.array([0, 1, 0, 0, 1, 1] * 50), chunks=60)
    cm = ped.confusion_matrix(y_true=y, y_pred=p)
    assert cm == pe.ConfusionMatrix.from_predictions(y.compute(), p.compute())
    with pytest.raises(TypeError, match="one of them"):
        ped.confusion_matrix(y_true=y)
    with pytest.raises(ValueError, match="same length and chunks"):
        ped.confusion_matrix(y_true=y, y_pred=da.from_array(p.compute(), chunks=100))
    with pytest.raises(TypeError, match="dask Array"):
        ped.confusion_matrix(y_true=np.array([0, 1]), y_pred=p)
    with pytest.raises(TypeError, match="LabelFreeEstimator"):
        ped.fit_label_free("x", y_true=y, y_score=p)


def test_statistics_add_up_and_travel_as_dicts() -> None:
    """The pattern for Spark or Ray: statistics per part, to_dict, collect, from_dict, add."""
    rng = np.random.default_rng(0)
    y, s, seg = rng.integers(0, 2, 3000), rng.random(3000).round(2), rng.integers(0, 4, 3000)
    parts = np.array_split(np.arange(3000), 7)
    shipped = [
        (
            pe.ConfusionMatrix.from_scores(y[i], s[i]).to_dict(),
            pe.ScoreSummary.from_scores(y[i], s[i]).to_dict(),
            pe.SegmentCounts.from_rows(y[i], y_score=s[i], by=seg[i]).to_dict(),
        )
        for i in parts
    ]
    cm = sum(
        (pe.ConfusionMatrix.from_dict(a) for a, _, _ in shipped[1:]),
        pe.ConfusionMatrix.from_dict(shipped[0][0]),
    )
    assert cm == pe.ConfusionMatrix.from_scores(y, s)
    summary = sum(
        (pe.ScoreSummary.from_dict(b) for _, b, _ in shipped[1:]),
        pe.ScoreSummary.from_dict(shipped[0][1]),
    )
    assert summary == pe.ScoreSummary.from_scores(y, s)
    counts = sum(
        (pe.SegmentCounts.from_dict(c) for _, _, c in shipped[1:]),
        pe.SegmentCounts.from_dict(shipped[0][2]),
    )
    assert counts == pe.SegmentCounts.from_rows(y, y_score=s, by=seg)
