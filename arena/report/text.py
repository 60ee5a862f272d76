"""Text helpers shared by the tables, charts and page.

Untrusted text (bot and variant names) made safe to show on a terminal, in a file name or on a
chart axis, and numbers formatted with a placeholder for "none".
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Optional

_NAME_CAP = 28  # characters of a bot name shown on a chart axis


def slug(text: str) -> str:
    """``text`` made safe as part of a file name."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:60] or "x"


def page_paths(keys: Iterable[str], folder: str) -> dict[str, str]:
    """A page per key: ``<folder>/<slug of the key>.html``, a number added where two keys make
    the same file name (case ignored, so the pages stay apart on any file system)."""
    used: set[str] = set()
    out = {}
    for key in keys:
        base = slug(key)
        name, k = base, 1
        while name.lower() in used:
            k += 1
            name = f"{base}-{k}"
        used.add(name.lower())
        out[key] = f"{folder}/{name}.html"
    return out


def clean_text(text: str) -> str:
    """``text`` with control and other unprintable characters replaced by ``?`` (for terminals)."""
    return "".join(c if c.isprintable() else "?" for c in text)


def short(name: str, cap: int = _NAME_CAP) -> str:
    """A name cut to ``cap`` characters (with an ellipsis), for chart labels."""
    name = clean_text(name)
    return name if len(name) <= cap else name[: cap - 1] + "…"


def format_number(x: Optional[float], spec: str, none: str = "–") -> str:
    """``x`` formatted with ``spec``, or ``none`` for None and NaN; a value that rounds to
    zero never shows a sign it does not have (``-0.0``)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return none
    text = format(x, spec)
    if text[:1] == "-" and not text.strip("-0.%"):  # a negative value that rounds to zero
        text = ("+" if "+" in spec else "") + text[1:]
    return text
