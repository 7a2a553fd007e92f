//! Criterion benchmarks of the core kernels (run with `cargo bench`). The side-by-side
//! comparisons against numpy and peer libraries are the Python scripts next to this file.

use criterion::{Criterion, criterion_group, criterion_main};
use probeval::metrics::Metric;
use probeval::posterior::{beta_draws, binary_metric_draws};
use probeval::special::beta_hdi;
use std::hint::black_box;

fn kernels(c: &mut Criterion) {
    let metrics: Vec<Metric> = ["accuracy", "precision", "recall", "f1", "mcc"]
        .iter()
        .map(|n| Metric::from_name(n, 1.0).unwrap())
        .collect();
    let alpha = [5286.0, 3185.0, 8001.0, 1001.0];
    c.bench_function("binary_metric_draws 100k x 5", |b| {
        b.iter(|| binary_metric_draws(black_box(alpha), &metrics, 100_000, 7, 0.0).unwrap())
    });
    c.bench_function("beta_draws 100k", |b| {
        b.iter(|| beta_draws(black_box(13286.0), 4185.0, 100_000, 7).unwrap())
    });
    c.bench_function("beta_hdi accuracy", |b| {
        b.iter(|| beta_hdi(black_box(13286.0), black_box(4185.0), 0.95).unwrap())
    });
}

criterion_group!(benches, kernels);
criterion_main!(benches);
