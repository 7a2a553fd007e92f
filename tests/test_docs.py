"""The README and the documentation are a contract: their examples run and print what they say,
the README's two commands exist, and the examples in docstrings run too."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import probeval

from ._scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    page
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    if "```pycon" in page.read_text(encoding="utf-8")
]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_examples_print_what_they_say(page: Path) -> None:
    blocks = re.findall(r"```pycon\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    globs: dict[str, object] = {}  # one namespace per page: later blocks may use earlier ones
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, globs, f"{page.name} block {i}", str(page), 0)
        runner.run(test, clear_globs=False)
        globs = test.globs
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_plain_python_m_doctest_passes(page: Path) -> None:
    """``python -m doctest README.md`` as a user runs it: no option flags beyond those written
    in the examples, and the fences must not read as expected output."""
    failed, attempted = doctest.testfile(str(page), module_relative=False, verbose=False)
    assert attempted > 0
    assert failed == 0


PYTHON_BLOCKS = [
    pytest.param(block, id=f"{page.name} block {i}")
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for i, block in enumerate(
        re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    )
]


@pytest.mark.parametrize("block", PYTHON_BLOCKS)
def test_python_blocks_run_as_written(block: str) -> None:
    """Every ``python`` block defines what it uses and runs on its own (the Spark recipe only
    where pyspark is installed: it is ~450 MB and needs a JVM)."""
    if "pyspark" in block and importlib.util.find_spec("pyspark") is None:
        pytest.skip("pyspark is not installed")
    exec(compile(block, "<docs block>", "exec"), {"__name__": "__docs__"})


def test_readme_and_getting_started_have_examples() -> None:
    for name in ("README.md", "docs/getting-started.md"):
        assert "```pycon" in (ROOT / name).read_text(encoding="utf-8"), name


def test_readme_has_exactly_the_two_setup_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for marker in ("demo-command", "test-command"):
        match = re.search(rf"<!-- {marker} -->\n```bash\n(.+?)\n```", text)
        assert match, marker
        assert match.group(1).startswith("pip install ")


def test_readme_fits_on_two_screens() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 250


def test_update_examples_rewrites_the_outputs_and_nothing_else() -> None:
    """``scripts/update_examples.py`` keeps a block's blank lines and prose as written (it used
    to drop them, so every run reformatted the pages), replaces stale output and writes an
    empty output line as doctest expects it."""
    script = load_script("update_examples")
    current = ">>> x = 2\n\n>>> for i in range(2):\n...     print(i * x)\n0\n2\n\n"
    assert script.rerun(current, {}) == current
    stale = current.replace("0\n2\n", "0\n3\n")
    assert script.rerun(stale, {}) == current
    blank = ">>> print('a\\n\\nb')\nstale\n"
    assert script.rerun(blank, {}) == ">>> print('a\\n\\nb')\na\n<BLANKLINE>\nb\n"


def _modules() -> list[str]:
    names = [probeval.__name__]
    for info in pkgutil.walk_packages(probeval.__path__, prefix="probeval."):
        if info.name not in ("probeval.__main__", "probeval.plot", "probeval.dask"):
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, verbose=False)
    assert result.failed == 0
