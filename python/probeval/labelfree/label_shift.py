"""A label shift: production's prevalence moved, each class's scores stayed the reference's.

Under covariate shift (the estimator's default assumption) P(y | score) carries over from the
reference, up to the drift the reference's periods show; under a label shift it is P(score | y)
that carries over. Bayes then moves every score's odds of being positive by the same factor,
the prevalence's odds ratio e^a, so that a chunk's calibration is the reference's shifted by a
(logit) in every bin: the drift model's common shift, no longer unknown but shown by the
chunk's scores. With r_b the reference's positive rate in bin b and s_b its share of the
reference's rows, bin b holds a share proportional to s_b (1 - r_b + r_b e^a) of a chunk whose
prevalence odds moved by e^a; the chunk's bin counts are multinomial on those shares, which is
the likelihood of a: maximum-likelihood label shift estimation (MLLS) on the bins. Saerens,
Latinne and Decaestecker (2002) maximise the same likelihood by EM on the rows' scores, which
must then be calibrated; here each bin's rate is the reference's measured one, which is the
calibration Alexandari, Kundaje and Shrikumar (2020) find MLLS needs, and black-box shift
estimation (Lipton, Wang and Smola 2018) is MLLS on a coarser calibration, the confusion
matrix's (Garg, Wu, Balakrishnan and Lipton 2020).

numpy only; the estimator (``LabelFreeEstimator(shift="label")``) puts the result into the
drift model's per-chunk priors of the shift.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "adjusted_counts",
    "convolved_priors",
    "drift_evidence",
    "label_shift_log_likelihood",
    "located_shift",
]

#: The grid on which a chunk's shift is first located (log prevalence odds ratio): ±6 takes a
#: prevalence of 1% to 80% or back; 0.005 apart, finer than a 100,000-row chunk's posterior sd.
_LOCATE = np.linspace(-6.0, 6.0, 2401)
#: Chunks located at a time (their likelihoods on that grid: 5 MB).
_BLOCK = 256


def _shares(reference_counts: np.ndarray) -> np.ndarray:
    """The reference's bin shares, each bin with half a row more, so that a bin the reference
    left empty is unlikely rather than impossible."""
    padded = np.asarray(reference_counts, dtype=np.float64) + 0.5
    out: np.ndarray = padded / padded.sum()
    return out


def label_shift_log_likelihood(
    grid: np.ndarray,
    counts: np.ndarray,
    reference_counts: np.ndarray,
    rates: np.ndarray,
    dispersion: float = 1.0,
) -> np.ndarray:
    """Per chunk (rows of bin ``counts``) and point a of ``grid``: ln P(the chunk's bin counts |
    its prevalence odds are e^a times the reference's), up to a constant per chunk (each row's
    maximum is 0).

    ``reference_counts`` are the reference's rows per bin, ``rates`` its positive rate per bin.
    The likelihood is tempered by 1 / (dispersion (1 + n / N)): the reference's own shares are
    an estimate from N rows (the variance of a share's log ratio is about 1/n + 1/N), and its
    periods' bin counts vary ``dispersion`` times as much as multinomial noise does, a
    chunk's as much (the same scaling as the shift diagnostic's Pearson statistic)."""
    counts = np.asarray(counts, dtype=np.float64)
    shares = _shares(reference_counts)
    r = np.clip(np.asarray(rates, dtype=np.float64), 0.0, 1.0)
    weights = 1.0 - r[None, :] + r[None, :] * np.exp(np.asarray(grid, dtype=np.float64))[:, None]
    moved = shares[None, :] * weights
    log_q = np.log(moved / moved.sum(axis=1, keepdims=True))
    rows = counts.sum(axis=1)
    reference_rows = float(np.asarray(reference_counts, dtype=np.float64).sum())
    temper = 1.0 / (max(dispersion, 1.0) * (1.0 + rows / max(reference_rows, 1.0)))
    out: np.ndarray = (counts @ log_q.T) * temper[:, None]
    out -= out.max(axis=1, keepdims=True)
    return out


def located_shift(
    counts: np.ndarray, reference_counts: np.ndarray, rates: np.ndarray, dispersion: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk: the posterior mean and sd of its shift a under a flat prior on ±6 logit
    (:func:`label_shift_log_likelihood`), a block of chunks at a time (the fine grid's
    likelihoods of 10,000 chunks at once would take 190 MB)."""
    counts = np.asarray(counts, dtype=np.float64)
    mean, sd = np.zeros(counts.shape[0]), np.zeros(counts.shape[0])
    for start in range(0, counts.shape[0], _BLOCK):
        block = slice(start, start + _BLOCK)
        log_l = label_shift_log_likelihood(
            _LOCATE, counts[block], reference_counts, rates, dispersion
        )
        weights = np.exp(log_l)
        weights /= weights.sum(axis=1, keepdims=True)
        mean[block] = weights @ _LOCATE
        sd[block] = np.sqrt(np.maximum(weights @ _LOCATE**2 - mean[block] ** 2, 0.0))
    return mean, sd


def adjusted_counts(
    counts: np.ndarray, reference_counts: np.ndarray, rates: np.ndarray, shift: np.ndarray
) -> np.ndarray:
    """Each chunk's bin counts with its label shift (``shift``, logit) taken back out: bin b's
    count divided by its weight 1 - r_b + r_b e^a and the row scaled back to the chunk's rows.
    A chunk whose scores moved by its label shift alone then looks like the reference, so that
    what the estimator reads from how far the scores moved (the unseen drift's share, the
    further spread per unit moved, the scores' level) is what the label shift leaves."""
    counts = np.asarray(counts, dtype=np.float64)
    r = np.clip(np.asarray(rates, dtype=np.float64), 0.0, 1.0)
    weights = 1.0 - r[None, :] + r[None, :] * np.exp(np.asarray(shift))[:, None]
    back = counts / weights
    total = back.sum(axis=1, keepdims=True)
    out: np.ndarray = np.where(
        total > 0, back * counts.sum(axis=1, keepdims=True) / np.maximum(total, 1e-300), 0.0
    )
    return out


def convolved_priors(log_likelihood: np.ndarray, log_priors: np.ndarray) -> np.ndarray:
    """Per chunk, the log-density on the shift grid of a = a_label + d: the label shift, whose
    likelihood is the chunk's row of ``log_likelihood``, plus an independent drift d whose
    prior is its row of ``log_priors`` (densities on a uniform grid, symmetric about 0, of odd
    length). Each row's maximum is 0; mass pushed past the grid's ends is dropped."""
    return _combined(log_likelihood, log_priors, flip=False)


def drift_evidence(log_likelihood: np.ndarray, labels_log_likelihood: np.ndarray) -> np.ndarray:
    """Per chunk, ln P(its labels | d) of the drift d beyond its label shift, with the label
    shift a_label integrated over what the chunk's bin counts show of it (``log_likelihood``)
    and the labels' likelihood of the whole shift a = a_label + d in
    ``labels_log_likelihood`` (both on the same grid as :func:`convolved_priors`'). Each
    row's maximum is 0."""
    return _combined(log_likelihood, labels_log_likelihood, flip=True)


def _combined(first: np.ndarray, second: np.ndarray, flip: bool) -> np.ndarray:
    """Row by row on a grid whose middle point is 0: the convolution of the densities
    exp(``first``) and exp(``second``) (flip False: the density of the sum of the two), or
    the correlation Σ_x f(x) s(x + d) as a function of d (flip True)."""
    out = np.empty(np.broadcast_shapes(first.shape, second.shape))
    for chunk in range(len(out)):
        f, g = first[chunk], second[chunk]
        f_mass, g_mass = np.exp(f - f.max()), np.exp(g - g.max())
        mass = np.convolve(g_mass, f_mass[::-1] if flip else f_mass, mode="same")
        with np.errstate(divide="ignore"):
            out[chunk] = np.log(mass / max(mass.max(), 1e-300))
    return out
