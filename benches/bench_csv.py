"""Reading CSV files for the command line: probeval's reader against pandas, same files, one run.

    pip install ".[bench]" && python benches/bench_csv.py [--json out.json]

Task: read the columns a command uses (a label and a score column) from a CSV file into numpy
arrays. Every read runs in a fresh Python process, so that its peak resident memory (the whole
process: interpreter, imports and data) can be measured; time is the read alone.

* The issue's case: 5,000,000 rows, 85 MB (label, prediction, 8-decimal score, a text
  segment), 3 rounds.
* Over 8 files (seed 2026): rows 10^U(5, 6.7), 3 ... 8 columns (integers, 2-8-decimal floats,
  text, dates), delimiter ',' or ';', every third file with quoted text; p50 and p99.
* The alternatives: pandas.read_csv of the whole file (what a user would run) and of the used
  columns only (usecols), each in its own process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from _harness import environment, save

READERS = {
    "probeval": (
        "from probeval._io import TableFile\n"
        "start = time.perf_counter()\n"
        "columns = TableFile(path).read(used)\n"
    ),
    "pandas, whole file": (
        "import pandas as pd\n"
        "start = time.perf_counter()\n"
        "frame = pd.read_csv(path, sep=sep)\n"
        "columns = {name: frame[name].to_numpy() for name in used}\n"
    ),
    "pandas, used columns": (
        "import pandas as pd\n"
        "start = time.perf_counter()\n"
        "frame = pd.read_csv(path, sep=sep, usecols=used)\n"
        "columns = {name: frame[name].to_numpy() for name in used}\n"
    ),
}

CHILD = """
import json, sys, time
import numpy as np
path, sep, used = sys.argv[1], sys.argv[2], sys.argv[3].split("|")
{body}
seconds = time.perf_counter() - start
assert all(len(c) == {rows} for c in columns.values())
# VmHWM, not ru_maxrss: the latter keeps the parent's size from before the fork and exec.
with open("/proc/self/status") as status:
    peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
print(json.dumps({{"seconds": seconds, "peak_mb": peak_kb / 1024}}))
"""


def write_file(path: Path, seed: int, rows: int, extra: int, sep: str, quoted: bool) -> None:
    """A label, a score and `extra` other columns, written in blocks (memory stays small)."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(["int", "float", "text", "date"], extra)
    decimals = int(rng.integers(2, 9))
    names = ["label", "score"] + [f"{kind}_{i}" for i, kind in enumerate(kinds)]
    with path.open("w", encoding="utf-8") as out:
        out.write(sep.join(names) + "\n")
        for start in range(0, rows, 500_000):
            n = min(500_000, rows - start)
            score = rng.random(n)
            cells = [(rng.random(n) < score).astype(int).astype(str), np.round(score, decimals)]
            for kind in kinds:
                if kind == "int":
                    cells.append(rng.integers(0, 1000, n).astype(str))
                elif kind == "float":
                    cells.append(np.round(rng.normal(size=n), decimals).astype(str))
                elif kind == "text":
                    words = np.array(["north", "south", "east", "west", "centre"])
                    text = words[rng.integers(0, 5, n)]
                    cells.append(np.char.add(np.char.add('"', text), '"') if quoted else text)
                else:
                    days = np.datetime64("2026-01-01") + rng.integers(0, 365, n)
                    cells.append(days.astype(str))
            lines = [sep.join(map(str, row)) for row in zip(*cells, strict=True)]
            out.write("\n".join(lines) + "\n")


def read_once(reader: str, path: Path, sep: str, rows: int) -> dict[str, float]:
    code = CHILD.format(body=READERS[reader], rows=rows)
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), sep, "label|score"],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    args = parser.parse_args()
    print(environment())
    payload: dict[str, Any] = {"environment": environment()}
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.csv"
        write_file(big, 0, 5_000_000, 2, ",", False)
        size = big.stat().st_size / 1e6
        print(f"\n5,000,000 rows, {size:.0f} MB, 3 rounds (read seconds, peak MB)")
        case: dict[str, list[dict[str, float]]] = {name: [] for name in READERS}
        for _ in range(3):
            for name in READERS:  # interleaved: a slow phase falls on every reader alike
                case[name].append(read_once(name, big, ",", 5_000_000))
        for name, runs in case.items():
            seconds = np.median([r["seconds"] for r in runs])
            peak = np.median([r["peak_mb"] for r in runs])
            print(f"  {name:22s} {seconds:6.2f} s  {peak:7.0f} MB")
        payload["issue_case"] = case
        big.unlink()

        rng = np.random.default_rng(2026)
        over: dict[str, list[dict[str, float]]] = {name: [] for name in READERS}
        for i in range(8):
            rows = int(10 ** rng.uniform(5, 6.7))
            extra = int(rng.integers(1, 7))
            sep = "," if i % 2 == 0 else ";"
            path = Path(tmp) / f"file{i}.csv"
            write_file(path, 100 + i, rows, extra, sep, quoted=i % 3 == 0)
            for name in READERS:
                over[name].append(read_once(name, path, sep, rows))
            path.unlink()
        print("\nover 8 files (rows 10^U(5, 6.7), 3-8 columns, ',' or ';', some quoted)")
        print(f"  {'':22s} {'p50 s':>7s} {'p99 s':>7s} {'p50 MB':>7s} {'p99 MB':>7s}")
        for name, runs in over.items():
            seconds = [r["seconds"] for r in runs]
            peaks = [r["peak_mb"] for r in runs]
            print(
                f"  {name:22s} {percentile(seconds, 50):7.2f} {percentile(seconds, 99):7.2f} "
                f"{percentile(peaks, 50):7.0f} {percentile(peaks, 99):7.0f}"
            )
        for other in ("pandas, whole file", "pandas, used columns"):
            for q in (50, 99):
                time_ratio = np.percentile(
                    [
                        a["seconds"] / b["seconds"]
                        for a, b in zip(over["probeval"], over[other], strict=True)
                    ],
                    q,
                )
                memory_ratio = np.percentile(
                    [
                        a["peak_mb"] / b["peak_mb"]
                        for a, b in zip(over["probeval"], over[other], strict=True)
                    ],
                    q,
                )
                print(
                    f"p{q} of per-file ratios, probeval / {other}: time {time_ratio:.2f}x, "
                    f"peak memory {memory_ratio:.2f}x"
                )
        payload["over_files"] = over
    save(args.json, payload)


if __name__ == "__main__":
    main()
