"""Layer 6: evaluation as an experiment, and planning one.

:class:`Experiment` accumulates evidence batch by batch (labelled rows, unlabelled scores through
a fitted :class:`~probeval.LabelFreeEstimator`, or both) and decides, per metric, whether the
hypothesis holds once the posterior is precise enough. :mod:`.planning` answers the questions
asked before the data arrive: how precise can the answer be (:func:`assurance_precision`), how
many labelled rows are needed (:func:`plan_sample_size`).
"""
