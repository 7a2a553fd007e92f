//! Production's course through time once labels arrive: the forward–backward algorithm on a
//! grid, for the label-free estimator's per-chunk prior of its calibration shift
//! (`probeval.labelfree.drift.production_walk_priors` builds the inputs and documents the
//! model).
//!
//! A *chain* is one combination of the model's hyperparameters: a move kernel (how the level
//! walks or jumps from one chunk to the next), a start (the level's prior at the first chunk)
//! and an own spread (how a chunk's shift scatters around the level). Per chain, the forward
//! pass gives each chunk's level given the labels before it, the backward pass the labels
//! after it; their product is the chunk's level given every *other* chunk's labels (the core
//! adds a chunk's own labels later). The chains are then averaged, per chunk, by their
//! posterior weight given the other chunks' labels, and the level is spread into the shift.
//!
//! Chains run in parallel, then chunks do; every sum runs in a fixed order, so results are
//! bit-identical for any number of threads. The numpy version this replaces spent its time in
//! small batched matrix products whose BLAS threads, on a loaded machine, slowed it 30-fold.

use crate::parallel;
use crate::{Error, Result};

/// The inputs, flat and row-major.
#[derive(Clone, Copy, Debug)]
pub struct Course<'a> {
    /// Grid points.
    pub points: usize,
    /// Chunks, in time order.
    pub chunks: usize,
    /// `(spreads, chunks, points)`: P(chunk's labels | level), up to a constant per chunk.
    pub emit: &'a [f64],
    /// `(spreads, points, points)`: P(shift a | level m), row m.
    pub spread: &'a [f64],
    /// `(moves, points, points)`: P(next level | level m), row m.
    pub moves: &'a [f64],
    /// `(starts, points)`: the level's prior at the first chunk.
    pub starts: &'a [f64],
    /// `(moves, spreads × starts)`: the chains' prior log-weights, the start varying fastest.
    pub log_weight: &'a [f64],
}

/// Floor of a normaliser or a likelihood before its logarithm or a division.
const TINY: f64 = 1e-300;

impl Course<'_> {
    fn n_spreads(&self) -> usize {
        self.spread.len() / (self.points * self.points).max(1)
    }
    fn n_moves(&self) -> usize {
        self.moves.len() / (self.points * self.points).max(1)
    }
    fn n_starts(&self) -> usize {
        self.starts.len() / self.points.max(1)
    }

    fn check(&self) -> Result<()> {
        let g = self.points;
        if g == 0 {
            return Err(Error::invalid("the course's grid needs at least one point"));
        }
        let (o, k, s) = (self.n_spreads(), self.n_moves(), self.n_starts());
        let sizes = [
            ("emit", self.emit.len(), o * self.chunks * g),
            ("spread", self.spread.len(), o * g * g),
            ("moves", self.moves.len(), k * g * g),
            ("starts", self.starts.len(), s * g),
            ("log_weight", self.log_weight.len(), k * o * s),
        ];
        for (name, got, want) in sizes {
            if got != want || want == 0 {
                return Err(Error::invalid(format!(
                    "{name} has {got} values; {o} spreads, {k} moves, {s} starts, {} chunks \
                     and {g} points need {want} (and at least one of each)",
                    self.chunks
                )));
            }
        }
        let finite = [self.emit, self.spread, self.moves, self.starts]
            .iter()
            .all(|values| values.iter().all(|v| v.is_finite() && *v >= 0.0));
        let weights = self.log_weight.iter();
        if !finite
            || weights.clone().any(|v| v.is_nan() || *v == f64::INFINITY)
            || !weights.clone().any(|v| v.is_finite())
        {
            return Err(Error::invalid(
                "the course's probabilities must be finite and non-negative, its log-weights \
                 below +inf, not NaN and not all -inf",
            ));
        }
        Ok(())
    }
}

/// What the chains of one move kernel leave for the chunks: per chain and chunk its level
/// given the other chunks' labels (normalised; single precision, `(chains, chunks, points)`)
/// and ln P(chunk's labels | the other chunks' labels) `(chains, chunks)`; and per chain
/// ln P(every label).
struct Chains {
    level: Vec<f32>,
    own: Vec<f64>,
    evidence: Vec<f64>,
}

/// Entries of a kernel row below this share of the row's largest are skipped: a normal's tails
/// beyond 11.8 sd, whose share of any product is below 1e-30 (a walk of sd 0.05 then touches
/// 117 of the 241 points instead of all).
const NEGLIGIBLE: f64 = 1e-30;

/// A move kernel's rows, each with the range of its columns that matter (one point for a
/// level that stays put; see [`NEGLIGIBLE`]).
struct Kernel {
    rows: Vec<f64>,
    nonzero: Vec<(usize, usize)>,
}

impl Kernel {
    fn new(rows: Vec<f64>, g: usize) -> Self {
        let nonzero = rows
            .chunks(g)
            .map(|row| {
                let floor = row.iter().copied().fold(0.0, f64::max) * NEGLIGIBLE;
                let low = row.iter().position(|&p| p > floor).unwrap_or(0);
                let high = row.iter().rposition(|&p| p > floor).map_or(0, |j| j + 1);
                (low, high.max(low))
            })
            .collect();
        Kernel { rows, nonzero }
    }

    /// The transposed matrix: [`Kernel::times`] with it is the backward pass's product.
    fn transposed(&self, g: usize) -> Self {
        let rows = (0..g * g).map(|i| self.rows[(i % g) * g + i / g]).collect();
        Kernel::new(rows, g)
    }

    /// `out[r, j] = Σ_m x[r, m] · K[m, j]` for every row r of `x` (each kernel row read once
    /// for all of them).
    fn times(&self, x: &[f64], out: &mut [f64], g: usize) {
        out.fill(0.0);
        for (m, &(low, high)) in self.nonzero.iter().enumerate() {
            let row = &self.rows[m * g + low..m * g + high];
            for (x, out) in x.chunks(g).zip(out.chunks_mut(g)) {
                let weight = x[m];
                if weight != 0.0 {
                    for (o, &p) in out[low..high].iter_mut().zip(row) {
                        *o += weight * p;
                    }
                }
            }
        }
    }
}

/// Scale `x` to sum 1 (left alone when its sum is below [`TINY`]); returns the sum.
fn normalise(x: &mut [f64]) -> f64 {
    let total: f64 = x.iter().sum();
    let scale = total.max(TINY);
    x.iter_mut().for_each(|v| *v /= scale);
    total
}

/// The forward and backward passes of every chain of one move kernel: chain r starts from
/// start `r % starts` and sees the emissions of spread `r / starts`.
fn run_kernel(course: &Course<'_>, kernel: &Kernel) -> Result<Chains> {
    let g = course.points;
    let transposed = kernel.transposed(g);
    let (n, s) = (course.chunks, course.n_starts());
    let rows = course.n_spreads() * s;
    let emit = |r: usize, c: usize| {
        let spread = r / s;
        &course.emit[(spread * n + c) * g..(spread * n + c + 1) * g]
    };
    // Every chain's level at every chunk, kept for the backward pass: the one buffer that
    // grows with the stream (69 MB at 1,000 chunks), so a failed allocation is an error.
    let len = rows.saturating_mul(n).saturating_mul(g);
    let mut level: Vec<f32> = Vec::new();
    level
        .try_reserve_exact(len)
        .map_err(|_| Error::OutOfMemory {
            bytes: len.saturating_mul(std::mem::size_of::<f32>()),
        })?;
    level.resize(len, 0.0);
    let mut message: Vec<f64> = (0..rows)
        .flat_map(|r| course.starts[(r % s) * g..(r % s + 1) * g].iter().copied())
        .collect();
    let mut next = vec![0.0; rows * g];
    let mut evidence = vec![0.0; rows];
    // Forward: each chunk's level before its labels (kept), then after them.
    for c in 0..n {
        if c > 0 {
            kernel.times(&message, &mut next, g);
            std::mem::swap(&mut message, &mut next);
        }
        for (r, msg) in message.chunks_mut(g).enumerate() {
            let kept = &mut level[(r * n + c) * g..(r * n + c + 1) * g];
            for (k, &v) in kept.iter_mut().zip(msg.iter()) {
                *k = v as f32;
            }
            for (v, &e) in msg.iter_mut().zip(emit(r, c)) {
                *v *= e;
            }
            evidence[r] += normalise(msg).max(TINY).ln();
        }
    }
    // Backward: the labels after each chunk, joined with the forward message before it.
    let mut back = vec![1.0; rows * g];
    let mut own = vec![0.0; rows * n];
    let mut both = vec![0.0; g];
    for c in (0..n).rev() {
        for (r, back) in back.chunks_mut(g).enumerate() {
            let seen = emit(r, c);
            let kept = &mut level[(r * n + c) * g..(r * n + c + 1) * g];
            for ((b, &f), &v) in both.iter_mut().zip(kept.iter()).zip(back.iter()) {
                *b = f64::from(f) * v;
            }
            normalise(&mut both);
            own[r * n + c] = both
                .iter()
                .zip(seen)
                .map(|(l, e)| l * e)
                .sum::<f64>()
                .max(TINY)
                .ln();
            for (k, &b) in kept.iter_mut().zip(&both) {
                *k = b as f32;
            }
            back.iter_mut().zip(seen).for_each(|(b, &e)| *b *= e);
        }
        if c > 0 {
            transposed.times(&back, &mut next, g);
            std::mem::swap(&mut back, &mut next);
            back.chunks_mut(g).for_each(|b| {
                normalise(b);
            });
        }
    }
    Ok(Chains {
        level,
        own,
        evidence,
    })
}

/// Per chunk, the log-density (maximum 0; -inf where it is 0) of its shift on the grid given
/// every other chunk's labels, averaged over the chains; `(chunks, points)`, row-major.
pub fn course_priors(course: &Course<'_>) -> Result<Vec<f64>> {
    course.check()?;
    let (g, n) = (course.points, course.chunks);
    let (o, s) = (course.n_spreads(), course.n_starts());
    let rows = o * s;
    let n_chains = course.n_moves() * rows;
    let kernels = parallel::map(course.n_moves(), |kernel| {
        let rows = course.moves[kernel * g * g..(kernel + 1) * g * g].to_vec();
        run_kernel(course, &Kernel::new(rows, g))
    })?;
    let spreads: Vec<Kernel> = course
        .spread
        .chunks(g * g)
        .map(|m| Kernel::new(m.to_vec(), g))
        .collect();
    let per_chunk = parallel::map(n, |c| {
        // The chains' weights given the other chunks' labels: all labels' evidence less this
        // chunk's own given the others. Chain `kernel × rows + r`, as in `log_weight`.
        let log_weight: Vec<f64> = (0..n_chains)
            .map(|chain| {
                let (data, r) = (&kernels[chain / rows], chain % rows);
                course.log_weight[chain] + data.evidence[r] - data.own[r * n + c]
            })
            .collect();
        let top = log_weight.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weight: Vec<f64> = log_weight.iter().map(|w| (w - top).exp()).collect();
        let total: f64 = weight.iter().sum();
        let mut by_spread = vec![0.0; o * g];
        for (chain, w) in weight.iter().enumerate() {
            let (data, r) = (&kernels[chain / rows], chain % rows);
            let spread = r / s;
            let level = &data.level[(r * n + c) * g..(r * n + c + 1) * g];
            for (b, &l) in by_spread[spread * g..(spread + 1) * g]
                .iter_mut()
                .zip(level)
            {
                *b += w / total * f64::from(l);
            }
        }
        let mut density = vec![0.0; g];
        let mut part = vec![0.0; g];
        for (spread, matrix) in spreads.iter().enumerate() {
            matrix.times(&by_spread[spread * g..(spread + 1) * g], &mut part, g);
            density.iter_mut().zip(&part).for_each(|(d, p)| *d += p);
        }
        let top = density.iter().copied().fold(0.0, f64::max);
        if top == 0.0 {
            // Every chain's level vanished (labels no grid point can explain): say nothing.
            return Ok(vec![0.0; g]);
        }
        Ok(density
            .into_iter()
            .map(|d| (d / top).ln())
            .collect::<Vec<f64>>())
    })?;
    Ok(per_chunk.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Normal rows on a grid, normalised.
    fn normals(grid: &[f64], sd: f64) -> Vec<f64> {
        let mut out = Vec::new();
        for &m in grid {
            let mut row: Vec<f64> = grid
                .iter()
                .map(|a| (-0.5 * ((a - m) / sd).powi(2)).exp())
                .collect();
            normalise(&mut row);
            out.extend(row);
        }
        out
    }

    /// Brute force for one chain over three chunks: the sum over every path of levels.
    #[test]
    fn one_chain_matches_the_sum_over_paths() {
        let grid: Vec<f64> = (0..7).map(|i| -0.6 + 0.2 * f64::from(i)).collect();
        let g = grid.len();
        let kernel = normals(&grid, 0.25);
        let spread = normals(&grid, 0.15);
        let start = normals(&grid, 0.3)[3 * g..4 * g].to_vec();
        let lik = |c: usize, a: f64| (-0.5 * ((a - [0.2, -0.3, 0.0][c]) / 0.3).powi(2)).exp();
        let emit: Vec<f64> = (0..3)
            .flat_map(|c| {
                let spread = &spread;
                let grid = &grid;
                (0..g).map(move |m| (0..g).map(|a| spread[m * g + a] * lik(c, grid[a])).sum())
            })
            .collect();
        let course = Course {
            points: g,
            chunks: 3,
            emit: &emit,
            spread: &spread,
            moves: &kernel,
            starts: &start,
            log_weight: &[0.0],
        };
        let out = course_priors(&course).unwrap();
        for c in 0..3 {
            let mut density = vec![0.0; g];
            for m0 in 0..g {
                for m1 in 0..g {
                    for m2 in 0..g {
                        let path = [m0, m1, m2];
                        let mut p = start[m0] * kernel[m0 * g + m1] * kernel[m1 * g + m2];
                        for (d, &m) in path.iter().enumerate() {
                            if d != c {
                                p *= emit[d * g + m];
                            }
                        }
                        for a in 0..g {
                            density[a] += p * spread[path[c] * g + a];
                        }
                    }
                }
            }
            let top = density.iter().copied().fold(0.0, f64::max);
            for a in 0..g {
                let want = (density[a] / top).ln();
                assert!((out[c * g + a] - want).abs() < 1e-5, "{c} {a}");
            }
        }
    }

    #[test]
    fn mismatched_shapes_are_refused() {
        let one = [1.0];
        let course = Course {
            points: 1,
            chunks: 2,
            emit: &one,
            spread: &one,
            moves: &one,
            starts: &one,
            log_weight: &[0.0],
        };
        assert!(matches!(course_priors(&course), Err(Error::Invalid(_))));
    }
}
