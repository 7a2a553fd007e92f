"""Self-contained HTML reports: pe.report and the CLI's --html."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import probeval as pe

from ._html_check import check_html

DATA = pe.load_demo()
Y, A, B = DATA["y_true"], DATA["score_a"], DATA["score_b"]
DEMO = Path(pe.__file__).parent / "data" / "demo.csv"


def test_report_of_several_results_has_their_tables_and_figures(tmp_path: Path) -> None:
    ev = pe.evaluate(Y, y_score=A, metrics=["accuracy", "f1", "roc_auc"], rng=0, n_samples=2_000)
    cmp = pe.compare_paired(Y, A > 0.5, B > 0.5, metric="f1", rope=0.01, rng=0)
    path = tmp_path / "r.html"
    text = pe.report([ev, cmp], path, title="two results", settings={"seed": 0})
    assert path.read_text(encoding="utf-8") == text
    assert text.startswith("<!DOCTYPE html>")
    counts = check_html(text[len("<!DOCTYPE html>") :])
    # Evaluation: summary + confusion matrix; comparison: its summary; settings.
    assert counts["table"] >= 4
    # 3 inline densities + the comparison's + matplotlib figures (evaluation grid, comparison).
    assert counts["svg"] >= 6
    assert "<title>two results</title>" in text
    assert f"probeval {pe.__version__}" in text
    assert "pe-badge" in text  # the comparison's decision


def test_report_without_figures_is_text_only() -> None:
    text = pe.report(pe.calibration(Y, A, rng=0, n_samples=500), figures=False)
    counts = check_html(text[len("<!DOCTYPE html>") :])
    assert counts["table"] >= 2
    assert counts.get("figure", 0) == 0


def test_every_result_kind_reports(tmp_path: Path) -> None:
    folds = [pe.ConfusionMatrix.from_scores(Y[i::4], A[i::4]) for i in range(4)]
    results = [
        pe.rank_models(Y, {"a": A, "b": B}, metric="roc_auc", n_samples=300, rng=0),
        pe.curves(Y, A, n_samples=200, rng=0),
        pe.decision_curve(Y, A, value={"tp": 5, "fp": -1}, n_samples=300, rng=0),
        pe.aggregate_folds(folds, metric="f1", rng=0),
        pe.evaluate(Y, A > 0.5, rng=0).summary(),
        pe.ConfusionMatrix.from_counts(tp=4, fp=1, tn=5, fn=2).posterior("mcc", rng=0),
    ]
    text = pe.report(results, tmp_path / "all.html")
    counts = check_html(text[len("<!DOCTYPE html>") :])
    assert counts["section"] >= len(results)
    assert counts["figure"] >= 5
    with pytest.raises(TypeError, match="probeval result"):
        pe.report({"a": 1})
    with pytest.raises(ValueError, match="at least one"):
        pe.report([])
    with pytest.raises(ValueError, match="cannot write"):
        pe.report(results[-1], tmp_path / "missing" / "dir" / "r.html", figures=False)


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", str(DEMO), "--y-true", "y_true", "--y-score", "score_a", "--calibration"],
        [
            "compare",
            str(DEMO),
            "--y-true",
            "y_true",
            "--model-a",
            "score_a",
            "--model-b",
            "score_b",
            "--metric",
            "roc_auc",
        ],
        ["rank", str(DEMO), "--y-true", "y_true", "--models", "score_a", "score_b"],
        [
            "estimate",
            "--reference",
            str(DEMO),
            "--analysis",
            str(DEMO),
            "--y-true",
            "y_true",
            "--y-score",
            "score_a",
            "--n-chunks",
            "3",
        ],
        ["plan", "--metric", "accuracy", "--width", "0.05", "--expected", "0.8"],
    ],
    ids=lambda c: c[0],
)
def test_cli_html_reports(command: list[str], tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    out = subprocess.run(
        [sys.executable, "-m", "probeval", *command, "--samples", "1000", "--html", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert f"report written to {path}" in out.stderr
    text = path.read_text(encoding="utf-8")
    counts = check_html(text[len("<!DOCTYPE html>") :])
    assert counts["table"] >= 2  # the result's and the settings
    assert f"<title>probeval {command[0]}</title>" in text
    if command[0] in ("evaluate", "compare", "rank", "estimate"):
        assert counts.get("figure", 0) >= 1


def test_cli_html_to_an_unwritable_path_is_a_usage_error(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "probeval",
            "plan",
            "--metric",
            "accuracy",
            "--width",
            "0.05",
            "--expected",
            "0.8",
            "--html",
            str(tmp_path / "no" / "such" / "dir.html"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2
    assert "cannot write the report" in out.stderr
