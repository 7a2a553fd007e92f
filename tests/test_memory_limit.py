"""Requests that cannot fit fail up front with a ``MemoryError`` saying what to ask instead.

The subprocess runs under an address-space limit (``ulimit -v``, ``RLIMIT_AS``) of 3 GiB, the
way a container or a batch scheduler caps a job: every oversize request must raise (naming the
parameter, the bytes and the alternative) instead of aborting the process or being killed, and
the process must keep working afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from probeval._util import validation

LIMITED = textwrap.dedent(
    """
    import json, resource
    limit = 3 * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import numpy as np
    import probeval as pe
    from probeval import _core

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 20_000)
    s = np.clip(0.8 * rng.random(20_000) + 0.2 * y, 0, 1)
    k = rng.integers(0, 4, 5_000)
    p = rng.dirichlet(np.ones(4), 5_000)
    cm = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=5)
    requests = {
        "evaluate_by": lambda: pe.evaluate_by(
            counts=rng.integers(0, 200, (5_000, 2, 2)), metrics=["f1", "mcc"], n_samples=100_000
        ),
        "posterior": lambda: pe.evaluate(
            cm, metrics=["mcc", "kappa", "markedness", "informedness"], n_samples=100_000_000
        ),
        "multiclass auc": lambda: pe.evaluate(
            k, y_score=p, metrics=["roc_auc_macro"], n_samples=30_000_000
        ),
        "label-free": lambda: pe.LabelFreeEstimator(metrics=["accuracy", "f1"])
        .fit(y, s)
        .estimate(s, chunk_size=100, n_samples=2_000_000),
        # Past the Python checks, straight to the core: its allocation fails cleanly too.
        "core": lambda: _core.beta_draws(2.0, 3.0, 1_000_000_000, 1),
    }
    messages = {}
    for name, request in requests.items():
        try:
            request()
            messages[name] = None
        except MemoryError as error:
            messages[name] = str(error)
    # Still alive and well.
    after = float(pe.evaluate(cm, metrics=["mcc"], n_samples=1_000, rng=1)["mcc"].samples.sum())
    print(json.dumps({"messages": messages, "after": after}))
    """
)


@pytest.fixture(scope="module")
def limited() -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", LIMITED], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize(
    ("request_name", "names"),
    [
        ("evaluate_by", ["n_samples=100,000", "5,000 segments", "summaries_only=True"]),
        ("posterior", ["n_samples=100,000,000", "metric", "fewer n_samples"]),
        ("multiclass auc", ["n_samples=30,000,000", "4 classes", "fewer n_samples"]),
        ("label-free", ["n_samples=2,000,000", "200 chunks", "fewer (larger) chunks"]),
        ("core", ["could not allocate", "fewer samples"]),
    ],
)
def test_oversize_requests_raise_memory_error_naming_the_way_out(
    limited: dict[str, object], request_name: str, names: list[str]
) -> None:
    messages = limited["messages"]
    assert isinstance(messages, dict)
    message = messages[request_name]
    assert message is not None, f"{request_name} did not fail under a 3 GiB limit"
    for name in names:
        assert name in message, message
    if request_name != "core":
        assert "GiB" in message, message
        assert "available" in message, message


def test_the_process_still_works_after_the_refusals(limited: dict[str, object]) -> None:
    import probeval as pe

    cm = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=5)
    expected = float(pe.evaluate(cm, metrics=["mcc"], n_samples=1_000, rng=1)["mcc"].samples.sum())
    assert limited["after"] == expected


def test_available_memory_reports_a_positive_size_on_linux() -> None:
    room = validation.available_memory()
    if sys.platform.startswith("linux"):
        assert isinstance(room, int)
        assert room > 0


def test_check_memory_compares_the_request_with_the_room(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "available_memory", lambda: 2**30)
    # Small requests are never checked; large ones that fit pass.
    validation.check_memory(1_000, request="r", alternative="a")
    validation.check_memory(2**26, request="r", alternative="a")
    with pytest.raises(MemoryError, match=r"^n_samples=7 needs 1\.0 GiB \(134,217,729 values\)"):
        validation.check_memory(2**27 + 1, request="n_samples=7", alternative="ask for less")
    monkeypatch.setattr(validation, "available_memory", lambda: None)
    validation.check_memory(2**40, request="r", alternative="a")


def test_format_bytes() -> None:
    assert validation.format_bytes(512) == "512 bytes"
    assert validation.format_bytes(1536) == "1.5 KiB"
    assert validation.format_bytes(3 * 2**30) == "3.0 GiB"
    assert validation.format_bytes(5 * 2**40) == "5,120.0 GiB"
