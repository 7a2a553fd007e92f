//! Gamma, Beta and Dirichlet sampling into caller-provided buffers.
//!
//! * Standard normals: 256-layer ziggurat (Marsaglia & Tsang 2000) with 53-bit uniforms and
//!   layer/sign bits taken from disjoint bits of the same 64-bit word.
//! * Gamma(shape, 1): Marsaglia & Tsang (2000) for shape >= 1; for shape < 1 the boost
//!   Gamma(shape) = Gamma(shape + 1) * U^(1/shape); shape == 0 is the point mass at 0
//!   (a cell with no data under a zero prior).
//! * Beta(a, b) = Ga / (Ga + Gb) — faster than a dedicated Beta sampler. When a shape is below 1
//!   the boost can underflow to 0, so those draws are made in log space instead.
//! * Dirichlet = normalised gammas, with the same log-space fallback.

use crate::rng::{BLOCK, Xoshiro256pp};
use crate::{Error, Result};
use std::sync::LazyLock;

/// Right edge of the ziggurat base layer for 256 layers of the standard normal density.
const ZIG_R: f64 = 3.654_152_885_361_009;

/// Layer edges `x` and density values `f(x) = exp(-x^2 / 2)` of the 256-layer ziggurat.
pub struct Ziggurat {
    x: [f64; 257],
    fx: [f64; 257],
}

impl Ziggurat {
    fn build() -> Self {
        let f = |x: f64| (-0.5 * x * x).exp();
        // Common area of every layer: the base rectangle plus the tail beyond R.
        let v = ZIG_R * f(ZIG_R)
            + (std::f64::consts::PI / 2.0).sqrt() * libm::erfc(ZIG_R / std::f64::consts::SQRT_2);
        let mut x = [0.0; 257];
        x[0] = v / f(ZIG_R);
        x[1] = ZIG_R;
        for i in 1..256 {
            let arg = v / x[i] + f(x[i]);
            x[i + 1] = if arg < 1.0 {
                (-2.0 * arg.ln()).sqrt()
            } else {
                0.0
            };
        }
        x[256] = 0.0;
        let mut fx = [0.0; 257];
        for i in 0..257 {
            fx[i] = f(x[i]);
        }
        Self { x, fx }
    }
}

static ZIGGURAT: LazyLock<Ziggurat> = LazyLock::new(Ziggurat::build);

/// Right edge of the base layer of the 256-layer ziggurat of the Exp(1) density.
const EXP_R: f64 = 7.697_117_470_131_05;

impl Ziggurat {
    /// Layers of f(x) = exp(-x) (Marsaglia & Tsang 2000): each holds the area
    /// V = R f(R) + ∫_R^∞ f = (R + 1) e^-R.
    fn build_exponential() -> Self {
        let f = |x: f64| (-x).exp();
        let v = (EXP_R + 1.0) * f(EXP_R);
        let mut x = [0.0; 257];
        x[0] = v / f(EXP_R);
        x[1] = EXP_R;
        for i in 1..256 {
            let arg = v / x[i] + f(x[i]);
            x[i + 1] = if arg < 1.0 { -arg.ln() } else { 0.0 };
        }
        x[256] = 0.0;
        let mut fx = [0.0; 257];
        for i in 0..257 {
            fx[i] = f(x[i]);
        }
        Self { x, fx }
    }
}

static EXP_ZIGGURAT: LazyLock<Ziggurat> = LazyLock::new(Ziggurat::build_exponential);

/// A Gamma(shape, 1) sampler with its constants precomputed (construct once, draw many times).
#[derive(Clone, Copy, Debug)]
pub struct Gamma {
    /// Marsaglia–Tsang constants for max(shape, shape + 1 if shape < 1).
    d: f64,
    c: f64,
    /// 1 / (63 d), the coefficient of the tight squeeze (see `exact_acceptance`).
    tight: f64,
    /// 1 / shape when the boost for shape < 1 is needed, else 0.
    inv_shape: f64,
    zero: bool,
    /// Shape exactly 1 — the Exp(1) of a unit-weight row in a Bayesian bootstrap — is drawn
    /// by its own ziggurat, about twice as fast as Marsaglia–Tsang at that shape.
    exponential: bool,
}

/// Largest gamma shape (a Dirichlet or Beta parameter: counts plus prior) accepted. Draws are
/// about the size of their shape, and the metric formulas multiply two or four of them: above
/// ~1e150 those products overflow to inf and a scale-invariant metric becomes inf/inf = NaN.
/// 1e100 leaves room for sums over a million cells and is far beyond any real count.
pub const MAX_SHAPE: f64 = 1e100;

impl Gamma {
    /// Sampler for Gamma(shape, 1); `shape` must be finite, >= 0 and at most [`MAX_SHAPE`].
    pub fn new(shape: f64) -> Result<Self> {
        if !(shape.is_finite() && shape >= 0.0) {
            return Err(Error::invalid(format!(
                "gamma shape must be finite and >= 0, got {shape}"
            )));
        }
        if shape > MAX_SHAPE {
            return Err(Error::invalid(format!(
                "Dirichlet/Beta parameters (counts plus prior) must be at most {MAX_SHAPE:e}, \
                 got {shape:e}"
            )));
        }
        if shape == 0.0 {
            return Ok(Self {
                d: 0.0,
                c: 0.0,
                tight: 0.0,
                inv_shape: 0.0,
                zero: true,
                exponential: false,
            });
        }
        let (base, inv_shape) = if shape < 1.0 {
            (shape + 1.0, 1.0 / shape)
        } else {
            (shape, 0.0)
        };
        let d = base - 1.0 / 3.0;
        Ok(Self {
            d,
            c: 1.0 / (9.0 * d).sqrt(),
            tight: 1.0 / (63.0 * d),
            inv_shape,
            zero: false,
            exponential: shape == 1.0,
        })
    }

    /// Sampler for a shape known to be at least 1 (no validation needed): cheap enough to
    /// build for every draw when the shape changes from draw to draw.
    #[inline(always)]
    pub fn at_least_one(shape: f64) -> Self {
        debug_assert!(shape >= 1.0);
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        Self {
            d,
            c,
            // c² / 7 = 1 / (63 d) up to an ulp, without a second division; the squeeze has
            // slack to spare (the proven constant is 63.73, see `exact_acceptance`).
            tight: c * c / 7.0,
            inv_shape: 0.0,
            zero: false,
            exponential: shape == 1.0,
        }
    }

    /// True when draws of this shape can underflow to zero (shape < 1 or shape == 0).
    #[inline]
    pub fn is_small(&self) -> bool {
        self.zero || self.inv_shape > 0.0
    }
}

/// A Beta(a, b) sampler drawing Ga / (Ga + Gb).
#[derive(Clone, Copy, Debug)]
pub struct Beta {
    ga: Gamma,
    gb: Gamma,
    log_space: bool,
}

impl Beta {
    /// Sampler for Beta(a, b); both parameters finite and >= 0, not both 0.
    /// Beta(a, 0) is the point mass at 1 and Beta(0, b) the point mass at 0.
    pub fn new(a: f64, b: f64) -> Result<Self> {
        if a == 0.0 && b == 0.0 {
            return Err(Error::invalid(
                "Beta(0, 0) is improper: no data and a zero prior",
            ));
        }
        let ga = Gamma::new(a)?;
        let gb = Gamma::new(b)?;
        Ok(Self {
            ga,
            gb,
            log_space: ga.is_small() || gb.is_small(),
        })
    }
}

impl Beta {
    /// Fill `out` with Beta draws: the Ga values from sampler `ga`, the Gb values from `gb`
    /// (separate streams, each drawn as one tight loop), then one vectorised division. Shapes
    /// below 1 take the log-space path, one draw at a time from `ga`.
    pub fn fill(&self, mut ga: Sampler, mut gb: Sampler, out: &mut [f64]) {
        if self.log_space {
            for v in out.iter_mut() {
                *v = ga.beta(self);
            }
            return;
        }
        for v in out.iter_mut() {
            *v = ga.gamma(&self.ga);
        }
        for chunk in out.chunks_mut(BLOCK) {
            let mut b = [0.0f64; BLOCK];
            let b = &mut b[..chunk.len()];
            for v in b.iter_mut() {
                *v = gb.gamma(&self.gb);
            }
            for (x, y) in chunk.iter_mut().zip(b.iter()) {
                *x /= *x + y;
            }
        }
    }
}

/// Draws random variates from one generator (one stream of a parallel kernel).
pub struct Sampler {
    rng: Xoshiro256pp,
    zig: &'static Ziggurat,
    exp_zig: &'static Ziggurat,
    /// Unused 16-bit pieces of the last 64-bit draw, low piece first (see `bits16`).
    spare: u64,
    spare_pieces: u32,
}

impl Sampler {
    pub fn new(rng: Xoshiro256pp) -> Self {
        Self {
            rng,
            zig: &ZIGGURAT,
            exp_zig: &EXP_ZIGGURAT,
            spare: 0,
            spare_pieces: 0,
        }
    }

    /// 16 random bits; one 64-bit draw serves four calls.
    #[inline(always)]
    fn bits16(&mut self) -> u64 {
        if self.spare_pieces == 0 {
            self.spare = self.rng.next_u64();
            self.spare_pieces = 4;
        }
        self.spare_pieces -= 1;
        let bits = self.spare & 0xffff;
        self.spare >>= 16;
        bits
    }

    /// Uniform on (0, 1).
    #[inline(always)]
    pub fn uniform(&mut self) -> f64 {
        self.rng.open01()
    }

    /// Raw 64 random bits.
    #[inline(always)]
    pub fn bits(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Standard normal.
    #[inline(always)]
    pub fn normal(&mut self) -> f64 {
        let z = self.zig;
        loop {
            let bits = self.rng.next_u64();
            let i = (bits & 0xff) as usize;
            // The sign is applied by flipping the sign bit: a branch on a random bit would be
            // mispredicted half the time.
            let sign_bit = (bits & 0x100) << 55;
            let u = (bits >> 11) as i64 as f64 * (1.0 / (1u64 << 53) as f64);
            let x = u * z.x[i];
            if x < z.x[i + 1] {
                return f64::from_bits(x.to_bits() ^ sign_bit);
            }
            // Rare branches (~1%). Their extra uniforms are drawn here and handed to cold,
            // pure functions: a call that took `&mut self` would pin the generator state to
            // memory for the whole hot loop.
            if i == 0 {
                loop {
                    let (u1, u2) = (self.rng.open01(), self.rng.open01());
                    if let Some(v) = ziggurat_tail(u1, u2) {
                        return f64::from_bits(v.to_bits() ^ sign_bit);
                    }
                }
            }
            if ziggurat_wedge(z, i, x, self.rng.open01()) {
                return f64::from_bits(x.to_bits() ^ sign_bit);
            }
        }
    }

    /// Standard exponential, Exp(1).
    #[inline(always)]
    pub fn exponential(&mut self) -> f64 {
        let z = self.exp_zig;
        loop {
            let bits = self.rng.next_u64();
            let i = (bits & 0xff) as usize;
            let u = (bits >> 11) as i64 as f64 * (1.0 / (1u64 << 53) as f64);
            let x = u * z.x[i];
            if x < z.x[i + 1] {
                return x;
            }
            if i == 0 {
                // Beyond R the density is again exponential (memorylessness).
                return EXP_R + exponential_tail(self.rng.open01());
            }
            if exponential_wedge(z, i, x, self.rng.open01()) {
                return x;
            }
        }
    }

    /// Marsaglia–Tsang core: a Gamma(d + 1/3) draw.
    #[inline(always)]
    fn marsaglia_tsang(&mut self, g: &Gamma) -> f64 {
        let (d, c) = (g.d, g.c);
        loop {
            let x = self.normal();
            let t = c * x;
            if t <= -1.0 {
                continue;
            }
            let one_plus_t = 1.0 + t;
            let v = one_plus_t * one_plus_t * one_plus_t;
            let x4 = x * x * (x * x);
            // Squeeze: accept without a logarithm when u is below a lower bound of the exact
            // acceptance probability e^r. Marsaglia–Tsang's bound 1 − 0.0331 x⁴ holds for every
            // shape but fails ~10% of the time; for |t| < 0.5 the tighter 1 − x⁴ / (63 d) holds
            // (see `exact_acceptance`) and fails ~1e-5 of the time for d ≈ 5000.
            let squeeze = if t.abs() < 0.5 { g.tight } else { 0.0331 };
            let bound = 1.0 - squeeze * x4;
            // The uniform u is revealed lazily: its top 16 bits h place it in
            // [h, h + 1) / 2^16, which decides u < bound unless that bucket straddles the bound
            // (probability 2^-16). Only then, or when the squeeze fails, are its other 37 bits
            // drawn — u is the same 53-bit uniform as always, and the test stays exact.
            let high = self.bits16();
            if (high + 1) as i64 as f64 * (1.0 / 65536.0) <= bound {
                return d * v;
            }
            let low = self.rng.next_u64() >> 27;
            let u = (((high << 37) | low) as i64 as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
            if u < bound || exact_acceptance(u, x * x, t, d) {
                return d * v;
            }
        }
    }

    /// One Gamma(shape, 1) draw.
    #[inline(always)]
    pub fn gamma(&mut self, g: &Gamma) -> f64 {
        if g.zero {
            return 0.0;
        }
        if g.exponential {
            return self.exponential();
        }
        let x = self.marsaglia_tsang(g);
        if g.inv_shape > 0.0 {
            x * self.rng.open01().powf(g.inv_shape)
        } else {
            x
        }
    }

    /// The natural logarithm of one Gamma(shape, 1) draw (−inf for shape 0); never underflows.
    #[inline]
    pub fn ln_gamma_variate(&mut self, g: &Gamma) -> f64 {
        if g.zero {
            return f64::NEG_INFINITY;
        }
        if g.exponential {
            return self.exponential().ln();
        }
        let x = self.marsaglia_tsang(g).ln();
        if g.inv_shape > 0.0 {
            x + self.rng.open01().ln() * g.inv_shape
        } else {
            x
        }
    }

    /// One Beta draw.
    #[inline]
    pub fn beta(&mut self, b: &Beta) -> f64 {
        if !b.log_space {
            let x = self.gamma(&b.ga);
            let y = self.gamma(&b.gb);
            return x / (x + y);
        }
        let la = self.ln_gamma_variate(&b.ga);
        let lb = self.ln_gamma_variate(&b.gb);
        // x = Ga / (Ga + Gb) = 1 / (1 + exp(lb - la)); exp overflow gives the correct limit 0.
        if la == f64::NEG_INFINITY {
            0.0
        } else if lb == f64::NEG_INFINITY {
            1.0
        } else {
            1.0 / (1.0 + (lb - la).exp())
        }
    }

    /// One Binomial(n, p) draw: Knuth's beta splitting (TAOCP 3.4.1, algorithm B) halves n
    /// with one Beta(a, b) draw per step — the a-th smallest of n uniforms — then finishes
    /// with at most 16 Bernoulli trials. Exact, O(log n).
    pub fn binomial(&mut self, n: u64, p: f64) -> u64 {
        let (mut n, mut p) = (n, p.clamp(0.0, 1.0));
        let mut k = 0;
        while n > 16 {
            if p <= 0.0 {
                return k;
            }
            if p >= 1.0 {
                return k + n;
            }
            let a = 1 + n / 2;
            let b = n + 1 - a;
            let ga = self.gamma(&Gamma::at_least_one(a as f64));
            let gb = self.gamma(&Gamma::at_least_one(b as f64));
            let x = ga / (ga + gb);
            if x >= p {
                n = a - 1;
                p /= x;
            } else {
                k += a;
                n = b - 1;
                p = (p - x) / (1.0 - x);
            }
        }
        for _ in 0..n {
            k += u64::from(self.uniform() < p);
        }
        k
    }

    /// Unnormalised Dirichlet draw: independent gammas written to `out`. Ratio metrics are
    /// scale-invariant, so the fused kernels skip the normalisation.
    #[inline]
    pub fn gammas(&mut self, shapes: &[Gamma], out: &mut [f64]) {
        for (o, g) in out.iter_mut().zip(shapes) {
            *o = self.gamma(g);
        }
    }

    /// One normalised Dirichlet draw into `out` (same length as `shapes`, not all shapes zero).
    pub fn dirichlet(&mut self, shapes: &[Gamma], out: &mut [f64]) {
        self.gammas(shapes, out);
        let sum: f64 = out.iter().sum();
        // Far from underflow the direct draw is exact; a tiny (or subnormal) sum means the
        // shapes are tiny and precision is gone, so the draw is redone in log space.
        if sum > 1e-280 && sum.is_finite() {
            out.iter_mut().for_each(|v| *v /= sum);
            return;
        }
        self.dirichlet_log_space(shapes, out);
    }

    /// A normalised Dirichlet draw computed in log space: slower, but exact for shapes so
    /// small that the gammas themselves underflow.
    #[cold]
    pub fn dirichlet_log_space(&mut self, shapes: &[Gamma], out: &mut [f64]) {
        for (o, g) in out.iter_mut().zip(shapes) {
            *o = self.ln_gamma_variate(g);
        }
        let max = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if max == f64::NEG_INFINITY {
            // Every shape is so tiny (subnormal) that even its logarithm underflows: in that
            // limit one element takes all the mass, almost surely the one of largest shape.
            let inverse = |g: &Gamma| if g.zero { f64::INFINITY } else { g.inv_shape };
            let mut largest = 0;
            for (i, g) in shapes.iter().enumerate() {
                if inverse(g) < inverse(&shapes[largest]) {
                    largest = i;
                }
            }
            out.fill(0.0);
            if let Some(v) = out.get_mut(largest) {
                *v = 1.0;
            }
            return;
        }
        let mut total = 0.0;
        for v in out.iter_mut() {
            *v = (*v - max).exp();
            total += *v;
        }
        out.iter_mut().for_each(|v| *v /= total);
    }
}

/// Tail of the ziggurat beyond R (Marsaglia 1964): a candidate from two uniforms, or None.
#[cold]
#[inline(never)]
fn ziggurat_tail(u1: f64, u2: f64) -> Option<f64> {
    let a = -u1.ln() / ZIG_R;
    let b = -u2.ln();
    (b + b > a * a).then_some(ZIG_R + a)
}

/// Whether point x of layer i lies under the density (the wedge test), given a uniform.
#[cold]
#[inline(never)]
fn ziggurat_wedge(z: &Ziggurat, i: usize, x: f64, u: f64) -> bool {
    z.fx[i] + u * (z.fx[i + 1] - z.fx[i]) < (-0.5 * x * x).exp()
}

#[cold]
#[inline(never)]
fn exponential_tail(u: f64) -> f64 {
    -u.ln()
}

#[cold]
#[inline(never)]
fn exponential_wedge(z: &Ziggurat, i: usize, x: f64, u: f64) -> bool {
    z.fx[i] + u * (z.fx[i + 1] - z.fx[i]) < (-x).exp()
}

/// Marsaglia–Tsang's exact acceptance test `ln u < r`, for candidates the squeeze left
/// undecided, with r = x²/2 + d (1 − v + ln v), v = (1 + t)³, t = c x, c = 1 / sqrt(9d).
///
/// Why the tight squeeze is valid: expanding ln v = 3 ln(1 + t), the t, t² and t³ terms of r
/// cancel exactly and r = 3d (ln(1 + t) − t + t²/2 − t³/3) = 3d t⁴ P(t), with
/// P(t) = −1/4 + t/5 − t²/6 + … increasing on [−½, ½] (checked by a test), so there
/// P(t) ≥ P(−½) = −0.423688, r ≥ −1.27106 d t⁴ = −x⁴ / (63.73 d) since t⁴ = x⁴ / (81 d²), and
/// e^r ≥ 1 + r ≥ 1 − x⁴ / (63 d).
#[cold]
#[inline(never)]
fn exact_acceptance(u: f64, x2: f64, t: f64, d: f64) -> bool {
    u.ln() < 0.5 * x2 + d * (-t * (3.0 + t * (3.0 + t)) + 3.0 * t.ln_1p())
}

/// Validate Dirichlet parameters and build their gamma samplers.
pub fn dirichlet_shapes(alpha: &[f64]) -> Result<Vec<Gamma>> {
    if alpha.is_empty() {
        return Err(Error::invalid("Dirichlet needs at least one parameter"));
    }
    let shapes = alpha
        .iter()
        .map(|&a| Gamma::new(a))
        .collect::<Result<Vec<_>>>()?;
    if alpha.iter().all(|&a| a == 0.0) {
        return Err(Error::invalid(
            "Dirichlet parameters are all zero: no data and a zero prior",
        ));
    }
    Ok(shapes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn moments(xs: &[f64]) -> (f64, f64, f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let m = |k: i32| xs.iter().map(|x| (x - mean).powi(k)).sum::<f64>() / n;
        let var = m(2);
        (mean, var, m(3) / var.powf(1.5), m(4) / (var * var))
    }

    #[test]
    fn ziggurat_tables_close() {
        let z = Ziggurat::build();
        assert!(z.x[255] > 0.0 && z.x[255] < 0.3, "x[255] = {}", z.x[255]);
        for i in 1..256 {
            assert!(z.x[i] > z.x[i + 1]);
        }
    }

    #[test]
    fn exponential_ziggurat_layers_have_equal_area() {
        let z = Ziggurat::build_exponential();
        assert!(z.x[255] > 0.0 && z.x[255] < 0.1, "x[255] = {}", z.x[255]);
        let v = (EXP_R + 1.0) * (-EXP_R).exp();
        for i in 1..256 {
            assert!(z.x[i] > z.x[i + 1]);
            // Layer i spans [f(x_i), f(x_{i+1})] in height and x_i in width.
            let area = z.x[i] * (z.fx[i + 1] - z.fx[i]);
            assert!((area / v - 1.0).abs() < 1e-9, "layer {i}: {area} vs {v}");
        }
        // The top layer closes at the mode: f(x_256) = 1 up to the table's rounding.
        assert!((z.x[255] * (1.0 - z.fx[255]) / v - 1.0).abs() < 1e-6);
    }

    #[test]
    fn exponential_moments_and_tail() {
        let mut s = Sampler::new(stream(4, 0));
        let n = 2_000_000;
        let xs: Vec<f64> = (0..n).map(|_| s.exponential()).collect();
        let nf = n as f64;
        let mean = xs.iter().sum::<f64>() / nf;
        let second = xs.iter().map(|x| x * x).sum::<f64>() / nf;
        // Exp(1): mean 1 (sd 1), E[x^2] = 2 (sd sqrt(20)).
        assert!((mean - 1.0).abs() < 5.0 / nf.sqrt(), "mean {mean}");
        assert!(
            (second - 2.0).abs() < 5.0 * 20f64.sqrt() / nf.sqrt(),
            "E x^2 {second}"
        );
        // Tail and body probabilities against e^-t, within 5 binomial sd.
        for t in [0.01, 0.1, 0.5, 1.0, 3.0, 7.0, EXP_R, 9.0, 12.0] {
            let p = (-t).exp();
            let observed = xs.iter().filter(|&&x| x > t).count() as f64 / nf;
            let sd = (p * (1.0 - p) / nf).sqrt();
            assert!(
                (observed - p).abs() < 5.0 * sd + 1e-9,
                "P(x > {t}) {observed} vs {p}"
            );
        }
        assert!(xs.iter().all(|&x| x >= 0.0 && x.is_finite()));
    }

    #[test]
    fn binomial_matches_its_moments_and_edges() {
        let mut s = Sampler::new(stream(6, 0));
        for &(n, p) in &[
            (5u64, 0.3),
            (40, 0.5),
            (1000, 0.02),
            (100_000, 0.7),
            (37, 0.999),
        ] {
            let draws = 200_000;
            let xs: Vec<f64> = (0..draws).map(|_| s.binomial(n, p) as f64).collect();
            assert!(xs.iter().all(|&x| x <= n as f64));
            let mean = xs.iter().sum::<f64>() / draws as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws as f64;
            let (m, v) = (n as f64 * p, n as f64 * p * (1.0 - p));
            assert!(
                (mean - m).abs() < 5.0 * (v / draws as f64).sqrt(),
                "n={n} p={p}: {mean}"
            );
            // The variance of a sample variance is about 2 v^2 / draws for these shapes.
            assert!(
                (var / v - 1.0).abs() < 5.0 * (2.0 / draws as f64).sqrt() + 0.01,
                "{var}"
            );
        }
        assert_eq!(s.binomial(50, 0.0), 0);
        assert_eq!(s.binomial(50, 1.0), 50);
        assert_eq!(s.binomial(0, 0.5), 0);
        // P(X = 0) for Binomial(20, 0.1) = 0.9^20: the split path's lower tail.
        let zeros = (0..200_000).filter(|_| s.binomial(20, 0.1) == 0).count() as f64 / 2e5;
        let p0 = 0.9f64.powi(20);
        assert!(
            (zeros - p0).abs() < 5.0 * (p0 * (1.0 - p0) / 2e5).sqrt(),
            "{zeros} vs {p0}"
        );
    }

    #[test]
    fn normal_moments_and_tails() {
        let mut s = Sampler::new(stream(1, 0));
        let n = 2_000_000;
        let xs: Vec<f64> = (0..n).map(|_| s.normal()).collect();
        let (mean, var, skew, kurt) = moments(&xs);
        let nf = n as f64;
        assert!(mean.abs() < 5.0 / nf.sqrt(), "mean {mean}");
        assert!((var - 1.0).abs() < 5.0 * (2.0 / nf).sqrt(), "var {var}");
        assert!(skew.abs() < 5.0 * (6.0 / nf).sqrt(), "skew {skew}");
        assert!((kurt - 3.0).abs() < 5.0 * (24.0 / nf).sqrt(), "kurt {kurt}");
        // P(|Z| > R) = erfc(R / sqrt 2) ~ 2.58e-4: exercises the tail branch.
        let p = libm::erfc(ZIG_R / std::f64::consts::SQRT_2);
        let tail = xs.iter().filter(|x| x.abs() > ZIG_R).count() as f64 / nf;
        assert!(
            (tail - p).abs() < 5.0 * (p / nf).sqrt(),
            "tail {tail} vs {p}"
        );
        // P(Z < -1) and P(Z < 0.5) against the normal cdf.
        for (q, cdf) in [(-1.0, 0.158_655_253_931_457), (0.5, 0.691_462_461_274_013)] {
            let f = xs.iter().filter(|&&x| x < q).count() as f64 / nf;
            assert!((f - cdf).abs() < 5.0 * (cdf * (1.0 - cdf) / nf).sqrt());
        }
    }

    #[test]
    fn gamma_moments_across_shapes() {
        for (k, &shape) in [0.05, 0.5, 1.0, 3.7, 250.0, 1e6, 1e12].iter().enumerate() {
            let g = Gamma::new(shape).unwrap();
            let mut s = Sampler::new(stream(11, k as u64));
            let n = 400_000;
            let xs: Vec<f64> = (0..n).map(|_| s.gamma(&g)).collect();
            let (mean, var, skew, _) = moments(&xs);
            let nf = n as f64;
            // Mean shape, variance shape, skewness 2 / sqrt(shape).
            assert!(
                (mean - shape).abs() < 5.0 * (shape / nf).sqrt(),
                "shape {shape}: mean {mean}"
            );
            let var_sd = shape * ((2.0 + 6.0 / shape) / nf).sqrt();
            assert!(
                (var - shape).abs() < 6.0 * var_sd,
                "shape {shape}: var {var}"
            );
            if shape >= 1.0 {
                let target = 2.0 / shape.sqrt();
                assert!((skew - target).abs() < 0.05 + 0.2 * target, "skew {skew}");
            }
            assert!(xs.iter().all(|x| x.is_finite() && *x >= 0.0));
        }
    }

    #[test]
    fn tight_squeeze_bound_holds() {
        // P(t) = (ln(1 + t) − t + t²/2 − t³/3) / t⁴ must be >= P(−1/2) on [−1/2, 1/2]
        // (evaluated by its series near 0, where the closed form cancels).
        let p = |t: f64| -> f64 {
            if t.abs() < 0.05 {
                (4..40).rev().fold(0.0, |acc, k| {
                    let sign = if k % 2 == 0 { -1.0 } else { 1.0 };
                    acc * t + sign / k as f64
                })
            } else {
                ((t).ln_1p() - t + t * t / 2.0 - t * t * t / 3.0) / t.powi(4)
            }
        };
        let minimum = p(-0.5);
        assert!((minimum + 0.423_688).abs() < 1e-6, "{minimum}");
        for i in 0..=100_000 {
            let t = -0.5 + i as f64 * 1e-5;
            assert!(p(t) >= minimum - 1e-12, "P({t}) = {} < {minimum}", p(t));
        }
        // The coefficient used, 1 / (63 d), must dominate 3 |P(−1/2)| / (81 d) = 1 / (63.73 d).
        assert!(3.0 * -minimum / 81.0 <= 1.0 / 63.0);
    }

    #[test]
    fn gamma_zero_shape_is_point_mass() {
        let g = Gamma::new(0.0).unwrap();
        let mut s = Sampler::new(stream(3, 0));
        assert_eq!(s.gamma(&g), 0.0);
        assert_eq!(s.ln_gamma_variate(&g), f64::NEG_INFINITY);
        assert!(Gamma::new(-1.0).is_err());
        assert!(Gamma::new(f64::NAN).is_err());
        assert!(Gamma::new(f64::INFINITY).is_err());
    }

    #[test]
    fn beta_mean_and_variance_incl_log_space() {
        for (k, &(a, b)) in [(2.0, 5.0), (0.5, 0.5), (0.01, 3.0), (5286.0, 3185.0)]
            .iter()
            .enumerate()
        {
            let beta = Beta::new(a, b).unwrap();
            let mut s = Sampler::new(stream(5, k as u64));
            let n = 400_000;
            let xs: Vec<f64> = (0..n).map(|_| s.beta(&beta)).collect();
            assert!(xs.iter().all(|x| (0.0..=1.0).contains(x)));
            let (mean, var, _, _) = moments(&xs);
            let m = a / (a + b);
            let v = a * b / ((a + b) * (a + b) * (a + b + 1.0));
            let nf = n as f64;
            assert!(
                (mean - m).abs() < 5.0 * (v / nf).sqrt(),
                "Beta({a},{b}) mean {mean} vs {m}"
            );
            // Sampling sd of the sample variance: sigma^2 sqrt((kurtosis - 1) / n).
            let excess = 6.0 * ((a - b).powi(2) * (a + b + 1.0) - a * b * (a + b + 2.0))
                / (a * b * (a + b + 2.0) * (a + b + 3.0));
            let var_sd = v * ((excess + 2.0) / nf).sqrt();
            assert!((var - v).abs() < 5.0 * var_sd, "var {var} vs {v}");
        }
    }

    #[test]
    fn beta_degenerate_parameters() {
        let mut s = Sampler::new(stream(0, 0));
        assert_eq!(s.beta(&Beta::new(0.0, 2.0).unwrap()), 0.0);
        assert_eq!(s.beta(&Beta::new(3.0, 0.0).unwrap()), 1.0);
        assert!(Beta::new(0.0, 0.0).is_err());
    }

    #[test]
    fn dirichlet_sums_to_one_even_for_tiny_shapes() {
        let mut s = Sampler::new(stream(8, 0));
        for alpha in [
            vec![1.0, 2.0, 3.0, 4.0],
            vec![1e-4; 4],
            vec![0.0, 1e-5, 0.0, 2.0],
        ] {
            let shapes = dirichlet_shapes(&alpha).unwrap();
            let mut out = vec![0.0; alpha.len()];
            for _ in 0..10_000 {
                s.dirichlet(&shapes, &mut out);
                let sum: f64 = out.iter().sum();
                assert!((sum - 1.0).abs() < 1e-12, "sum {sum}");
                assert!(out.iter().all(|v| v.is_finite() && *v >= 0.0));
            }
        }
        assert!(dirichlet_shapes(&[0.0, 0.0]).is_err());
        assert!(dirichlet_shapes(&[]).is_err());
    }
}
