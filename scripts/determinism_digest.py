"""A digest of probeval's outputs across every capability, for reproducibility checks.

Prints one SHA-256 over the samples, intervals and summaries of a fixed workload. The same
digest must come out for any ``RAYON_NUM_THREADS``, on repeated runs, and from the installed
release wheel as from a development (debug) build — CI compares them.
"""

import hashlib

import numpy as np

import probeval as pe

cm = pe.ConfusionMatrix.from_counts(tp=5285, fp=3184, tn=8000, fn=1000)
ev = pe.evaluate(cm, metrics=["accuracy", "f1", "mcc", "kappa"], n_samples=50_000, rng=123)
joint = pe.evaluate(cm, metrics=["precision", "f1"], joint=True, n_samples=30_001, rng=9)
rng = np.random.default_rng(0)
y = rng.integers(0, 2, 5000)
s = rng.random(5000) + 0.3 * y
auc = pe.ScoreSummary.from_scores(y, s).posteriors(n_samples=20_000, rng=4, max_bins=512)
k = rng.integers(0, 3, 3000)
p = rng.dirichlet([1, 1, 1], 3000)
mc = pe.evaluate(
    k, y_score=p, metrics=["roc_auc_macro", "average_precision[1]"], n_samples=5_000, rng=5
)
lf = pe.LabelFreeEstimator(metrics=["f1", "roc_auc", "average_precision"]).fit(
    y, np.clip(s / 1.3, 0, 1)
)
lf_pop = lf.estimate(np.clip(s / 1.3, 0, 1), n_chunks=3, n_samples=3_000, rng=6)
lf_real = lf.estimate(
    np.clip(s / 1.3, 0, 1), target="realized", chunk_size=2_000, n_samples=2_100, rng=7, y_true=y
)
# Partial labels: production's course through time (the forward-backward kernel).
binary_partial = np.where(rng.random(y.shape[0]) < 0.1, y, -1).astype(float)
binary_partial[binary_partial < 0] = np.nan
lf_partial = lf.estimate(
    np.clip(s / 1.3, 0, 1), chunk_size=500, n_samples=2_100, rng=12, partial_labels=binary_partial
)
labelfree = [
    r.posterior(m, c.index)
    for r in (lf_pop, lf_real, lf_partial)
    for c in r.chunks
    for m in r.metrics
] + [lf_real.realized_posterior(m, c.index) for c in lf_real.chunks for m in lf_real.metrics]
# Multiclass label-free: the confusion kernel with drift and partial labels, the coupled AUCs.
mc_lf = pe.LabelFreeEstimator(metrics=["f1_macro", "kappa", "roc_auc_weighted"]).fit(k, p)
partial = np.where(rng.random(3000) < 0.1, k, -1).astype(float)
partial[partial < 0] = np.nan
mc_real = mc_lf.estimate(
    p, target="realized", n_chunks=2, n_samples=2_100, rng=11, partial_labels=partial
)
labelfree += [r.posterior(m, c.index) for r in (mc_real,) for c in r.chunks for m in r.metrics]
seg = pe.evaluate_by(
    counts=rng.integers(0, 300, (40, 2, 2)),
    metrics=["f1", "mcc", "recall"],
    n_samples=3_000,
    rng=8,
    summaries_only=True,
)
ens = pe.ensemble_report(rng.random((4, 5000)), rng.integers(0, 2, 5000), n_samples=2000, rng=9)
h = hashlib.sha256()
for metric in seg:
    for values in seg[metric].values():
        h.update(np.ascontiguousarray(values).tobytes())
for values in ens.per_sample.values():
    h.update(np.ascontiguousarray(values).tobytes())
audit = pe.LabelAudit(reviewed_tp=200, mislabelled_tp=14, reviewed_fp=150, mislabelled_fp=30)
audited = pe.evaluate(cm, metrics=["precision", "f1"], audit=audit, n_samples=20_000, rng=10)
posteriors = (
    list(ev.values())
    + list(joint.values())
    + list(auc.values())
    + list(mc.values())
    + labelfree
    + list(audited.values())
)
exact = cm.posterior("precision")
h.update(np.array([*exact.hdi(0.9), *exact.eti(0.9), exact.quantile(0.37)]).tobytes())
h.update(exact.pdf(np.linspace(0, 1, 101)).tobytes())
density = pe.kde(ev["f1"].samples)
h.update(np.array([density.mode, density.bandwidth, density.integral()]).tobytes())
for post in posteriors:
    h.update(np.ascontiguousarray(post.samples).tobytes())
    h.update(np.array(post.hdi(0.95)).tobytes())
print(h.hexdigest())
