"""Layer 5: performance without labels.

The calibration model learned on a labelled reference, the estimator that applies it to
unlabelled production data chunk by chunk, and the chunking rules.
"""
