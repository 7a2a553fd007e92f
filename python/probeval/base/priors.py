"""Priors on confusion-matrix cells, and sequential updating.

A prior is a set of pseudo-counts on the cells of the K x K confusion matrix (rows = true class,
columns = predicted): the posterior of the cell probabilities is Dirichlet(counts +
pseudo-counts), and every metric of one evaluation comes from that one model. ``prior=``
accepts:

* ``None`` (the default) — ``"uniform"`` for binary data and ``"jeffreys"`` for K >= 3 classes
  (see :func:`default_prior` for the measurements behind it);
* a number ``c >= 0`` — per true class, ``c`` pseudo-counts on its diagonal cell and ``c``
  spread evenly over the K - 1 other cells of its row (``c / (K - 1)`` each). For binary data
  that is ``c`` per cell. Whatever K, every class's recall and precision then get the prior
  ``Beta(c, c)`` — with ``c = 1`` the uniform Beta(1, 1) — so small classes are not swamped as K
  grows (1 per cell would put K - 1 pseudo-failures against each class's recall);
* ``"uniform"`` (1), ``"jeffreys"`` (0.5) or ``"haldane"`` (0, improper: only for data that
  leave no metric undefined);
* a per-cell array shaped like the confusion matrix (for binary data ``[[TN, FP], [FN, TP]]``)
  or, for binary data, a mapping ``{"tp": .., "fp": .., "tn": .., "fn": ..}``;
* a previous posterior — an :class:`~probeval.Evaluation`, a :class:`~probeval.Posterior` made
  from a confusion matrix, or a :class:`Prior` — for sequential updating: yesterday's posterior
  is today's prior, and the result equals the posterior of yesterday's and today's data pooled.

Exact posteriors of proportion metrics are the Dirichlet's Beta marginals (the pseudo-counts of
a metric's success cells against those of its failure cells). One exception, from the
specification of binary metrics: for binary data, a number ``c`` and ``joint=False``, each
proportion gets ``Beta(successes + c, failures + c)`` of its own binomial — the marginal for
precision, recall, specificity and NPV, and a uniform prior (rather than the marginal's
Beta(2c, 2c)) for accuracy, prevalence and selection rate.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.equality import ValueEquality
from probeval._util.validation import (
    as_count_matrix,
    check_memory,
    check_positive_int,
    describe,
)
from probeval.base.metrics import BINARY_CELL_INDEX

__all__ = ["Prior", "resolve_prior"]

NAMED_PRIORS = {"uniform": 1.0, "jeffreys": 0.5, "haldane": 0.0}

#: Smallest positive pseudo-count accepted (the exact Beta functions' limit, from the core): below
#: it a prior says nothing a user could mean and the special functions lose all precision.
MIN_PSEUDO_COUNT: float = _core.MIN_POSITIVE_SHAPE
#: Largest pseudo-count accepted (the core's gamma-shape limit): draws are about the size of
#: their parameter, and products of larger ones overflow.
MAX_PSEUDO_COUNT: float = _core.MAX_SHAPE


def check_pseudo_counts(name: str, values: Any) -> None:
    """Refuse positive pseudo-counts below :data:`MIN_PSEUDO_COUNT` or above
    :data:`MAX_PSEUDO_COUNT` with a clear error."""
    if type(values) is float:
        # A plain number — the services' hot path — without building an array.
        if 0 < values < MIN_PSEUDO_COUNT or values > MAX_PSEUDO_COUNT:
            raise ValueError(
                f"{name} pseudo-counts must be 0 or between {MIN_PSEUDO_COUNT:g} and "
                f"{MAX_PSEUDO_COUNT:g}, got {values!r}"
            )
        return
    array = np.asarray(values, dtype=float)
    bad = ((array > 0) & (array < MIN_PSEUDO_COUNT)) | (array > MAX_PSEUDO_COUNT)
    if np.any(bad):
        raise ValueError(
            f"{name} pseudo-counts must be 0 or between {MIN_PSEUDO_COUNT:g} and "
            f"{MAX_PSEUDO_COUNT:g}, got {float(array[bad].flat[0])!r}"
        )


@dataclass(frozen=True, eq=False)
class Prior(ValueEquality):
    """Pseudo-counts added to a confusion matrix.

    Parameters
    ----------
    base : float, str or ndarray
        The prior proper: pseudo-counts per cell, a number >= 0, a name (``"uniform"``,
        ``"jeffreys"``, ``"haldane"``) or a K x K array.
    data : ndarray, optional
        Counts of earlier data absorbed by sequential updating (K x K), added like counts.
    label : str
        A short description used in reprs and summaries (a name gives its own).

    Raises
    ------
    TypeError, ValueError
        For anything else, naming ``prior`` (or ``prior.data``) and the value.
    """

    base: float | np.ndarray
    data: np.ndarray | None = field(default=None)
    label: str = "custom"

    def __post_init__(self) -> None:
        # Validated like the prior= argument it stands for: a Prior built by hand must not
        # fail later, somewhere that does not name it. (Frozen: fields are set through object.)
        base: Any = self.base  # user input, whatever the annotation says
        label: Any = self.label
        if isinstance(base, str):
            key = base.strip().lower()
            if key not in NAMED_PRIORS:
                names = ", ".join(repr(n) for n in NAMED_PRIORS)
                raise ValueError(f"unknown prior {base!r}; named priors are {names}")
            object.__setattr__(self, "base", NAMED_PRIORS[key])
            if label == "custom":
                object.__setattr__(self, "label", key)
        elif isinstance(base, (bool, np.bool_)):
            raise TypeError(
                f"prior must be a number >= 0, a name or a K x K array, got {describe(base)}"
            )
        elif isinstance(base, numbers.Real):
            value = float(base)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"prior must be a finite number >= 0, got {base!r}")
            check_pseudo_counts("prior", value)
            object.__setattr__(self, "base", value)
        elif isinstance(base, np.ndarray):
            matrix = as_count_matrix("prior", base, whole=False)
            check_pseudo_counts("prior", matrix)
            matrix.setflags(write=False)
            object.__setattr__(self, "base", matrix)
        else:
            raise TypeError(
                f"prior must be a number >= 0, a name or a K x K array, got {describe(base)}"
            )
        if self.data is not None:
            data = as_count_matrix("prior.data", self.data, whole=False)
            if isinstance(self.base, np.ndarray) and data.shape != self.base.shape:
                raise ValueError(
                    f"prior.data has shape {data.shape} but the prior is {self.base.shape}"
                )
            data.setflags(write=False)
            object.__setattr__(self, "data", data)
        if not isinstance(label, str):
            raise TypeError(f"prior label must be a string, got {describe(label)}")

    @property
    def n_classes(self) -> int | None:
        """K if the prior is tied to a K x K matrix shape, else None."""
        if isinstance(self.base, np.ndarray):
            return int(self.base.shape[0])
        if self.data is not None:
            return int(self.data.shape[0])
        return None

    def _check_shape(self, k: int) -> None:
        own = self.n_classes
        if own is not None and own != k:
            raise ValueError(f"prior is for {own} classes but the confusion matrix has {k}")

    def pseudo_counts(self, n_classes: int) -> np.ndarray:
        """The prior proper as a K x K array: the per-cell array, or for a number c, c on the
        diagonal and c / (K - 1) on every other cell (c per cell when K = 2)."""
        n_classes = check_positive_int("n_classes", n_classes)
        if n_classes < 2:
            raise ValueError(f"n_classes must be 2 or more, got {n_classes}")
        self._check_shape(n_classes)
        if isinstance(self.base, np.ndarray):
            return self.base
        check_memory(
            n_classes * n_classes,
            request=f"a prior for n_classes={n_classes:,}",
            alternative="use fewer classes",
        )
        return row_prior(float(self.base), n_classes)

    def dirichlet(self, counts: np.ndarray) -> np.ndarray:
        """Dirichlet parameters for the cells of ``counts`` (same shape)."""
        alpha = counts + self.pseudo_counts(counts.shape[0])
        if self.data is not None:
            alpha = alpha + self.data
        return np.asarray(alpha, dtype=np.float64)

    def pooled(self, counts: np.ndarray) -> np.ndarray:
        """The data behind the posterior: ``counts`` plus those absorbed by sequential
        updating."""
        self._check_shape(counts.shape[0])
        return counts if self.data is None else counts + self.data

    def beta(
        self,
        counts: np.ndarray,
        success: np.ndarray,
        failure: np.ndarray,
        *,
        joint: bool,
    ) -> tuple[float, float]:
        """Beta parameters of a proportion metric whose successes and failures are the cells
        selected by the boolean masks ``success`` and ``failure``: the Beta marginal of the
        Dirichlet, which sums the cells' counts and pseudo-counts — except for binary data, a
        number as prior and ``joint=False``: ``Beta(successes + c, failures + c)``.
        """
        k = counts.shape[0]
        total = self.pooled(counts)
        a, b = float(total[success].sum()), float(total[failure].sum())
        if k == 2 and not joint and not isinstance(self.base, np.ndarray):
            c = float(self.base)
            return a + c, b + c
        pseudo = self.pseudo_counts(k)
        return a + float(pseudo[success].sum()), b + float(pseudo[failure].sum())

    def updated(self, counts: np.ndarray) -> Prior:
        """This prior after observing ``counts``: the prior for the next batch of data."""
        counts = as_count_matrix("counts", counts, whole=False)
        self._check_shape(counts.shape[0])
        data = counts.copy() if self.data is None else self.data + counts
        return Prior(self.base, data, label=f"{self.label} + data")

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly: label, per-cell pseudo-counts and absorbed counts (or None)."""
        base = self.base.tolist() if isinstance(self.base, np.ndarray) else float(self.base)
        data = None if self.data is None else self.data.tolist()
        return {"label": self.label, "base": base, "absorbed": data}

    def __repr__(self) -> str:
        if isinstance(self.base, np.ndarray):
            base = f"array of shape {self.base.shape}"
        else:
            base = f"{self.base:g}"
        absorbed = (
            "" if self.data is None else f", absorbed={float(self.data.sum()):g} observations"
        )
        return f"Prior({self.label}: {base} per cell{absorbed})"


def row_prior(c: float, n_classes: int) -> np.ndarray:
    """Pseudo-counts for a number ``c``: c on each diagonal cell and c spread evenly over the
    K - 1 other cells of each row, so every class's recall and precision get Beta(c, c)."""
    pseudo = np.full((n_classes, n_classes), c / (n_classes - 1))
    np.fill_diagonal(pseudo, c)
    return pseudo


def default_prior(n_classes: int) -> Prior:
    """The prior of ``prior=None``: ``"uniform"`` (1) for binary data, as the specification of
    binary metrics fixes, and ``"jeffreys"`` (0.5) for K >= 3 classes — by measured coverage
    the better choice there: with 1, every class's recall and precision keep a Beta(1, 1)
    prior, but accuracy, kappa, MCC and macro averages collect K of them and, at K = 50 and
    20-200 rows per class, their 95% HDIs cover the truth only 70-77% of the time (0.5:
    91-95%; ``scripts/multiclass_prior_study.py``, README)."""
    if n_classes == 2:
        return Prior(1.0, label="uniform")
    return Prior(0.5, label="jeffreys")


def resolve_prior(prior: Any, n_classes: int) -> Prior:
    """Normalise every accepted form of ``prior`` into a :class:`Prior` for K = n_classes
    (``None``: :func:`default_prior`)."""
    if prior is None:
        return default_prior(n_classes)
    if isinstance(prior, Prior):
        prior._check_shape(n_classes)
        return prior
    as_prior = getattr(prior, "as_prior", None)
    if callable(as_prior):
        result = as_prior()
        if not isinstance(result, Prior):
            raise TypeError(f"prior.as_prior() must return a Prior, got {describe(result)}")
        result._check_shape(n_classes)
        return result
    if isinstance(prior, str):
        key = prior.strip().lower()
        if key not in NAMED_PRIORS:
            names = ", ".join(repr(n) for n in NAMED_PRIORS)
            raise ValueError(f"unknown prior {prior!r}; named priors are {names}")
        return Prior(NAMED_PRIORS[key], label=key)
    if isinstance(prior, (bool, np.bool_)):
        raise TypeError(f"prior must be a number, a name, an array or a posterior, got {prior!r}")
    if isinstance(prior, numbers.Real):
        value = float(prior)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
        check_pseudo_counts("prior", value)
        return Prior(value, label="uniform" if value == 1.0 else f"{value:g} per cell")
    if isinstance(prior, Mapping):
        if n_classes != 2:
            raise ValueError("a prior given as a mapping of cells needs binary data")
        keys = {str(k).lower() for k in prior}
        if keys != set(BINARY_CELL_INDEX):
            raise ValueError(f"prior mapping must have the keys tp, fp, tn, fn; got {sorted(keys)}")
        matrix = np.zeros((2, 2))
        for key, value in prior.items():
            matrix[BINARY_CELL_INDEX[str(key).lower()]] = value
        prior = matrix
    matrix = as_count_matrix("prior", prior, whole=False)
    check_pseudo_counts("prior", matrix)
    if matrix.shape[0] != n_classes:
        raise ValueError(
            f"prior has shape {matrix.shape} but the confusion matrix has {n_classes} classes"
        )
    return Prior(matrix, label="per-cell")
