"""Layer 4: comparisons and decisions.

Is model B better than A (independent or paired), is a model better than random, and the
HDI + ROPE decision rule used everywhere a yes/no answer is wanted.
"""
