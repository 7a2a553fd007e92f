"""Re-run the ``pycon`` examples of the README and the docs pages; rewrite their output in place.

Run after a change that legitimately alters printed numbers (e.g. a new random stream layout);
``tests/test_docs.py`` then checks that every page prints exactly what it shows. The blocks of
one page share a namespace, as they do in the test.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def rerun(block: str, namespace: dict[str, object]) -> str:
    parser = doctest.DocTestParser()
    lines: list[str] = []
    for example in parser.get_examples(block):
        source_lines = example.source.rstrip("\n").split("\n")
        lines.append(">>> " + source_lines[0])
        lines.extend("... " + line for line in source_lines[1:])
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = compile(example.source, "<example>", "single")
            exec(code, namespace)
        output = buffer.getvalue()
        if output:
            lines.extend(output.rstrip("\n").split("\n"))
    return "\n".join(lines) + "\n"


def main() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        namespace: dict[str, object] = {}
        updated = re.sub(
            r"(```pycon\n)(.*?)(```)",
            lambda m, ns=namespace: m[1] + rerun(m[2], ns) + m[3],
            text,
            flags=re.S,
        )
        page.write_text(updated, encoding="utf-8")
        print(f"{page.name}: examples re-run" + (" (changed)" if updated != text else ""))


if __name__ == "__main__":
    main()
