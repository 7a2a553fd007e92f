//! Criterion benchmarks of the core kernels (run with `cargo bench`). The side-by-side
//! comparisons against numpy and peer libraries are the Python scripts next to this file.

use criterion::{Criterion, criterion_group, criterion_main};
use probeval::metrics::Metric;
use probeval::posterior::{beta_draws, binary_metric_draws, binary_metric_draws_into};
use probeval::rng::stream;
use probeval::sampling::{Gamma, Sampler};
use probeval::special::beta_hdi;
use probeval::summary::hdi;
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
    c.bench_function("binary_metric_draws 1M x 5", |b| {
        b.iter(|| binary_metric_draws(black_box(alpha), &metrics, 1_000_000, 7, 0.0).unwrap())
    });
    let mut buffer = vec![0.0; 5 * 1_000_000];
    c.bench_function("binary_metric_draws 1M x 5, reused buffer", |b| {
        b.iter(|| {
            binary_metric_draws_into(black_box(alpha), &metrics, 7, 0.0, &mut buffer).unwrap()
        })
    });
    c.bench_function("beta_draws 100k", |b| {
        b.iter(|| beta_draws(black_box(13286.0), 4185.0, 100_000, 7).unwrap())
    });
    let shape = Gamma::new(5286.0).unwrap();
    let mut sampler = Sampler::new(stream(1, 0));
    c.bench_function("gamma(5286) x 1000", |b| {
        b.iter(|| (0..1000).map(|_| sampler.gamma(&shape)).sum::<f64>())
    });
    c.bench_function("normal x 1000", |b| {
        b.iter(|| (0..1000).map(|_| sampler.normal()).sum::<f64>())
    });
    let samples = beta_draws(50.0, 20.0, 100_000, 1).unwrap();
    c.bench_function("sample hdi 100k", |b| {
        b.iter(|| hdi(black_box(&samples), 0.95).unwrap())
    });
    c.bench_function("beta_hdi accuracy", |b| {
        b.iter(|| beta_hdi(black_box(13286.0), black_box(4185.0), 0.95).unwrap())
    });
}

criterion_group!(benches, kernels);
criterion_main!(benches);
