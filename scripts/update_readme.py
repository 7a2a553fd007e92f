"""Re-run the README's ``pycon`` examples and rewrite their printed output in place.

Run after a change that legitimately alters printed numbers (e.g. a new random stream layout);
``tests/test_readme.py`` then checks that the README prints exactly what it shows.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def rerun(block: str) -> str:
    parser = doctest.DocTestParser()
    namespace: dict[str, object] = {}
    lines: list[str] = []
    for example in parser.get_examples(block):
        source_lines = example.source.rstrip("\n").split("\n")
        lines.append(">>> " + source_lines[0])
        lines.extend("... " + line for line in source_lines[1:])
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = compile(example.source, "<README>", "single")
            exec(code, namespace)
        output = buffer.getvalue()
        if output:
            lines.extend(output.rstrip("\n").split("\n"))
    return "\n".join(lines) + "\n"


def main() -> None:
    text = README.read_text(encoding="utf-8")
    updated = re.sub(
        r"(```pycon\n)(.*?)(```)", lambda m: m[1] + rerun(m[2]) + m[3], text, flags=re.S
    )
    README.write_text(updated, encoding="utf-8")
    print("README examples re-run" + (" (changed)" if updated != text else " (unchanged)"))


if __name__ == "__main__":
    main()
