//! Exact (sampling-free) Beta distribution functions: log-density, cdf and survival function
//! (the regularised incomplete beta function), quantiles, the highest-density interval.
//!
//! Posterior parameters here are counts plus a prior, up to ~1e12, so the textbook formulas are
//! not enough: `(a - 1) ln x - ln B(a, b)` loses four digits at a = 1e12 and the continued
//! fraction for the incomplete beta needs O(sqrt(a)) terms near the mean. Hence:
//!
//! * `ln B(a, b)` from Stirling differences, never as a difference of huge `ln Γ` values;
//! * the log-density in Loader's (2000) saddle-point form, `stirlerr` + deviance `bd0`, which is
//!   accurate for arbitrarily large parameters;
//! * the incomplete beta from the Lentz continued fraction (A&S 26.5.8) away from the mean, and
//!   Temme's uniform asymptotic expansion (in the form of DiDonato & Morris 1992, the BASYM part
//!   of ACM TOMS 708) near the mean when both parameters exceed 100;
//! * every cdf value is returned with its complement computed without cancellation, so upper
//!   tails are as accurate as lower ones.
//!
//! Also the Dirichlet-multinomial log-likelihood (the label-free multiclass model's error
//! shares between periods), written with the same `ln B`.
//!
//! Degenerate parameters (a = 0 or b = 0: a point mass at 0 or 1) are handled by the callers in
//! this module's public functions; Beta(0, 0) is rejected.

use crate::{Error, Result};

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;
/// 1 / sqrt(pi)
const INV_SQRT_PI: f64 = 0.564_189_583_547_756_3;
/// 2^(-3/2)
const TWO_POW_MINUS_3_2: f64 = 0.353_553_390_593_273_8;

// ---------------------------------------------------------------------------------------------
// Gamma-function pieces
// ---------------------------------------------------------------------------------------------

/// Remainder of Stirling's series: ln Γ(x) − [(x − ½) ln x − x + ln √(2π)], for x ≥ 10
/// (truncation error below 2e-18 there).
fn stirling_remainder(x: f64) -> f64 {
    let x2 = 1.0 / (x * x);
    let series = 1.0 / 12.0
        + x2 * (-1.0 / 360.0
            + x2 * (1.0 / 1260.0
                + x2 * (-1.0 / 1680.0
                    + x2 * (1.0 / 1188.0
                        + x2 * (-691.0 / 360_360.0
                            + x2 * (1.0 / 156.0 + x2 * (-3617.0 / 122_400.0)))))));
    series / x
}

/// ln Γ(x) for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    if x >= 10.0 {
        (x - 0.5) * x.ln() - x + LN_SQRT_2PI + stirling_remainder(x)
    } else {
        libm::lgamma(x)
    }
}

/// ψ(x) = d ln Γ(x) / dx for x > 0: the recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 10, then
/// the asymptotic series to x⁻¹⁰ (its first omitted term, 691 / (32,760 x¹²), is below 3e-14).
pub fn digamma(mut x: f64) -> f64 {
    let mut shift = 0.0;
    while x < 10.0 {
        shift -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series = f
        * (1.0 / 12.0
            - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (1.0 / 132.0)))));
    shift + x.ln() - 0.5 / x - series
}

/// ln P(`counts` | Dirichlet-multinomial(`alpha`)) less the multinomial coefficient (which does
/// not depend on `alpha`): ln Γ(A) − ln Γ(n + A) + Σ [ln Γ(x + α) − ln Γ(α)], A = Σ α, n = Σ x,
/// written with [`ln_beta`] (ln Γ(x + α) − ln Γ(α) = ln Γ(x) − ln B(α, x)) so that huge α lose
/// no digits. A count where α = 0 has probability 0.
pub fn dirichlet_multinomial_ln(counts: &[f64], alpha: &[f64]) -> f64 {
    let (mut out, mut n, mut total) = (0.0, 0.0, 0.0);
    for (&x, &a) in counts.iter().zip(alpha) {
        if x > 0.0 {
            if a <= 0.0 {
                return f64::NEG_INFINITY;
            }
            out += ln_gamma(x) - ln_beta(a, x);
            n += x;
        }
        total += a;
    }
    if n > 0.0 {
        out += ln_beta(total, n) - ln_gamma(n);
    }
    out
}

/// For each precision A: Σ over cells of [`dirichlet_multinomial_ln`] of the cell's `k` counts
/// under Dirichlet(A × the cell's `k` shares) — the log-likelihood of cells whose shares scatter
/// around the given ones with precision A. Counts and shares are (cells × k) in C order,
/// finite and >= 0; precisions finite and > 0.
pub fn dirichlet_multinomial_ln_grid(
    counts: &[f64],
    shares: &[f64],
    k: usize,
    precisions: &[f64],
) -> Result<Vec<f64>> {
    if k == 0 || counts.len() != shares.len() || counts.len() % k != 0 {
        return Err(Error::invalid(format!(
            "counts and shares must both have k = {k} columns and the same rows, got {} and {} \
             values",
            counts.len(),
            shares.len()
        )));
    }
    if let Some(v) = counts
        .iter()
        .chain(shares)
        .find(|v| !(v.is_finite() && **v >= 0.0))
    {
        return Err(Error::invalid(format!(
            "counts and shares must be finite and >= 0, got {v}"
        )));
    }
    if let Some(v) = precisions.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
        return Err(Error::invalid(format!(
            "precisions must be finite and > 0, got {v}"
        )));
    }
    crate::parallel::map(precisions.len(), |i| {
        let a = precisions[i];
        let mut alpha = vec![0.0; k];
        let mut sum = 0.0;
        for (cell, share) in counts.chunks_exact(k).zip(shares.chunks_exact(k)) {
            for (slot, &m) in alpha.iter_mut().zip(share) {
                *slot = a * m;
            }
            sum += dirichlet_multinomial_ln(cell, &alpha);
        }
        Ok(sum)
    })
}

/// ln B(a, b) for a, b > 0, accurate for arbitrarily large arguments.
pub fn ln_beta(a: f64, b: f64) -> f64 {
    let (p, q) = if a < b { (a, b) } else { (b, a) };
    let s = p + q;
    if p >= 10.0 {
        let corr = stirling_remainder(p) + stirling_remainder(q) - stirling_remainder(s);
        -0.5 * q.ln() + LN_SQRT_2PI + corr + (p - 0.5) * (p / s).ln() + q * (-p / s).ln_1p()
    } else if q >= 10.0 {
        let corr = stirling_remainder(q) - stirling_remainder(s);
        libm::lgamma(p) + corr + p - p * s.ln() + (q - 0.5) * (-p / s).ln_1p()
    } else {
        libm::lgamma(p) + libm::lgamma(q) - libm::lgamma(s)
    }
}

/// stirlerr(n) = ln Γ(n + 1) − (n + ½) ln n + n − ln √(2π), for n > 0.
fn stirlerr(n: f64) -> f64 {
    if n >= 10.0 {
        // ln Γ(n + 1) = ln n + ln Γ(n), so the remainder is Stirling's remainder at n.
        stirling_remainder(n)
    } else {
        libm::lgamma(n + 1.0) - (n + 0.5) * n.ln() + n - LN_SQRT_2PI
    }
}

/// Deviance term bd0(x, m) = x ln(x / m) + m − x ≥ 0 (Loader 2000), given the difference
/// d = x − m computed accurately by the caller: near x ≈ m the value is ~d²/(2m), and forming
/// d from a rounded m would destroy it.
fn bd0(x: f64, m: f64, d: f64) -> f64 {
    if d.abs() < 0.1 * (x + m) {
        let v = d / (x + m);
        let mut s = d * v;
        let mut ej = 2.0 * x * v;
        let v2 = v * v;
        for j in 1..1000 {
            ej *= v2;
            let s1 = s + ej / (2 * j + 1) as f64;
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        s
    } else {
        x * (x / m).ln() - d
    }
}

/// t − ln(1 + t) for t > −1, accurate for small |t|.
fn rlog1(t: f64) -> f64 {
    if t.abs() < 0.1 {
        // With r = t / (2 + t): ln(1 + t) = 2 atanh r and t − 2r = r t.
        let r = t / (2.0 + t);
        let r2 = r * r;
        let mut term = r2 * r;
        let mut series = 0.0;
        let mut k = 3.0;
        while term.abs() > 1e-20 * (r * t).abs() && k < 60.0 {
            series += term / k;
            term *= r2;
            k += 2.0;
        }
        r * t - 2.0 * series
    } else {
        t - t.ln_1p()
    }
}

/// Scaled complementary error function exp(x²) erfc(x), for x ≥ 0.
fn erfcx(x: f64) -> f64 {
    if x < 2.0 {
        (x * x).exp() * libm::erfc(x)
    } else {
        // Continued fraction erfc(x) = exp(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))),
        // evaluated bottom-up with enough terms for x ≥ 2.
        let terms = if x < 4.0 { 60 } else { 25 };
        let mut frac = x;
        for k in (1..=terms).rev() {
            frac = x + (k as f64 * 0.5) / frac;
        }
        INV_SQRT_PI / frac
    }
}

// ---------------------------------------------------------------------------------------------
// Density
// ---------------------------------------------------------------------------------------------

/// ln of the Beta(a, b) density at x in (0, 1), for a, b > 0.
pub fn beta_ln_pdf(x: f64, a: f64, b: f64) -> f64 {
    if !(0.0..=1.0).contains(&x) {
        return f64::NEG_INFINITY;
    }
    ln_pdf_xy(x, 1.0 - x, a, b)
}

/// ln of the Beta(a, b) density at x, given y = 1 − x separately.
///
/// Of x and y, the smaller one is taken as exact and everything is derived from it: ln of the
/// larger one as ln1p(−smaller), and n·x, n·y and the deviance differences from n·smaller.
/// Recomputing a tiny complement as `1 − (1 − x)` would throw its digits away, and with shapes
/// near 1e12 every lost digit of y costs one of the density.
fn ln_pdf_xy(x: f64, y: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 || y <= 0.0 {
        return beta_ln_pdf_boundary(if x <= 0.0 { 0.0 } else { 1.0 }, a, b);
    }
    let x_is_small = x <= y;
    let (ln_x, ln_y) = if x_is_small {
        (x.ln(), (-x).ln_1p())
    } else {
        ((-y).ln_1p(), y.ln())
    };
    if a < 1.0 || b < 1.0 {
        // At least one small parameter: the direct formula has no cancellation problem.
        return (a - 1.0) * ln_x + (b - 1.0) * ln_y - ln_beta(a, b);
    }
    // Loader's form: f(x; a, b) = (a + b − 1) · dbinom(k = a − 1; n = a + b − 2, x).
    // n − k is used as b − 1 (exact), never as the difference of two huge numbers.
    let n = a + b - 2.0;
    let k = a - 1.0;
    let n_minus_k = b - 1.0;
    let ln_scale = (a + b - 1.0).ln();
    if k == 0.0 {
        return ln_scale + n * ln_y;
    }
    if n_minus_k == 0.0 {
        return ln_scale + n * ln_x;
    }
    // Expected counts n·x, n·y and the differences k − n·x = −((n − k) − n·y), from the small side.
    let (nx, ny, d) = if x_is_small {
        let nx = n * x;
        (nx, n - nx, k - nx)
    } else {
        let ny = n * y;
        (n - ny, ny, ny - n_minus_k)
    };
    let lc =
        stirlerr(n) - stirlerr(k) - stirlerr(n_minus_k) - bd0(k, nx, d) - bd0(n_minus_k, ny, -d);
    // ln(2π k (n − k) / n), each factor separately: (n − k) / n can be 1e-12.
    let lf = (2.0 * std::f64::consts::PI).ln() + k.ln() + n_minus_k.ln() - n.ln();
    ln_scale + lc - 0.5 * lf
}

fn beta_ln_pdf_boundary(x: f64, a: f64, b: f64) -> f64 {
    // Density at the end points (and outside the support).
    if !(0.0..=1.0).contains(&x) {
        return f64::NEG_INFINITY;
    }
    let at_zero = x == 0.0;
    let (shape, other) = if at_zero { (a, b) } else { (b, a) };
    if shape < 1.0 {
        f64::INFINITY
    } else if shape == 1.0 {
        // f(0) = b for Beta(1, b); f(1) = a for Beta(a, 1).
        other.ln()
    } else {
        f64::NEG_INFINITY
    }
}

// ---------------------------------------------------------------------------------------------
// Incomplete beta function
// ---------------------------------------------------------------------------------------------

/// x^a y^b / B(a, b) with y = 1 − x, computed through the log-density.
fn ln_beta_prefix(x: f64, y: f64, a: f64, b: f64) -> f64 {
    ln_pdf_xy(x, y, a, b) + x.ln() + y.ln()
}

/// I_x(a, b) by the continued fraction of DiDonato & Morris (1992, the BFRAC procedure of
/// ACM TOMS 708), for x at or below the mean. It is written in terms of
/// λ = a − (a + b) x, which the caller forms from whichever of x and y = 1 − x is small and
/// exact — unlike the textbook fraction, whose first denominator 1 − (a + b) x / (a + 1)
/// cancels catastrophically when x is within 1e-12 of 1. Returns the value and the number of
/// iterations used.
fn ibeta_continued_fraction(x: f64, y: f64, a: f64, b: f64, lambda: f64) -> (f64, usize) {
    const EPS: f64 = 1e-15;
    const MAX_ITER: usize = 100_000;
    let ln_prefix = ln_beta_prefix(x, y, a, b);
    if ln_prefix < -745.0 {
        return (0.0, 0);
    }
    let c = lambda + 1.0;
    let c0 = b / a;
    let c1 = 1.0 / a + 1.0;
    let yp1 = y + 1.0;
    let (mut n, mut p, mut s) = (0.0f64, 1.0f64, a + 1.0);
    let (mut an, mut bn, mut anp1, mut bnp1) = (0.0f64, 1.0f64, 1.0f64, c / c1);
    let mut r = c1 / c;
    let mut iterations = MAX_ITER;
    for iteration in 1..=MAX_ITER {
        n += 1.0;
        let t = n / a;
        let w = n * (b - n) * x;
        let e = a / s;
        let alpha = p * (p + c0) * e * e * (w * x);
        let e = (t + 1.0) / (c1 + t + t);
        let beta = n + w / s + e * (c + n * yp1);
        p = t + 1.0;
        s += 2.0;
        let next_a = alpha * an + beta * anp1;
        an = anp1;
        anp1 = next_a;
        let next_b = alpha * bn + beta * bnp1;
        bn = bnp1;
        bnp1 = next_b;
        let r0 = r;
        r = anp1 / bnp1;
        if (r - r0).abs() <= EPS * r {
            iterations = iteration;
            break;
        }
        // Rescale to keep the recurrences in range.
        an /= bnp1;
        bn /= bnp1;
        anp1 = r;
        bnp1 = 1.0;
    }
    ((ln_prefix.exp() * r).clamp(0.0, 1.0), iterations)
}

/// Σ_i δ(·) Stirling remainders: ln Γ(a) + ln Γ(b) − ln Γ(a + b) minus their Stirling parts.
fn bcorr(a: f64, b: f64) -> f64 {
    stirling_remainder(a) + stirling_remainder(b) - stirling_remainder(a + b)
}

/// I_x(a, b) for a, b > 100 with x at or below the mean, λ = a − (a + b) x ≥ 0 small relative
/// to min(a, b): Temme's uniform asymptotic expansion, as organised by DiDonato & Morris
/// (1992, eq. 5.x; the BASYM procedure of ACM TOMS 708). The leading term is the normal
/// approximation ½ erfc(√f) with f the Kullback–Leibler-type exponent below; the sum adds the
/// corrections in powers of 1 / sqrt(min(a, b)).
fn ibeta_asymptotic(a: f64, b: f64, lambda: f64) -> f64 {
    const NUM: usize = 20;
    const EPS: f64 = 1e-15;
    let f = a * rlog1(-lambda / a) + b * rlog1(lambda / b);
    let t = (-f).exp();
    if t == 0.0 {
        return 0.0;
    }
    let z0 = f.sqrt();
    let z = 0.5 * (z0 / TWO_POW_MINUS_3_2);
    let z2 = f + f;
    let (h, r0, r1, w0) = if a < b {
        let h = a / b;
        (
            h,
            1.0 / (1.0 + h),
            (b - a) / b,
            1.0 / (a * (1.0 + h)).sqrt(),
        )
    } else {
        let h = b / a;
        (
            h,
            1.0 / (1.0 + h),
            (b - a) / a,
            1.0 / (b * (1.0 + h)).sqrt(),
        )
    };

    // Coefficient arrays of the expansion (1-based in the paper, 0-based here).
    let mut a0 = [0.0f64; NUM + 2];
    let mut b0 = [0.0f64; NUM + 2];
    let mut c = [0.0f64; NUM + 2];
    let mut d = [0.0f64; NUM + 2];
    a0[0] = (2.0 / 3.0) * r1;
    c[0] = -0.5 * a0[0];
    d[0] = -c[0];

    let mut j0 = (0.5 / TWO_OVER_SQRT_PI) * erfcx(z0);
    let mut j1 = TWO_POW_MINUS_3_2;
    let mut sum = j0 + d[0] * w0 * j1;

    let mut s = 1.0;
    let h2 = h * h;
    let mut hn = 1.0;
    let mut w = w0;
    let mut znm1 = z;
    let mut zn = z2;
    let mut n = 2;
    while n <= NUM {
        hn *= h2;
        a0[n - 1] = 2.0 * r0 * (h * hn + 1.0) / (n as f64 + 2.0);
        s += hn;
        a0[n] = 2.0 * r1 * s / (n as f64 + 3.0);

        for i in n..=n + 1 {
            let r = -0.5 * (i as f64 + 1.0);
            b0[0] = r * a0[0];
            for m in 2..=i {
                let mut bsum = 0.0;
                for j in 1..m {
                    let mmj = m - j;
                    bsum += (j as f64 * r - mmj as f64) * a0[j - 1] * b0[mmj - 1];
                }
                b0[m - 1] = r * a0[m - 1] + bsum / m as f64;
            }
            c[i - 1] = b0[i - 1] / (i as f64 + 1.0);
            let mut dsum = 0.0;
            for j in 1..i {
                dsum += d[i - j - 1] * c[j - 1];
            }
            d[i - 1] = -(dsum + c[i - 1]);
        }

        j0 = TWO_POW_MINUS_3_2 * znm1 + (n as f64 - 1.0) * j0;
        j1 = TWO_POW_MINUS_3_2 * zn + n as f64 * j1;
        znm1 *= z2;
        zn *= z2;
        w *= w0;
        let t0 = d[n - 1] * w * j0;
        w *= w0;
        let t1 = d[n] * w * j1;
        sum += t0 + t1;
        if t0.abs() + t1.abs() <= EPS * sum {
            break;
        }
        n += 2;
    }
    let u = (-bcorr(a, b)).exp();
    (TWO_OVER_SQRT_PI * t * u * sum).clamp(0.0, 1.0)
}

/// (`P[X ≤ x]`, `P[X > x]`) for X ~ Beta(a, b) with a, b > 0, each computed without cancellation.
pub fn beta_cdf_pair(x: f64, a: f64, b: f64) -> (f64, f64) {
    #[cfg(test)]
    tests::CDF_EVALUATIONS.with(|count| count.set(count.get() + 1));
    if x.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    if x <= 0.0 {
        return (0.0, 1.0);
    }
    if x >= 1.0 {
        return (1.0, 0.0);
    }
    beta_cdf_xy(x, 1.0 - x, a, b)
}

/// [`beta_cdf_pair`] given x and y = 1 − x separately (the smaller of the two is exact).
fn beta_cdf_xy(x: f64, y: f64, a: f64, b: f64) -> (f64, f64) {
    // λ = a − (a + b) x, the distance below the mean in units of counts, formed from the
    // small side. λ ≥ 0: x is at or below the mean and the lower tail is the one to compute.
    let lambda = if x <= y {
        a - (a + b) * x
    } else {
        (a + b) * y - b
    };
    let (w, swapped) = if lambda >= 0.0 {
        (ibeta_lower(x, y, a, b, lambda), false)
    } else {
        (ibeta_lower(y, x, b, a, -lambda), true)
    };
    if swapped { (1.0 - w, w) } else { (w, 1.0 - w) }
}

/// I_x(a, b) for x at or below the mean (λ = a − (a + b) x ≥ 0).
fn ibeta_lower(x: f64, y: f64, a: f64, b: f64, lambda: f64) -> f64 {
    if a > 100.0 && b > 100.0 && lambda <= 0.03 * a.min(b) {
        ibeta_asymptotic(a, b, lambda)
    } else {
        ibeta_continued_fraction(x, y, a, b, lambda).0
    }
}

// ---------------------------------------------------------------------------------------------
// Quantiles
// ---------------------------------------------------------------------------------------------

/// Inverse of the standard normal upper tail: z with P[Z > z] = p, for p in (0, 1).
/// Acklam's rational approximation (relative error ~1e-9) — only a starting point here.
fn normal_upper_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    // Lower-tail quantile of q = 1 − p, negated at the end.
    let q = p;
    let lower = |q: f64| -> f64 {
        if q < 0.02425 {
            let r = (-2.0 * q.ln()).sqrt();
            (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
                / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
        } else {
            let u = q - 0.5;
            let r = u * u;
            (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * u
                / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
        }
    };
    if q <= 0.5 { -lower(q) } else { lower(1.0 - q) }
}

/// Starting point for the lower `p`-quantile of Beta(a, b).
fn quantile_start(p: f64, a: f64, b: f64) -> f64 {
    if a >= 1.0 && b >= 1.0 {
        // Carter's approximation (A&S 26.5.22) with y the upper normal quantile of p.
        let y = normal_upper_quantile(p);
        let lambda = (y * y - 3.0) / 6.0;
        let s = 1.0 / (2.0 * a - 1.0);
        let t = 1.0 / (2.0 * b - 1.0);
        let h = 2.0 / (s + t);
        let w = y * (h + lambda).sqrt() / h - (t - s) * (lambda + 5.0 / 6.0 - 2.0 / (3.0 * h));
        a / (a + b * (2.0 * w).exp())
    } else {
        // Power-law tails: F(x) ≈ x^a / (a B) near 0, 1 − F(x) ≈ (1 − x)^b / (b B) near 1.
        let ln_b = ln_beta(a, b);
        let lna = (a / (a + b)).ln();
        let lnb = (b / (a + b)).ln();
        let t = (a * lna - ln_b).exp() / a;
        let u = (b * lnb - ln_b).exp() / b;
        let w = t + u;
        if p < t / w {
            (p * a * w).powf(1.0 / a)
        } else {
            1.0 - ((1.0 - p) * b * w).powf(1.0 / b)
        }
    }
}

/// Solve P[X ≤ x] = p (upper = false) or P[X > x] = p (upper = true) for x, with p in (0, 1).
///
/// Newton's method on ln P as a function of ln x (or of ln(1 − x) when x > ½): in a power-law
/// tail, P ∝ x^a, that function is linear and one step lands on the root, where Newton on P(x)
/// itself would crawl. Every step stays inside a shrinking bracket, with (geometric) bisection
/// as the fallback.
fn solve_quantile(p: f64, a: f64, b: f64, upper: bool) -> f64 {
    let lower_p = if upper { 1.0 - p } else { p };
    let mut x = quantile_start(lower_p, a, b);
    if !(x > 0.0 && x < 1.0) {
        x = a / (a + b);
    }
    let ln_p = p.ln();
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..400 {
        let (cdf, sf) = beta_cdf_pair(x, a, b);
        let tail = if upper { sf } else { cdf };
        if tail == p {
            break;
        }
        // The lower tail grows with x, the upper one shrinks.
        let x_too_big = if upper { tail < p } else { tail > p };
        if x_too_big {
            hi = x;
        } else {
            lo = x;
        }
        let ln_f = beta_ln_pdf(x, a, b);
        let mut next = f64::NAN;
        if tail > 0.0 && ln_f.is_finite() {
            let near_zero = x < 0.5;
            // d ln(tail) / dv with v = ln x (near 0) or v = ln(1 − x) (near 1).
            let sign = if upper { -1.0 } else { 1.0 };
            let dx_dv = if near_zero { x } else { -(1.0 - x) };
            let slope = sign * ln_f.exp() * dx_dv / tail;
            if slope != 0.0 && slope.is_finite() {
                let dv = (tail.ln() - ln_p) / slope;
                next = if near_zero {
                    (x.ln() - dv).exp()
                } else {
                    1.0 - ((-x).ln_1p() - dv).exp()
                };
            }
        }
        let resolution = 4.0 * f64::EPSILON * x.min(1.0 - x).max(f64::MIN_POSITIVE);
        if (next - x).abs() <= resolution {
            // Converged. Tested before the bracket: a step below one ulp lands on x itself,
            // which is a bracket end, and bisecting from there would throw the root away.
            x = next;
            break;
        }
        if !(next > lo && next < hi) {
            // Bisect, geometrically when the bracket reaches a boundary.
            next = if lo == 0.0 {
                hi * 1e-3
            } else if hi == 1.0 {
                1.0 - (1.0 - lo) * 1e-3
            } else if hi / lo > 4.0 {
                (lo * hi).sqrt()
            } else if (1.0 - lo) / (1.0 - hi) > 4.0 {
                1.0 - ((1.0 - lo) * (1.0 - hi)).sqrt()
            } else {
                0.5 * (lo + hi)
            };
            if !(next > lo && next < hi) {
                next = 0.5 * (lo + hi);
            }
        }
        x = next;
        if hi - lo <= 2.0 * f64::EPSILON * hi {
            break;
        }
    }
    polish_quantile(x, p, a, b, upper)
}

/// Move a converged quantile to the smallest double x with P[X ≤ x] ≥ p (or P[X > x] ≤ p for
/// an upper quantile) — the definition of the quantile function — so that quantiles are
/// monotone in p even where one ulp of x spans a large probability (next to 0 or 1).
fn polish_quantile(mut x: f64, p: f64, a: f64, b: f64, upper: bool) -> f64 {
    const MAX_STEPS: usize = 64;
    let satisfied = |x: f64| -> bool {
        let (cdf, sf) = beta_cdf_pair(x, a, b);
        if upper { sf <= p } else { cdf >= p }
    };
    x = x.clamp(0.0, 1.0);
    if satisfied(x) {
        for _ in 0..MAX_STEPS {
            let below = x.next_down();
            if below < 0.0 || !satisfied(below) {
                break;
            }
            x = below;
        }
    } else {
        for _ in 0..MAX_STEPS {
            x = x.next_up();
            if x >= 1.0 {
                return 1.0;
            }
            if satisfied(x) {
                break;
            }
        }
    }
    x.max(0.0)
}

/// Smallest positive Beta shape the exact functions accept. Below it `ln Γ(a)` and the
/// continued fraction lose all precision (subnormal shapes give NaN), and such a prior carries
/// no information a user could mean, so it is refused instead of answered wrongly.
pub const MIN_POSITIVE_SHAPE: f64 = 1e-300;

fn check_shapes(a: f64, b: f64) -> Result<()> {
    if !(a.is_finite() && b.is_finite() && a >= 0.0 && b >= 0.0) || (a == 0.0 && b == 0.0) {
        return Err(Error::invalid(format!(
            "Beta parameters must be finite, >= 0 and not both 0, got a={a}, b={b}"
        )));
    }
    for (name, value) in [("a", a), ("b", b)] {
        if value > 0.0 && value < MIN_POSITIVE_SHAPE {
            return Err(Error::invalid(format!(
                "Beta parameter {name} must be 0 or at least {MIN_POSITIVE_SHAPE:e}, got {value:e}"
            )));
        }
    }
    Ok(())
}

fn check_probability(name: &str, p: f64) -> Result<()> {
    if !(p > 0.0 && p < 1.0) {
        return Err(Error::invalid(format!(
            "{name} must be strictly between 0 and 1, got {p}"
        )));
    }
    Ok(())
}

/// The point mass of a degenerate Beta: Beta(0, b) sits at 0, Beta(a, 0) at 1.
fn point_mass(a: f64, b: f64) -> Option<f64> {
    if a == 0.0 {
        Some(0.0)
    } else if b == 0.0 {
        Some(1.0)
    } else {
        None
    }
}

/// Lower quantile: x with P[X ≤ x] = p.
pub fn beta_ppf(p: f64, a: f64, b: f64) -> Result<f64> {
    check_shapes(a, b)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::invalid(format!("q must be in [0, 1], got {p}")));
    }
    if let Some(m) = point_mass(a, b) {
        return Ok(m);
    }
    Ok(if p == 0.0 {
        0.0
    } else if p == 1.0 {
        1.0
    } else if p <= 0.5 {
        solve_quantile(p, a, b, false)
    } else {
        solve_quantile(1.0 - p, a, b, true)
    })
}

/// Upper quantile: x with `P[X > x]` = q.
pub fn beta_isf(q: f64, a: f64, b: f64) -> Result<f64> {
    check_shapes(a, b)?;
    if !(0.0..=1.0).contains(&q) {
        return Err(Error::invalid(format!("q must be in [0, 1], got {q}")));
    }
    if let Some(m) = point_mass(a, b) {
        return Ok(m);
    }
    Ok(if q == 0.0 {
        1.0
    } else if q == 1.0 {
        0.0
    } else if q <= 0.5 {
        solve_quantile(q, a, b, true)
    } else {
        solve_quantile(1.0 - q, a, b, false)
    })
}

/// (`P[X ≤ x]`, `P[X > x]`) including the degenerate point masses.
pub fn beta_cdf(x: f64, a: f64, b: f64) -> Result<(f64, f64)> {
    check_shapes(a, b)?;
    if let Some(m) = point_mass(a, b) {
        return Ok(if x.is_nan() {
            (f64::NAN, f64::NAN)
        } else if x >= m {
            (1.0, 0.0)
        } else {
            (0.0, 1.0)
        });
    }
    Ok(beta_cdf_pair(x, a, b))
}

/// Density at x (0 outside [0, 1]); a point mass has density +inf at its location.
pub fn beta_pdf(x: f64, a: f64, b: f64) -> Result<f64> {
    check_shapes(a, b)?;
    if let Some(m) = point_mass(a, b) {
        return Ok(if x == m { f64::INFINITY } else { 0.0 });
    }
    if x.is_nan() {
        return Ok(f64::NAN);
    }
    Ok(beta_ln_pdf(x, a, b).exp())
}

/// The mode (the argmax of the density; the left end when the density is flat or U-shaped).
pub fn beta_mode(a: f64, b: f64) -> Result<f64> {
    check_shapes(a, b)?;
    if let Some(m) = point_mass(a, b) {
        return Ok(m);
    }
    Ok(if a > 1.0 && b > 1.0 {
        (a - 1.0) / (a + b - 2.0)
    } else if a <= 1.0 && b > 1.0 || (a < 1.0 && b <= 1.0 && a <= b) {
        0.0
    } else if a == 1.0 && b == 1.0 {
        // Flat: every point is a mode; leftmost by convention.
        0.0
    } else {
        1.0
    })
}

/// Equal-tailed interval: the (1 − ci)/2 and (1 + ci)/2 quantiles.
pub fn beta_eti(a: f64, b: f64, ci: f64) -> Result<(f64, f64)> {
    check_probability("ci", ci)?;
    let tail = 0.5 * (1.0 - ci);
    Ok((beta_ppf(tail, a, b)?, beta_isf(tail, a, b)?))
}

/// Highest-density interval: the shortest interval holding probability `ci`.
///
/// For a unimodal density with an interior mode its ends have equal density; with the mode at a
/// boundary it is anchored there; for the flat Beta(1, 1) it is the leftmost [0, ci]; for a
/// U-shaped density (a, b < 1) it is the shorter of [0, q_ci] and [q_{1−ci}, 1], the left one on
/// a tie (the highest-density *region* would be two intervals; this is the shortest *interval*,
/// the same definition as the sample HDI).
pub fn beta_hdi(a: f64, b: f64, ci: f64) -> Result<(f64, f64)> {
    check_shapes(a, b)?;
    check_probability("ci", ci)?;
    if let Some(m) = point_mass(a, b) {
        return Ok((m, m));
    }
    if a > 1.0 && b > 1.0 {
        return Ok(hdi_interior_mode(a, b, ci, None));
    }
    let decreasing = || -> Result<(f64, f64)> { Ok((0.0, beta_ppf(ci, a, b)?)) };
    let increasing = || -> Result<(f64, f64)> { Ok((beta_isf(ci, a, b)?, 1.0)) };
    if a == 1.0 && b == 1.0 {
        return Ok((0.0, ci));
    }
    if a <= 1.0 && b >= 1.0 {
        return decreasing();
    }
    if b <= 1.0 && a >= 1.0 {
        return increasing();
    }
    // U-shaped.
    let (l0, l1) = decreasing()?;
    let (u0, u1) = increasing()?;
    Ok(if l1 - l0 <= u1 - u0 {
        (l0, l1)
    } else {
        (u0, u1)
    })
}

/// HDI for a, b > 1 (interior mode m): the ends l < m < u with equal density holding mass `ci`.
///
/// With `tilt = Some((t, m, 1 − m))` the "density" whose ends must match is the Beta density
/// times (1 + x)^t, with mode m: the density of an increasing function h(X) whose inverse has
/// derivative ∝ (1 + x)^t — F1 = 2X/(1 + X) of a Beta Jaccard index X has t = 2. The mass is
/// the Beta's either way (the same event).
///
/// The fast path solves both conditions at once by Newton's method in (l, u), started where the
/// log-density has fallen by z²/2 (the normal HDI, which already has the skew of the exact
/// one): typically two or three steps, i.e. four to six incomplete-beta evaluations, whatever
/// the shapes. Should it fail to converge (shapes barely above 1, where the density is nearly
/// flat at one end), a bracketed one-dimensional search on l takes over.
pub(crate) fn hdi_interior_mode(
    a: f64,
    b: f64,
    ci: f64,
    tilt: Option<(f64, f64, f64)>,
) -> (f64, f64) {
    let density = EqualDensity::new(a, b, tilt);
    density
        .newton_pair(ci)
        .unwrap_or_else(|| density.bracketed(ci))
}

/// x moved by a Newton step `dx` taken in ln x (x < ½) or in ln(1 − x) (x ≥ ½): the same step
/// to first order, but next to a boundary, where tails are power laws, it is the step that
/// lands on the root, and it never crosses the boundary.
fn log_step(x: f64, dx: f64) -> f64 {
    if x < 0.5 {
        x * (dx / x).exp()
    } else {
        let room = 1.0 - x;
        1.0 - room * (-dx / room).exp()
    }
}

/// The last positive double before 1 (`right`) or after 0: how close an HDI end can come to
/// its boundary without being it.
fn last_double_before(right: bool) -> f64 {
    if right {
        1.0f64.next_down()
    } else {
        f64::MIN_POSITIVE
    }
}

/// The log-density of an interior-mode Beta (optionally tilted, see [`hdi_interior_mode`])
/// relative to its mode, and the pieces of the HDI search built on it.
struct EqualDensity {
    a: f64,
    b: f64,
    /// Exponent of the (1 + x)^t tilt; 0 for the Beta itself.
    t: f64,
    mode: f64,
    /// 1 − mode, formed directly: when the mode is within 1e-12 of 1, 1 − mode computed from a
    /// rounded mode would keep only four digits.
    mode_c: f64,
}

impl EqualDensity {
    fn new(a: f64, b: f64, tilt: Option<(f64, f64, f64)>) -> Self {
        let (t, mode, mode_c) =
            tilt.unwrap_or((0.0, (a - 1.0) / (a + b - 2.0), (b - 1.0) / (a + b - 2.0)));
        Self {
            a,
            b,
            t,
            mode,
            mode_c,
        }
    }

    /// g(x) = (a − 1) ln(x/m) + (b − 1) ln((1 − x)/(1 − m)) [+ t ln((1 + x)/(1 + m))] ≤ 0.
    /// Near the mode each log ratio is ln1p of the deviation x − m, which is formed on the exact
    /// side (x itself below ½, 1 − x above) so that it stays accurate for huge shapes; far from
    /// it the ratio is taken directly (ln1p(−1 + tiny) would lose the tiny part).
    fn g(&self, x: f64) -> f64 {
        let (beta_part, tilt_part) = self.g_parts(x);
        beta_part + tilt_part
    }

    /// g(x) split into the Beta's log-density ratio and the tilt's.
    fn g_parts(&self, x: f64) -> (f64, f64) {
        let ln_ratio = |value: f64, reference: f64, deviation: f64| -> f64 {
            if deviation.abs() < 0.5 * reference {
                (deviation / reference).ln_1p()
            } else {
                value.ln() - reference.ln()
            }
        };
        let dx = if x < 0.5 {
            x - self.mode
        } else {
            self.mode_c - (1.0 - x)
        };
        let tilted = if self.t == 0.0 {
            0.0
        } else {
            self.t * (dx / (1.0 + self.mode)).ln_1p()
        };
        let beta_part = (self.a - 1.0) * ln_ratio(x, self.mode, dx)
            + (self.b - 1.0) * ln_ratio(1.0 - x, self.mode_c, -dx);
        (beta_part, tilted)
    }

    fn dg(&self, x: f64) -> f64 {
        (self.a - 1.0) / x - (self.b - 1.0) / (1.0 - x) + self.t / (1.0 + x)
    }

    /// The Beta mass between l and u.
    fn mass(&self, l: f64, u: f64) -> f64 {
        let (below_l, _) = beta_cdf_pair(l, self.a, self.b);
        let (_, above_u) = beta_cdf_pair(u, self.a, self.b);
        1.0 - below_l - above_u
    }

    /// The point left (or right) of the mode where g = `level` < 0, to `tolerance` relative to
    /// its distance from the boundary.
    /// Newton's method in ln x (ln(1 − x) right of ½), where g is nearly linear next to a
    /// boundary and concave elsewhere, so that it approaches the root monotonically from
    /// the outside; a start on the inside is first thrown outside.
    fn level_point(&self, level: f64, right: bool, start: f64, tolerance: f64) -> f64 {
        let edge = last_double_before(right);
        if self.g(edge) >= level {
            return edge; // the level lies beyond the last double before the boundary
        }
        let (inner, outer) = if right {
            (self.mode, 1.0)
        } else {
            (0.0, self.mode)
        };
        let mut x = start;
        for _ in 0..100 {
            let step = -(self.g(x) - level) / self.dg(x);
            let mut next = log_step(x, step);
            if !(next > inner.min(outer) && next < inner.max(outer)) {
                // Overshot the mode, or the boundary (the step's exponential overflowed or
                // underflowed): halve the way there instead.
                let toward = if (step > 0.0) == right { outer } else { inner };
                next = 0.5 * (x + toward);
            }
            if next.is_nan() {
                break;
            }
            let done = (next - x).abs() <= (tolerance * x.min(1.0 - x)).max(2.0 * f64::EPSILON * x);
            x = next;
            if done {
                break;
            }
        }
        x
    }

    /// For a shape just above 1, which keeps the density high all the way to its boundary
    /// (x^0.01 is still 0.5 at x = 1e-30; `right` for the upper side): the mass beyond the end
    /// on that side is negligible, so the other end is nearly the `ci` quantile. Returns that
    /// quantile and its equal-density partner, and whether they are the answer — exactly so
    /// when the partner lies beyond the last double before the boundary (then the end is the
    /// boundary itself to float precision).
    fn flat_side(&self, ci: f64, right: bool) -> Option<((f64, f64), bool)> {
        let (a, b) = (self.a, self.b);
        let edge = last_double_before(right);
        let end = if right { 1.0 } else { 0.0 };
        let other = if right {
            beta_isf(ci, a, b).ok()?
        } else {
            beta_ppf(ci, a, b).ok()?
        };
        if right == (other > self.mode) {
            return None; // not a near-flat side after all: the quantile is on its side
        }
        let target = self.g(other);
        if self.g(edge) >= target {
            return Some((if right { (other, end) } else { (end, other) }, true));
        }
        let start = if right {
            self.mode + 0.5 * self.mode_c
        } else {
            0.5 * self.mode
        };
        let near = self.level_point(target, right, start, 1e-8);
        Some((if right { (other, near) } else { (near, other) }, false))
    }

    /// Newton's method on (g(l) − g(u), mass(l, u) − ci) = 0; None if it does not settle.
    fn newton_pair(&self, ci: f64) -> Option<(f64, f64)> {
        const MAX_STEPS: usize = 16;
        let (a, b, mode) = (self.a, self.b, self.mode);
        // Start: where the log-density has fallen by z²/2, z the normal quantile, from
        // mode ∓ z σ with σ the curvature scale at the mode.
        let z = normal_upper_quantile(0.5 * (1.0 - ci));
        let curvature = (a - 1.0) / (mode * mode)
            + (b - 1.0) / (self.mode_c * self.mode_c)
            + self.t / ((1.0 + mode) * (1.0 + mode));
        let sigma = curvature.sqrt().recip();
        let level = -0.5 * z * z;
        let flat_left = self.g(last_double_before(false)) >= level;
        let flat_right = self.g(last_double_before(true)) >= level;
        // A start needs no more than 1e-8: the level itself is off by O(1 / (a + b)).
        let (mut l, mut u) = match (flat_left, flat_right) {
            (false, false) => {
                let mut l = mode - z * sigma;
                if !(l > 0.0 && l < mode) {
                    l = 0.5 * mode;
                }
                let mut u = mode + z * sigma;
                if !(u > mode && u < 1.0) {
                    u = mode + 0.5 * self.mode_c;
                }
                (
                    self.level_point(level, false, l, 1e-8),
                    self.level_point(level, true, u, 1e-8),
                )
            }
            (true, false) | (false, true) => match self.flat_side(ci, flat_right)? {
                (ends, true) => return Some(ends),
                (ends, false) => ends,
            },
            (true, true) => {
                let tail = 0.5 * (1.0 - ci);
                (beta_ppf(tail, a, b).ok()?, beta_isf(tail, a, b).ok()?)
            }
        };
        // The Beta density at x is its value at the mode times exp(g) without the tilt. Only
        // the Jacobian uses it, so it sets the speed of convergence, not the answer.
        let ln_f_mode = ln_pdf_xy(mode, self.mode_c, a, b);
        let mut previous = [f64::NAN; 2];
        for _ in 0..MAX_STEPS {
            if !(l > 0.0 && l < mode && u > mode && u < 1.0) {
                return None;
            }
            let excess = self.mass(l, u) - ci;
            let (beta_l, tilt_l) = self.g_parts(l);
            let (beta_u, tilt_u) = self.g_parts(u);
            let gap = (beta_l + tilt_l) - (beta_u + tilt_u);
            let f_l = (ln_f_mode + beta_l).exp();
            let f_u = (ln_f_mode + beta_u).exp();
            let (dg_l, dg_u) = (self.dg(l), self.dg(u));
            // Jacobian [[g'(l), −g'(u)], [−f(l), f(u)]]; g'(l) > 0 > g'(u), so det > 0.
            let det = dg_l * f_u - dg_u * f_l;
            if !(det > 0.0 && det.is_finite()) {
                return None;
            }
            let dl = -(gap * f_u + dg_u * excess) / det;
            let du = -(dg_l * excess + f_l * gap) / det;
            // Steps are taken in ln x or ln(1 − x) (see `log_step`); damp one that would
            // leave l < m < u.
            let mut scale = 1.0;
            let (mut next_l, mut next_u) = (log_step(l, dl), log_step(u, du));
            while !(next_l > 0.0 && next_l < mode && next_u > mode && next_u < 1.0) {
                scale *= 0.5;
                if scale < 1e-3 {
                    return None;
                }
                (next_l, next_u) = (log_step(l, scale * dl), log_step(u, scale * du));
            }
            // Each step relative to the end's distance from its boundary (an end at 1 − 1e-11
            // is known to the extent that distance is), and the ulp in the same unit.
            let mut settled = true;
            for (k, (x, step)) in [(l, dl), (u, du)].into_iter().enumerate() {
                let room = x.min(1.0 - x);
                let size = scale * step.abs() / room;
                let ulp = 2.0 * f64::EPSILON * x / room;
                if !size.is_finite() {
                    return None;
                }
                // Settled when this step was below an ulp, or when quadratic convergence, with
                // the constant estimated from the last two steps (both small, for that estimate
                // to mean anything), puts the next one there.
                // A damped step says nothing about convergence.
                let last = previous[k];
                let quadratic = size <= 1e-6 && last <= 1e-3;
                settled &= scale == 1.0
                    && (size <= ulp
                        || (quadratic && 4.0 * size * size * size <= ulp * last * last));
                previous[k] = if scale == 1.0 { size } else { f64::NAN };
            }
            (l, u) = (next_l, next_u);
            if settled {
                return Some((l, u));
            }
        }
        None
    }

    /// The robust fallback: find l in (0, m) whose equal-density partner u(l) in (m, 1) makes
    /// the mass `ci`, by Newton's method on ln l kept inside a shrinking bracket, which is
    /// bisected geometrically while it spans orders of magnitude (for shapes just above 1 the
    /// lower end can be 1e-130).
    fn bracketed(&self, ci: f64) -> (f64, f64) {
        let (a, b, t, mode) = (self.a, self.b, self.t, self.mode);
        for right in [false, true] {
            if let Some((ends, true)) = self.flat_side(ci, right) {
                return ends;
            }
        }
        let partner = |l: f64| -> f64 {
            let mirror = 2.0 * mode - l;
            let start = if mirror > mode && mirror < 1.0 {
                mirror
            } else {
                mode + 0.5 * self.mode_c
            };
            let target = self.g(l);
            let u = self.level_point(target, true, start, 4.0 * f64::EPSILON);
            // Beyond the last double below 1 the partner is 1 to float precision.
            if u == last_double_before(true) && self.g(u) > target {
                1.0
            } else {
                u
            }
        };
        let (mut lo, mut hi) = (0.0f64, mode);
        let mut l = solve_quantile(0.5 * (1.0 - ci), a, b, false);
        if !(l > 0.0 && l < mode) {
            l = 0.5 * mode;
        }
        let mut u = partner(l);
        for _ in 0..200 {
            let err = self.mass(l, u) - ci;
            if err == 0.0 {
                break;
            }
            if err > 0.0 {
                lo = l; // interval too wide: move the lower end right
            } else {
                hi = l;
            }
            // d mass / d l = f(u) u'(l) − f(l) with u' = g'(l) / g'(u), and f(u) = f(l) up to
            // the tilt: f(u) (1 + u)^t = f(l) (1 + l)^t.
            let f_l = beta_ln_pdf(l, a, b).exp();
            let tilt_ratio = if t == 0.0 {
                1.0
            } else {
                ((1.0 + l) / (1.0 + u)).powf(t)
            };
            let slope = f_l * (tilt_ratio * self.dg(l) / self.dg(u) - 1.0);
            let mut next = if slope < 0.0 && slope.is_finite() {
                log_step(l, -err / slope)
            } else {
                f64::NAN
            };
            if (next - l).abs() <= 4.0 * f64::EPSILON * l {
                // Converged; a step below one ulp lands on a bracket end (see
                // `solve_quantile`), and bisecting from there would throw the root away.
                break;
            }
            if !(next > lo && next < hi) {
                let floor = lo.max(f64::MIN_POSITIVE);
                next = if hi / floor > 4.0 {
                    (floor.sqrt() * hi.sqrt()).max(f64::MIN_POSITIVE)
                } else {
                    0.5 * (lo + hi)
                };
            }
            if !(next > lo && next < hi) {
                break; // the bracket is down to adjacent doubles
            }
            l = next;
            u = partner(l);
        }
        (l, u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Incomplete-beta evaluations on this thread: the cost of the exact functions.
        pub(super) static CDF_EVALUATIONS: Cell<usize> = const { Cell::new(0) };
    }

    /// The Dirichlet-multinomial against its definition as ln Γ sums (libm), small and huge α,
    /// and the two limits: A → ∞ gives the multinomial Σ x ln m, a count where α = 0 is
    /// impossible. The grid sums cells and rejects malformed input.
    #[test]
    fn dirichlet_multinomial_matches_its_definition() {
        let direct = |x: &[f64], a: &[f64]| {
            let (n, total): (f64, f64) = (x.iter().sum(), a.iter().sum());
            let mut v = libm::lgamma(total) - libm::lgamma(n + total);
            for (&xi, &ai) in x.iter().zip(a) {
                v += libm::lgamma(xi + ai) - libm::lgamma(ai);
            }
            v
        };
        for (x, a) in [
            (vec![3.0, 0.0, 7.0], vec![0.4, 1.2, 2.5]),
            (vec![120.0, 40.0, 1.0], vec![30.0, 9.5, 0.25]),
            (vec![0.0, 0.0, 0.0], vec![1.0, 1.0, 1.0]),
        ] {
            let got = dirichlet_multinomial_ln(&x, &a);
            assert!((got - direct(&x, &a)).abs() < 1e-9 * direct(&x, &a).abs().max(1.0));
        }
        let (x, m) = ([5.0, 2.0, 0.0], [0.6, 0.3, 0.1]);
        let big: Vec<f64> = m.iter().map(|v| v * 1e12).collect();
        let multinomial: f64 = x.iter().zip(&m).map(|(xi, mi)| xi * mi.ln()).sum();
        let coefficient = libm::lgamma(8.0) - libm::lgamma(6.0) - libm::lgamma(3.0);
        let got = dirichlet_multinomial_ln(&x, &big) + coefficient;
        assert!(
            (got - (multinomial + coefficient)).abs() < 1e-6,
            "{got} {multinomial}"
        );
        assert_eq!(
            dirichlet_multinomial_ln(&[1.0, 2.0], &[0.0, 1.0]),
            f64::NEG_INFINITY
        );
        let counts = [3.0, 0.0, 7.0, 120.0, 40.0, 1.0];
        let shares = [0.2, 0.3, 0.5, 0.7, 0.2, 0.1];
        let grid = dirichlet_multinomial_ln_grid(&counts, &shares, 3, &[2.0, 50.0]).unwrap();
        for (value, a) in grid.iter().zip([2.0, 50.0]) {
            let alpha: Vec<f64> = shares.iter().map(|m| a * m).collect();
            let expected = dirichlet_multinomial_ln(&counts[..3], &alpha[..3])
                + dirichlet_multinomial_ln(&counts[3..], &alpha[3..]);
            assert_eq!(*value, expected);
        }
        assert!(dirichlet_multinomial_ln_grid(&counts, &shares, 4, &[1.0]).is_err());
        assert!(dirichlet_multinomial_ln_grid(&counts, &shares[..3], 3, &[1.0]).is_err());
        assert!(dirichlet_multinomial_ln_grid(&[-1.0, 1.0], &[0.5, 0.5], 2, &[1.0]).is_err());
        assert!(dirichlet_multinomial_ln_grid(&counts, &shares, 3, &[0.0]).is_err());
        assert!(dirichlet_multinomial_ln_grid(&counts, &shares, 0, &[1.0]).is_err());
    }

    /// `f()` and the number of incomplete-beta evaluations it made.
    fn evaluations<T>(f: impl FnOnce() -> T) -> (T, usize) {
        CDF_EVALUATIONS.with(|count| count.set(0));
        let value = f();
        (value, CDF_EVALUATIONS.with(Cell::get))
    }

    /// Shapes as a service meets them: a Beta(successes + 1, failures + 1) posterior with a
    /// log-uniform total in 10 … 1e12 and a success rate in 0.01 … 0.99 (a fixed sequence).
    fn count_shapes(n: usize) -> Vec<(f64, f64)> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let total = 10f64.powf(1.0 + 11.0 * uniform());
                let rate = 0.01 + 0.98 * uniform();
                (
                    (total * rate).round() + 1.0,
                    (total * (1.0 - rate)).round() + 1.0,
                )
            })
            .collect()
    }

    /// Shapes 1 + 10^u with u uniform in −3 … 12, nearly flat towards one boundary when u is
    /// small (a fixed sequence per seed).
    fn near_one_shapes(n: usize, seed: u64) -> Vec<(f64, f64)> {
        let mut state = seed;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let a = 1.0 + 10f64.powf(-3.0 + 15.0 * uniform());
                (a, 1.0 + 10f64.powf(-3.0 + 15.0 * uniform()))
            })
            .collect()
    }

    fn percentile(mut values: Vec<usize>, q: f64) -> usize {
        values.sort_unstable();
        values[((values.len() - 1) as f64 * q).round() as usize]
    }

    #[test]
    fn exact_intervals_cost_a_bounded_number_of_evaluations() {
        // The cost is the number of incomplete-beta evaluations; before the fast HDI a step
        // below one ulp fell into bisection and one call could take 110.
        let shapes = count_shapes(3000);
        for &ci in &[0.5, 0.95, 0.999] {
            let hdi: Vec<usize> = shapes
                .iter()
                .map(|&(a, b)| evaluations(|| beta_hdi(a, b, ci).unwrap()).1)
                .collect();
            let eti: Vec<usize> = shapes
                .iter()
                .map(|&(a, b)| evaluations(|| beta_eti(a, b, ci).unwrap()).1)
                .collect();
            assert!(percentile(hdi.clone(), 0.5) <= 4, "hdi median at ci {ci}");
            assert!(percentile(hdi.clone(), 0.99) <= 10, "hdi p99 at ci {ci}");
            assert!(*hdi.iter().max().unwrap() <= 16, "hdi max at ci {ci}");
            assert!(percentile(eti.clone(), 0.99) <= 14, "eti p99 at ci {ci}");
            assert!(*eti.iter().max().unwrap() <= 24, "eti max at ci {ci}");
        }
    }

    #[test]
    fn near_flat_hdi_costs_a_bounded_number_of_evaluations() {
        // Shapes in 1 + 1e-3 … 1 + 1e12: the density is nearly flat towards one boundary.
        let costs: Vec<usize> = near_one_shapes(4000, 11)
            .into_iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let ci = [0.5, 0.9, 0.99, 0.999][i % 4];
                evaluations(|| beta_hdi(a, b, ci).unwrap()).1
            })
            .collect();
        // Measured: p50 6, p99 44, max 75 (the bracketed search answers ~2% of these).
        assert!(percentile(costs.clone(), 0.5) <= 10);
        assert!(percentile(costs.clone(), 0.99) <= 80);
        assert!(*costs.iter().max().unwrap() <= 160);
    }

    #[test]
    fn fast_hdi_agrees_with_the_bracketed_search() {
        // Count-like shapes and shapes just above 1 (nearly flat at one end), where the fast
        // path may decline; when it answers, it must answer what the robust search answers, to
        // the precision the problem allows (an end at 1 − 1e-11 is known relative to 1e-11).
        let mut shapes = count_shapes(2000);
        shapes.extend(near_one_shapes(2000, 7));
        let mut declined = [0usize; 2];
        for (i, &(a, b)) in shapes.iter().enumerate() {
            if a <= 1.0 || b <= 1.0 {
                continue; // the mode is at a boundary: no interior-mode search
            }
            for &ci in &[0.5, 0.9, 0.99, 0.999] {
                let density = EqualDensity::new(a, b, None);
                let Some((l, u)) = density.newton_pair(ci) else {
                    declined[i / 2000] += 1;
                    continue;
                };
                let (l0, u0) = density.bracketed(ci);
                for (x, x0) in [(l, l0), (u, u0)] {
                    let room = x0.min(1.0 - x0);
                    assert!(
                        (x - x0).abs()
                            <= 1e-9 * room + 64.0 * f64::EPSILON * x0 + f64::MIN_POSITIVE,
                        "Beta({a}, {b}) ci {ci}: {x} vs {x0}"
                    );
                }
            }
        }
        assert_eq!(declined[0], 0, "count shapes");
        // Measured: 162 of the 8,000 near 1 (the bracketed search answers those).
        assert!(declined[1] <= 400, "shapes near 1: {}", declined[1]);
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300) || (a - b).abs() < 1e-300
    }

    #[test]
    fn ln_beta_matches_high_precision_reference() {
        // References computed with mpmath at 40 significant digits.
        for &(a, b, reference) in &[
            (0.5, 0.5, 1.144_729_885_849_400_2),
            (1.0, 2.0, -std::f64::consts::LN_2),
            (3.5, 12.0, -7.833_633_042_894_654),
            (30.0, 40.0, -48.301_749_095_916_12),
            (0.1, 1e4, 1.331_683_114_596_586_8),
        ] {
            let got = ln_beta(a, b);
            assert!(
                (got - reference).abs() < 4e-15 * reference.abs().max(1.0),
                "{a},{b}: {got}"
            );
        }
    }

    #[test]
    fn digamma_matches_known_values() {
        // ψ(1) = −γ, ψ(½) = −γ − 2 ln 2, ψ(n + 1) = H_n − γ; the rest scipy.special.psi.
        let gamma = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + gamma).abs() < 5e-14);
        assert!((digamma(0.5) + gamma + 2.0 * std::f64::consts::LN_2).abs() < 5e-14);
        let harmonic_31: f64 = (1..=31).map(|k| 1.0 / k as f64).sum();
        assert!((digamma(32.0) - (harmonic_31 - gamma)).abs() < 1e-13);
        for (x, want) in [
            (0.01, -100.560_885_457_868_68),
            (2.5, 0.703_156_640_645_243_2),
            (5.999, 1.705_936_329_079_225_5),
            (6.0, 1.706_117_668_431_800_4),
            (1234.5, 7.118_016_231_827_998_5),
        ] {
            assert!(
                (digamma(x) - want).abs() < 5e-14 * want.abs().max(1.0),
                "{x}"
            );
        }
    }

    #[test]
    fn ln_gamma_continuous_across_switch() {
        let below = libm::lgamma(10.0);
        let above = ln_gamma(10.0);
        assert!((below - above).abs() < 1e-14 * below);
    }

    /// P[Bin(n, x) >= a] = I_x(a, n − a + 1) for integer a: an exact oracle (summed in logs).
    fn binomial_tail(a: u64, b: u64, x: f64) -> f64 {
        let n = a + b - 1;
        let mut total = 0.0;
        for k in a..=n {
            let lc = libm::lgamma(n as f64 + 1.0)
                - libm::lgamma(k as f64 + 1.0)
                - libm::lgamma((n - k) as f64 + 1.0);
            total += (lc + k as f64 * x.ln() + (n - k) as f64 * (-x).ln_1p()).exp();
        }
        total
    }

    #[test]
    fn cdf_matches_binomial_identity() {
        for &(a, b) in &[
            (1u64, 1u64),
            (2, 3),
            (10, 4),
            (40, 60),
            (150, 200),
            (600, 400),
        ] {
            for i in 1..40 {
                let x = i as f64 / 40.0;
                let (cdf, sf) = beta_cdf_pair(x, a as f64, b as f64);
                let exact = binomial_tail(a, b, x);
                assert!(
                    (cdf - exact).abs() < 1e-12 || close(cdf, exact, 1e-9),
                    "I_{x}({a},{b}) = {cdf} vs {exact}"
                );
                assert!((cdf + sf - 1.0).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn closed_forms() {
        for i in 1..100 {
            let x = i as f64 / 100.0;
            let (c, _) = beta_cdf_pair(x, 1.0, 1.0);
            assert!((c - x).abs() < 1e-15);
            let (c, _) = beta_cdf_pair(x, 3.5, 1.0);
            assert!((c - x.powf(3.5)).abs() < 1e-14);
            let (_, s) = beta_cdf_pair(x, 1.0, 2.5);
            assert!((s - (1.0 - x).powf(2.5)).abs() < 1e-14);
            let (c, _) = beta_cdf_pair(x, 2.0, 2.0);
            assert!((c - (3.0 * x * x - 2.0 * x * x * x)).abs() < 1e-14);
            let pdf = beta_pdf(x, 2.0, 2.0).unwrap();
            assert!((pdf - 6.0 * x * (1.0 - x)).abs() < 1e-13);
        }
    }

    #[test]
    fn pdf_is_the_derivative_of_the_cdf() {
        for &(a, b) in &[
            (0.5f64, 3.0f64),
            (5.0, 7.0),
            (300.0, 500.0),
            (2e5, 3e5),
            (1e12, 3e11),
        ] {
            let mean = a / (a + b);
            let sd = (a * b / ((a + b) * (a + b) * (a + b + 1.0))).sqrt();
            for k in [-2.0, -0.5, 0.3, 1.5] {
                let x = mean + k * sd;
                if x <= 0.0 || x >= 1.0 {
                    continue;
                }
                let h = 1e-4 * sd;
                let up = beta_cdf_pair(x + h, a, b).0;
                let down = beta_cdf_pair(x - h, a, b).0;
                let numeric = (up - down) / (2.0 * h);
                let pdf = beta_pdf(x, a, b).unwrap();
                assert!(
                    close(numeric, pdf, 1e-5),
                    "Beta({a},{b}) at {x}: {numeric} vs {pdf}"
                );
            }
        }
    }

    #[test]
    fn continued_fraction_needs_few_iterations_where_used() {
        // The continued fraction serves everything except the centre of large shapes; in every
        // regime it must converge quickly.
        let mut worst = 0;
        for &(a, b) in &[
            (0.5f64, 1e12f64),
            (0.01, 3.0),
            (50.0, 1e12),
            (100.0, 1e12),
            (100.0, 100.0),
            (1e4, 1e4),
            (1e12, 1e12),
            (3.0, 4.0),
            (2.5, 1e12),
        ] {
            let mean = a / (a + b);
            let sd = (a * b / ((a + b) * (a + b) * (a + b + 1.0))).sqrt();
            for k in [-8.0, -3.0, -1.0, -0.1, 0.1, 1.0, 3.0, 8.0] {
                let x = mean + k * sd;
                if x <= 0.0 || x >= 1.0 {
                    continue;
                }
                let y = 1.0 - x;
                let lambda = a - (a + b) * x;
                let (xx, yy, aa, bb, l) = if lambda >= 0.0 {
                    (x, y, a, b, lambda)
                } else {
                    (y, x, b, a, -lambda)
                };
                if aa > 100.0 && bb > 100.0 && l <= 0.03 * aa.min(bb) {
                    continue; // asymptotic expansion territory
                }
                let (_, it) = ibeta_continued_fraction(xx, yy, aa, bb, l);
                worst = worst.max(it);
            }
        }
        assert!(worst < 3000, "worst iteration count {worst}");
    }

    #[test]
    fn quantiles_invert_the_cdf() {
        // The quantile is the smallest double x with F(x) >= p (upper: P[X > x] <= p), which
        // is also the closest one to the real-valued quantile.
        for &(a, b) in &[
            (0.5, 0.5),
            (0.05, 2.0),
            (1.0, 1.0),
            (2.0, 1.0),
            (13286.0, 4185.0),
            (5286.0, 1.0),
            (1e12, 2.0),
            (3e11, 7e11),
        ] {
            for &p in &[1e-10, 0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 0.999_999] {
                let x = beta_ppf(p, a, b).unwrap();
                assert!(beta_cdf(x, a, b).unwrap().0 >= p, "ppf({p}; {a},{b}) = {x}");
                // (Smallest up to the cdf's own evaluation noise of ~1e-16 relative.)
                let noise = 1e-15 * p;
                if x > 0.0 {
                    let below = beta_cdf(x.next_down(), a, b).unwrap().0;
                    assert!(
                        below < p + noise,
                        "ppf({p}; {a},{b}) = {x} is not the smallest"
                    );
                }
                let xu = beta_isf(p, a, b).unwrap();
                assert!(
                    beta_cdf(xu, a, b).unwrap().1 <= p,
                    "isf({p}; {a},{b}) = {xu}"
                );
                if xu > 0.0 {
                    let above = beta_cdf(xu.next_down(), a, b).unwrap().1;
                    assert!(
                        above > p - noise,
                        "isf({p}; {a},{b}) = {xu} is not the smallest"
                    );
                }
            }
        }
    }

    #[test]
    fn hdi_has_equal_density_ends_and_the_right_mass() {
        for &(a, b) in &[
            (2.0, 2.0),
            (13286.0, 4185.0),
            (3.0, 200.0),
            (1.5, 1e6),
            (1e12, 5e11),
        ] {
            for &ci in &[0.5, 0.9, 0.95, 0.99] {
                let (l, u) = beta_hdi(a, b, ci).unwrap();
                let mass = beta_cdf(u, a, b).unwrap().0 - beta_cdf(l, a, b).unwrap().0;
                // Resolution: the density times an ulp of each end point.
                let peak = beta_pdf(beta_mode(a, b).unwrap(), a, b).unwrap();
                let tol = 1e-11 + 16.0 * peak * f64::EPSILON * u;
                assert!(
                    (mass - ci).abs() < tol,
                    "Beta({a},{b}) ci {ci}: mass {mass}"
                );
                let (fl, fu) = (beta_ln_pdf(l, a, b), beta_ln_pdf(u, a, b));
                assert!((fl - fu).abs() < 1e-6, "ln f: {fl} vs {fu}");
                let (el, eu) = beta_eti(a, b, ci).unwrap();
                let ulps = 4.0 * f64::EPSILON * u;
                assert!(
                    u - l <= (eu - el) * (1.0 + 1e-9) + ulps,
                    "{l} {u} vs {el} {eu}"
                );
            }
        }
    }

    #[test]
    fn hdi_boundary_shapes() {
        let (l, u) = beta_hdi(1.0, 1.0, 0.9).unwrap();
        assert_eq!((l, u), (0.0, 0.9));
        let (l, u) = beta_hdi(1.0, 5.0, 0.95).unwrap();
        assert_eq!(l, 0.0);
        assert!((u - (1.0 - 0.05f64.powf(1.0 / 5.0))).abs() < 1e-13);
        let (l, u) = beta_hdi(7.0, 0.5, 0.95).unwrap();
        assert_eq!(u, 1.0);
        assert!((beta_cdf(l, 7.0, 0.5).unwrap().1 - 0.95).abs() < 1e-12);
        let (l, u) = beta_hdi(0.5, 0.5, 0.9).unwrap();
        assert!(l == 0.0 || u == 1.0);
        assert_eq!(beta_hdi(0.0, 3.0, 0.95).unwrap(), (0.0, 0.0));
        assert_eq!(beta_hdi(3.0, 0.0, 0.95).unwrap(), (1.0, 1.0));
        assert!(beta_hdi(0.0, 0.0, 0.95).is_err());
        assert!(beta_hdi(1.0, 1.0, 1.0).is_err());
        assert!(beta_hdi(f64::NAN, 1.0, 0.5).is_err());
    }

    #[test]
    fn quantiles_are_monotone_next_to_the_boundary() {
        // Beta(1, 1/64): every quantile above ~0.4 lies within an ulp of 1.
        let (a, b) = (1.0, 0.015625);
        let mut previous = 0.0;
        for i in 1..100 {
            let q = beta_ppf(i as f64 / 100.0, a, b).unwrap();
            assert!(q >= previous, "ppf not monotone at {i}: {q} < {previous}");
            previous = q;
        }
        let (lo, hi) = beta_eti(a, b, 0.125).unwrap();
        assert!(lo <= hi, "{lo} > {hi}");
    }

    #[test]
    fn mode_cases() {
        assert_eq!(beta_mode(3.0, 3.0).unwrap(), 0.5);
        assert_eq!(beta_mode(1.0, 3.0).unwrap(), 0.0);
        assert_eq!(beta_mode(3.0, 1.0).unwrap(), 1.0);
        assert_eq!(beta_mode(0.0, 1.0).unwrap(), 0.0);
    }
}
