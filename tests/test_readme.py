"""The README is a contract: its example runs and prints what it says, its commands exist."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_print_what_they_say() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```pycon\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no pycon example"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README block {i}", str(README), 0)
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


def test_readme_has_exactly_the_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    for marker in ("demo-command", "test-command"):
        match = re.search(rf"<!-- {marker} -->\n```bash\n(.+?)\n```", text)
        assert match, marker
        assert match.group(1).startswith("pip install ")
