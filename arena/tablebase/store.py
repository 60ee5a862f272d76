"""Building a folder of tables: which tables, in which order, resumable per table.

:func:`build_tables` computes every table up to the men counts asked for, smaller tables
first (a table's captures lead into them), reading the ones it needs from the folder and
writing each new one atomically (a temporary file renamed when whole), so an interrupted
build loses at most the table it was computing and a file in the folder is always complete.
A table whose file is already there, whole and for the same rules, is kept.

numpy is imported only when a table is computed.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from arena.tablebase.errors import TablebaseCorrupt, TablebaseError
from arena.tablebase.fileformat import dumps, loads, write_atomically
from arena.tablebase.params import TableRules, default_directory, table_name
from arena.variants import Variant

if TYPE_CHECKING:
    from arena.tablebase.build import Known

#: (table name such as "4-3", stage, done, total)
BuildProgress = Callable[[str, str, int, int], None]


@dataclass(frozen=True)
class BuildResult:
    """One table of a build: its file, and whether it was computed now or kept."""

    men: tuple[int, int]
    path: Path
    status: str  # "built", "kept" or "rebuilt" (a damaged file was replaced)
    seconds: float


def plan(rules: TableRules, top: tuple[int, int], points: int) -> list[tuple[int, int]]:
    """The tables up to ``top`` (``a >= b``): every ``x-y`` with ``x <= a``, ``y <= b``,
    ``x >= y >= lose_below`` and ``x + y`` below the board's points, fewer men first."""
    a, b = max(top), min(top)
    low = rules.lose_below
    out = [(x, y) for x in range(low, a + 1) for y in range(low, min(x, b) + 1)
           if x + y < points]
    return sorted(out, key=lambda p: (p[0] + p[1], p[0]))


def dependencies(rules: TableRules, a: int, b: int) -> list[tuple[int, int]]:
    """The orientations (mover, opponent) a capture from the ``a-b`` table leads to."""
    most = max(rules.multi_mill_captures, 1)
    out = set()
    for m, o in ((a, b), (b, a)):
        for c in range(1, most + 1):
            if o - c >= rules.lose_below:
                out.add((o - c, m))  # a capture: the captured side moves next
        if rules.blocked == "remove-and-move" and o - 1 >= rules.lose_below:
            out.add((m, o - 1))  # a blocked side's removal: it moves again
    return sorted(out)


def build_tables(variant: Variant, top: tuple[int, int], directory: Optional[Path] = None,
                 progress: Optional[BuildProgress] = None,
                 on_table: Optional[Callable[[BuildResult], None]] = None) -> list[BuildResult]:
    """Build every table of ``variant`` up to ``top`` men in ``directory`` (default:
    :func:`default_directory`), smaller first, keeping the tables already there.

    :raises UnsupportedVariant: the variant's rules have no tables.
    :raises TablebaseError: a table cannot be written.
    """
    from arena.board import get_topology

    rules = TableRules.of(variant)
    folder = Path(directory) if directory is not None else default_directory()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TablebaseError(f"cannot create the tables folder {folder}: {e.strerror}") from None
    points = get_topology(rules.board).size
    todo = plan(rules, top, points)
    if not todo:
        raise TablebaseError(f"no table up to {top[0]}-{top[1]} men for {variant.name} "
                             f"(players lose below {rules.lose_below} men)")
    _sweep_partials(folder)
    results = []
    for a, b in todo:
        path = folder / table_name(rules, a, b)
        started = time.monotonic()
        status = "built"
        if path.exists():
            try:
                header, _ = loads(path.read_bytes(), str(path))
                if header.rules == rules and header.men == (a, b):
                    result = BuildResult((a, b), path, "kept", time.monotonic() - started)
                    results.append(result)
                    if on_table:
                        on_table(result)
                    continue
            except (TablebaseCorrupt, OSError):
                pass
            status = "rebuilt"
        blob = compute_table(rules, a, b, folder, progress)
        try:
            write_atomically(path, blob)
        except OSError as e:
            raise TablebaseError(f"cannot write {path}: {e.strerror}") from None
        result = BuildResult((a, b), path, status, time.monotonic() - started)
        results.append(result)
        if on_table:
            on_table(result)
    return results


def compute_table(rules: TableRules, a: int, b: int, folder: Path,
                  progress: Optional[BuildProgress] = None) -> bytes:
    """The file of the ``a-b`` table, computed from the smaller tables in ``folder``."""
    import numpy as np

    from arena.tablebase.build import Known, solve

    known: dict[tuple[int, int], Known] = {}
    chain = 0
    for m, o in dependencies(rules, a, b):
        known[(m, o)], longest = _load_orientation(rules, m, o, folder)
        chain = max(chain, longest)
    name = f"{a}-{b}"

    def report(stage: str, done: int, total: int) -> None:
        if progress:
            progress(name, stage, done, total)

    solved = solve(rules, a, b, known, report)
    own = solved.max_distance
    if rules.three_three_draw and (a, b) == (3, 3):
        own = min(own, rules.three_three_draw)  # 3-3 draws after that many quiet turns
    dtype = "uint8" if solved.orientations[0].codes.dtype == np.uint8 else "uint16"
    header = {
        "rules": rules.to_dict(),
        "key": rules.key,
        "men": [a, b],
        "dtype": dtype,
        "symmetries": _symmetries(rules.board),
        "orientations": [{"mover": o.mover, "opponent": o.opponent,
                          "classes": int(len(o.classes)),
                          "per_class": int(len(o.codes) // max(len(o.classes), 1)),
                          "stats": o.stats} for o in solved.orientations],
        "max_distance": solved.max_distance,
        "chain_max_distance": max(chain, own),
        "build": {"seconds": {k: round(v, 2) for k, v in solved.seconds.items()},
                  "edges": solved.edges, "levels": solved.levels,
                  "by": f"morris-arena {_package_version()}",
                  "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
    }
    parts = [(o.classes.astype("<u4").tobytes(), o.codes.astype(o.codes.dtype.newbyteorder("<"))
              .tobytes()) for o in solved.orientations]
    return dumps(header, parts)


def _load_orientation(rules: TableRules, m: int, o: int, folder: Path) -> tuple[Known, int]:
    """An orientation of a smaller table, from its file, as numpy arrays, and the table's
    chain of longest distances."""
    import numpy as np

    from arena.tablebase.build import Known

    a, b = max(m, o), min(m, o)
    path = folder / table_name(rules, a, b)
    if not path.exists():
        raise TablebaseError(f"the {a}-{b} table is needed first and is not in {folder}")
    header, orients = loads(path.read_bytes(), str(path))
    if header.rules != rules:
        raise TablebaseCorrupt(f"{path}: for other rules than its name says")
    for orient in orients:
        if orient.mover == m:
            codes = np.frombuffer(orient.codes,  # type: ignore[call-overload]
                                  dtype=np.uint8 if header.dtype == "uint8" else np.uint16)
            classes = np.frombuffer(orient.classes,  # type: ignore[call-overload]
                                    dtype=np.uint32).astype(np.int64)
            return Known(classes, codes), header.chain_max_distance
    raise TablebaseCorrupt(f"{path}: no orientation with {m} men to move")


def _symmetries(board: str) -> int:
    from arena.tablebase.geometry import geometry

    return len(geometry(board).perms)


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("morris-arena")
    except Exception:  # not installed: a checkout
        return "checkout"


def _sweep_partials(folder: Path) -> None:
    """Remove the temporary files of builds that died (their process is gone)."""
    for p in folder.glob(".*.partial"):
        try:
            pid = int(p.name.rsplit(".", 2)[-2])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            p.unlink(missing_ok=True)
        except OSError:
            pass
