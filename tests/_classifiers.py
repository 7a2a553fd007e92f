"""Test doubles shared by the test modules."""

from __future__ import annotations

from typing import Any

import numpy as np


class RateClassifier:
    """The smallest scikit-learn-style classifier: predicts the training rate of the larger
    class label. Enough for ``sklearn.base.clone`` and :func:`probeval.bootstrap_ensemble`."""

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {}

    def set_params(self, **params: Any) -> RateClassifier:
        return self

    def fit(self, x: Any, y: Any) -> RateClassifier:
        self.classes_ = np.unique(y)
        self.rate_ = float(np.mean(y == self.classes_[-1]))
        return self

    def predict_proba(self, x: Any) -> np.ndarray:
        n = len(x)
        return np.column_stack([np.full(n, 1 - self.rate_), np.full(n, self.rate_)])
