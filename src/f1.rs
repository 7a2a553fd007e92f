//! The exact posterior of F1 under the Dirichlet model, without sampling.
//!
//! With cell probabilities p ~ Dirichlet(α_TP, α_FP, α_TN, α_FN), the Jaccard index
//! J = p_TP / (p_TP + p_FP + p_FN) is Beta(α_TP, α_FP + α_FN) (the Dirichlet aggregation
//! property), and F1 = 2 p_TP / (2 p_TP + p_FP + p_FN) = 2J / (1 + J) is an increasing function
//! of it. So F1's quantiles, cdf and density follow from the Beta's; this module adds what does
//! not: the mean and variance (hypergeometric series), the mode (a quadratic) and the HDI (a
//! one-dimensional root search). All functions need a, b >= 1, where F1's density is unimodal.

use crate::special::{beta_isf, beta_ln_pdf, beta_ppf, hdi_interior_mode};
use crate::{Error, Result};

/// F1 as a function of the Jaccard index.
#[inline]
pub fn f1_of_jaccard(j: f64) -> f64 {
    2.0 * j / (1.0 + j)
}

fn check(a: f64, b: f64) -> Result<()> {
    let ok = |v: f64| v.is_finite() && (1.0..=crate::sampling::MAX_SHAPE).contains(&v);
    if ok(a) && ok(b) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "the exact F1 posterior needs Beta parameters in [1, 1e100], got a={a}, b={b}"
        )))
    }
}

/// Σ_k w(k) 2^-k Π_{j<k} (num + j) / (den + j): the series of ₂F₁(·, num; den; 1/2) that all the
/// moments below reduce to (Pfaff's transformation moves the argument from −1 to 1/2, so the
/// terms shrink at least geometrically by 1/2). Every term is positive: no cancellation.
fn half_series(num: f64, den: f64, weight: impl Fn(f64) -> f64) -> f64 {
    let mut product = 1.0;
    let mut sum = 0.0;
    for k in 0..4000 {
        let kf = k as f64;
        let term = weight(kf) * product;
        sum += term;
        if term <= 1e-18 * sum {
            break;
        }
        product *= 0.5 * (num + kf) / (den + kf);
    }
    sum
}

/// (E[X], E[X²]) of F1 (`complement` false) or of 1 − F1 (true).
fn raw_moments(a: f64, b: f64, complement: bool) -> (f64, f64) {
    let s = a + b;
    if complement {
        // 1 − F1 = B' / (2 − B') with B' = 1 − J ~ Beta(b, a): Euler's integral gives
        // ₂F₁(1, b + 1; s + 1; 1/2) and ₂F₁(2, b + 2; s + 2; 1/2) directly.
        let m1 = 0.5 * (b / s) * half_series(b + 1.0, s + 1.0, |_| 1.0);
        let m2 =
            0.25 * (b / s) * ((b + 1.0) / (s + 1.0)) * half_series(b + 2.0, s + 2.0, |k| k + 1.0);
        (m1, m2)
    } else {
        // E[2J/(1+J)] = 2 a/s ₂F₁(1, a + 1; s + 1; −1) = a/s ₂F₁(1, b; s + 1; 1/2), and
        // E[(2J/(1+J))²] = a(a+1)/(s(s+1)) ₂F₁(2, b; s + 2; 1/2) after Pfaff's transformation.
        let m1 = (a / s) * half_series(b, s + 1.0, |_| 1.0);
        let m2 = (a / s) * ((a + 1.0) / (s + 1.0)) * half_series(b, s + 2.0, |k| k + 1.0);
        (m1, m2)
    }
}

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton's method on the Legendre polynomial).
pub(crate) fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    let mut rule = Vec::with_capacity(n);
    for i in 0..n {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut derivative = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let kf = k as f64;
                let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
                p0 = p1;
                p1 = p2;
            }
            derivative = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let step = p1 / derivative;
            x -= step;
            if step.abs() < 1e-16 {
                break;
            }
        }
        rule.push((x, 2.0 / ((1.0 - x * x) * derivative * derivative)));
    }
    rule
}

/// Variance of F1 by quadrature against the Beta density, for shapes so large that J is all
/// but normal: ±14 standard deviations in 8 panels of 16 nodes, the density normalised by the
/// same rule so that its error cancels.
fn variance_by_quadrature(a: f64, b: f64, mean: f64) -> f64 {
    let s = a + b;
    let centre = a / s;
    let sd = (a * b / (s * s * (s + 1.0))).sqrt();
    let (low, high) = ((centre - 14.0 * sd).max(0.0), (centre + 14.0 * sd).min(1.0));
    let peak = beta_ln_pdf(centre, a, b);
    let rule = gauss_legendre(16);
    let panels = 8;
    let width = (high - low) / panels as f64;
    let (mut mass, mut second) = (0.0, 0.0);
    for panel in 0..panels {
        let mid = low + (panel as f64 + 0.5) * width;
        for &(node, weight) in &rule {
            let x = mid + 0.5 * width * node;
            let density = (beta_ln_pdf(x, a, b) - peak).exp() * weight;
            // F1(x) − mean, formed as a difference of nearby values of 2x/(1+x).
            let deviation = f1_of_jaccard(x) - mean;
            mass += density;
            second += density * deviation * deviation;
        }
    }
    second / mass
}

/// Mean and variance of F1 when J ~ Beta(a, b), a, b >= 1.
pub fn f1_mean_var(a: f64, b: f64) -> Result<(f64, f64)> {
    check(a, b)?;
    let (m1, m2) = raw_moments(a, b, false);
    let (c1, c2) = raw_moments(a, b, true);
    // Var = E[X²] − E[X]² for X = F1 or 1 − F1 (the same variance). The difference loses
    // about log10(E[X²] / Var) digits, so take the X for which that is smaller; when both lose
    // more than six (a and b both in the millions) J is normal to many digits and quadrature
    // is accurate instead.
    let var_f = m2 - m1 * m1;
    let var_c = c2 - c1 * c1;
    let (var, lost) = if var_f / m2 >= var_c / c2 {
        (var_f, m2 / var_f)
    } else {
        (var_c, c2 / var_c)
    };
    let var = if lost.is_finite() && lost < 1e6 {
        var
    } else {
        variance_by_quadrature(a, b, m1)
    };
    Ok((m1, var.max(0.0)))
}

/// Mode of F1 (the argmax of its density) when J ~ Beta(a, b), a, b >= 1.
///
/// F1's density at f = 2j/(1+j) is the Beta density at j times dj/df = (1+j)²/2, so the mode
/// maximises (a−1) ln j + (b−1) ln(1−j) + 2 ln(1+j): the positive root of
/// s j² − (3 − b) j − (a − 1) = 0 (or an end of the interval).
pub fn f1_mode(a: f64, b: f64) -> Result<f64> {
    check(a, b)?;
    Ok(f1_of_jaccard(tilted_mode(a, b).0))
}

/// (j*, 1 − j*) for the mode j* of F1's density in Jaccard space, each from a cancellation-free
/// form: j* solves s j² − (3 − b) j − (a − 1) = 0 and u = 1 − j* solves
/// s u² − (2s + b − 3) u + 2(b − 1) = 0; both quadratics have discriminant (3 − b)² + 4s(a − 1).
fn tilted_mode(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let q = 3.0 - b;
    let disc = (q * q + 4.0 * s * (a - 1.0)).sqrt();
    let j = if q >= 0.0 {
        (q + disc) / (2.0 * s)
    } else {
        2.0 * (a - 1.0) / (disc - q)
    };
    let u = 4.0 * (b - 1.0) / ((2.0 * s + b - 3.0) + disc);
    (j.clamp(0.0, 1.0), u.clamp(0.0, 1.0))
}

/// Highest-density interval of F1 when J ~ Beta(a, b), a, b >= 1.
///
/// The interval of probability `ci` starting at lower-tail probability p has ends
/// F1(Q(p)) and F1(Q(p + ci)); it is shortest where F1's density is equal at both ends. That
/// density is unimodal, so the log-density difference φ(p) between the ends increases with p
/// and its root is found by safeguarded regula falsi (Illinois). The density is taken relative
/// to its mode through ln1p of the deviation, which keeps φ accurate for huge shapes.
pub fn f1_hdi(a: f64, b: f64, ci: f64) -> Result<(f64, f64)> {
    check(a, b)?;
    if !(ci > 0.0 && ci < 1.0) {
        return Err(Error::invalid(format!(
            "ci must be strictly between 0 and 1, got {ci}"
        )));
    }
    let (mode, mode_c) = tilted_mode(a, b);
    if a > 1.0 && b > 1.0 {
        // Interior mode: Newton's method on the lower end, as for the Beta HDI.
        let (lo, hi) = hdi_interior_mode(a, b, ci, Some((2.0, mode, mode_c)));
        return Ok(f1_interval(lo, hi));
    }
    // a or b is 1: the density may peak at an end, and the search below over the lower-tail
    // probability handles both an anchored and an interior interval.
    let ln_ratio = |value: f64, reference: f64, deviation: f64| -> f64 {
        if reference > 0.0 && deviation.abs() < 0.5 * reference {
            (deviation / reference).ln_1p()
        } else {
            value.ln() - reference.ln()
        }
    };
    // ln density of F1 at F1(j) relative to its mode (0 * ln 0 = 0 for a or b = 1).
    let log_density = |j: f64| -> f64 {
        let dj = if j < 0.5 {
            j - mode
        } else {
            mode_c - (1.0 - j)
        };
        let term = |coef: f64, value: f64, reference: f64, deviation: f64| -> f64 {
            if coef == 0.0 {
                0.0
            } else {
                coef * ln_ratio(value, reference, deviation)
            }
        };
        term(a - 1.0, j, mode, dj)
            + term(b - 1.0, 1.0 - j, mode_c, -dj)
            + 2.0 * (dj / (1.0 + mode)).ln_1p()
    };
    let ends = |p: f64| -> Result<(f64, f64)> {
        let upper_tail = (1.0 - ci - p).max(0.0);
        Ok((beta_ppf(p, a, b)?, beta_isf(upper_tail, a, b)?))
    };
    let phi = |p: f64| -> Result<(f64, (f64, f64))> {
        let (lo, hi) = ends(p)?;
        Ok((log_density(lo) - log_density(hi), (lo, hi)))
    };
    let (mut p0, mut p1) = (0.0, 1.0 - ci);
    let (mut f0, e0) = phi(p0)?;
    if f0 >= 0.0 {
        return Ok(f1_interval(e0.0, e0.1));
    }
    let (mut f1, e1) = phi(p1)?;
    if f1 <= 0.0 {
        return Ok(f1_interval(e1.0, e1.1));
    }
    let mut best = e0;
    let mut side = 0i8;
    for _ in 0..200 {
        let p = if f0.is_finite() && f1.is_finite() {
            let guess = p1 - f1 * (p1 - p0) / (f1 - f0);
            if guess > p0 && guess < p1 {
                guess
            } else {
                0.5 * (p0 + p1)
            }
        } else {
            0.5 * (p0 + p1)
        };
        let (f, e) = phi(p)?;
        best = e;
        // |φ| < 1e-13 puts p within ~1e-15 of the root: the ends are then exact to ~1e-13
        // standard deviations.
        if f.abs() < 1e-13 || p1 - p0 <= 4.0 * f64::EPSILON * p1 {
            break;
        }
        if f < 0.0 {
            p0 = p;
            f0 = f;
            if side == -1 {
                f1 *= 0.5; // Illinois: halve the stale end so the bracket shrinks from both sides
            }
            side = -1;
        } else {
            p1 = p;
            f1 = f;
            if side == 1 {
                f0 *= 0.5;
            }
            side = 1;
        }
    }
    Ok(f1_interval(best.0, best.1))
}

/// The F1 interval of a Jaccard interval. For a vanishing `ci` the ends can coincide, and
/// rounding in 2j/(1+j) must not put them in the wrong order.
fn f1_interval(lo: f64, hi: f64) -> (f64, f64) {
    let low = f1_of_jaccard(lo);
    (low, f1_of_jaccard(hi).max(low))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::beta_cdf_pair;

    /// E[g(F1)] by brute-force midpoint quadrature against the Beta density.
    fn brute(a: f64, b: f64, g: impl Fn(f64) -> f64) -> f64 {
        let n = 400_000;
        let (mut mass, mut total) = (0.0, 0.0);
        for i in 0..n {
            let j = (i as f64 + 0.5) / n as f64;
            let d = beta_ln_pdf(j, a, b).exp();
            mass += d;
            total += d * g(f1_of_jaccard(j));
        }
        total / mass
    }

    #[test]
    fn uniform_jaccard_has_closed_form_moments() {
        // J ~ U(0, 1): E[F1] = 2 (1 − ln 2), E[F1²] = 4 (3/2 − 2 ln 2) ... by direct integration.
        let (mean, var) = f1_mean_var(1.0, 1.0).unwrap();
        let ln2 = std::f64::consts::LN_2;
        assert!((mean - 2.0 * (1.0 - ln2)).abs() < 1e-15);
        // ∫ (2x/(1+x))² dx = 4 (x − 2 ln(1+x) − 1/(1+x)) |0..1 = 4 (3/2 − 2 ln 2)
        let second = 4.0 * (1.5 - 2.0 * ln2);
        assert!((var - (second - mean * mean)).abs() < 1e-14);
    }

    #[test]
    fn moments_match_brute_force_quadrature() {
        for &(a, b) in &[(2.0, 3.0), (1.0, 7.5), (40.0, 2.0), (530.0, 420.0)] {
            let (mean, var) = f1_mean_var(a, b).unwrap();
            let m = brute(a, b, |f| f);
            let v = brute(a, b, |f| (f - m) * (f - m));
            assert!((mean - m).abs() < 1e-9, "{a} {b}: {mean} vs {m}");
            assert!(
                (var - v).abs() < 1e-9 * v.max(1e-6),
                "{a} {b}: {var} vs {v}"
            );
        }
    }

    #[test]
    fn series_and_quadrature_agree_where_both_apply() {
        // Shapes in the tens of thousands: the series loses ~4 digits, and J is normal enough
        // for the quadrature; the two independent methods must agree.
        for &(a, b) in &[(1e4, 6e3), (1e5, 1e5), (4e4, 2e3)] {
            let (mean, var) = f1_mean_var(a, b).unwrap();
            let quad = variance_by_quadrature(a, b, mean);
            assert!((var / quad - 1.0).abs() < 1e-9, "{a} {b}: {var} vs {quad}");
        }
        // And past the switch the variance still matches the delta method to O(1/n).
        let (a, b) = (3e9, 2e9);
        let (_, var) = f1_mean_var(a, b).unwrap();
        let s = a + b;
        let m = a / s;
        let slope = 2.0 / ((1.0 + m) * (1.0 + m));
        let delta = slope * slope * a * b / (s * s * (s + 1.0));
        assert!((var / delta - 1.0).abs() < 1e-8, "{var} vs {delta}");
    }

    #[test]
    fn mode_maximises_the_density() {
        for &(a, b) in &[
            (1.0, 1.0),
            (1.0, 5.0),
            (3.0, 2.0),
            (5285.0, 4186.0),
            (2.0, 1.0),
        ] {
            let mode = f1_mode(a, b).unwrap();
            let log_f = |f: f64| {
                let j = f / (2.0 - f);
                beta_ln_pdf(j, a, b) + 2.0 * (1.0 + j).ln()
            };
            let best = (0..=100_000).map(|i| i as f64 / 100_000.0).fold(
                (0.0, f64::NEG_INFINITY),
                |acc, f| {
                    let v = log_f(f);
                    if v > acc.1 { (f, v) } else { acc }
                },
            );
            assert!(log_f(mode) >= best.1 - 1e-9, "{a} {b}: {mode} vs {best:?}");
        }
    }

    #[test]
    fn hdi_has_equal_density_ends_and_the_right_mass() {
        for &(a, b, ci) in &[
            (5286.0, 4186.0, 0.95),
            (3.0, 9.0, 0.9),
            (1.5, 1.2, 0.5),
            (2e12, 1e12, 0.95),
        ] {
            let (lo, hi) = f1_hdi(a, b, ci).unwrap();
            let j = |f: f64| f / (2.0 - f);
            let mass = beta_cdf_pair(j(hi), a, b).0 - beta_cdf_pair(j(lo), a, b).0;
            assert!((mass - ci).abs() < 1e-8, "{a} {b}: mass {mass}");
            let ln_density = |f: f64| beta_ln_pdf(j(f), a, b) + 2.0 * (1.0 + j(f)).ln();
            let gap = ln_density(lo) - ln_density(hi);
            assert!(gap.abs() < 1e-6, "{a} {b}: density gap {gap}");
        }
    }

    #[test]
    fn hdi_has_equal_density_ends_when_a_or_b_is_one() {
        // a = 1 with b < 3: the density rises from 0 to an interior mode, and the interval may
        // or may not reach 0; b = 1: it rises all the way to the end at 1.
        for &(a, b, ci) in &[
            (1.0, 1.5, 0.5),
            (1.0, 2.5, 0.3),
            (1.0, 2.9, 0.95),
            (4.0, 1.0, 0.6),
        ] {
            let (lo, hi) = f1_hdi(a, b, ci).unwrap();
            let j = |f: f64| f / (2.0 - f);
            let mass = beta_cdf_pair(j(hi), a, b).0 - beta_cdf_pair(j(lo), a, b).0;
            assert!((mass - ci).abs() < 1e-9, "{a} {b}: mass {mass}");
            let ln_density = |f: f64| beta_ln_pdf(j(f), a, b) + 2.0 * (1.0 + j(f)).ln();
            if lo > 0.0 && hi < 1.0 {
                let gap = ln_density(lo) - ln_density(hi);
                assert!(gap.abs() < 1e-9, "{a} {b}: density gap {gap}");
            } else {
                // Anchored: no shift of the window shortens it.
                let width = |p: f64| {
                    let lo = f1_of_jaccard(beta_ppf(p, a, b).unwrap());
                    let hi = f1_of_jaccard(beta_ppf(p + ci, a, b).unwrap());
                    hi - lo
                };
                let best = (0..=1000)
                    .map(|i| width(i as f64 / 1000.0 * (1.0 - ci)))
                    .fold(f64::INFINITY, f64::min);
                assert!(hi - lo <= best + 1e-12, "{a} {b}: {lo} {hi} vs {best}");
            }
        }
    }

    #[test]
    fn hdi_is_anchored_when_the_mode_is_at_an_end() {
        // J ~ U(0, 1): F1's density 2/(2 − f)² increases, so the HDI ends at 1.
        let (lo, hi) = f1_hdi(1.0, 1.0, 0.8).unwrap();
        assert_eq!(hi, 1.0);
        assert!((lo - f1_of_jaccard(0.2)).abs() < 1e-12);
        // a = 1, b = 9: decreasing density, HDI starts at 0.
        let (lo, hi) = f1_hdi(1.0, 9.0, 0.9).unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - f1_of_jaccard(beta_ppf(0.9, 1.0, 9.0).unwrap())).abs() < 1e-12);
    }

    #[test]
    fn rejects_shapes_below_one_and_bad_ci() {
        assert!(f1_mean_var(0.5, 2.0).is_err());
        assert!(f1_mode(2.0, f64::NAN).is_err());
        assert!(f1_hdi(2.0, 2.0, 1.0).is_err());
        assert!(f1_hdi(2.0, 1e101, 0.5).is_err());
    }
}
