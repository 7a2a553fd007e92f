"""Well-formedness of the HTML probeval writes, and that it loads nothing from anywhere."""

from __future__ import annotations

import html.parser
import re

VOID = {"br", "hr", "img", "meta", "link", "input", "col", "wbr"}


class _Checker(html.parser.HTMLParser):
    """Counts tags and checks that every element is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.counts: dict[str, int] = {}
        self.errors: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1
        # Internal references (#id) are fine; anything with a scheme or // would be fetched.
        self.links += [
            v or ""
            for k, v in attrs
            if k in ("src", "href", "xlink:href", "action", "data")
            and re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", v or "", re.IGNORECASE)
        ]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def check_html(text: str) -> dict[str, int]:
    """Well-formed, no external resources; returns the tag counts."""
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert not checker.errors, checker.errors[:3]
    assert not checker.stack, checker.stack
    assert not checker.links, checker.links
    return checker.counts
