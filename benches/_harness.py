"""Shared benchmark harness: repeated timings, medians, percentiles over inputs, ratios, a
readable report."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Timing:
    name: str
    seconds: list[float]

    #: True when ``seconds`` holds one per-call time per input (see Report.compare_over).
    over_inputs: bool = False

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def percentile(self, q: float) -> float:
        """The q-th percentile (0-100) of the per-call seconds, interpolated."""
        ordered = sorted(self.seconds)
        position = (len(ordered) - 1) * q / 100
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def measure(
    fn: Callable[[], Any], *, repeats: int = 7, warmup: int = 1, number: int = 1
) -> list[float]:
    """Per-call seconds of ``fn`` over ``repeats`` rounds of ``number`` calls each."""
    for _ in range(warmup):
        fn()
    rounds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number)
    return rounds


@dataclass
class Report:
    title: str
    timings: list[Timing] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, fn: Callable[[], Any], **kwargs: Any) -> Timing:
        timing = Timing(name, measure(fn, **kwargs))
        self.timings.append(timing)
        return timing

    def compare(
        self, contenders: dict[str, Callable[[], Any]], *, repeats: int = 7, number: int = 1
    ) -> None:
        """Time the contenders round-robin, rotating the order every round (ABC, BCA, CAB, ...):
        a slow phase of a noisy machine, or the after-effects of one contender on the next
        (freed memory that must be faulted in again, sleeping worker threads), then fall on
        every contender alike instead of on whichever happens to run second."""
        for fn in contenders.values():
            fn()  # warm-up
        names = list(contenders)
        rounds: dict[str, list[float]] = {name: [] for name in contenders}
        for r in range(repeats):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                fn = contenders[name]
                start = time.perf_counter()
                for _ in range(number):
                    fn()
                rounds[name].append((time.perf_counter() - start) / number)
        self.timings.extend(Timing(name, seconds) for name, seconds in rounds.items())

    def compare_over(
        self,
        contenders: dict[str, Callable[[Any], Any]],
        inputs: Sequence[Any],
        *,
        number: int = 1,
    ) -> None:
        """Time every contender on every input (``number`` calls each, per-call mean), the
        contenders in a rotating order per input, and keep one time per input: a cost that
        depends on its input is then reported over the inputs' distribution (p50, p99), never
        at one lucky point."""
        names = list(contenders)
        for fn in contenders.values():
            fn(inputs[0])  # warm-up
        per_input: dict[str, list[float]] = {name: [] for name in names}
        for r, value in enumerate(inputs):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                fn = contenders[name]
                start = time.perf_counter()
                for _ in range(number):
                    fn(value)
                per_input[name].append((time.perf_counter() - start) / number)
        self.timings.extend(
            Timing(name, times, over_inputs=True) for name, times in per_input.items()
        )

    def ratio(self, slower: str, faster: str, q: float = 50) -> float:
        """How many times slower, at the median (or at percentile ``q`` over inputs)."""
        by_name = {t.name: t for t in self.timings}
        if by_name[faster].over_inputs:
            return by_name[slower].percentile(q) / by_name[faster].percentile(q)
        return by_name[slower].median / by_name[faster].median

    def print(self) -> None:
        print(f"\n## {self.title}")
        width = max(len(t.name) for t in self.timings)
        for t in self.timings:
            if t.over_inputs:
                p50, p99, worst = (t.percentile(q) * 1e3 for q in (50, 99, 100))
                print(
                    f"  {t.name.ljust(width)}  p50 {p50:10.4f} ms  p99 {p99:10.4f} ms  "
                    f"max {worst:10.4f} ms  ({len(t.seconds)} inputs)"
                )
                continue
            spread = f"[{min(t.seconds) * 1e3:9.3f} .. {max(t.seconds) * 1e3:9.3f}]"
            print(f"  {t.name.ljust(width)}  median {t.median * 1e3:10.3f} ms  {spread}")
        for note in self.notes:
            print(f"  {note}")


def percentiles_ms(timing: Timing) -> dict[str, float]:
    """p50 and p99 of a timing over inputs, in milliseconds (for the JSON results)."""
    return {"p50": timing.percentile(50) * 1e3, "p99": timing.percentile(99) * 1e3}


def environment() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "rayon_threads": os.environ.get("RAYON_NUM_THREADS", "default (all cores)"),
    }


def save(path: str | None, payload: dict[str, Any]) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2)
        print(f"\nresults written to {path}")
