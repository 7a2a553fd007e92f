//! Seeded, splittable random streams.
//!
//! Every random kernel in this crate splits its work into fixed-size blocks of draws and gives
//! block `b` its own generator `stream(seed, b)`. The split depends only on the seed and the
//! block index — never on the number of threads — so a result is bit-identical whether rayon
//! runs it on one thread or on eight.
//!
//! The generator is Xoshiro256++ (Blackman & Vigna), seeded through SplitMix64 exactly like
//! `rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64`; the tests check both against that crate.
//! It is implemented here (a dozen lines) so that the stream of values is fixed by this crate,
//! not by the release cadence of a dependency.

/// Number of draws per block. Part of the reproducibility contract: changing it changes results.
pub const BLOCK: usize = 1024;

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output function (a strong 64-bit mixer).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One step of the SplitMix64 generator.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    mix64(*state)
}

/// Derive an independent 64-bit seed for sub-task `key` of the task seeded with `seed`.
///
/// Used for hierarchical splitting, e.g. (seed, segment) -> segment seed -> block streams.
#[inline]
pub fn fork(seed: u64, key: u64) -> u64 {
    mix64(
        seed ^ mix64(
            key.wrapping_mul(GOLDEN_GAMMA)
                .wrapping_add(0x632B_E59B_D9B4_E019),
        ),
    )
}

/// Xoshiro256++: small, fast, statistically strong, with a documented reference implementation.
#[derive(Clone, Debug)]
pub struct Xoshiro256pp {
    s: [u64; 4],
}

impl Xoshiro256pp {
    /// Generator with an explicit state. An all-zero state is replaced by a fixed non-zero one
    /// (the all-zero state is the generator's only fixed point).
    pub fn from_state(s: [u64; 4]) -> Self {
        if s == [0; 4] {
            return Self::seed_from_u64(0);
        }
        Self { s }
    }

    /// Expand a 64-bit seed into the 256-bit state with SplitMix64.
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        // SplitMix64 is a bijection per output, four zeros in a row cannot occur.
        Self { s }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on the open interval (0, 1): never exactly 0, so `ln(u)` is always finite.
    #[inline(always)]
    pub fn open01(&mut self) -> f64 {
        // Through i64: the value fits in 53 bits, and a signed conversion is one instruction on
        // baseline x86-64 where an unsigned one is several.
        ((self.next_u64() >> 11) as i64 as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }
}

/// The generator for block (or sub-task) `index` of the task seeded with `seed`.
#[inline]
pub fn stream(seed: u64, index: u64) -> Xoshiro256pp {
    Xoshiro256pp::seed_from_u64(fork(seed, index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn matches_reference_implementation_from_explicit_state() {
        let state = [
            0x0123_4567_89ab_cdef_u64,
            0xfedc_ba98_7654_3210,
            0x0f1e_2d3c_4b5a_6978,
            0x8796_a5b4_c3d2_e1f0,
        ];
        let mut bytes = [0u8; 32];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(state) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let mut reference = Xoshiro256PlusPlus::from_seed(bytes);
        let mut ours = Xoshiro256pp::from_state(state);
        for _ in 0..10_000 {
            assert_eq!(ours.next_u64(), reference.next_u64());
        }
    }

    #[test]
    fn seeding_matches_reference_implementation() {
        for seed in [0u64, 1, 42, u64::MAX, 0xdead_beef] {
            let mut reference = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut ours = Xoshiro256pp::seed_from_u64(seed);
            for _ in 0..1000 {
                assert_eq!(ours.next_u64(), reference.next_u64());
            }
        }
    }

    #[test]
    fn open01_is_strictly_inside_the_unit_interval() {
        let mut rng = stream(7, 0);
        let mut lo = 1.0f64;
        let mut hi = 0.0f64;
        let mut sum = 0.0;
        let n = 200_000;
        for _ in 0..n {
            let u = rng.open01();
            assert!(u > 0.0 && u < 1.0);
            lo = lo.min(u);
            hi = hi.max(u);
            sum += u;
        }
        // Mean of n uniforms: sd = sqrt(1/12/n) ~ 6.5e-4; allow 5 sd.
        assert!((sum / n as f64 - 0.5).abs() < 5.0 * (1.0 / 12.0 / n as f64).sqrt());
        assert!(lo < 1e-4 && hi > 1.0 - 1e-4);
    }

    #[test]
    fn streams_differ_between_blocks_and_seeds() {
        let a: Vec<u64> = (0..4).map(|i| stream(1, i).next_u64()).collect();
        let b: Vec<u64> = (0..4).map(|i| stream(2, i).next_u64()).collect();
        for i in 0..4 {
            for j in 0..4 {
                if i != j {
                    assert_ne!(a[i], a[j]);
                }
                assert_ne!(a[i], b[j]);
            }
        }
        assert_eq!(stream(1, 3).next_u64(), a[3]);
    }

    #[test]
    fn adjacent_streams_are_uncorrelated() {
        // Correlation of the uniforms of neighbouring streams, 100k pairs: |r| < 5 / sqrt(n).
        let n = 100_000;
        let mut s0 = stream(99, 0);
        let mut s1 = stream(99, 1);
        let (mut sx, mut sy, mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for _ in 0..n {
            let x = s0.open01();
            let y = s1.open01();
            sx += x;
            sy += y;
            sxy += x * y;
            sxx += x * x;
            syy += y * y;
        }
        let nf = n as f64;
        let cov = sxy / nf - sx * sy / nf / nf;
        let r = cov / ((sxx / nf - (sx / nf).powi(2)) * (syy / nf - (sy / nf).powi(2))).sqrt();
        assert!(r.abs() < 5.0 / nf.sqrt(), "r = {r}");
    }
}
