"""Unreliable labels: metric posteriors that account for audited mislabelling (SPEC §2.6).

Labels are not always right. A reviewer re-checks random samples of the observed true
positives and false positives (optionally also true and false negatives) and counts how many
were mislabelled. :class:`LabelAudit` holds those counts and the priors on the mislabelling
rates; pass it as ``audit=`` to :meth:`ConfusionMatrix.posterior` or :func:`evaluate`.

Each posterior draw samples the rates m ~ Beta(mislabelled + a, reviewed - mislabelled + b),
moves the mislabelled mass to the cell it really belongs to —
TP* = TP (1 - m_TP) + FP m_FP, FP* = FP (1 - m_FP) + TP m_TP, and TN*/FN* likewise when those
cells were audited (a mislabelled TP is a negative the model called positive: really an FP) —
and then draws the metric given the corrected counts: precision from Beta(TP* + 1, FP* + 1),
every other metric through the Dirichlet over the corrected cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from probeval._util.validation import as_count, check_real, describe
from probeval.base.posterior import Posterior

__all__ = ["CELLS", "LabelAudit"]

CELLS = ("tp", "fp", "tn", "fn")


def _prior(name: str, value: Any) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"{name} must be a pair (a, b) of positive numbers, got {describe(value)}")
    a, b = (check_real(f"{name}[{i}]", v) for i, v in enumerate(value))
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        raise ValueError(f"{name} must be a pair of positive finite numbers, got ({a}, {b})")
    return (a, b)


@dataclass(frozen=True)
class LabelAudit:
    """Counts from re-checking samples of the confusion matrix's cells, and priors on the
    cells' mislabelling rates.

    Parameters
    ----------
    reviewed_tp, mislabelled_tp : int
        How many observed true positives were re-checked, and how many of them turned out to be
        mislabelled (really negatives).
    reviewed_fp, mislabelled_fp : int
        The same for false positives (mislabelled: really positives).
    reviewed_tn, mislabelled_tn, reviewed_fn, mislabelled_fn : int
        The same for true and false negatives; a cell with ``reviewed = 0`` is not corrected.
    prior_tp, prior_fp, prior_tn, prior_fn : (a, b)
        Beta(a, b) prior of each cell's mislabelling rate, e.g. ``prior_fp=(1, 20)`` for "FPs
        are rarely mislabelled". Default (1, 1), uniform.

    Examples
    --------
    >>> import probeval as pe
    >>> cm = pe.ConfusionMatrix.from_counts(tp=5285, fp=3184, tn=8000, fn=1000)
    >>> audit = pe.LabelAudit(reviewed_tp=100, mislabelled_tp=7, reviewed_fp=100, mislabelled_fp=31)
    >>> post = cm.posterior("precision", audit=audit, rng=0)
    """

    reviewed_tp: float
    mislabelled_tp: float
    reviewed_fp: float
    mislabelled_fp: float
    reviewed_tn: float = 0
    mislabelled_tn: float = 0
    reviewed_fn: float = 0
    mislabelled_fn: float = 0
    prior_tp: tuple[float, float] = field(default=(1.0, 1.0))
    prior_fp: tuple[float, float] = field(default=(1.0, 1.0))
    prior_tn: tuple[float, float] = field(default=(1.0, 1.0))
    prior_fn: tuple[float, float] = field(default=(1.0, 1.0))

    def __post_init__(self) -> None:
        for cell in CELLS:
            reviewed = as_count(f"reviewed_{cell}", getattr(self, f"reviewed_{cell}"))
            wrong = as_count(f"mislabelled_{cell}", getattr(self, f"mislabelled_{cell}"))
            if wrong > reviewed:
                raise ValueError(
                    f"mislabelled_{cell} ({wrong:g}) exceeds reviewed_{cell} ({reviewed:g}): "
                    "only reviewed items can be found mislabelled"
                )
            object.__setattr__(self, f"reviewed_{cell}", reviewed)
            object.__setattr__(self, f"mislabelled_{cell}", wrong)
            object.__setattr__(
                self, f"prior_{cell}", _prior(f"prior_{cell}", getattr(self, f"prior_{cell}"))
            )

    def audited(self, cell: str) -> bool:
        """Whether ``cell`` ("tp", "fp", "tn", "fn") is corrected: TP and FP always (with no
        reviews their prior alone speaks), TN and FN when they were reviewed."""
        key = _cell(cell)
        return key in ("tp", "fp") or getattr(self, f"reviewed_{key}") > 0

    def rate_posterior(self, cell: str) -> Posterior:
        """The exact Beta posterior of a cell's mislabelling rate."""
        key = _cell(cell)
        reviewed = getattr(self, f"reviewed_{key}")
        wrong = getattr(self, f"mislabelled_{key}")
        a, b = getattr(self, f"prior_{key}")
        observed = wrong / reviewed if reviewed > 0 else math.nan
        return Posterior.from_beta(
            wrong + a, reviewed - wrong + b, metric=f"mislabelled_rate_{key}", observed=observed
        )

    def core_args(self) -> tuple[Any, ...]:
        """(audited, reviewed, mislabelled, priors) per cell in (TP, FP, TN, FN) order."""
        return (
            tuple(self.audited(c) for c in CELLS),
            tuple(getattr(self, f"reviewed_{c}") for c in CELLS),
            tuple(getattr(self, f"mislabelled_{c}") for c in CELLS),
            tuple(getattr(self, f"prior_{c}") for c in CELLS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for c in CELLS:
            out[f"reviewed_{c}"] = getattr(self, f"reviewed_{c}")
            out[f"mislabelled_{c}"] = getattr(self, f"mislabelled_{c}")
            out[f"prior_{c}"] = list(getattr(self, f"prior_{c}"))
        return out


def _cell(cell: Any) -> str:
    if not isinstance(cell, str) or cell.lower() not in CELLS:
        raise ValueError(f"cell must be one of {', '.join(CELLS)}, got {cell!r}")
    return cell.lower()


def check_audit(audit: Any) -> LabelAudit | None:
    if audit is None or isinstance(audit, LabelAudit):
        return audit
    raise TypeError(f"audit must be a LabelAudit or None, got {describe(audit)}")
