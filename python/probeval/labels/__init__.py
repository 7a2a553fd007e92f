"""Layer 3: performance with labels.

Confusion matrices and their posteriors, score-based metrics (ROC AUC, average precision),
label audits (noisy labels), segments, ``evaluate`` and the count-only fast path
(``metric_interval``).
"""
