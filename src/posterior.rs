//! Fused "draw -> metrics" kernels, parallel with rayon and reproducible.
//!
//! A kernel never materialises the (draws × cells) matrix: each draw lives in a few registers
//! (or one K²-cell buffer per block for multiclass) and only the requested metrics are written.
//! Output is metric-major — `out[m * n_draws + i]` is metric `m` of draw `i` — so every
//! metric's samples are one contiguous array on the Python side.

use crate::metrics::{self, Cells, ClassTotals, Metric, MulticlassMetric};
use crate::parallel;
use crate::rng::{BLOCK, fork, stream};
use crate::sampling::{Beta, Sampler, dirichlet_shapes};
use crate::{Error, Result};
use std::sync::Mutex;

/// Upper bound on the number of values one kernel call may allocate (2^31 doubles = 16 GiB).
pub const MAX_OUTPUT: usize = 1 << 31;

/// A zeroed output buffer of `len` values, or [`Error::OutOfMemory`] when the allocator has
/// no room (e.g. under `ulimit -v`) — a Rust `vec!` would abort the whole process instead.
/// Large buffers are advised to use transparent huge pages: a fresh 40 MB buffer otherwise
/// costs ~10,000 first-touch page faults, which took longer than drawing the samples into it
/// (and serialise across threads).
pub fn alloc_output(len: usize) -> Result<Vec<f64>> {
    let out = zeroed(len).ok_or(Error::OutOfMemory {
        bytes: len.saturating_mul(std::mem::size_of::<f64>()),
    })?;
    #[cfg(target_os = "linux")]
    advise_huge_pages(&out);
    Ok(out)
}

/// `vec![0.0; len]` that reports a failed allocation instead of aborting. Zeroed memory comes
/// straight from the allocator (`calloc`): the pages are only touched when first written.
fn zeroed(len: usize) -> Option<Vec<f64>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<f64>(len).ok()?;
    // SAFETY: the layout has a non-zero size; all-zero bits are the f64 0.0.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<f64>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with exactly the layout of a Vec<f64> of
    // capacity `len`, and all `len` values are initialised (zero).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(buffer: &[f64]) {
    const HUGE: usize = 2 << 20;
    let bytes = std::mem::size_of_val(buffer);
    if bytes < 2 * HUGE {
        return;
    }
    // Only whole 2 MiB pages inside the buffer can be huge pages.
    let start = buffer.as_ptr() as usize;
    let aligned = start.next_multiple_of(HUGE);
    let end = (start + bytes) & !(HUGE - 1);
    if end > aligned {
        // SAFETY: the range lies inside `buffer`'s allocation, which is live; MADV_HUGEPAGE
        // is advisory and never changes the contents. Failure is harmless and ignored.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                end - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

/// Validate a draw count and the total output size.
pub fn check_draws(n_draws: usize, n_rows: usize) -> Result<()> {
    if n_draws == 0 {
        return Err(Error::invalid("n_samples must be at least 1, got 0"));
    }
    match n_draws.checked_mul(n_rows.max(1)) {
        Some(total) if total <= MAX_OUTPUT => Ok(()),
        _ => Err(Error::invalid(format!(
            "n_samples={n_draws} with {n_rows} outputs exceeds the limit of {MAX_OUTPUT} values"
        ))),
    }
}

/// Validate observed counts (finite and >= 0).
fn check_counts(data: &[f64]) -> Result<()> {
    if data.iter().all(|v| v.is_finite() && *v >= 0.0) {
        Ok(())
    } else {
        Err(Error::invalid("counts must be finite and >= 0"))
    }
}

/// Fill a row-major (n_rows × n_cols) buffer block by block in parallel. `kernel` receives the
/// block's random streams and one mutable slice per row covering the block's columns. Block
/// `b` always gets the same streams, whatever thread runs it. Blocks are the units of
/// [`parallel::for_each`]: the calling thread starts drawing at once instead of waiting for
/// sleeping workers to wake (on a busy or virtualised machine that wake-up can cost as much as
/// a 100,000-draw kernel), and a watched call stops between blocks.
pub fn fill_blocks<F>(
    out: &mut [f64],
    n_rows: usize,
    n_cols: usize,
    seed: u64,
    kernel: F,
) -> Result<()>
where
    F: Fn(BlockStreams, &mut [&mut [f64]]) + Sync + Send,
{
    if n_rows == 0 || n_cols == 0 {
        return Ok(());
    }
    let n_blocks = n_cols.div_ceil(BLOCK);
    let mut blocks: Vec<Vec<&mut [f64]>> =
        (0..n_blocks).map(|_| Vec::with_capacity(n_rows)).collect();
    for row in out.chunks_mut(n_cols) {
        for (block, chunk) in blocks.iter_mut().zip(row.chunks_mut(BLOCK)) {
            block.push(chunk);
        }
    }
    // Each block is claimed exactly once; the mutex only moves its slices to that thread.
    let blocks: Vec<Mutex<Vec<&mut [f64]>>> = blocks.into_iter().map(Mutex::new).collect();
    parallel::for_each(n_blocks, |b| {
        let mut rows = std::mem::take(&mut *parallel::lock(&blocks[b]));
        let streams = BlockStreams {
            seed: fork(seed, b as u64),
            block: b,
        };
        kernel(streams, &mut rows);
        Ok(())
    })
}

/// The random streams of one block: `sampler(k)` is sub-stream k of the block. Kernels give
/// every independent quantity (e.g. each Dirichlet cell) its own sub-stream and draw it as one
/// tight loop: draw i of a quantity then never depends on how long the block is (asking for
/// more samples extends the same sequence), and a loop over one quantity keeps the generator
/// state in registers.
#[derive(Clone, Copy)]
pub struct BlockStreams {
    seed: u64,
    block: usize,
}

impl BlockStreams {
    pub fn sampler(self, k: u64) -> Sampler {
        Sampler::new(stream(self.seed, k))
    }

    /// The block's first column: its draws are columns `first_column()..` of the output.
    pub fn first_column(self) -> usize {
        self.block * BLOCK
    }
}

/// Validate binary Dirichlet parameters (TP, FP, TN, FN).
fn check_alpha(alpha: &[f64; 4]) -> Result<()> {
    if alpha.iter().any(|a| !(a.is_finite() && *a >= 0.0)) {
        return Err(Error::invalid(format!(
            "Dirichlet parameters must be finite and >= 0, got {alpha:?}"
        )));
    }
    Ok(())
}

/// Draw `n_draws` cell-probability vectors p ~ Dirichlet(alpha), alpha = (TP, FP, TN, FN) counts
/// plus prior, and return every requested metric of every draw (metric-major).
pub fn binary_metric_draws(
    alpha: [f64; 4],
    metrics: &[Metric],
    n_draws: usize,
    seed: u64,
    zero_division: f64,
) -> Result<Vec<f64>> {
    check_draws(n_draws, metrics.len())?;
    let mut out = alloc_output(metrics.len() * n_draws)?;
    binary_metric_draws_into(alpha, metrics, seed, zero_division, &mut out)?;
    Ok(out)
}

/// [`binary_metric_draws`] into a caller buffer of `metrics.len() * n_draws` values.
pub fn binary_metric_draws_into(
    alpha: [f64; 4],
    metrics: &[Metric],
    seed: u64,
    zero_division: f64,
    out: &mut [f64],
) -> Result<()> {
    check_alpha(&alpha)?;
    let shapes = dirichlet_shapes(&alpha)?;
    if metrics.is_empty() {
        return Ok(());
    }
    if out.is_empty() || out.len() % metrics.len() != 0 {
        return Err(Error::invalid(format!(
            "output buffer of {} values does not hold whole rows for {} metrics",
            out.len(),
            metrics.len()
        )));
    }
    let n_draws = out.len() / metrics.len();
    fill_blocks(out, metrics.len(), n_draws, seed, |streams, rows| {
        // One column of gamma draws per cell, each from its own sub-stream, then one tight
        // (vectorised) loop per metric over the block. The gammas are left unnormalised:
        // every metric is scale-invariant.
        let len = rows[0].len();
        let mut cells = [[0.0f64; BLOCK]; 4];
        for (k, (column, shape)) in cells.iter_mut().zip(&shapes).enumerate() {
            let mut s = streams.sampler(k as u64);
            for v in column[..len].iter_mut() {
                *v = s.gamma(shape);
            }
        }
        let [tp, fp, tn, fn_] = &cells;
        for (row, metric) in rows.iter_mut().zip(metrics) {
            metric.eval_into(tp, fp, tn, fn_, zero_division, row);
        }
    })?;
    Ok(())
}

/// Draw `n_draws` matrices p ~ Dirichlet(alpha) over the K × K cells (row-major, rows = true
/// class) and return every requested multiclass metric of every draw (metric-major). `data`
/// (the observed K × K counts) decides which classes each average counts, as in the observed
/// value (see [`MulticlassMetric::counted_classes`]).
///
/// A draw's K² gammas are folded into the class totals (row sums, column sums, diagonal) as
/// they are drawn, so memory is O(K) per block plus the shared O(K²) table of gamma constants;
/// each metric is then O(K) per draw. Draws are made one after another from one stream per
/// block, so more samples extend the same sequence.
pub fn multiclass_metric_draws(
    alpha: &[f64],
    data: &[f64],
    k: usize,
    metrics: &[MulticlassMetric],
    n_draws: usize,
    seed: u64,
    zero_division: f64,
) -> Result<Vec<f64>> {
    if k < 2 || k.checked_mul(k) != Some(alpha.len()) || data.len() != alpha.len() {
        return Err(Error::invalid(format!(
            "alpha and data must hold K * K values for K >= 2 classes, got {} and {} values \
             for K = {k}",
            alpha.len(),
            data.len()
        )));
    }
    check_counts(data)?;
    if alpha.iter().any(|a| !(a.is_finite() && *a >= 0.0)) {
        return Err(Error::invalid(
            "Dirichlet parameters must be finite and >= 0",
        ));
    }
    check_draws(n_draws, metrics.len())?;
    let shapes = dirichlet_shapes(alpha)?;
    let observed = metrics::OwnedTotals::of(data, k);
    let counted: Vec<Vec<bool>> = metrics
        .iter()
        .map(|m| m.counted_classes(&observed.view()))
        .collect();
    let mut out = alloc_output(metrics.len() * n_draws)?;
    fill_blocks(&mut out, metrics.len(), n_draws, seed, |streams, rows| {
        let mut s = streams.sampler(0);
        let (mut actual, mut predicted, mut correct) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        for i in 0..rows[0].len() {
            predicted.fill(0.0);
            let mut total = 0.0;
            for (r, row_shapes) in shapes.chunks_exact(k).enumerate() {
                let mut row_sum = 0.0;
                for (c, shape) in row_shapes.iter().enumerate() {
                    let g = s.gamma(shape);
                    row_sum += g;
                    predicted[c] += g;
                    if c == r {
                        correct[r] = g;
                    }
                }
                actual[r] = row_sum;
                total += row_sum;
            }
            let totals = ClassTotals {
                actual: &actual,
                predicted: &predicted,
                correct: &correct,
                total,
            };
            for ((row, metric), counted) in rows.iter_mut().zip(metrics).zip(&counted) {
                row[i] = metric.eval_counted(&totals, zero_division, counted);
            }
        }
    })?;
    Ok(out)
}

/// A metric for the paired kernel: from the binary catalogue (K = 2) or multiclass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PairedMetric {
    Binary(Metric),
    Multiclass(MulticlassMetric),
}

/// Paired posterior of one metric of two classifiers scored on the same rows.
///
/// `alpha` holds the Dirichlet parameters of the joint table of (true class i, prediction of
/// model A j, prediction of model B l), flattened as `(i * K + j) * K + l`. Each draw samples
/// the K³ cells, sums them into A's confusion matrix (over l) and B's (over j) — both from the
/// same draw, which is what makes the comparison paired — and writes the metric of A to row 0
/// and of B to row 1. `data` holds the observed joint counts in the same layout: A's and B's
/// confusion matrices of them decide which classes each model's averages count.
pub fn paired_metric_draws(
    alpha: &[f64],
    data: &[f64],
    k: usize,
    metric: PairedMetric,
    n_draws: usize,
    seed: u64,
    zero_division: f64,
) -> Result<Vec<f64>> {
    if k < 2 || k.checked_pow(3) != Some(alpha.len()) || data.len() != alpha.len() {
        return Err(Error::invalid(format!(
            "alpha and data must hold K^3 values for K >= 2 classes, got {} and {} values for \
             K = {k}",
            alpha.len(),
            data.len()
        )));
    }
    check_counts(data)?;
    if matches!(metric, PairedMetric::Binary(_)) && k != 2 {
        return Err(Error::invalid("a binary metric needs K = 2"));
    }
    if alpha.iter().any(|a| !(a.is_finite() && *a >= 0.0)) {
        return Err(Error::invalid(
            "Dirichlet parameters must be finite and >= 0",
        ));
    }
    check_draws(n_draws, 2)?;
    let shapes = dirichlet_shapes(alpha)?;
    let counted: Vec<Vec<bool>> = match metric {
        PairedMetric::Binary(_) => Vec::new(),
        PairedMetric::Multiclass(m) => {
            let (mut a, mut b) = (vec![0.0; k * k], vec![0.0; k * k]);
            for (cell, v) in data.iter().enumerate() {
                let (i, j, l) = (cell / (k * k), (cell / k) % k, cell % k);
                a[i * k + j] += v;
                b[i * k + l] += v;
            }
            [a, b]
                .iter()
                .map(|matrix| m.counted_classes(&metrics::OwnedTotals::of(matrix, k).view()))
                .collect()
        }
    };
    let mut out = alloc_output(2 * n_draws)?;
    fill_blocks(&mut out, 2, n_draws, seed, |streams, rows| {
        let mut s = streams.sampler(0);
        let (mut a, mut b) = (vec![0.0; k * k], vec![0.0; k * k]);
        let (mut actual, mut predicted, mut correct) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        for d in 0..rows[0].len() {
            a.fill(0.0);
            b.fill(0.0);
            for (cell, shape) in shapes.iter().enumerate() {
                let g = s.gamma(shape);
                let (i, j, l) = (cell / (k * k), (cell / k) % k, cell % k);
                a[i * k + j] += g;
                b[i * k + l] += g;
            }
            for (row, matrix) in [(0, &a), (1, &b)] {
                rows[row][d] = match metric {
                    PairedMetric::Binary(m) => {
                        // [[TN, FP], [FN, TP]]
                        m.eval(
                            &Cells::new(matrix[3], matrix[1], matrix[0], matrix[2]),
                            zero_division,
                        )
                    }
                    PairedMetric::Multiclass(m) => {
                        let total = metrics::class_totals_into(
                            matrix,
                            &mut actual,
                            &mut predicted,
                            &mut correct,
                        );
                        let totals = ClassTotals {
                            actual: &actual,
                            predicted: &predicted,
                            correct: &correct,
                            total,
                        };
                        m.eval_counted(&totals, zero_division, &counted[row])
                    }
                };
            }
        }
    })?;
    Ok(out)
}

/// `n_draws` samples of Beta(a, b), drawn as Ga / (Ga + Gb).
pub fn beta_draws(a: f64, b: f64, n_draws: usize, seed: u64) -> Result<Vec<f64>> {
    check_draws(n_draws, 1)?;
    let beta = Beta::new(a, b)?;
    let mut out = alloc_output(n_draws)?;
    fill_blocks(&mut out, 1, n_draws, seed, |streams, rows| {
        beta.fill(streams.sampler(0), streams.sampler(1), rows[0]);
    })?;
    Ok(out)
}

/// `n_draws` normalised Dirichlet(alpha) vectors, draw-major: `out[i * k + j]`.
pub fn dirichlet_draws(alpha: &[f64], n_draws: usize, seed: u64) -> Result<Vec<f64>> {
    if alpha.iter().any(|a| !(a.is_finite() && *a >= 0.0)) {
        return Err(Error::invalid(
            "Dirichlet parameters must be finite and >= 0",
        ));
    }
    let k = alpha.len();
    check_draws(n_draws, k)?;
    let shapes = dirichlet_shapes(alpha)?;
    // Draw-major output is a single "row" per block of BLOCK draws × k cells.
    let mut out = alloc_output(k * n_draws)?;
    parallel::for_each_chunk(&mut out, BLOCK * k, |b, chunk| {
        let mut s = Sampler::new(stream(fork(seed, b as u64), 0));
        for draw in chunk.chunks_mut(k) {
            s.dirichlet(&shapes, draw);
        }
        Ok(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric_list() -> Vec<Metric> {
        ["accuracy", "precision", "recall", "f1", "mcc"]
            .iter()
            .map(|n| Metric::from_name(n, 1.0).unwrap())
            .collect()
    }

    #[test]
    fn an_impossible_buffer_is_an_error_not_an_abort() {
        // Too large for a layout, and too large for any allocator.
        for len in [usize::MAX / 4, 1 << 57] {
            assert_eq!(
                alloc_output(len),
                Err(Error::OutOfMemory {
                    bytes: len.saturating_mul(8)
                })
            );
        }
        assert_eq!(alloc_output(0), Ok(vec![]));
        assert_eq!(alloc_output(3), Ok(vec![0.0; 3]));
    }

    #[test]
    fn identical_for_any_thread_count() {
        let alpha = [5286.0, 3185.0, 8001.0, 1001.0];
        let metrics = metric_list();
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| binary_metric_draws(alpha, &metrics, 10_001, 42, 0.0).unwrap())
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one, run(8));
        assert_ne!(
            one,
            binary_metric_draws(alpha, &metrics, 10_001, 43, 0.0).unwrap()
        );
    }

    #[test]
    fn prefix_stability() {
        // Asking for more draws extends the sequence: the first n draws are the same.
        let b1 = beta_draws(3.0, 4.0, 1500, 9).unwrap();
        let b2 = beta_draws(3.0, 4.0, 5000, 9).unwrap();
        assert_eq!(b1[..], b2[..1500]);
    }

    #[test]
    fn accuracy_marginal_of_dirichlet_is_beta() {
        // Aggregation property: p_TP + p_TN ~ Beta(a_TP + a_TN, a_FP + a_FN).
        let alpha = [30.0, 10.0, 50.0, 12.0];
        let metrics = [Metric::Accuracy, Metric::Precision];
        let n = 200_000;
        let out = binary_metric_draws(alpha, &metrics, n, 1, 0.0).unwrap();
        let check = |xs: &[f64], a: f64, b: f64| {
            let mean = xs.iter().sum::<f64>() / n as f64;
            let m = a / (a + b);
            let v = a * b / ((a + b) * (a + b) * (a + b + 1.0));
            assert!(
                (mean - m).abs() < 5.0 * (v / n as f64).sqrt(),
                "{mean} vs {m}"
            );
        };
        check(&out[..n], 80.0, 22.0);
        check(&out[n..], 30.0, 10.0);
    }

    #[test]
    fn dirichlet_draws_are_normalised() {
        let out = dirichlet_draws(&[1.0, 2.0, 0.5], 3000, 5).unwrap();
        for d in out.chunks(3) {
            assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn multiclass_marginals_and_thread_independence() {
        // Per-class recall ~ Beta(C_kk + a, row rest + (K − 1) a) under Dirichlet(C + a).
        let counts = [30.0, 5.0, 2.0, 4.0, 20.0, 6.0, 1.0, 3.0, 40.0];
        let alpha: Vec<f64> = counts.iter().map(|c| c + 1.0).collect();
        let metrics = [
            MulticlassMetric::from_parts("recall", "class", 1, 1.0, 3).unwrap(),
            MulticlassMetric::from_parts("accuracy", "", 0, 1.0, 3).unwrap(),
        ];
        let n = 100_000;
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    multiclass_metric_draws(&alpha, &counts, 3, &metrics, n, 4, 0.0).unwrap()
                })
        };
        let out = run(1);
        assert_eq!(out, run(2));
        let check = |xs: &[f64], a: f64, b: f64| {
            let mean = xs.iter().sum::<f64>() / n as f64;
            let m = a / (a + b);
            let v = a * b / ((a + b) * (a + b) * (a + b + 1.0));
            assert!(
                (mean - m).abs() < 5.0 * (v / n as f64).sqrt(),
                "{mean} vs {m}"
            );
        };
        check(&out[..n], 21.0, 12.0);
        // Accuracy ~ Beta(trace + K a, off-diagonal + (K² − K) a) = Beta(90 + 3, 21 + 6).
        check(&out[n..], 93.0, 27.0);
        assert!(multiclass_metric_draws(&alpha, &counts, 2, &metrics, 10, 0, 0.0).is_err());
        assert!(multiclass_metric_draws(&[1.0; 1], &[1.0; 1], 1, &metrics, 10, 0, 0.0).is_err());
        assert!(multiclass_metric_draws(&alpha, &counts[..4], 3, &metrics, 10, 0, 0.0).is_err());
        let mut negative = counts;
        negative[0] = -1.0;
        assert!(multiclass_metric_draws(&alpha, &negative, 3, &metrics, 10, 0, 0.0).is_err());
    }

    #[test]
    fn averages_count_the_classes_the_data_define() {
        // Class 1 never occurs and is never predicted; class 2 occurs but is never predicted.
        let counts = [30.0, 0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0];
        let alpha: Vec<f64> = counts.iter().map(|c| c + 0.5).collect();
        let names = [
            ("balanced_accuracy", ""),
            ("recall", "macro"),
            ("precision", "macro"),
            ("f1", "weighted"),
        ];
        let metrics: Vec<MulticlassMetric> = names
            .iter()
            .map(|(name, average)| MulticlassMetric::from_parts(name, average, 0, 1.0, 3).unwrap())
            .collect();
        let observed = metrics::evaluate_multiclass(&counts, 3, &metrics, 0.0);
        // scikit-learn: balanced accuracy averages the classes that occur (1.0 and 0.0).
        assert_eq!(observed[0], 0.5);
        let n = 20_000;
        let out = multiclass_metric_draws(&alpha, &counts, 3, &metrics, n, 9, 0.0).unwrap();
        // Balanced accuracy's draws average classes 0 and 2 only: recall of class 2 stays
        // near 0 (6 misses), so the draws stay near 0.5, never near the 3-class mean.
        let mean = |m: usize| out[m * n..(m + 1) * n].iter().sum::<f64>() / n as f64;
        assert!((mean(0) - 0.5).abs() < 0.06, "{}", mean(0));
        // Macro recall counts class 1 (undefined in the data) as 0 in every draw, like the
        // observed value: (≈1 + 0 + ≈0) / 3.
        assert!(
            (mean(1) - observed[1]).abs() < 0.05,
            "{} {}",
            mean(1),
            observed[1]
        );
        // Macro precision: classes 1 and 2 are never predicted, so count 0.
        assert!(
            (mean(2) - observed[2]).abs() < 0.05,
            "{} {}",
            mean(2),
            observed[2]
        );
        for m in 0..4 {
            assert!(out[m * n..(m + 1) * n].iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn paired_marginals_equal_the_unpaired_model() {
        // With joint pseudo-counts 1/K per cell, each model's marginal matrix is Dirichlet(C + 1):
        // A's accuracy ~ Beta(correct_A + 2, wrong_A + 2) as in the unpaired model.
        // Joint counts (truth, A, B) for truth 0/1 and predictions 0/1.
        let joint_counts = [40.0, 5.0, 8.0, 7.0, 3.0, 6.0, 4.0, 27.0];
        let alpha: Vec<f64> = joint_counts.iter().map(|c| c + 0.5).collect();
        let n = 100_000;
        let accuracy = PairedMetric::Binary(Metric::Accuracy);
        let out = paired_metric_draws(&alpha, &joint_counts, 2, accuracy, n, 3, 0.0).unwrap();
        // A correct: (0,0,*) + (1,1,*) = 40 + 5 + 4 + 27 = 76; wrong 24.
        // B correct: (0,*,0) + (1,*,1) = 40 + 8 + 6 + 27 = 81; wrong 19.
        for (row, (a, b)) in [(76.0 + 2.0, 24.0 + 2.0), (81.0 + 2.0, 19.0 + 2.0)]
            .into_iter()
            .enumerate()
        {
            let xs = &out[row * n..(row + 1) * n];
            let mean = xs.iter().sum::<f64>() / n as f64;
            let v = a * b / ((a + b) * (a + b) * (a + b + 1.0));
            assert!(
                (mean - a / (a + b)).abs() < 5.0 * (v / n as f64).sqrt(),
                "row {row}"
            );
        }
        // The two accuracies are positively correlated: they share the rows.
        let (ra, rb) = out.split_at(n);
        let (ma, mb) = (
            ra.iter().sum::<f64>() / n as f64,
            rb.iter().sum::<f64>() / n as f64,
        );
        let cov: f64 = ra
            .iter()
            .zip(rb)
            .map(|(x, y)| (x - ma) * (y - mb))
            .sum::<f64>();
        assert!(cov > 0.0);
        assert!(
            paired_metric_draws(
                &alpha,
                &alpha,
                3,
                PairedMetric::Binary(Metric::F1),
                10,
                0,
                0.0
            )
            .is_err()
        );
    }

    #[test]
    fn invalid_arguments() {
        let m = metric_list();
        assert!(binary_metric_draws([1.0, 1.0, 1.0, -1.0], &m, 10, 0, 0.0).is_err());
        assert!(binary_metric_draws([0.0; 4], &m, 10, 0, 0.0).is_err());
        assert!(binary_metric_draws([1.0; 4], &m, 0, 0, 0.0).is_err());
        assert!(binary_metric_draws([1.0; 4], &m, usize::MAX, 0, 0.0).is_err());
        assert!(beta_draws(0.0, 0.0, 10, 0).is_err());
        assert!(beta_draws(f64::NAN, 1.0, 10, 0).is_err());
    }
}
