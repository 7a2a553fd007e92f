"""Type stubs of the Rust extension ``probeval._core`` (kept in sync by mypy.stubtest in CI)."""

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "BLOCK_SIZE",
    "MAX_OUTPUT",
    "MAX_SHAPE",
    "MIN_POSITIVE_SHAPE",
    "auc_draws",
    "auc_draws_per_row",
    "auc_point",
    "audited_metric_draws",
    "beta_cdf",
    "beta_draws",
    "beta_eti",
    "beta_hdi",
    "beta_isf",
    "beta_mode",
    "beta_pdf",
    "beta_ppf",
    "beta_sf",
    "binary_metric_draws",
    "binary_metric_names",
    "binary_metric_rows",
    "binary_metric_values",
    "chunk_score_draws",
    "csv_columns",
    "csv_header",
    "derive_seed",
    "dirichlet_draws",
    "dirichlet_multinomial_log_likelihood",
    "ensemble_statistic_names",
    "ensemble_stats",
    "equal_frequency_bins",
    "f1_hdi",
    "f1_mean_var",
    "f1_mode",
    "labelfree_chunk_stats",
    "labelfree_course_priors",
    "labelfree_drift_expected_logits",
    "labelfree_drift_likelihood",
    "labelfree_drift_shift",
    "labelfree_estimate",
    "labelfree_estimate_multiclass",
    "labelfree_fit",
    "labelfree_fit_counts",
    "labelfree_spread_priors",
    "linear_binning",
    "multiclass_auc_draws",
    "multiclass_metric_draws",
    "multiclass_metric_values",
    "paired_metric_draws",
    "sample_eti",
    "sample_hdi",
    "sample_moments",
    "sample_quantiles",
    "sample_summary",
    "segment_counts",
    "segment_draws",
    "segment_summaries",
    "unique_scores",
]

BLOCK_SIZE: int
MAX_OUTPUT: int
MIN_POSITIVE_SHAPE: float
MAX_SHAPE: float

def derive_seed(seed: int, key: int) -> int: ...
def binary_metric_names() -> list[str]: ...
def binary_metric_values(
    cells: tuple[float, float, float, float],
    metrics: list[str],
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> list[float]: ...
def binary_metric_rows(
    cells: npt.NDArray[np.float64],
    metrics: list[str],
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def binary_metric_draws(
    alpha: tuple[float, float, float, float],
    metrics: list[str],
    n_samples: int,
    seed: int,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def beta_draws(a: float, b: float, n_samples: int, seed: int) -> npt.NDArray[np.float64]: ...
def dirichlet_draws(
    alpha: npt.NDArray[np.float64], n_samples: int, seed: int
) -> npt.NDArray[np.float64]: ...
def dirichlet_multinomial_log_likelihood(
    counts: npt.NDArray[np.float64],
    shares: npt.NDArray[np.float64],
    precisions: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]: ...
def beta_cdf(x: npt.NDArray[np.float64], a: float, b: float) -> npt.NDArray[np.float64]: ...
def beta_sf(x: npt.NDArray[np.float64], a: float, b: float) -> npt.NDArray[np.float64]: ...
def beta_pdf(x: npt.NDArray[np.float64], a: float, b: float) -> npt.NDArray[np.float64]: ...
def beta_ppf(q: npt.NDArray[np.float64], a: float, b: float) -> npt.NDArray[np.float64]: ...
def beta_isf(q: npt.NDArray[np.float64], a: float, b: float) -> npt.NDArray[np.float64]: ...
def beta_hdi(a: float, b: float, ci: float) -> tuple[float, float]: ...
def beta_eti(a: float, b: float, ci: float) -> tuple[float, float]: ...
def beta_mode(a: float, b: float) -> float: ...
def f1_mean_var(a: float, b: float) -> tuple[float, float]: ...
def f1_mode(a: float, b: float) -> float: ...
def f1_hdi(a: float, b: float, ci: float) -> tuple[float, float]: ...
def sample_hdi(samples: npt.NDArray[np.float64], ci: float) -> tuple[float, float]: ...
def sample_eti(samples: npt.NDArray[np.float64], ci: float) -> tuple[float, float]: ...
def sample_moments(samples: npt.NDArray[np.float64]) -> tuple[float, float, float, float]: ...
def sample_summary(
    samples: npt.NDArray[np.float64], ci: float
) -> tuple[float, float, float, float, float]: ...
def sample_quantiles(
    samples: npt.NDArray[np.float64], q: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]: ...
def linear_binning(
    values: npt.NDArray[np.float64], low: float, step: float, m: int
) -> npt.NDArray[np.float64]: ...
def multiclass_metric_values(
    counts: npt.NDArray[np.float64],
    metrics: list[tuple[str, str, int]],
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> list[float]: ...
def multiclass_metric_draws(
    alpha: npt.NDArray[np.float64],
    data: npt.NDArray[np.float64],
    metrics: list[tuple[str, str, int]],
    n_samples: int,
    seed: int,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def paired_metric_draws(
    alpha: npt.NDArray[np.float64],
    data: npt.NDArray[np.float64],
    metric: tuple[str, str, str, int],
    n_samples: int,
    seed: int,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def unique_scores(
    scores: npt.NDArray[np.float64],
    positive: npt.NDArray[np.bool_],
    weights: npt.NDArray[np.float64] | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def equal_frequency_bins(
    values: npt.NDArray[np.float64],
    pos: npt.NDArray[np.float64],
    neg: npt.NDArray[np.float64],
    max_bins: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def auc_point(
    pos: npt.NDArray[np.float64], neg: npt.NDArray[np.float64]
) -> tuple[float, float]: ...
def auc_draws(
    pos: npt.NDArray[np.float64],
    neg: npt.NDArray[np.float64],
    prior: float,
    n_samples: int,
    seed: int,
    want_auc: bool,
    want_ap: bool,
) -> npt.NDArray[np.float64]: ...
def chunk_score_draws(
    scores: npt.NDArray[np.float64],
    positive: npt.NDArray[np.bool_],
    starts: list[int],
    max_bins: int,
    n_samples: int,
    seed: int,
    metric: str,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def auc_draws_per_row(
    bin_of: npt.NDArray[np.uint32],
    positive: npt.NDArray[np.bool_],
    weights: npt.NDArray[np.float64],
    n_bins: int,
    n_samples: int,
    seed: int,
) -> npt.NDArray[np.float64]: ...
def multiclass_auc_draws(
    bins: npt.NDArray[np.uint32],
    classes: npt.NDArray[np.uint32],
    weights: npt.NDArray[np.float64],
    n_bins: list[int],
    n_samples: int,
    seed: int,
    want_ap: bool,
    per_row: bool,
    n_models: int = 1,
    ordered: tuple[int, int] | None = None,
) -> npt.NDArray[np.float64]: ...
def labelfree_fit(
    scores: npt.NDArray[np.float64],
    positive: npt.NDArray[np.bool_],
    n_bins: int,
    threshold: float,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
]: ...
def labelfree_chunk_stats(
    calibration_args: tuple[Any, ...],
    scores: npt.NDArray[np.float64],
    starts: list[int],
    concordance: bool,
    labels: npt.NDArray[np.float64] | None = None,
    fine: tuple[
        npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], list[int]
    ]
    | None = None,
) -> tuple[npt.NDArray[np.float64], ...]: ...
def labelfree_drift_shift(
    calibration_args: tuple[Any, ...],
    drift_args: tuple[Any, ...],
    stats: tuple[npt.NDArray[np.float64], ...],
) -> npt.NDArray[np.float64]: ...
def labelfree_drift_expected_logits(
    calibration_args: tuple[Any, ...],
    drift_args: tuple[Any, ...],
    stats: tuple[npt.NDArray[np.float64], ...],
) -> npt.NDArray[np.float64]: ...
def labelfree_course_priors(
    emit: npt.NDArray[np.float64],
    spread: npt.NDArray[np.float64],
    moves: npt.NDArray[np.float64],
    starts: npt.NDArray[np.float64],
    log_weight: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]: ...
def labelfree_drift_likelihood(
    calibration_args: tuple[Any, ...],
    drift_args: tuple[Any, ...],
    stats: tuple[npt.NDArray[np.float64], ...],
    effect: Literal["shift", "tilt"],
) -> npt.NDArray[np.float64]: ...
def labelfree_estimate(
    calibration_args: tuple[Any, ...],
    stats: tuple[npt.NDArray[np.float64], ...],
    metrics: list[str],
    options: tuple[str, str, bool, bool, bool],
    n_samples: int,
    seed: int,
    beta: float = 1.0,
    zero_division: float = 0.0,
    drift_args: tuple[Any, ...] | None = None,
    slices: tuple[
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
    ]
    | None = None,
    bin_offset: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None,
) -> npt.NDArray[np.float64]: ...
def labelfree_estimate_multiclass(
    calibration_args: tuple[Any, ...],
    stats: tuple[npt.NDArray[np.float64], ...],
    predicted: list[int],
    error_alpha: npt.NDArray[np.float64],
    known_errors: npt.NDArray[np.float64],
    metrics: list[tuple[str, str, int]],
    target: str,
    n_samples: int,
    seed: int,
    beta: float = 1.0,
    zero_division: float = 0.0,
    drift_args: tuple[Any, ...] | None = None,
    error_tilt: npt.NDArray[np.float64] | None = None,
    class_shift: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None,
    tilt_correlation: list[float] | None = None,
    class_moves: tuple[float, npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None,
    class_move_factor: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]: ...
def audited_metric_draws(
    counts: tuple[float, float, float, float],
    audit: tuple[
        tuple[bool, bool, bool, bool],
        tuple[float, float, float, float],
        tuple[float, float, float, float],
        tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]],
    ],
    metrics: list[
        tuple[
            str,
            tuple[tuple[bool, bool, bool, bool], tuple[bool, bool, bool, bool], float, float]
            | None,
        ]
    ],
    alpha0: tuple[float, float, float, float],
    n_samples: int,
    seed: int,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def ensemble_stats(proba: npt.NDArray[np.float64], threshold: float) -> npt.NDArray[np.float64]: ...
def ensemble_statistic_names() -> list[str]: ...
def segment_counts(
    truth: npt.NDArray[np.uint32],
    predicted: npt.NDArray[np.uint32],
    segment: npt.NDArray[np.uint32],
    weights: npt.NDArray[np.float64] | None,
    n_segments: int,
    k: int,
) -> npt.NDArray[np.float64]: ...
def segment_draws(
    cells: npt.NDArray[np.float64],
    alpha0: tuple[float, float, float, float],
    metrics: list[str],
    n_samples: int,
    seed: int,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def segment_summaries(
    cells: npt.NDArray[np.float64],
    alpha0: tuple[float, float, float, float],
    metrics: list[
        tuple[
            str,
            tuple[tuple[bool, bool, bool, bool], tuple[bool, bool, bool, bool], float, float]
            | None,
        ]
    ],
    n_samples: int,
    seed: int,
    ci: float,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> npt.NDArray[np.float64]: ...
def labelfree_fit_counts(
    values: npt.NDArray[np.float64],
    pos: npt.NDArray[np.float64],
    neg: npt.NDArray[np.float64],
    n_bins: int,
    threshold: float,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
]: ...
def labelfree_spread_priors(
    values: npt.NDArray[np.float64],
    log_priors: npt.NDArray[np.float64],
    sds: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]: ...
def csv_header(path: str, delimiter: int) -> list[str] | None: ...
def csv_columns(
    path: str, delimiter: int, indices: list[int]
) -> list[
    tuple[
        npt.NDArray[Any],
        list[str] | None,
        tuple[int, str] | None,
        tuple[int, str] | None,
    ]
]: ...
