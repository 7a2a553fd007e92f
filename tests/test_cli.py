"""The command line, run as a user would: as a subprocess, on CSV files."""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import probeval as pe


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "probeval", *args], capture_output=True, text=True, timeout=120
    )


def _write_csv(path: Path, columns: dict[str, list[object]]) -> Path:
    names = list(columns)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        writer.writerows(zip(*(columns[n] for n in names), strict=True))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A labelled file with two models' scores and an ensemble's members, plus a reference
    and an analysis file for the label-free estimate."""
    root = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    n = 1500
    y = rng.integers(0, 2, n)
    a = np.round(np.clip(0.3 + 0.4 * y + rng.normal(0, 0.2, n), 0, 1), 4)
    b = np.round(np.clip(0.35 + 0.3 * y + rng.normal(0, 0.25, n), 0, 1), 4)
    members = {
        f"model_{i}": np.round(np.clip(a + rng.normal(0, 0.08, n), 0, 1), 4) for i in range(5)
    }
    days = np.datetime64("2026-01-05") + rng.integers(0, 28, n).astype("timedelta64[D]")
    labelled = {
        "label": y.tolist(),
        "score_a": a.tolist(),
        "score_b": b.tolist(),
        "pred_a": (a > 0.5).astype(int).tolist(),
        "pred_b": (b > 0.5).astype(int).tolist(),
        "segment": rng.choice(["north", "south"], n).tolist(),
        "day": [str(d) for d in days],
        **{k: v.tolist() for k, v in members.items()},
    }
    half = n // 2
    return {
        "labelled": _write_csv(root / "labelled.csv", labelled),
        "reference": _write_csv(root / "reference.csv", {k: v[:half] for k, v in labelled.items()}),
        "analysis": _write_csv(root / "analysis.csv", {k: v[half:] for k, v in labelled.items()}),
        "root": root,
    }


# --------------------------------------------------------------------------- commands


def test_evaluate_calibration(files: dict[str, Path]) -> None:
    path = str(files["labelled"])
    out = _run(
        "evaluate",
        path,
        "--y-true",
        "label",
        "--y-score",
        "score_a",
        "--calibration",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["result"]["calibration"]
    rows = list(csv.DictReader(files["labelled"].open(encoding="utf-8")))
    y = np.array([int(r["label"]) for r in rows])
    score = np.array([float(r["score_a"]) for r in rows])
    report = pe.calibration(y, score, rng=0)
    assert result["summary"]["mean"] == pytest.approx(report.summary().to_dict()["mean"])
    assert result["bins"]["n"] == report.bins().to_dict()["n"]
    out = _run("evaluate", path, "--y-true", "label", "--y-pred", "pred_a", "--calibration")
    assert out.returncode == 2
    assert "--calibration needs --y-score" in out.stderr


def test_evaluate_value_matches_the_python_decision_curve(files: dict[str, Path]) -> None:
    path = str(files["labelled"])
    base = ("evaluate", path, "--y-true", "label", "--y-score", "score_a")
    out = _run(*base, "--value", "20", "-4", "0", "-1", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["result"]["value"]
    rows = list(csv.DictReader(files["labelled"].open(encoding="utf-8")))
    y = np.array([int(r["label"]) for r in rows])
    score = np.array([float(r["score_a"]) for r in rows])
    grid = np.union1d(np.round(np.linspace(0.01, 0.99, 99), 10), [0.5])
    curve = pe.decision_curve(
        y, score, value={"tp": 20, "fp": -4, "fn": -1}, thresholds=grid, n_samples=4_000, rng=0
    )
    assert result == curve.summary(0.5).to_dict()
    out = _run(
        "evaluate", path, "--y-true", "label", "--y-pred", "pred_a", "--value", "1", "0", "0", "0"
    )
    assert out.returncode == 2
    assert "--value needs --y-score" in out.stderr


def test_rank_matches_the_python_ranking(files: dict[str, Path]) -> None:
    path = str(files["labelled"])
    rows = list(csv.DictReader(files["labelled"].open(encoding="utf-8")))
    y = np.array([int(r["label"]) for r in rows])
    a, b = (np.array([float(r[c]) for r in rows]) for c in ("score_a", "score_b"))
    base = ("rank", path, "--y-true", "label", "--models", "score_a", "score_b", "pred_a")
    out = _run(*base, "--metric", "f1", "--rope", "0.01", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["result"]
    pred_a = np.array([int(r["pred_a"]) for r in rows])
    models = {"score_a": (a > 0.5).astype(int), "score_b": (b > 0.5).astype(int), "pred_a": pred_a}
    ranking = pe.rank_models(y, models, metric="f1", rope=0.01, rng=0)
    assert result == json.loads(json.dumps(ranking.to_dict()))
    out = _run(*base[:-1], "--metric", "roc_auc", "--format", "json")
    assert out.returncode == 0, out.stderr
    auc = pe.rank_models(y, {"score_a": a, "score_b": b}, metric="roc_auc", rng=0)
    assert json.loads(out.stdout)["result"]["p_better"] == auc.p_better().tolist()
    out = _run(*base, "--metric", "roc_auc")
    assert out.returncode == 2
    assert "needs scores" in out.stderr
    out = _run("rank", path, "--y-true", "label", "--models", "score_a")
    assert out.returncode == 2
    assert "at least two" in out.stderr


def test_experiment_over_a_batch_column_equals_the_python_experiment(
    files: dict[str, Path],
) -> None:
    path = str(files["labelled"])
    state = files["root"] / "state.json"
    plot = files["root"] / "trajectory.png"
    args = ("experiment", path, "--y-true", "label", "--y-score", "score_a", "--batch", "segment")
    out = _run(
        *args,
        "--rope",
        "0.6",
        "1",
        "--metrics",
        "accuracy",
        "f1",
        "--precision",
        "0.08",
        "--state",
        str(state),
        "--plot",
        str(plot),
        "--seed",
        "4",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["result"]
    rows = list(csv.DictReader(files["labelled"].open(encoding="utf-8")))
    y = np.array([int(r["label"]) for r in rows])
    score = np.array([float(r["score_a"]) for r in rows])
    segment = np.array([r["segment"] for r in rows])
    exp = pe.Experiment(["accuracy", "f1"], rope=(0.6, 1.0), precision=0.08, seed=4)
    for key in dict.fromkeys(segment.tolist()):  # order of first appearance
        exp.update(y[segment == key], y_score=score[segment == key])
    assert result["status"] == exp.status
    assert result["summary"]["hdi_low"] == pytest.approx(
        exp.summary().to_dict()["hdi_low"], abs=1e-12
    )
    assert pe.Experiment.from_json(state).status == exp.status
    assert plot.stat().st_size > 0
    reference = _run(*args, "--reference", str(files["reference"]), "--metrics", "accuracy")
    assert reference.returncode == 0, reference.stderr
    assert "no worse than reference" in reference.stdout


def test_plan_and_label_plan_close_the_loop(files: dict[str, Path]) -> None:
    out = _run("plan", "--metric", "accuracy", "--width", "0.05", "--expected", "0.9")
    assert out.returncode == 0, out.stderr
    assert "605 labelled rows" in out.stdout
    pilot = _run(
        "plan",
        "--metric",
        "f1",
        "--width",
        "0.1",
        "--pilot",
        "40",
        "5",
        "50",
        "5",
        "--format",
        "json",
    )
    assert pilot.returncode == 0, pilot.stderr
    assert json.loads(pilot.stdout)["result"]["method"] == "simulated"
    free = _run(
        "plan",
        "--metric",
        "accuracy",
        "--width",
        "0.001",
        "--reference",
        str(files["reference"]),
        "--y-true",
        "label",
        "--y-score",
        "score_a",
        "--format",
        "json",
    )
    assert free.returncode == 0, free.stderr
    result = json.loads(free.stdout)["result"]
    assert result["n"] is None
    assert result["floor"] > 0.001
    rows_file = files["root"] / "to_label.csv"
    path = str(files["labelled"])
    out = _run(
        "label-plan",
        path,
        "--y-score",
        "score_a",
        "--budget",
        "120",
        "--out",
        str(rows_file),
        "--seed",
        "2",
    )
    assert out.returncode == 0, out.stderr
    assert "labelling plan for precision" in out.stdout
    chosen = list(csv.DictReader(rows_file.open(encoding="utf-8")))
    assert len(chosen) == 120
    labels = [r["label"] for r in csv.DictReader(files["labelled"].open(encoding="utf-8"))]
    labelled = _write_csv(
        files["root"] / "reviewed.csv",
        {
            "label": [labels[int(r["row"])] for r in chosen],
            "score": [r["score"] for r in chosen],
            "stratum": [r["stratum"] for r in chosen],
            "weight": [r["weight"] for r in chosen],
        },
    )
    out = _run(
        "evaluate",
        str(labelled),
        "--y-true",
        "label",
        "--y-score",
        "score",
        "--strata",
        "stratum",
        "--weights",
        "weight",
        "--metrics",
        "precision",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    precision = json.loads(out.stdout)["result"]["metrics"]["precision"]
    scores = np.array([float(r["score_a"]) for r in csv.DictReader(files["labelled"].open())])
    truth = np.array([int(v) for v in labels])
    realized = truth[scores > 0.5].mean()
    assert precision["hdi_low"] <= realized <= precision["hdi_high"]


def test_evaluate_table_json_csv_and_plot(files: dict[str, Path]) -> None:
    path = str(files["labelled"])
    out = _run("evaluate", path, "--y-true", "label", "--y-score", "score_a", "--seed", "1")
    assert out.returncode == 0, out.stderr
    for fragment in ("posterior summary", "roc_auc", "hdi_low", "ConfusionMatrix(tp="):
        assert fragment in out.stdout
    assert out.stderr == ""  # no progress bar when stderr is not a terminal
    out = _run("evaluate", path, "--y-true", "label", "--y-pred", "pred_a", "--format", "json")
    payload = json.loads(out.stdout)
    assert payload["probeval"] == pe.__version__
    assert payload["command"] == "evaluate"
    assert {"samples", "seed", "ci", "file", "y_true"} <= set(payload["settings"])
    metrics = payload["result"]["metrics"]
    assert set(metrics["f1"]) >= {"observed", "mean", "median", "std", "hdi_low", "hdi_high"}
    out = _run(
        "evaluate",
        path,
        "--y-true",
        "label",
        "--y-pred",
        "pred_a",
        "--format",
        "csv",
        "--metrics",
        "accuracy,f1",
        "mcc",
    )
    rows = list(csv.DictReader(out.stdout.splitlines()))
    assert [r["metric"] for r in rows] == ["accuracy", "f1", "mcc"]
    png = files["root"] / "evaluate.png"
    out = _run("evaluate", path, "--y-true", "label", "--y-pred", "pred_a", "--plot", str(png))
    assert out.returncode == 0, out.stderr
    assert png.stat().st_size > 10_000


def test_compare_paired_independent_and_ranking(files: dict[str, Path]) -> None:
    path = str(files["labelled"])
    base = ("compare", path, "--y-true", "label", "--model-a", "score_a", "--model-b", "score_b")
    out = _run(*base, "--metric", "f1", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["result"]
    assert result["paired"] is True
    assert result["decision"]["status"] in ("accepted", "rejected", "undecided")
    assert {"p_direction", "p_rope", "p_sig_pos", "p_sig_neg", "hdi_low"} <= set(result)
    out = _run(*base, "--metric", "f1", "--independent")
    assert "independent comparison" in out.stdout
    assert "decision:" in out.stdout
    out = _run(
        *base, "--metric", "roc_auc", "--format", "json", "--plot", str(files["root"] / "c.png")
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"]["paired"] is True  # one weight per row for both
    rows = list(csv.DictReader(files["labelled"].open(encoding="utf-8")))
    y = np.array([int(r["label"]) for r in rows])
    a, b = (np.array([float(r[c]) for r in rows]) for c in ("score_a", "score_b"))
    paired = pe.compare_paired(y, y_score_a=a, y_score_b=b, metric="roc_auc", rng=0)
    result = json.loads(out.stdout)["result"]
    assert result["hdi_low"] == pytest.approx(paired.summary()["hdi_low"], abs=1e-12)
    out = _run(*base, "--metric", "average_precision", "--format", "json")
    result = json.loads(out.stdout)["result"]
    assert result["paired"] is True
    paired = pe.compare_paired(y, y_score_a=a, y_score_b=b, metric="average_precision", rng=0)
    assert result["hdi_low"] == pytest.approx(paired.summary()["hdi_low"], abs=1e-12)
    out = _run(*base, "--metric", "average_precision", "--independent", "--format", "json")
    assert json.loads(out.stdout)["result"]["paired"] is False


def _estimate_args(files: dict[str, Path]) -> tuple[str, ...]:
    """`probeval estimate` on the fixture's reference and analysis files, score_a and label."""
    return (
        "estimate",
        "--reference",
        str(files["reference"]),
        "--analysis",
        str(files["analysis"]),
        "--y-true",
        "label",
        "--y-score",
        "score_a",
    )


def test_estimate_with_chunks_periods_and_realized_values(files: dict[str, Path]) -> None:
    base = _estimate_args(files)
    metrics = ("accuracy", "roc_auc", "average_precision")
    out = _run(*base, "--n-chunks", "3", "--metrics", *metrics, "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["result"]
    assert [c["n_rows"] for c in result["chunks"]] == [250, 250, 250]
    for name in ("roc_auc", "average_precision"):
        first = result["chunks"][0]["metrics"][name]
        assert {"estimate", "decision", "realized", "with_labels"} <= set(first)
    out = _run(
        *base,
        "--period",
        "W",
        "--timestamp",
        "day",
        "--target",
        "realized",
        "--plot",
        str(files["root"] / "e.png"),
    )
    assert out.returncode == 0, out.stderr
    assert "2026-W02" in out.stdout
    assert "realized" in out.stdout
    # A backtest (labels for every row, realized target): how the intervals did, per metric.
    assert "backtest of the label-free estimate" in out.stdout
    assert "z_sd" in out.stdout
    assert "backtest" not in result  # population target: no backtest
    out = _run(
        *base, "--n-chunks", "3", "--metrics", *metrics, "--target", "realized", "--format", "json"
    )
    assert out.returncode == 0, out.stderr
    backtest = json.loads(out.stdout)["result"]["backtest"]
    assert set(backtest) == set(metrics)
    assert all(
        entry["n_chunks"] == 3 and 0 <= entry["coverage"] <= 1 for entry in backtest.values()
    )


def _on_shifted_scores(
    files: dict[str, Path], metric: str
) -> tuple[tuple[str, ...], Callable[..., dict[str, float]]]:
    """``probeval estimate`` on 600 analysis scores far above the reference's (0.55-0.85):
    its arguments (JSON output, ``metric`` alone), and a run with further arguments returning
    the chunk's estimate of ``metric`` (mean, HDI)."""
    rng = np.random.default_rng(1)
    shifted = np.round(np.clip(0.55 + 0.3 * rng.random(600), 0, 1), 4)
    analysis = _write_csv(files["root"] / "shifted.csv", {"score_a": shifted.tolist()})
    base = (
        *_estimate_args(files)[:4],
        str(analysis),
        *_estimate_args(files)[5:],
        "--metrics",
        metric,
        "--format",
        "json",
    )

    def estimate(*extra: str) -> dict[str, float]:
        out = _run(*base, *extra)
        assert out.returncode == 0, out.stderr
        chunk = json.loads(out.stdout)["result"]["chunks"][0]
        result: dict[str, float] = chunk["metrics"][metric]["estimate"]
        return result

    return base, estimate


def test_estimate_unseen_drift_option(files: dict[str, Path]) -> None:
    """--unseen-drift is the estimator's unseen_drift: on analysis scores whose distribution
    moved away from the reference's (where the unseen drift applies: a chunk like one more
    reference window gets none of it), a large one widens the accuracy interval, the default
    is 0.08, and a negative sd is refused naming the option."""
    base, estimate = _on_shifted_scores(files, "accuracy")

    def width(*extra: str) -> float:
        interval = estimate(*extra)
        return float(interval["hdi_high"] - interval["hdi_low"])

    assert width("--unseen-drift", "0") < width("--unseen-drift", "0.5")
    assert width("--unseen-drift", "0.08") == width()
    out = _run(*base, "--unseen-drift", "-1")
    assert out.returncode == 2
    assert "unseen_drift must be >= 0" in out.stderr


def test_estimate_shift_option(files: dict[str, Path]) -> None:
    """--shift is the estimator's shift: "covariate" is the default; "label" reads the
    analysis scores' move as a change of prevalence, which moves the estimated prevalence with
    the scores (here scores far above the reference's: a higher prevalence); anything else is
    refused naming the option."""
    base, estimate = _on_shifted_scores(files, "prevalence")
    assert estimate("--shift", "covariate") == estimate()
    assert estimate("--shift", "label")["mean"] > estimate()["mean"]
    out = _run(*base, "--shift", "prior")
    assert out.returncode == 2
    assert "--shift" in out.stderr


def test_estimate_drift_per_shift_option(files: dict[str, Path]) -> None:
    """--drift-per-shift is the estimator's drift_per_shift: on analysis scores that sit far
    higher than the reference's, 0 narrows the interval; a negative sd is refused naming the
    option."""
    base, interval = _on_shifted_scores(files, "accuracy")
    default, none, half = (
        interval(),
        interval("--drift-per-shift", "0"),
        interval("--drift-per-shift", "0.5"),
    )
    assert interval("--drift-per-shift", "2") == default
    width = {
        k: v["hdi_high"] - v["hdi_low"] for k, v in [("0", none), ("0.5", half), ("2", default)]
    }
    assert width["0"] < width["0.5"] < width["2"]
    out = _run(*base, "--drift-per-shift", "-1")
    assert out.returncode == 2
    assert "drift_per_shift must be >= 0" in out.stderr


def test_estimate_with_labels_arriving(files: dict[str, Path], tmp_path: Path) -> None:
    """Empty or NA cells in the analysis file's label column are labels not known yet: the
    known ones update the estimate (the Python API's partial_labels), nothing is refused."""
    lines = files["analysis"].read_text(encoding="utf-8").splitlines()
    column = lines[0].split(",").index("label")
    for i in range(1, len(lines)):
        if i % 3:  # two rows in three still unlabelled
            cells = lines[i].split(",")
            cells[column] = "" if i % 2 else "NA"
            lines[i] = ",".join(cells)
    partial = tmp_path / "partial.csv"
    partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ("--y-true", "label", "--y-score", "score_a", "--n-chunks", "2", "--format", "json")
    ref = ("estimate", "--reference", str(files["reference"]))
    out = _run(*ref, "--analysis", str(partial), *args)
    assert out.returncode == 0, out.stderr
    chunks = json.loads(out.stdout)["result"]["chunks"]
    assert [c["diagnostics"]["n_labelled"] for c in chunks] == [125, 125]
    # Missing labels are allowed in the analysis file only: the reference needs them all.
    out = _run("estimate", "--reference", str(partial), "--analysis", str(partial), *args)
    assert out.returncode == 2
    assert "column 'label' of partial.csv has a missing value" in out.stderr


def test_ensemble_with_groups(files: dict[str, Path]) -> None:
    out = _run(
        "ensemble",
        str(files["labelled"]),
        "--proba-cols",
        "model_*",
        "--y-true",
        "label",
        "--group",
        "segment",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["settings"]["proba_cols"] == [f"model_{i}" for i in range(5)]
    result = payload["result"]
    assert result["n_models"] == 5
    assert {"jitter", "aleatoric", "epistemic"} <= set(result["statistics"])
    assert {g["metric"] for g in result["gaps"]} >= {"tpr", "selection_rate", "equalized_odds"}
    out = _run("ensemble", str(files["labelled"]), "--proba-cols", "model_0,model_1")
    assert "label_stability" in out.stdout


def test_demo_tells_the_whole_story() -> None:
    out = _run("demo", "--seed", "1", "--samples", "4000")
    assert out.returncode == 0, out.stderr
    for fragment in (
        "1. Model A",
        "2. Is A better than B?",
        "3. Weeks 9-16 (2026-W10 ... 2026-W17)",  # the data's weeks 9-16 are ISO weeks 10-17
        "realized",
        "roc_auc",
        # Every table says how to read it, and the drift gets a conclusion.
        "the narrowest interval",
        "decision: HDI + ROPE",
        "says which way it leans",
        "decision: 'no worse than the reference'",
        "values measured later lie inside their 95% HDIs",
    ):
        assert fragment in " ".join(out.stdout.split()), fragment
    payload = json.loads(_run("demo", "--format", "json", "--samples", "2000").stdout)
    assert set(payload["result"]) == {"evaluation", "comparison", "estimate"}


def test_warnings_are_one_line_like_errors(tmp_path: Path) -> None:
    path = tmp_path / "one.csv"
    path.write_text("label,score\n1,0.9\n1,0.8\n1,0.3\n", encoding="utf-8")
    out = _run("evaluate", str(path), "--y-true", "label", "--y-score", "score")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        "probeval evaluate: warning: y_true holds one class only, so ROC AUC and average "
        "precision are undefined and left out of the evaluation"
    ]


def test_every_subcommand_has_clear_help() -> None:
    for command, options in {
        "evaluate": ("--y-true", "--y-score", "--threshold", "--format"),
        "compare": ("--model-a", "--paired", "--independent", "--rope"),
        "rank": ("--models", "--metric", "--rope", "--threshold"),
        "estimate": ("--reference", "--chunk-size", "--period", "--target"),
        "ensemble": ("--proba-cols", "--group", "--reference-group"),
        "demo": ("--samples", "--plot"),
    }.items():
        out = _run(command, "--help")
        assert out.returncode == 0
        for option in options:
            assert option in out.stdout, (command, option)


def test_console_script_is_installed() -> None:
    script = shutil.which("probeval")
    if script is None:
        pytest.skip("console script not on PATH (package not installed in this environment)")
    out = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"probeval {pe.__version__}"


def test_no_command_prints_help_and_exits_2() -> None:
    out = _run()
    assert out.returncode == 2
    assert "usage: probeval" in out.stdout


# --------------------------------------------------------------------------- bad input


def _bad_files(root: Path) -> dict[str, Path]:
    (root / "empty.csv").write_text("", encoding="utf-8")
    (root / "header.csv").write_text("label,score\n", encoding="utf-8")
    (root / "ragged.csv").write_text("label,score\n1,0.5\n0\n", encoding="utf-8")
    (root / "blank.csv").write_text("label,score\n1,0.5\n,0.2\n", encoding="utf-8")
    (root / "three.csv").write_text("label,score\n0,0.1\n1,0.9\n2,0.5\n", encoding="utf-8")
    (root / "range.csv").write_text("label,score\n0,0.1\n1,1.9\n", encoding="utf-8")
    (root / "words.csv").write_text("label,score\nyes,0.1\nno,0.9\n", encoding="utf-8")
    (root / "na.csv").write_text("label,score\n1,0.5\n0,0.2\n1,NA\n", encoding="utf-8")
    (root / "comma.csv").write_text("label;score\n1;0,1\n0;0,9\n", encoding="utf-8")
    (root / "groups.csv").write_text("m1,m2,g,note\n0.1,0.2,1,a\n0.7,0.6,2,b\n", encoding="utf-8")
    (root / "zeros.csv").write_text("label,score\n0,0.1\n0,0.7\n0,0.4\n", encoding="utf-8")
    (root / "data.parquet").write_bytes(b"not really parquet")
    return {p.stem: p for p in root.iterdir()}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("evaluate", "{missing}", "--y-true", "label", "--y-score", "score"), "no such file"),
        (("evaluate", "{empty}", "--y-true", "label", "--y-score", "score"), "is empty"),
        (("evaluate", "{header}", "--y-true", "label", "--y-score", "score"), "no data rows"),
        (("evaluate", "{ragged}", "--y-true", "label", "--y-score", "score"), "line 3: 1 fields"),
        (
            ("evaluate", "{blank}", "--y-true", "label", "--y-score", "score"),
            "column 'label' of blank.csv has a missing value (an empty cell) on data row 2",
        ),
        (
            ("evaluate", "{na}", "--y-true", "label", "--y-score", "score"),
            "column 'score' of na.csv has a missing value ('NA') on data row 3",
        ),
        (
            ("evaluate", "{comma}", "--y-true", "label", "--y-score", "score"),
            "column 'score' of comma.csv must hold numbers, but data row 1 holds '0,1' (a decimal "
            "comma? write the decimal mark as '.')",
        ),
        (
            ("evaluate", "{words}", "--y-true", "score", "--y-score", "label"),
            "column 'label' of words.csv must hold numbers, but data row 1 holds 'yes'",
        ),
        (
            ("evaluate", "{range}", "--y-true", "score", "--y-pred", "score", "--pos-label", "abc"),
            "--pos-label 'abc' is not one of the labels: they are numbers in this file",
        ),
        (
            (
                "ensemble",
                "{groups}",
                "--proba-cols",
                "m*",
                "--group",
                "g",
                "--reference-group",
                "x",
            ),
            "--reference-group 'x' is not one of the labels: they are integers in this file",
        ),
        (
            ("ensemble", "{groups}", "--proba-cols", "g,note"),
            "column 'note' of groups.csv must hold numbers, but data row 1 holds 'a'",
        ),
        (("evaluate", "{three}", "--y-true", "label", "--y-score", "score"), "binary"),
        (
            ("evaluate", "{range}", "--y-true", "label", "--y-score", "score"),
            "probabilities in [0, 1]",
        ),
        (("evaluate", "{words}", "--y-true", "label", "--y-score", "score"), "pos_label"),
        (("evaluate", "{three}", "--y-true", "nope", "--y-score", "score"), "no such column"),
        (("evaluate", "{three}", "--y-true", "label"), "give --y-pred COL, --y-score COL"),
        (
            ("evaluate", "{range}", "--y-true", "label", "--y-pred", "label", "--metrics", "gini"),
            "unknown metric",
        ),
        (
            ("evaluate", "{range}", "--y-true", "label", "--y-pred", "label", "--samples", "0"),
            "n_samples",
        ),
        (
            ("evaluate", "{range}", "--y-true", "label", "--y-pred", "label", "--ci", "2"),
            "ci must be",
        ),
        (
            ("evaluate", "{range}", "--y-true", "label", "--y-pred", "label", "--format", "xml"),
            "invalid choice",
        ),
        (
            (
                "evaluate",
                "{range}",
                "--y-true",
                "label",
                "--y-pred",
                "label",
                "--plot",
                "/nonexistent/dir/x.png",
            ),
            "cannot write the plot",
        ),
        (("evaluate", "{range}", "--y-pred", "label"), "required: --y-true"),
        (
            (
                "compare",
                "{range}",
                "--y-true",
                "label",
                "--model-a",
                "score",
                "--model-b",
                "score",
                "--metric",
                "roc_auc",
                "--paired",
            ),
            "roc_auc needs scores in [0, 1]",
        ),
        (
            (
                "compare",
                "{range}",
                "--y-true",
                "label",
                "--model-a",
                "score",
                "--model-b",
                "score",
                "--paired",
                "--independent",
            ),
            "not allowed with",
        ),
        (
            (
                "estimate",
                "--reference",
                "{range}",
                "--analysis",
                "{range}",
                "--y-true",
                "label",
                "--y-score",
                "score",
                "--period",
                "D",
            ),
            "--period needs --timestamp",
        ),
        (
            (
                "estimate",
                "--reference",
                "{range}",
                "--analysis",
                "{range}",
                "--y-true",
                "label",
                "--y-score",
                "score",
                "--n-chunks",
                "2",
                "--chunk-size",
                "3",
            ),
            "not allowed with",
        ),
        (
            (
                "estimate",
                "--reference",
                "{zeros}",
                "--analysis",
                "{zeros}",
                "--y-true",
                "label",
                "--y-score",
                "score",
            ),
            "holds only the class 0",
        ),
        (("ensemble", "{range}", "--proba-cols", "score"), "at least 2"),
        (
            (
                "experiment",
                "{zeros}",
                "--y-true",
                "label",
                "--y-score",
                "score",
                "--batch",
                "x",
                "--rope",
                "0",
                "1",
            ),
            "--batch 'x': no such column",
        ),
        (
            (
                "experiment",
                "{zeros}",
                "--y-true",
                "label",
                "--y-score",
                "score",
                "--batch",
                "label",
            ),
            "say what to test",
        ),
        (("plan", "--metric", "accuracy", "--width", "0.05"), "--expected V"),
        (
            ("plan", "--metric", "accuracy", "--width", "0.05", "--reference", "{zeros}"),
            "needs --y-true COL and --y-score COL",
        ),
        (("plan", "--metric", "accuracy", "--width", "-1", "--expected", "0.9"), "width"),
        (("label-plan", "{zeros}", "--y-score", "score", "--budget", "0"), "budget"),
        (
            ("evaluate", "{zeros}", "--y-true", "label", "--y-score", "score", "--strata", "label"),
            "needs both --strata COL and --weights COL",
        ),
        (("demo", "--seed", "abc"), "invalid int value"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_traceback(
    tmp_path: Path, args: tuple[str, ...], fragment: str
) -> None:
    paths = {name: str(path) for name, path in _bad_files(tmp_path).items()}
    paths["missing"] = str(tmp_path / "missing.csv")
    out = _run(*(a.format(**paths) for a in args))
    assert out.returncode == 2, out.stdout
    assert fragment in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


@pytest.mark.parametrize(
    "text",
    [
        # The plain file, then dialects and defects outside the used columns.
        "label,score,note\n1,0.9,a\n0,0.2,b\n1,0.4,c\n0,0.7,d\n",
        "label,score,note,\n1,0.9,a,\n0,0.2,b,\n1,0.4,c,\n0,0.7,d,\n",  # trailing commas
        "label,score,note\n1,0.9,,\n0,0.2,NA,\n1,0.4,c,\n0,0.7,,\n",  # empty unused cells
        "\ufefflabel;score;note\r\n1;0.9;a\r\n\r\n0;0.2;b\r\n1;0.4;c\r\n0;0.7;d\r\n",
        'label\tscore\tnote\n"1"\t 0.9\t"x\ty"\n0\t0.2\tb\n1\t0.4 \t"c\nd"\n0\t.7\td\n',
    ],
)
def test_csv_dialects_and_unused_columns(tmp_path: Path, text: str) -> None:
    """Delimiters, quoting, a byte-order mark, CRLF, trailing delimiters and blank lines are
    read; what is wrong in a column the command does not use is not an error."""
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8", newline="")
    out = _run("evaluate", str(path), "--y-true", "label", "--y-score", "score", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"]["confusion"]["counts"] == [[1, 1], [1, 1]]


def test_parquet_input(tmp_path: Path) -> None:
    """Parquet is read with pyarrow when it is installed; without it the error says how to get
    it. Either way a broken file is a one-line error."""
    broken = _bad_files(tmp_path)["data"]
    out = _run("evaluate", str(broken), "--y-true", "label", "--y-pred", "label")
    assert out.returncode == 2
    if importlib.util.find_spec("pyarrow") is None:
        assert "needs pyarrow" in out.stderr
        return
    assert "cannot read" in out.stderr
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"label": [0, 1, 1, 0, 1], "pred": [0, 1, 0, 0, 1]})
    pq.write_table(table, tmp_path / "good.parquet")
    out = _run(
        "evaluate",
        str(tmp_path / "good.parquet"),
        "--y-true",
        "label",
        "--y-pred",
        "pred",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"]["confusion"]["counts"] == [[2, 0], [1, 2]]


def test_estimate_multiclass_score_columns(tmp_path: Path) -> None:
    """Several --y-score columns are a multiclass model's, in --labels order; string class
    names work, and the result equals the library's, with --shift label too."""
    import probeval as pe

    rng = np.random.default_rng(3)
    names = np.array(["bronze", "silver", "gold"])
    paths = {}
    frames = {}
    for kind, n in (("reference", 3_000), ("analysis", 1_000)):
        scores = rng.dirichlet([1.0, 1.0, 0.5], n)
        labels = names[(rng.random(n)[:, None] > scores.cumsum(axis=1)).sum(axis=1).clip(0, 2)]
        paths[kind] = tmp_path / f"{kind}.csv"
        with paths[kind].open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["tier", "p_bronze", "p_silver", "p_gold"])
            writer.writerows(
                [label, *(f"{v:.6f}" for v in row)]
                for label, row in zip(labels, scores, strict=True)
            )
        frames[kind] = (labels, np.round(scores, 6))
    args = [
        "estimate",
        "--reference",
        str(paths["reference"]),
        "--analysis",
        str(paths["analysis"]),
        "--y-true",
        "tier",
        "--y-score",
        "p_bronze",
        "p_silver",
        "p_gold",
        "--labels",
        "bronze",
        "silver",
        "gold",
        "--metrics",
        "accuracy",
        "f1_macro",
        "roc_auc_macro",
        "--samples",
        "500",
        "--seed",
        "2",
        "--format",
        "json",
    ]
    for shift in ("covariate", "label"):
        out = _run(*args, "--shift", shift)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)["result"]
        metrics = result["chunks"][0]["metrics"]
        assert list(metrics) == ["accuracy", "f1_macro", "roc_auc_macro"]
        assert metrics["f1_macro"]["realized"] is not None
        names_asked = ["accuracy", "f1_macro", "roc_auc_macro"]
        estimator = pe.LabelFreeEstimator(metrics=names_asked, shift=shift)
        estimator.fit(*frames["reference"], labels=list(names))
        library = estimator.estimate(
            frames["analysis"][1], y_true=frames["analysis"][0], n_samples=500, rng=2
        )
        for name in names_asked:
            assert metrics[name]["estimate"]["mean"] == pytest.approx(
                library.posterior(name).mean(), abs=1e-12
            )
    bad = _run(
        "estimate",
        "--reference",
        str(paths["reference"]),
        "--analysis",
        str(paths["analysis"]),
        "--y-true",
        "tier",
        "--y-score",
        "p_bronze",
        "--labels",
        "bronze",
    )
    assert bad.returncode == 2
    assert "--labels names the classes of several --y-score columns" in bad.stderr
