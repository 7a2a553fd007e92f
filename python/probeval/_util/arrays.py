"""Posterior draws as labelled arrays: xarray Datasets and ArviZ InferenceData.

Both packages are optional (``pip install "probeval[arviz]"``) and imported only when a result's
``to_xarray()`` or ``to_arviz()`` is called. The draws become the ``posterior`` group with
ArviZ's dimensions ``chain`` (one: the draws are independent, not a Markov chain) and
``draw``, followed by the result's own dimensions (metric, chunk, model, fold, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["LabelledDraws", "to_arviz", "to_dataset"]

#: A variable: its extra dimensions (after chain and draw) and its (draws, *extra) array.
Variable = tuple[Sequence[str], np.ndarray]


def _xarray() -> Any:
    try:
        import xarray
    except ImportError:
        raise ImportError(
            'to_xarray() and to_arviz() need xarray (and arviz): pip install "probeval[arviz]"'
        ) from None
    return xarray


def to_dataset(
    variables: Mapping[str, Variable],
    coords: Mapping[str, Sequence[Any]] | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> Any:
    """An xarray Dataset of posterior draws: every variable gets the dimensions
    (chain, draw, *its own)."""
    xarray = _xarray()
    data = {}
    for name, (dims, values) in variables.items():
        array = np.asarray(values, dtype=np.float64)
        data[name] = (("chain", "draw", *dims), array[None, ...])
    n_draws = next(iter(data.values()))[1].shape[1]
    all_coords: dict[str, Any] = {"chain": [0], "draw": np.arange(n_draws)}
    all_coords.update({k: list(v) for k, v in (coords or {}).items()})
    return xarray.Dataset(data, coords=all_coords, attrs=dict(attrs or {}))


def to_arviz(dataset: Any, observed: Mapping[str, Any] | None = None) -> Any:
    """ArviZ InferenceData with the dataset as its ``posterior`` group (and the observed
    values, when given, as ``observed_data``: numbers, or (dims, values) over dimensions of the
    posterior)."""
    try:
        import arviz
    except ImportError:
        raise ImportError('to_arviz() needs arviz: pip install "probeval[arviz]"') from None
    groups: dict[str, Any] = {"posterior": dataset}
    if observed:
        xarray = _xarray()
        data: dict[str, Any] = {}
        for name, value in observed.items():
            # (dims, values) for arrays over a dimension of the posterior; a number otherwise.
            dims, values = value if isinstance(value, tuple) else ((), value)
            data[name] = (tuple(dims), np.asarray(values, dtype=np.float64))
        used = {d for dims, _ in data.values() for d in dims}
        coords = {d: dataset.coords[d].values for d in used}
        groups["observed_data"] = xarray.Dataset(data, coords=coords)
    return arviz.InferenceData(**groups)


class LabelledDraws:
    """Mixin: ``to_xarray()`` and ``to_arviz()`` from the subclass's ``_draws()``, which gives
    (variables, coordinates, observed values)."""

    __slots__ = ()

    def _draws(
        self,
    ) -> tuple[dict[str, Variable], dict[str, Sequence[Any]], dict[str, Any]]:
        raise NotImplementedError

    def to_xarray(self) -> Any:
        """The posterior draws as an xarray Dataset with dimensions (chain, draw, ...); needs
        xarray (``pip install "probeval[arviz]"``)."""
        variables, coords, _ = self._draws()
        return to_dataset(variables, coords, {"probeval_result": type(self).__name__})

    def to_arviz(self) -> Any:
        """The posterior draws as ArviZ InferenceData (``posterior`` group; the observed values
        as ``observed_data``), for ``arviz.summary``, ``plot_posterior`` and the like; needs
        arviz (``pip install "probeval[arviz]"``)."""
        _, _, observed = self._draws()
        return to_arviz(self.to_xarray(), observed)
