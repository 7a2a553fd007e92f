"""Render probeval's HTML report in a real headless browser, as a user would open it.

Writes ``probeval estimate ... --html`` on the bundled demo data (reference: the first eight
weeks, analysis: the rest, with realized values), opens it in headless Chromium and fails
unless

* the screenshot is not blank (enough non-white pixels, several colours: tables and figures),
* the page made no network request (Chromium's net log holds no http, https or ws URL), and
* the page logged no console error or uncaught exception.

A page with a deliberate error and an external image is checked first, to show that the checks
can fail. Usage: ``python scripts/check_report_in_browser.py [OUT_DIR]`` (needs ``chromium``
and matplotlib; prints what it measured).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: Keep the browser's own background traffic out of the net log: only the page's remains.
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--metrics-recording-only",
    "--enable-logging=stderr",
    "--log-level=0",
    "--window-size=1200,2000",
]


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no chromium found: apt-get install chromium")


def page_requests(netlog: Path) -> list[str]:
    """Network URLs the page asked for. The browser's own background requests (time sync,
    accounts) carry the initiator "not an origin"; a document's carry its origin ("null" for a
    file)."""
    text = netlog.read_text(encoding="utf-8")
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # the browser exited before closing the log
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    names = {code: name for name, code in log["constants"]["logEventTypes"].items()}
    urls = set()
    for event in log["events"]:
        params = event.get("params") or {}
        url = str(params.get("url", ""))
        if (
            names.get(event.get("type")) == "URL_REQUEST_START_JOB"
            and re.match(r"(https?|wss?)://", url)
            and params.get("initiator") != "not an origin"
        ):
            urls.add(url)
    return sorted(urls)


def render(page: Path, out: Path) -> dict[str, object]:
    """Screenshot ``page``; return what the browser saw: network URLs, console errors and the
    screenshot's share of non-white pixels and number of distinct colours."""
    shot, netlog = out / f"{page.stem}.png", out / f"{page.stem}.netlog.json"
    run = subprocess.run(
        [browser(), *FLAGS, f"--screenshot={shot}", f"--log-net-log={netlog}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if not shot.exists():
        sys.exit(f"chromium wrote no screenshot (exit {run.returncode}):\n{run.stderr[-2000:]}")
    urls = page_requests(netlog)
    console = [
        line
        for line in run.stderr.splitlines()
        if "CONSOLE" in line and ("Error" in line or "Uncaught" in line or ":ERROR:" in line)
    ]
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))[..., :3]
    ink = float(np.mean(np.any(pixels < 0.95, axis=-1)))
    colours = len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    return {"network": sorted(urls), "console_errors": console, "ink": ink, "colours": colours}


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    # 1. The checks can fail: an external image and a script error are both caught.
    bad = out / "broken.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><p>broken</p><img src="https://example.com/x.png">'
        "<script>undefined_function();</script></body></html>",
        encoding="utf-8",
    )
    seen = render(bad, out)
    if not seen["network"] or not seen["console_errors"]:
        sys.exit(f"the checks did not catch a broken page: {json.dumps(seen)}")
    # 2. The report, as a user writes it.
    import probeval as pe

    data = pe.load_demo()
    reference = data["period"] == "reference"
    files = {}
    for name, rows in (("reference", reference), ("analysis", ~reference)):
        path = out / f"{name}.csv"
        columns = ("date", "y_true", "score_a")
        lines = [",".join(columns)] + [
            ",".join(str(data[c][i]) for c in columns) for i in np.flatnonzero(rows)
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files[name] = path
    report = out / "report.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "probeval",
            "estimate",
            "--reference",
            str(files["reference"]),
            "--analysis",
            str(files["analysis"]),
            "--y-true",
            "y_true",
            "--y-score",
            "score_a",
            "--period",
            "W",
            "--timestamp",
            "date",
            "--target",
            "realized",
            "--samples",
            "2000",
            "--html",
            str(report),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    seen = render(report, out)
    print(
        f"report {report.stat().st_size:,} bytes: {seen['ink']:.1%} of the screenshot inked, "
        f"{seen['colours']} colours, network requests {seen['network']}, console errors "
        f"{len(seen['console_errors'])}; screenshot {out / 'report.png'}"
    )
    problems = []
    if seen["network"]:
        problems.append(f"the report requested {seen['network']}")
    if seen["console_errors"]:
        problems.append(f"console errors: {seen['console_errors'][:3]}")
    if float(seen["ink"]) < 0.02 or int(seen["colours"]) < 16:  # type: ignore[call-overload]
        problems.append("the screenshot is blank")
    if problems:
        sys.exit("; ".join(problems))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
