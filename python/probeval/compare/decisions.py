"""Decisions: accept, reject or stay undecided about a region of practical equivalence.

:func:`decide` applies the HDI + ROPE rule to a metric's posterior or to a comparison's
difference: "accepted" when the HDI lies inside the ROPE, "rejected" when it lies wholly
outside it, "undecided" otherwise, and ``final`` once the HDI is as narrow as required.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from probeval._util.html import HtmlRepr, badge, format_cell, key_values
from probeval._util.validation import Interval, check_ci, check_positive, check_rope, describe
from probeval.base.metrics import metric_info
from probeval.base.posterior import Posterior

__all__ = ["Contrast", "Decision", "decide", "no_worse_rope"]


@runtime_checkable
class Contrast(Protocol):
    """A difference between two posteriors with its ROPE (a :class:`~probeval.Comparison`)."""

    @property
    def difference(self) -> Posterior: ...

    @property
    def rope(self) -> Interval: ...


@dataclass(frozen=True)
class Decision(HtmlRepr):
    """An HDI + ROPE decision.

    ``status`` is "accepted" (the HDI lies inside the ROPE), "rejected" (wholly outside it) or
    "undecided"; ``final`` says whether the HDI is already as narrow as the required
    ``precision`` (always, when no precision is required) — a decision made on a wider HDI may
    still flip as data arrive.
    """

    status: str
    hdi: Interval
    width: float
    final: bool
    rope: Interval
    ci: float
    precision: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "hdi_low": self.hdi[0],
            "hdi_high": self.hdi[1],
            "width": self.width,
            "final": self.final,
            "rope_low": self.rope[0],
            "rope_high": self.rope[1],
            "ci": self.ci,
            "precision": self.precision,
        }

    def _html(self) -> str:
        shown = {
            f"{self.ci:.0%} HDI": f"[{format_cell(self.hdi[0])}, {format_cell(self.hdi[1])}]",
            "width": self.width,
            "ROPE": f"[{self.rope[0]:g}, {self.rope[1]:g}]",
            "required width": "none" if self.precision is None else self.precision,
            "final": self.final,
        }
        return f"<h4>decision: {badge(self.status)}</h4>{key_values(shown)}"

    def __repr__(self) -> str:
        need = "" if self.precision is None else f", precision {self.precision:g}"
        state = "final" if self.final else "not final: HDI wider than required"
        return (
            f"Decision({self.status}, {100 * self.ci:g}% HDI=[{self.hdi[0]:.4f}, "
            f"{self.hdi[1]:.4f}] (width {self.width:.4f}{need}; {state}), "
            f"rope=[{self.rope[0]:g}, {self.rope[1]:g}])"
        )


def no_worse_rope(reference: Posterior, ci: float = 0.95) -> Interval:
    """The ROPE of "no worse than the reference": from the reference HDI's worse edge to the
    best value the metric can take.

    Parameters
    ----------
    reference : Posterior
        The reference's posterior of the metric.
    ci : float
        Probability of the reference HDI.

    Returns
    -------
    (float, float)
        ``(hdi_low, maximum)`` for a higher-is-better metric, ``(minimum, hdi_high)`` for a
        lower-is-better one (fpr, fnr, fdr, false omission rate, negative likelihood ratio).

    Raises
    ------
    ValueError
        For a metric with no better direction (prevalence, selection rate): give a ROPE.
    """
    if not isinstance(reference, Posterior):
        raise TypeError(f"reference must be a Posterior, got {describe(reference)}")
    ci = check_ci(ci)
    try:
        better = metric_info(reference.metric).better
    except (TypeError, ValueError):  # a posterior of a quantity outside the catalogue
        better = "higher"
    low, high = reference.hdi(ci)
    lower, upper = reference.bounds
    if better == "higher":
        return (low, upper)
    if better == "lower":
        return (lower, high)
    raise ValueError(
        f"{reference.metric} has no better direction, so 'no worse than the reference' means "
        "nothing: give a rope=(lo, hi)"
    )


def decide(
    posterior: Posterior | Contrast,
    rope: Any = None,
    *,
    ci: float = 0.95,
    precision: float | None = None,
    reference: Posterior | None = None,
) -> Decision:
    """Decide about a region of practical equivalence with the HDI + ROPE rule.

    Parameters
    ----------
    posterior : Posterior or Comparison
        A metric's posterior, or a comparison (then the difference and, by default, its ROPE).
    rope : float or (lo, hi), optional
        The region. Without it: the comparison's ROPE, or — with ``reference`` — "no worse than
        the reference" (:func:`no_worse_rope`): from the lower HDI edge of ``reference`` to the
        metric's maximum (from the minimum to the upper edge for a lower-is-better metric).
    ci : float
        Probability of the HDI.
    precision : float, optional
        Required HDI width for a final decision.
    reference : Posterior, optional
        The reference for the default "no worse than reference" ROPE.

    Returns
    -------
    Decision
        "accepted" if the HDI lies within the ROPE, "rejected" if it lies wholly outside,
        "undecided" otherwise; ``final`` once the HDI width is at most ``precision``.
    """
    ci = check_ci(ci)
    target: Posterior
    default: Interval | None
    if isinstance(posterior, Posterior):
        target, default = posterior, None
    elif isinstance(posterior, Contrast) and isinstance(posterior.difference, Posterior):
        target, default = posterior.difference, posterior.rope
    else:
        raise TypeError(f"decide needs a Posterior or a Comparison, got {describe(posterior)}")
    if rope is not None:
        interval = check_rope(rope)
    elif reference is not None:
        if not isinstance(reference, Posterior):
            raise TypeError(f"reference must be a Posterior, got {describe(reference)}")
        interval = no_worse_rope(reference, ci)
    elif default is not None:
        interval = default
    else:
        raise TypeError("decide needs a rope=(lo, hi) or a reference posterior")
    if precision is not None:
        precision = check_positive("precision", precision)
    low, high = target.hdi(ci)
    if interval[0] <= low and high <= interval[1]:
        status = "accepted"
    elif high < interval[0] or low > interval[1]:
        status = "rejected"
    else:
        status = "undecided"
    width = high - low
    final = precision is None or width <= precision
    return Decision(status, (low, high), width, final, interval, ci, precision)
