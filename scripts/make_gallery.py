"""Draw the README's gallery (docs/gallery/*.png) from the bundled demo data.

Run ``python scripts/make_gallery.py`` after changing a plot; ``tests/test_plot.py`` checks
that the committed images are what this script draws.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import probeval as pe

GALLERY = Path(__file__).resolve().parents[1] / "docs" / "gallery"
DPI = 80


def figures() -> dict[str, object]:
    """Figure name -> matplotlib Figure, all from the demo data with fixed seeds."""
    data = pe.load_demo()
    y, a, b = data["y_true"], data["score_a"], data["score_b"]
    reference = data["period"] == "reference"
    ev = pe.evaluate(y[reference], y_score=a[reference], rng=0)
    cmp = pe.compare_paired(
        y[reference], a[reference] > 0.5, b[reference] > 0.5, metric="f1", rope=0.01, rng=0
    )
    estimator = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc"])
    estimator.fit(y[reference], a[reference])
    weekly = estimator.estimate(
        a[~reference],
        target="realized",
        y_true=y[~reference],
        period="W",
        timestamps=data["date"][~reference],
        rng=0,
    )
    order = np.random.default_rng(0).permutation(y.size)
    experiment = pe.Experiment(["f1"], reference=ev, seed=0)
    weeks = np.array([np.datetime64(d, "W") for d in data["date"]])
    for week in np.unique(weeks[~reference]):
        rows = ~reference & (weeks == week)
        experiment.update(y[rows], y_score=a[rows])
    return {
        "posterior": pe.plot.posterior(ev["f1"], rope=(0.55, 0.58)).figure,
        "posteriors": pe.plot.posteriors(
            {m: ev[m] for m in ("accuracy", "precision", "recall", "f1", "mcc", "roc_auc")}
        ),
        "updates": pe.plot.updates(
            y[order], a[order] > 0.5, metric="f1", steps=(10, 100, 1000, 8000)
        ).figure,
        "compare": pe.plot.compare(cmp).figure,
        "chunks": pe.plot.chunks(weekly, "roc_auc").figure,
        "trajectory": pe.plot.trajectory(experiment, "f1").figure,
    }


def build(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, figure in figures().items():
        path = directory / f"{name}.png"
        figure.savefig(path, dpi=DPI, metadata={"Software": None})  # type: ignore[attr-defined]
        paths.append(path)
    return paths


if __name__ == "__main__":
    for path in build(Path(sys.argv[1]) if len(sys.argv) > 1 else GALLERY):
        print(f"{path} ({path.stat().st_size // 1024} KB)")
