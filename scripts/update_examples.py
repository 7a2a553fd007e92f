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
    """``block`` with each example's output replaced by what its source prints now.

    Everything else — blank lines between examples, the blank line before the closing fence —
    is kept as written, so a page that did not change is rewritten byte for byte.
    """
    parts: list[str] = []
    for piece in doctest.DocTestParser().parse(block):
        if isinstance(piece, str):
            parts.append(piece)
            continue
        source_lines = piece.source.rstrip("\n").split("\n")
        indent = " " * piece.indent
        parts.append(indent + ">>> " + source_lines[0] + "\n")
        parts.extend(indent + "... " + line + "\n" for line in source_lines[1:])
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(piece.source, "<example>", "single"), namespace)
        output = buffer.getvalue()
        if output:
            # doctest cannot match an empty output line; it is written <BLANKLINE>.
            parts.extend(
                indent + (line if line.strip() else doctest.BLANKLINE_MARKER) + "\n"
                for line in output.rstrip("\n").split("\n")
            )
    return "".join(parts)


def main() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        namespace: dict[str, object] = {}

        def rewrite(match: re.Match[str], namespace: dict[str, object] = namespace) -> str:
            return match[1] + rerun(match[2], namespace) + match[3]

        updated = re.sub(r"(```pycon\n)(.*?)(```)", rewrite, text, flags=re.S)
        page.write_text(updated, encoding="utf-8")
        print(f"{page.name}: examples re-run" + (" (changed)" if updated != text else ""))


if __name__ == "__main__":
    main()
