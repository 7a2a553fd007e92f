"""probeval: posterior distributions of classifier performance.

With labels, without labels, across an ensemble and under noisy labels — and the decisions
that follow from them ("is model B better than A?", "has performance dropped?"), each with how
sure it is. The hot loops live in a Rust core (``probeval._core``); this package is the API.

>>> import probeval as pe
>>> cm = pe.ConfusionMatrix.from_counts(tp=90, fp=10, tn=80, fn=20)
>>> post = cm.posterior("precision")
>>> round(post.mean(), 4)
0.8922
"""

from __future__ import annotations

from probeval.base.intervals import eti, hdi
from probeval.base.kde import KDE, kde
from probeval.base.metrics import MetricInfo, available_metrics, metric_info
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior
from probeval.compare.comparisons import Comparison, compare, compare_paired, vs_random
from probeval.compare.decisions import Decision, decide, no_worse_rope
from probeval.compare.folds import FoldComparison, FoldSummary, aggregate_folds, compare_folds
from probeval.compare.ranking import Ranking, rank_models
from probeval.datasets import load_demo
from probeval.ensemble import EnsembleReport, bootstrap_ensemble, ensemble_report
from probeval.experiment.experiment import Experiment, MetricStatus
from probeval.experiment.labelling import LabellingPlan, labelling_plan
from probeval.experiment.planning import SamplePlan, assurance_precision, plan_sample_size
from probeval.labelfree.estimator import LabelFreeEstimate, LabelFreeEstimator
from probeval.labels.audit import LabelAudit
from probeval.labels.calibration import CalibrationReport, calibration
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.curves import CurveReport, curves
from probeval.labels.evaluation import Evaluation, evaluate
from probeval.labels.quick import metric_interval, metric_summary
from probeval.labels.scores import ScoreSummary
from probeval.labels.segments import SegmentCounts, SegmentEvaluation, evaluate_by
from probeval.labels.value import DecisionCurve, decision_curve
from probeval.reporting import report

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # `pe.plot` without importing matplotlib-dependent code at `import probeval` time.
    if name == "plot":
        import importlib

        return importlib.import_module("probeval.plot")
    raise AttributeError(f"module 'probeval' has no attribute {name!r}")


__all__ = [
    "KDE",
    "LabelAudit",
    "LabellingPlan",
    "LabelFreeEstimate",
    "LabelFreeEstimator",
    "CalibrationReport",
    "Comparison",
    "ConfusionMatrix",
    "CurveReport",
    "Decision",
    "DecisionCurve",
    "EnsembleReport",
    "Evaluation",
    "Experiment",
    "FoldComparison",
    "FoldSummary",
    "MetricInfo",
    "MetricStatus",
    "Posterior",
    "Ranking",
    "Prior",
    "SamplePlan",
    "ScoreSummary",
    "SegmentCounts",
    "SegmentEvaluation",
    "__version__",
    "aggregate_folds",
    "assurance_precision",
    "available_metrics",
    "bootstrap_ensemble",
    "calibration",
    "compare",
    "compare_folds",
    "curves",
    "compare_paired",
    "decide",
    "decision_curve",
    "ensemble_report",
    "eti",
    "evaluate",
    "evaluate_by",
    "hdi",
    "kde",
    "load_demo",
    "metric_info",
    "metric_interval",
    "metric_summary",
    "labelling_plan",
    "no_worse_rope",
    "rank_models",
    "report",
    "plan_sample_size",
    "vs_random",
]
