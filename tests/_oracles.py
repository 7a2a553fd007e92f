"""Independent high-precision oracles used by the tests (mpmath, not scipy's Boost)."""

from __future__ import annotations

import mpmath as mp


def beta_cdf_mp(a: float, b: float, x: float, digits: int = 30) -> tuple[float, float]:
    """(P[X <= x], P[X > x]) for Beta(a, b) at ``digits`` significant digits.

    Shapes below 1 have an integrable singularity at an end point, where quadrature is poor:
    there mpmath's hypergeometric series is used. Otherwise the density (smooth and peaked) is
    integrated by tanh-sinh quadrature over the smaller tail, only where it is not negligible
    (beyond 60 sd from the mean the mass is below e**-1800) — this reaches shapes of 1e12,
    where the series no longer converges.
    """
    if min(a, b) < 1:
        with mp.workdps(digits):
            lower = mp.betainc(mp.mpf(a), mp.mpf(b), 0, mp.mpf(x), regularized=True)
            upper = mp.betainc(mp.mpf(a), mp.mpf(b), mp.mpf(x), 1, regularized=True)
            return float(lower), float(upper)
    with mp.workdps(digits):
        A, B, X = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        log_norm = mp.loggamma(A) + mp.loggamma(B) - mp.loggamma(A + B)

        def density(t: mp.mpf) -> mp.mpf:
            if t <= 0 or t >= 1:
                return mp.mpf(0)
            return mp.exp((A - 1) * mp.log(t) + (B - 1) * mp.log1p(-t) - log_norm)

        mean = A / (A + B)
        sd = mp.sqrt(A * B / ((A + B) ** 2 * (A + B + 1)))
        lo = max(mp.mpf(0), mean - 60 * sd) if A > 1 else mp.mpf(0)
        hi = min(mp.mpf(1), mean + 60 * sd) if B > 1 else mp.mpf(1)
        mode = (A - 1) / (A + B - 2) if A > 1 and B > 1 else None

        def integral(left: mp.mpf, right: mp.mpf) -> mp.mpf:
            if right <= left:
                return mp.mpf(0)
            points = [left]
            if mode is not None and left < mode < right:
                points.append(mode)
            for k in (-5, -2, 2, 5):  # help the quadrature find a narrow peak
                p = mean + k * sd
                if left < p < right:
                    points.append(p)
            points.append(right)
            return mp.quad(density, sorted(points))

        if mean >= X:
            lower = integral(lo, X) if lo < X else mp.mpf(0)
            return float(lower), float(1 - lower)
        upper = integral(X, hi) if hi > X else mp.mpf(0)
        return float(1 - upper), float(upper)


def beta_logpdf_mp(a: float, b: float, x: float, digits: int = 40) -> float:
    """ln of the Beta(a, b) density at x, at ``digits`` significant digits."""
    with mp.workdps(digits):
        A, B, X = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        log_norm = mp.loggamma(A) + mp.loggamma(B) - mp.loggamma(A + B)
        return float((A - 1) * mp.log(X) + (B - 1) * mp.log1p(-X) - log_norm)
