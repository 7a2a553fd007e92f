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

A multiclass model's label shift moves each class's log-odds by its own amount g_k (its
prevalence over the reference's, on a log scale; only their differences matter). Bin b of the
confidence bins holds rows of class k in the reference's proportions p_bk (its correct rate at
the predicted class, the shares of its mistakes elsewhere), so a chunk's bins hold shares
proportional to s_b Σ_k p_bk e^g_k, and each bin's classes become p_bk e^g_k over that sum: its
correct rate and its mistakes' shares move together (:func:`located_class_shift`, the same
maximum likelihood by EM over the bins, with the normal approximation of its posterior).

A chunk's label shift is read from its own bin counts and from the other chunks'
(:func:`pooled_label_shift_priors` for a binary model's, on a grid; :func:`pooled_class_shifts`
for a multiclass model's, from each chunk's normal approximation): production's chunks share a
prior of their label shifts, learned from all of them, so that a stream whose prevalence did
not move reads none, one that moved as a whole reads the move from every chunk, and chunks that
move each their own way keep their own readings.

numpy and the drift model's production prior (:func:`~probeval.labelfree.drift.production_priors`);
the estimator (``LabelFreeEstimator(shift="label")``) puts the result into the drift model's
per-chunk priors of the shift (binary scores) or into each chunk's class moves (multiclass
scores).
"""

from __future__ import annotations

import numpy as np

from probeval.labelfree.drift import (
    MOVED_MEAN_PRIOR_SD,
    MOVED_SD,
    MOVED_SHARE,
    production_priors,
)

__all__ = [
    "CLASS_SHIFT_PRIOR_SD",
    "LABEL_SHIFT_NOT_MOVED",
    "LABEL_SHIFT_OUTLIER",
    "adjusted_class_counts",
    "adjusted_counts",
    "class_shift_log_likelihood",
    "convolved_priors",
    "drift_evidence",
    "label_shift_log_likelihood",
    "located_class_shift",
    "located_shift",
    "pooled_class_shifts",
    "pooled_label_shift_priors",
    "shifted_class_shares",
]

#: The grid on which a chunk's shift is first located (log prevalence odds ratio): ±6 takes a
#: prevalence of 1% to 80% or back; 0.005 apart, finer than a 100,000-row chunk's posterior sd.
_LOCATE = np.linspace(-6.0, 6.0, 2401)
#: Chunks located at a time (their likelihoods on that grid: 5 MB).
_BLOCK = 256
#: Prior mass on "no chunk's prevalence moved" in the prior the chunks' label shifts share
#: (:func:`pooled_label_shift_priors`); the rest is a share ε of the chunks that moved, by
#: N(μ, s²), each learned from all chunks. Read from each chunk alone (a flat prior, until
#: 2026-12-07), the label shift cost a stable stream a quarter more error than the default
#: (20 streams: accuracy .0067 against .0054, precision .0119 against .0089): the noise of each
#: chunk's reading. Pooled, .0055 / .0088, and where the prevalence odds moved by x 1.3, x 1.1
#: or x 0.5 in every chunk the errors fell by 10-20% (docs/labelfree-record.md, *Label shift*).
#: 0.3 and 0.7 gave the same errors within .0002 on five simulations. A multiclass model's class
#: shifts share it (:func:`pooled_class_shifts`): read chunk by chunk they cost a stable stream
#: accuracy .0057 against the default's .0050 and the rare class's precision .0310 against
#: .0245 (20 streams, K = 3); read together .0050 and .0242.
LABEL_SHIFT_NOT_MOVED = 0.5
#: Probability that a chunk's label shift is unlike every other's (uniform on the grid): such a
#: chunk keeps its own reading. Without it, one chunk of ACS employment with odds x 1.5 dialled
#: in (2017, read at -9.0 logit alone, a population the rest of production is not) was pulled
#: to -3.7 and its recall error went from 0.06 to 0.32; with 0.05 or 0.1 it stays at -9.0, and
#: the simulated label shifts' errors are those without it within .0001 (20 streams each; the
#: simulated covariate shift, where the label shift model is the wrong one, .0476 -> .0537).
LABEL_SHIFT_OUTLIER = 0.05


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
    temper = _temper(counts.sum(axis=1), reference_counts, dispersion)
    out: np.ndarray = (counts @ log_q.T) * temper[:, None]
    out -= out.max(axis=1, keepdims=True)
    return out


def _temper(rows: np.ndarray, reference_counts: np.ndarray, dispersion: float) -> np.ndarray:
    """Per chunk of ``rows`` rows, the power 1 / (dispersion (1 + n / N)) to which its bin
    counts' likelihood is raised (:func:`label_shift_log_likelihood`)."""
    reference_rows = float(np.asarray(reference_counts, dtype=np.float64).sum())
    out: np.ndarray = 1.0 / (max(dispersion, 1.0) * (1.0 + rows / max(reference_rows, 1.0)))
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


def pooled_label_shift_priors(grid: np.ndarray, log_likelihood: np.ndarray) -> np.ndarray:
    """Per chunk, the prior log-density of its label shift a on ``grid`` that the other chunks'
    bin counts give (``log_likelihood``: each chunk's row of
    :func:`label_shift_log_likelihood`): production's chunks share

        a_c ~ (1 - r) [(1 - ε) δ_0 + ε N(μ, s²)] + r U(grid),

    with (ε, μ, s) learned from all chunks but c (prior :data:`LABEL_SHIFT_NOT_MOVED` on
    ε = 0, the rest and (μ, s) on the grids of production's movement:
    :func:`~probeval.labelfree.drift.production_priors`) and r = :data:`LABEL_SHIFT_OUTLIER`
    for a chunk unlike every other. A stream whose prevalence did not move then reads none in
    every chunk rather than each chunk's noise; a prevalence that moved alike in every chunk is
    read from all of them; chunks whose prevalences move each their own way learn a wide s and
    keep their own readings. The chunks are exchangeable (no order); ``log_likelihood`` with
    no rows gives none."""
    grid = np.asarray(grid, dtype=np.float64)
    log_likelihood = np.asarray(log_likelihood, dtype=np.float64)
    spike = np.full(grid.shape[0], -np.inf)
    spike[np.abs(grid).argmin()] = 0.0
    every = np.ones(log_likelihood.shape[0], dtype=bool)
    return production_priors(
        grid, spike, log_likelihood, every, LABEL_SHIFT_NOT_MOVED, outlier=LABEL_SHIFT_OUTLIER
    )


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


#: The prior sd (logit) of each class's label shift g_k, around the others': a prevalence 20
#: times or a twentieth of the reference's at 3 (the binary model's flat ±6 has an sd of 3.5).
#: It matters only where a chunk's bins cannot tell two classes apart (a model that confuses
#: them in every bin), which would otherwise let their moves grow without bound.
CLASS_SHIFT_PRIOR_SD = 3.0
#: Rows at the reference's prevalence added to each chunk's in the EM steps, so that a class
#: none of whose rows a chunk shows keeps a finite shift.
_PRIOR_ROWS = 0.5
#: EM finds the mode's neighbourhood fast and its last digits slowly along a flat direction
#: (K = 8, 57 bins: 1,000 steps and four Newton steps stopped 0.0007 of log-posterior short
#: of 20 steps and Newton's); Newton's steps then converge.
_EM_STEPS = 20
_EM_TOLERANCE = 1e-10
_NEWTON_STEPS = 50
_NEWTON_TOLERANCE = 1e-10


def shifted_class_shares(class_shares: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Each bin's classes after a label shift: p_bk e^g_k over its sum, per chunk (``shift``
    (chunks, K); ``class_shares`` (bins, K), each row the reference's classes in the bin)."""
    p = np.asarray(class_shares, dtype=np.float64)
    moved = p[None] * np.exp(np.asarray(shift, dtype=np.float64))[:, None, :]
    out: np.ndarray = moved / np.maximum(moved.sum(axis=2, keepdims=True), 1e-300)
    return out


def _class_weights(class_shares: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Per chunk and bin, Σ_k p_bk e^g_k: how many times its reference share the bin holds
    under the label shift g (before normalising over bins)."""
    out: np.ndarray = np.exp(np.asarray(shift, dtype=np.float64)) @ np.asarray(class_shares).T
    return out


def class_shift_log_likelihood(
    shift: np.ndarray,
    counts: np.ndarray,
    reference_counts: np.ndarray,
    class_shares: np.ndarray,
    dispersion: float = 1.0,
) -> np.ndarray:
    """ln P(a chunk's bin ``counts`` | its label shift g) for each g in ``shift`` (points, K):
    multinomial on the shares s_b Σ_k p_bk e^g_k, tempered as
    :func:`label_shift_log_likelihood` is. ``counts`` is one chunk's (bins,); not normalised."""
    counts = np.asarray(counts, dtype=np.float64)
    moved = _shares(reference_counts)[None, :] * _class_weights(class_shares, shift)
    log_q = np.log(moved / moved.sum(axis=1, keepdims=True))
    temper = _temper(np.array([counts.sum()]), reference_counts, dispersion)[0]
    out: np.ndarray = (log_q @ counts) * temper
    return out


def located_class_shift(
    counts: np.ndarray,
    reference_counts: np.ndarray,
    class_shares: np.ndarray,
    dispersion: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk (rows of bin ``counts``): the label shift g (chunks, K; centred, only its
    differences matter) at the mode of its posterior, and the covariance of the posterior's
    normal approximation there (chunks, K, K; singular along g + c, which moves nothing).

    The posterior: the tempered likelihood of the chunk's bin counts
    (:func:`class_shift_log_likelihood`), :data:`_PRIOR_ROWS` rows at the reference's
    prevalence, and a normal prior of sd :data:`CLASS_SHIFT_PRIOR_SD` on each class's shift
    around the others'. EM as Saerens, Latinne and Decaestecker (2002) run it on rows'
    scores, here on the bins (each bin's rows are class k with probability p_bk e^g_k over
    its sum; the chunk's new prevalence is the mean of these over its rows and the prior's),
    gets near the mode without the normal prior in :data:`_EM_STEPS` steps; Newton's steps,
    halved where they do not climb, then reach it with the prior. The covariance is the
    inverse of the observed information (the complete data's less the missing, Louis 1982),
    held positive (:func:`_inverse`)."""
    counts = np.asarray(counts, dtype=np.float64)
    p = np.asarray(class_shares, dtype=np.float64)
    k = p.shape[1]
    joint = _shares(reference_counts)[:, None] * p
    prevalence = joint.sum(axis=0)
    temper = _temper(counts.sum(axis=1), reference_counts, dispersion)
    centring = np.eye(k) - 1.0 / k
    mean, cov = np.zeros((counts.shape[0], k)), np.zeros((counts.shape[0], k, k))
    for start in range(0, counts.shape[0], _BLOCK):
        block = slice(start, start + _BLOCK)
        weighted = counts[block] * temper[block, None]
        odds = np.ones((weighted.shape[0], k))
        for _ in range(_EM_STEPS):
            new = _class_posterior(joint, odds, weighted, prevalence)[0]
            new /= prevalence
            done = np.max(np.abs(np.log(new / odds)), initial=0.0) < _EM_TOLERANCE
            odds = new
            if done:
                break
        g = np.log(odds)
        g -= g.mean(axis=1, keepdims=True)
        value = _class_objective(joint, g, weighted, prevalence)
        for _ in range(_NEWTON_STEPS):
            expected, info = _class_posterior(joint, np.exp(g), weighted, prevalence)[1:]
            gradient = expected - (g @ centring) / CLASS_SHIFT_PRIOR_SD**2
            info = info + centring / CLASS_SHIFT_PRIOR_SD**2
            step = np.einsum("cij,cj->ci", _inverse(info), gradient)
            step = step @ centring
            # Halved where it does not climb (the log-posterior need not be concave).
            for _ in range(30):
                moved = _class_objective(joint, g + step, weighted, prevalence)
                worse = moved < value
                if not worse.any():
                    break
                step[worse] /= 2.0
            g, value = g + step, np.maximum(moved, value)
            if np.max(np.abs(step), initial=0.0) < _NEWTON_TOLERANCE:
                break
        info = _class_posterior(joint, np.exp(g), weighted, prevalence)[2]
        info = info + centring / CLASS_SHIFT_PRIOR_SD**2
        mean[block] = g
        cov[block] = centring @ _inverse(info) @ centring
    return mean, cov


def _inverse(info: np.ndarray) -> np.ndarray:
    """The inverse of each chunk's information (chunks, K, K; with the prior's), its
    eigenvalues held at least at the prior's own 1 / :data:`CLASS_SHIFT_PRIOR_SD`²: away from
    the mode (a chunk of a few rows of one bin) the likelihood's part need not be positive,
    and its direction g + c (eigenvalue 0, which the caller projects out) gets the prior's
    variance. The steps then always climb and the covariance is positive semi-definite."""
    values, vectors = np.linalg.eigh(0.5 * (info + np.swapaxes(info, 1, 2)))
    held = 1.0 / np.maximum(values, 1.0 / CLASS_SHIFT_PRIOR_SD**2)
    out: np.ndarray = np.einsum("cik,ck,cjk->cij", vectors, held, vectors)
    return out


def _class_objective(
    joint: np.ndarray, shift: np.ndarray, weighted: np.ndarray, prevalence: np.ndarray
) -> np.ndarray:
    """Per chunk, the log-posterior of the shift g (chunks, K) that
    :func:`located_class_shift` maximises, up to a constant: the tempered bin counts
    ``weighted``'s multinomial log-likelihood, the prior rows', and the normal prior's."""
    odds = np.exp(shift)
    cells = joint @ odds.T
    log_q = np.log(np.maximum(cells / cells.sum(axis=0, keepdims=True), 1e-300)).T
    q = prevalence * odds
    q /= q.sum(axis=1, keepdims=True)
    centred = shift - shift.mean(axis=1, keepdims=True)
    out: np.ndarray = (
        (weighted * log_q).sum(axis=1)
        + _PRIOR_ROWS * (np.log(q) @ prevalence)
        - 0.5 * (centred**2).sum(axis=1) / CLASS_SHIFT_PRIOR_SD**2
    )
    return out


def _class_posterior(
    joint: np.ndarray, odds: np.ndarray, weighted: np.ndarray, prevalence: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For chunks of tempered bin counts ``weighted`` at prevalence odds ratios ``odds``
    (chunks, K) against the reference's (``joint``: its share of rows per bin and class,
    ``prevalence`` its classes'): the EM step's new prevalence (the expected rows of each
    class, with :data:`_PRIOR_ROWS` at the reference's, as shares), the gradient of the
    log-posterior in g = log odds (without the normal prior), and its observed information
    (chunks, K, K)."""
    k = joint.shape[1]
    mix = joint[None] * odds[:, None, :]
    resp = mix / np.maximum(mix.sum(axis=2, keepdims=True), 1e-300)
    rows = weighted.sum(axis=1) + _PRIOR_ROWS
    found = np.einsum("cb,cbk->ck", weighted, resp) + _PRIOR_ROWS * prevalence
    q = prevalence * odds
    q /= q.sum(axis=1, keepdims=True)

    def spread(shares: np.ndarray) -> np.ndarray:
        out: np.ndarray = shares[..., :, None] * np.eye(k) - (
            shares[..., :, None] * shares[..., None, :]
        )
        return out

    info = rows[:, None, None] * spread(q) - np.einsum("cb,cbij->cij", weighted, spread(resp))
    return found / rows[:, None], found - rows[:, None] * q, info


def adjusted_class_counts(
    counts: np.ndarray, class_shares: np.ndarray, shift: np.ndarray
) -> np.ndarray:
    """Each chunk's bin counts with its label shift g (``shift`` (chunks, K)) taken back out,
    as :func:`adjusted_counts` does for a binary one: bin b's count divided by Σ_k p_bk e^g_k,
    the row scaled back to the chunk's rows."""
    counts = np.asarray(counts, dtype=np.float64)
    back = counts / _class_weights(class_shares, shift)
    total = back.sum(axis=1, keepdims=True)
    out: np.ndarray = np.where(
        total > 0, back * counts.sum(axis=1, keepdims=True) / np.maximum(total, 1e-300), 0.0
    )
    return out


#: EM steps for the centre μ of the moved chunks' shifts (:func:`pooled_class_shifts`).
_CLASS_MOVED_MEAN_STEPS = 20


def _slab_and_total(
    centre: np.ndarray,
    base: np.ndarray,
    w_x: np.ndarray,
    w_full: np.ndarray,
    still: np.ndarray,
    outlier: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per ε and chunk (:func:`pooled_class_shifts`): ln of the moved component's weight at the
    moved chunks' ``centre`` μ (ε, d), base + μ'Wx - μ'Wμ/2, and ln of all three components'."""
    n_eps, d = centre.shape
    outer = (centre[:, :, None] * centre[:, None, :]).reshape(n_eps, d * d)
    slab: np.ndarray = base + centre @ w_x.T - 0.5 * outer @ w_full.T
    return slab, np.logaddexp(np.logaddexp(still, slab), outlier)


#: ln of the smallest share a mixture's component is given (about 1e-250); below it, none. A
#: matrix product of subnormal shares runs about a hundred times slower (20 x 2,000 by 2,000 x
#: 49: 8.5 ms against 0.08 ms), and they move nothing.
_LOG_NEGLIGIBLE = -575.0


def _share(log_part: np.ndarray, log_total: np.ndarray) -> np.ndarray:
    """exp(``log_part`` - ``log_total``), 0 where that is below e^:data:`_LOG_NEGLIGIBLE`."""
    log_share = log_part - log_total
    out: np.ndarray = np.where(
        log_share > _LOG_NEGLIGIBLE, np.exp(np.maximum(log_share, _LOG_NEGLIGIBLE)), 0.0
    )
    return out


#: ln of a normal prior's evidence, then the posterior's mean and a matrix: its covariance
#: (:func:`_normal_update`) or, for a mixture of priors, its second moment (:func:`_own_slab`).
_Normal = tuple[np.ndarray, np.ndarray, np.ndarray]


def _normal_update(
    h: np.ndarray, lik: np.ndarray, centre: np.ndarray, prior_cov: np.ndarray
) -> _Normal:
    """The likelihood exp(h'x - x'Lx/2) (``h`` (…, d), ``lik`` L (…, d, d)) under the prior
    N(``centre``, ``prior_cov``): ln of its integral, and the posterior's mean and covariance."""
    prior_precision = np.linalg.inv(prior_cov)
    post_cov = np.linalg.inv(lik + prior_precision)
    pulled = h + np.einsum("...ij,...j->...i", prior_precision, centre)
    post_mean = np.einsum("...ij,...j->...i", post_cov, pulled)
    log_evidence = (
        -0.5 * np.linalg.slogdet(prior_cov)[1]
        + 0.5 * np.linalg.slogdet(post_cov)[1]
        + 0.5 * (pulled * post_mean).sum(axis=-1)
        - 0.5 * (centre * np.einsum("...ij,...j->...i", prior_precision, centre)).sum(axis=-1)
    )
    return log_evidence, post_mean, post_cov


def _others_sums(
    log_weight: np.ndarray, first: np.ndarray, second: np.ndarray, rows: slice
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of ``log_weight`` (points, chunks) and each chunk c of ``rows`` (a block of
    them), the mixture of the *other* chunks' components (log weights ``log_weight``, means
    ``first`` (chunks, d), second moments ``second`` (chunks, d, d)): its log total weight, mean
    and second moment (points, the block's chunks[, d[, d]]; -inf and zeros where there is no
    other chunk).

    Summed over all chunks, scaled by the row's largest weight, each chunk's own term then
    taken out: what is left holds that largest term whole (at least 1), so the difference loses
    no digits, for every chunk but the largest's, whose others are summed afresh."""
    n_rows, n = log_weight.shape
    d = first.shape[1]
    picked = np.arange(n)[rows]
    if n < 2:
        return (
            np.full((n_rows, picked.size), -np.inf),
            np.zeros((n_rows, picked.size, d)),
            np.zeros((n_rows, picked.size, d, d)),
        )
    flat_second = second.reshape(n, d * d)
    top = log_weight.max(axis=1, keepdims=True)
    weight = np.exp(log_weight - top)
    own = weight[:, rows]
    mass = weight.sum(axis=1, keepdims=True) - own
    largest = log_weight.argmax(axis=1)
    mass[largest[:, None] == picked[None, :]] = 1.0  # summed afresh below
    log_mass = top + np.log(mass)
    mean = ((weight @ first)[:, None] - own[..., None] * first[rows]) / mass[..., None]
    moment = ((weight @ flat_second)[:, None] - own[..., None] * flat_second[rows]) / mass[
        ..., None
    ]
    for row, chunk in enumerate(largest):
        if chunk not in picked:
            continue
        at = chunk - picked[0]
        others = np.arange(n) != chunk
        scale = log_weight[row, others].max()
        w = np.exp(log_weight[row, others] - scale)
        log_mass[row, at] = scale + np.log(w.sum())
        mean[row, at] = (w @ first[others]) / w.sum()
        moment[row, at] = (w @ flat_second[others]) / w.sum()
    return log_mass, mean, moment.reshape(n_rows, picked.size, d, d)


def _own_slab(
    h: np.ndarray, lik: np.ndarray, slabs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
) -> _Normal:
    """The likelihood exp(h'x - x'Lx/2) (``h`` (chunks, d), ``lik`` (chunks, d, d)) under a
    mixture of normal priors, ``slabs`` of (log weight (…, chunks), centre (…, chunks, d),
    covariance (…, chunks, d, d)), the weights summing to 1: ln of its integral, and the
    posterior's mean and second moment. A prior is used only where its log weight is above
    :data:`_LOG_NEGLIGIBLE` (below it it moves nothing: :func:`_share`)."""
    shape = slabs[0][0].shape
    d = h.shape[-1]
    log_total = np.full(shape, -np.inf)
    parts = []
    for weight, centre, cov in slabs:
        used = weight > _LOG_NEGLIGIBLE
        evidence, mean, post_cov = _normal_update(
            np.broadcast_to(h, (*shape, d))[used],
            np.broadcast_to(lik, (*shape, d, d))[used],
            np.broadcast_to(centre, (*shape, d))[used],
            np.broadcast_to(cov, (*shape, d, d))[used],
        )
        log_total[used] = np.logaddexp(log_total[used], weight[used] + evidence)
        parts.append((used, weight[used] + evidence, mean, post_cov))
    first = np.zeros((*shape, d))
    second = np.zeros((*shape, d, d))
    for used, log_part, mean, post_cov in parts:
        share = _share(log_part, log_total[used])
        first[used] += share[:, None] * mean
        second[used] += share[:, None, None] * (post_cov + mean[:, :, None] * mean[:, None, :])
    return log_total, first, second


def pooled_class_shifts(mean: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk's multiclass label shift read with the other chunks' (the multiclass form of
    :func:`pooled_label_shift_priors`), from each chunk's own normal posterior (``mean``
    (chunks, K) and ``cov`` (chunks, K, K): :func:`located_class_shift`'s, under the normal
    prior of sd :data:`CLASS_SHIFT_PRIOR_SD`).

    Each chunk's bins show its shift g as a normal likelihood (its posterior with that prior
    taken back out, in the K - 1 centred dimensions that matter), and the chunks share

        g_c ~ (1 - r) [(1 - ε) δ_0 + ε N(μ, s² I)] + r N(0, CLASS_SHIFT_PRIOR_SD² I),

    r = :data:`LABEL_SHIFT_OUTLIER` for a chunk unlike every other (whose posterior is then its
    own), ε on :data:`~probeval.labelfree.drift.MOVED_SHARE` with :data:`LABEL_SHIFT_NOT_MOVED`
    on ε = 0, s on the binary pooling's :data:`~probeval.labelfree.drift.MOVED_SD` (uniform on
    log s) and μ ~ N(0, :data:`~probeval.labelfree.drift.MOVED_MEAN_PRIOR_SD`² I). For each
    (ε, s), μ's mode given all chunks (EM: each chunk's evidence is quadratic in μ) and
    Laplace's method there weigh the point; chunk c's prior of μ is then what the other chunks
    say of it, N(μ_-c, H_-c^-1) (all chunks' less its own term at the mode), so that its slab
    is N(μ_-c, s² I + H_-c^-1), and the point's weight in its posterior is its prior, the
    other chunks' evidence and its own under that slab. Where few chunks moved, μ's posterior
    has a mode at each one's reading, which Laplace's method about one mode misses: the other
    chunks' evidence is a sum over which of them moved, whose terms with none and with one
    moved are computed exactly (Gaussian integrals), Laplace's method keeping its share of two
    or more (each chunk moved with its share at the mode, independently); the chunk's slab is
    then μ's as each part has it (its prior; the lone chunks' mixture, by its moments; the
    Laplace term's). Returns each chunk's posterior mean and covariance (chunks, K, K; the
    mixture's moments), centred as ``mean`` and ``cov`` are. A chunk with no information (no
    rows) gets its prior's moments."""
    mean = np.asarray(mean, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    n, k = mean.shape
    if n == 0 or k < 2:
        return mean.copy(), cov.copy()
    # An orthonormal basis of the centred shifts (K, K - 1): the eigenvectors of the
    # centring with eigenvalue 1.
    basis = np.linalg.eigh(np.eye(k) - 1.0 / k)[1][:, 1:]
    d = k - 1
    eye = np.eye(d)
    sd0, tau = CLASS_SHIFT_PRIOR_SD, MOVED_MEAN_PRIOR_SD
    precision = np.linalg.inv(np.einsum("ki,ckl,lj->cij", basis, cov, basis))
    # The likelihood exp(h'x - x'Lx/2): the posterior's precision less the prior's, held
    # positive semi-definite (L = U diag(lam) U').
    lam, u = np.linalg.eigh(precision - eye / sd0**2)
    lam = np.maximum(lam, 0.0)
    lik = np.einsum("cid,cd,cjd->cij", u, lam, u)
    h = np.einsum("cij,cj->ci", precision, mean @ basis)
    h_u = np.einsum("cji,cj->ci", u, h)

    eps = MOVED_SHARE[1:, None]
    n_eps = eps.shape[0]
    eps_prior = np.log((1.0 - LABEL_SHIFT_NOT_MOVED) / n_eps / len(MOVED_SD))
    far, far_mean, far_cov = _normal_update(h, lik, np.zeros((n, d)), sd0**2 * eye)
    outlier = np.log(LABEL_SHIFT_OUTLIER) + far
    with np.errstate(divide="ignore"):  # ε = 1: no chunk still
        still = np.log((1.0 - LABEL_SHIFT_OUTLIER) * (1.0 - eps))
    moved = np.log((1.0 - LABEL_SHIFT_OUTLIER) * eps)
    # Per point (ε = 0, then each s and ε > 0) and chunk: ln of the point's weight in the
    # chunk's posterior, and the chunk's moments there (the still component's are 0).
    moments = _MixtureMoments(n, d)
    nothing = np.logaddexp(np.log(1.0 - LABEL_SHIFT_OUTLIER), outlier)
    far_second = far_cov + far_mean[:, :, None] * far_mean[:, None, :]
    far_share = _share(outlier, nothing)
    moments.add(
        slice(None),
        np.log(LABEL_SHIFT_NOT_MOVED) + np.full((1, n), nothing.sum()),
        far_share[None, :, None] * far_mean[None],
        far_share[None, :, None, None] * far_second[None],
    )
    for s in MOVED_SD:
        # Each chunk's evidence of the moved chunks' centre μ is c + μ'Wx - μ'Wμ/2 with
        # W = L (I + s² L)^-1 (and Wx its h shrunk), so that μ solves Σ resp W (x - μ) = μ / τ².
        shrunk = 1.0 / (1.0 + s**2 * lam)
        w_full = np.einsum("cid,cd,cjd->cij", u, lam * shrunk, u).reshape(n, d * d)
        w_x = np.einsum("cid,cd->ci", u, h_u * shrunk)
        base = (
            moved
            - 0.5 * np.log1p(s**2 * lam).sum(axis=1)
            + 0.5 * s**2 * (h_u**2 * shrunk).sum(axis=1)
        )
        centre = np.zeros((n_eps, d))
        for _ in range(_CLASS_MOVED_MEAN_STEPS):
            slab, total = _slab_and_total(centre, base, w_x, w_full, still, outlier)
            resp = _share(slab, total)
            a = (resp @ w_full).reshape(n_eps, d, d) + eye / tau**2
            new = np.linalg.solve(a, (resp @ w_x)[..., None])[..., 0]
            done = np.max(np.abs(new - centre)) < 1e-9
            centre = new
            if done:
                break
        slab, total = _slab_and_total(centre, base, w_x, w_full, still, outlier)
        resp = _share(slab, total)
        w_chunk = w_full.reshape(n, d, d)
        information = (resp @ w_full).reshape(n_eps, d, d) + eye / tau**2
        pull = np.einsum("eij,ej->ei", information, centre)
        all_evidence = (
            total.sum(axis=1, keepdims=True) - 0.5 * (centre**2).sum(axis=1, keepdims=True) / tau**2
        )
        # Where few chunks moved, μ's posterior has a mode at each chunk's own reading, and
        # Laplace's method about one of them misses the rest (a still stream's sds came out
        # 0.64-0.97 of the exact ones). The other chunks' evidence is a sum over which of them
        # moved: its terms with none (μ as its prior) and with one (each alone in the slab)
        # are Gaussian integrals, computed exactly; Laplace's method stands for the rest.
        lone, lone_mean, lone_cov = _normal_update(w_x, w_chunk, np.zeros((n, d)), tau**2 * eye)
        lone_second = lone_cov + lone_mean[:, :, None] * lone_mean[:, None, :]
        floor = np.logaddexp(still, outlier)  # a chunk's weight off the slab (ε, chunks)
        lone_weight = base + lone - floor
        floor_total = floor.sum(axis=1, keepdims=True)
        # A block of chunks at a time, each chunk's ε x d x d arrays added to the moments as
        # they come: 2,000 chunks of K = 10 at once peaked at 581 MB, a block at a time at
        # 33 MB (tracemalloc), the moments the same to 1e-19.
        for start in range(0, n, _BLOCK):
            rows = slice(start, start + _BLOCK)
            r = resp[:, rows]
            # What the other chunks say of μ, about the mode: their information (all
            # chunks' at fixed shares, with μ's prior, less the chunk's own) and its pull;
            # ``others`` is the covariance of μ given the other chunks.
            others = np.linalg.inv(information[:, None] - r[..., None, None] * w_chunk[rows])
            others_mean = np.einsum(
                "ecij,ecj->eci", others, pull[:, None] - r[..., None] * w_x[rows]
            )
            # The other chunks' evidence of the point, μ integrated out by Laplace's method
            # about their own mode, one Newton step from the mode of all (their gradient
            # there is minus the chunk's own, resp (Wx - Wμ)).
            step = r[..., None] * (w_x[rows] - np.einsum("cij,ej->eci", w_chunk[rows], centre))
            others_evidence = (
                all_evidence
                - total[:, rows]
                + 0.5 * np.einsum("eci,ecij,ecj->ec", step, others, step)
                + 0.5 * np.linalg.slogdet(others / tau**2)[1]
            )
            # The terms with no other chunk moved (μ as its prior) and with one (the lone
            # chunks' mixture of μ, by its moments), exactly.
            near, centre_near, second_near = _others_sums(lone_weight, lone_mean, lone_second, rows)
            with_prior = np.logaddexp(0.0, near)
            exact_part = floor_total - floor[:, rows] + with_prior
            # Laplace's method at the mode counts each other chunk as moved with its share
            # there, independently; its terms with at most one of them moved are the exact
            # part's, and it keeps the rest: P(two or more) = 1 - prod(1 - r)(1 + sum r / (1 - r)).
            # A chunk's own share is left out by taking its factor out of the product and sum.
            moved_share = np.minimum(resp, 1.0 - 1e-12)
            log_still = np.log1p(-moved_share)
            odds = moved_share / (1.0 - moved_share)
            at_most_one = (
                log_still.sum(axis=1, keepdims=True)
                - log_still[:, rows]
                + np.log1p(odds.sum(axis=1, keepdims=True) - odds[:, rows])
            )
            with np.errstate(divide="ignore"):
                laplace = others_evidence + np.log(-np.expm1(np.minimum(at_most_one, 0.0)))
            others_evidence = np.logaddexp(laplace, exact_part)
            spread_near = second_near - centre_near[..., :, None] * centre_near[..., None, :]
            # The chunk's own evidence under its slab: μ as the Laplace term has it, as its
            # prior (no other chunk moved) or as the lone chunks' mixture; each computed only
            # where it weighs.
            own, own_mean, own_second = _own_slab(
                h[rows],
                lik[rows],
                [
                    (laplace - others_evidence, others_mean, s**2 * eye + others),
                    (
                        exact_part - with_prior - others_evidence,
                        np.zeros(d),
                        (s**2 + tau**2) * eye,
                    ),
                    (
                        exact_part + near - with_prior - others_evidence,
                        centre_near,
                        s**2 * eye + spread_near,
                    ),
                ],
            )
            own_slab = moved + own
            own_total = np.logaddexp(np.logaddexp(still, own_slab), outlier[rows])
            slab_share = _share(own_slab, own_total)
            far_share = _share(outlier[rows], own_total)
            moments.add(
                rows,
                eps_prior + others_evidence + own_total,
                slab_share[..., None] * own_mean + far_share[..., None] * far_mean[rows],
                slab_share[..., None, None] * own_second
                + far_share[..., None, None] * far_second[rows],
            )
    first, spread = moments.mean_and_cov()
    pooled_mean: np.ndarray = first @ basis.T
    pooled_cov = np.einsum("ki,cij,lj->ckl", basis, spread, basis)
    return pooled_mean, 0.5 * (pooled_cov + np.swapaxes(pooled_cov, 1, 2))


class _MixtureMoments:
    """Each chunk's running first and second moments of a mixture whose components come a
    few at a time with their log weights, and their total weight (scaled by a running
    maximum of the log weights, which keeps every sum finite)."""

    def __init__(self, n: int, d: int) -> None:
        self.top = np.full(n, -np.inf)
        self.mass = np.zeros(n)
        self.first = np.zeros((n, d))
        self.second = np.zeros((n, d, d))

    def add(
        self, rows: slice, log_weight: np.ndarray, first: np.ndarray, second: np.ndarray
    ) -> None:
        """Adds components (p, chunks): their log weights, and their weight-free first
        (p, chunks, d) and second (p, chunks, d, d) moments, for the chunks ``rows``."""
        top = np.maximum(self.top[rows], log_weight.max(axis=0))
        kept, weight = _share(self.top[rows], top), _share(log_weight, top)
        self.mass[rows] = self.mass[rows] * kept + weight.sum(axis=0)
        self.first[rows] = self.first[rows] * kept[:, None] + np.einsum("pc,pci->ci", weight, first)
        self.second[rows] = self.second[rows] * kept[:, None, None] + np.einsum(
            "pc,pcij->cij", weight, second
        )
        self.top[rows] = top

    def mean_and_cov(self) -> tuple[np.ndarray, np.ndarray]:
        """Each chunk's mixture mean (chunks, d) and covariance (chunks, d, d)."""
        mean = self.first / self.mass[:, None]
        cov: np.ndarray = self.second / self.mass[:, None, None] - (
            mean[:, :, None] * mean[:, None, :]
        )
        return mean, cov
