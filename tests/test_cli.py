"""The command line, run as a user would: as a subprocess."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import probeval as pe


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "probeval", *args], capture_output=True, text=True, timeout=120
    )


def test_demo_prints_the_posterior_table() -> None:
    out = _run("demo", "--seed", "1")
    assert out.returncode == 0, out.stderr
    for fragment in ("posterior summary", "accuracy", "hdi_low", "ConfusionMatrix(tp="):
        assert fragment in out.stdout


def test_console_script_is_installed() -> None:
    script = shutil.which("probeval")
    if script is None:
        pytest.skip("console script not on PATH (package not installed in this environment)")
    out = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"probeval {pe.__version__}"


def test_no_command_prints_help_and_exits_2() -> None:
    out = _run()
    assert out.returncode == 2
    assert "usage: probeval" in out.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("demo", "--samples", "0"), "n_samples must be at least 1"),
        (("demo", "--ci", "1.5"), "ci must be strictly between 0 and 1"),
        (("demo", "--seed", "abc"), "invalid int value"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_and_no_traceback(
    args: tuple[str, ...], fragment: str
) -> None:
    out = _run(*args)
    assert out.returncode == 2
    assert fragment in out.stderr
    assert "Traceback" not in out.stderr
