"""Layer 2: what every capability returns and is built from.

:class:`~probeval.Posterior` and its intervals (HDI, ETI, exact Beta regions), the density
estimate behind them, the :class:`~probeval.Prior`, and the registry of metric names.
"""
