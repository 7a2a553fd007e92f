"""Layer 1: plumbing with no statistics in it.

Input validation (one place for every check and its message), the random streams that keep
results reproducible whatever the thread count, class-label resolution and encoding, and the
small table and data-frame helpers.
"""
