"""``arena.records`` reads and writes ``games.jsonl`` and ``games.csv`` a line at a time
(issue 39), with the behaviour the whole-file versions had: the old functions are kept
here, word for word, as the reference.

- :func:`iter_records` (and :func:`arena.tallies.stream_lines`, which shares its reader)
  gives the records, skips the torn lines and raises the errors the old reader did, on
  files made of every kind of line;
- :func:`repair_records` and :func:`arena.runstate.load_finished` leave the same bytes in
  both files as the old repair, write nothing when nothing changes, and sync the side file
  before the games file is replaced;
- :func:`write_games_csv` writes the same bytes as the old writer;
- none of them holds the file: a structural bound with ``tracemalloc``.
"""

from __future__ import annotations

import csv
import io
import itertools
import os
import random
import tracemalloc
from pathlib import Path
from typing import Any, Iterable, Iterator

import pytest

import arena.records
from arena.errors import ArenaError
from arena.records import (GAMES_CSV_COLUMNS, GameRecord, append_record, atomic_write,
                           atomic_write_chunks, iter_records, parse_record, record_rows,
                           repair_lines, repair_records, scan_records, spreadsheet_safe,
                           write_games_csv)
from arena.runstate import load_finished
from arena.tallies import stream_games, stream_lines
from tests.synth_records import make_record

# ---------------------------------------------------------------------------------------
# the whole-file functions as they were (the reference)
# ---------------------------------------------------------------------------------------


def old_iter_records(path: Path) -> Iterator[GameRecord]:
    p = Path(path)
    try:
        lines = p.read_bytes().split(b"\n")
    except FileNotFoundError:
        return
    last = len(lines) - 1
    for n, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            yield parse_record(raw)
        except ValueError as e:
            if n >= last - 1 and not raw.endswith(b"}"):
                continue  # torn final line
            raise ArenaError(f"{p}:{n + 1}: not a game record ({e})") from None


def old_repair_records(path: Path, side: Path) -> tuple[int, list[GameRecord]]:
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return 0, []
    keep: list[bytes] = []
    records: list[GameRecord] = []
    moved: list[bytes] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            records.append(parse_record(raw))
        except ValueError:
            moved.append(raw)
        else:
            keep.append(raw)
    if not moved and (not data or data.endswith(b"\n")):
        return 0, records
    if moved:
        with open(side, "ab") as f:
            f.write(b"".join(line + b"\n" for line in moved))
    atomic_write(p, b"".join(line + b"\n" for line in keep))
    return len(moved), records


def old_write_games_csv(path: Path, records: Iterable[GameRecord]) -> None:
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(GAMES_CSV_COLUMNS)
    for row in record_rows(records):
        writer.writerow(["" if row[c] is None else spreadsheet_safe(row[c])
                         for c in GAMES_CSV_COLUMNS])
    atomic_write(path, out.getvalue().encode("utf-8"))


# ---------------------------------------------------------------------------------------
# files made of every kind of line
# ---------------------------------------------------------------------------------------


def _record_line(k: int) -> bytes:
    return make_record("a", "b", 1.0, game_id=f"g{k}", pair=None).to_json().encode()


#: the kinds of line a games.jsonl may hold after crashes and hand edits
KINDS: dict[str, Any] = {
    "record": _record_line,
    "blank": lambda k: b"",
    "spaces": lambda k: b"   \t",
    "torn": lambda k: _record_line(k)[:37],
    "not json": lambda k: b"not json",
    "not a record": lambda k: b'{"a": 1}',
    "a list": lambda k: b"[]",
    "bad utf-8": lambda k: b'{"game_id": "\xff"}',
    "carriage return": lambda k: _record_line(k) + b"\r",
}


def _files() -> list[tuple[str, bytes]]:
    """Every sequence of up to three kinds (each file after two records), with and without
    a final newline, and a few longer random ones."""
    out: list[tuple[str, bytes]] = [("empty", b"")]
    head = [_record_line(100), _record_line(101)]
    for size in (1, 2, 3):
        for kinds in itertools.product(KINDS, repeat=size):
            if size == 3 and "record" not in kinds:
                continue  # keep the count down: the torn rule needs records around
            lines = head + [KINDS[kind](k) for k, kind in enumerate(kinds)]
            for end in (b"", b"\n"):
                out.append(("+".join(kinds) + ("/nl" if end else ""),
                            b"\n".join(lines) + end))
    rng = random.Random(39)
    for n in range(40):
        kinds = rng.choices(list(KINDS), k=rng.randint(1, 12))
        out.append((f"random{n}", b"\n".join(KINDS[kind](k) for k, kind in enumerate(kinds))
                    + rng.choice((b"", b"\n"))))
    return out


FILES = _files()


def _outcome(make: Any) -> tuple[str, Any]:
    try:
        return "ok", list(make())
    except ArenaError as e:
        return "error", str(e)


def test_iter_records_and_stream_lines_read_as_the_whole_file_reader(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    errors = 0
    for name, data in FILES:
        path.write_bytes(data)
        expected = _outcome(lambda: old_iter_records(path))
        errors += expected[0] == "error"
        assert _outcome(lambda: iter_records(path)) == expected, name
        assert _outcome(lambda: stream_lines(path, full=True)) == expected, name
        assert _outcome(lambda: (g.full() for g in stream_games(path))) == expected, name
    assert 0 < errors < len(FILES)


def test_a_missing_file_has_no_records(tmp_path: Path) -> None:
    assert list(iter_records(tmp_path / "none.jsonl")) == []
    assert list(stream_lines(tmp_path / "none.jsonl")) == []
    assert list(scan_records(tmp_path / "none.jsonl")) == []
    assert repair_records(tmp_path / "none.jsonl", tmp_path / "side") == (0, [])
    assert not (tmp_path / "none.jsonl").exists() and not (tmp_path / "side").exists()


def test_repair_as_the_whole_file_repair(tmp_path: Path) -> None:
    rewritten = 0
    for n, (name, data) in enumerate(FILES):
        rewritten += _repair_as_before(tmp_path / str(n), data)
    assert 0 < rewritten < len(FILES)


def _repair_as_before(tmp_path: Path, data: bytes) -> bool:
    folders = {k: tmp_path / k for k in ("old", "new", "runner")}
    for folder in folders.values():
        folder.mkdir(parents=True)
        (folder / "games.jsonl").write_bytes(data)
        (folder / "side.jsonl").write_bytes(b"earlier\n")
    inodes = {k: (f / "games.jsonl").stat().st_ino for k, f in folders.items()}
    old = old_repair_records(folders["old"] / "games.jsonl", folders["old"] / "side.jsonl")
    new = repair_records(folders["new"] / "games.jsonl", folders["new"] / "side.jsonl")
    moved, finished = load_finished(folders["runner"] / "games.jsonl",
                                    folders["runner"] / "side.jsonl")
    assert new == old and moved == old[0]
    for k in ("new", "runner"):
        for file in ("games.jsonl", "side.jsonl"):
            assert (folders[k] / file).read_bytes() == (folders["old"] / file).read_bytes()
        # nothing written when nothing changes
        changed = (folders["old"] / "games.jsonl").stat().st_ino != inodes["old"]
        assert ((folders[k] / "games.jsonl").stat().st_ino != inodes[k]) == changed
    assert list(finished) == list(dict.fromkeys(r.game_id for r in old[1]))
    repaired = (folders["runner"] / "games.jsonl").read_bytes()
    for g in finished:
        start = finished.offset(g)
        assert parse_record(repaired[start:repaired.index(b"\n", start)]).game_id == g
    return changed


def test_the_side_file_is_synced_before_the_games_file_is_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    games, side = tmp_path / "games.jsonl", tmp_path / "side.jsonl"
    games.write_bytes(_record_line(1) + b"\nnot json\n" + _record_line(2) + b"\n{torn")
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync " + os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1])
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append(f"replace {Path(dst).name} (side: {side.read_bytes()!r})")
        real_replace(src, dst)

    monkeypatch.setattr(arena.records.os, "fsync", fsync)
    monkeypatch.setattr(arena.records.os, "replace", replace)
    assert repair_lines(games, side) == (2, True)
    assert events[0] == "fsync side.jsonl"
    assert events[-1] == "replace games.jsonl (side: b'not json\\n{torn\\n')"
    assert [r.game_id for r in iter_records(games)] == ["g1", "g2"]


def test_a_side_file_that_cannot_be_written_leaves_the_games_file(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    data = _record_line(1) + b"\nnot json\n"
    games.write_bytes(data)
    with pytest.raises(ArenaError, match="cannot write"):
        repair_records(games, tmp_path / "no such folder" / "side.jsonl")
    assert games.read_bytes() == data and sorted(tmp_path.iterdir()) == [games]


# ---------------------------------------------------------------------------------------
# games.csv and the atomic writes
# ---------------------------------------------------------------------------------------


def _awkward_records() -> list[GameRecord]:
    names = ["plain", "=1+2", "-minus", "@at", "\ttab", "\rcr", 'quote "q"', "comma, name",
             "new\nline", "ünïcödé ♞", "+plus", ""]
    out = []
    for k, (w, b) in enumerate(itertools.permutations(names, 2)):
        r = make_record(w, b, (1.0, 0.5, 0.0)[k % 3], game_id=f"=g{k}", round=k % 4 or None,
                        pair=k if k % 5 else None, forfeit="white" if k % 7 == 0 else None)
        r.opening = ["d6", "f4"][: k % 3]
        r.seed = k if k % 2 else None
        r.host, r.worker = "-host", "tcp://w:1" if k % 2 else ""
        out.append(r)
    return out


def test_games_csv_has_the_bytes_of_the_list_writer(tmp_path: Path) -> None:
    records = _awkward_records()
    for chosen in (records, records[:1], []):
        old_write_games_csv(tmp_path / "old.csv", chosen)
        write_games_csv(tmp_path / "new.csv", iter(chosen))  # any iterable, read once
        assert (tmp_path / "new.csv").read_bytes() == (tmp_path / "old.csv").read_bytes()
    assert oct((tmp_path / "new.csv").stat().st_mode & 0o777) == oct(0o644)


def test_an_error_while_streaming_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "games.csv"
    target.write_bytes(b"old")

    def records() -> Iterator[GameRecord]:
        yield make_record("a", "b", 1.0)
        raise RuntimeError("the source failed")

    with pytest.raises(RuntimeError):
        write_games_csv(target, records())
    with pytest.raises(RuntimeError):
        atomic_write_chunks(target, (b"x" if k < 3 else _fail() for k in range(5)))
    assert target.read_bytes() == b"old" and list(tmp_path.iterdir()) == [target]
    atomic_write_chunks(target, (b"new", b"", b" file"))
    assert target.read_bytes() == b"new file"


# ---------------------------------------------------------------------------------------
# nothing holds the file
# ---------------------------------------------------------------------------------------


def _peak(run: Any) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 3 MB of records (long ones: many moves each), a broken line and a torn end."""
    path = tmp_path_factory.mktemp("big") / "games.jsonl"
    for k in range(600):
        append_record(path, make_record("a", "b", 1.0, game_id=f"g{k}", pair=None,
                                        moves=["d6", "f4", "b4"] * 60))
    return path


def test_the_readers_do_not_hold_the_file(big: Path) -> None:
    size = big.stat().st_size
    assert size > 2_000_000
    limit = size // 10  # the whole-file readers held the file (and its lines) at least
    assert _peak(lambda: sum(1 for _ in iter_records(big))) < limit
    assert _peak(lambda: sum(1 for _ in stream_lines(big))) < limit
    assert _peak(lambda: sum(1 for _ in scan_records(big))) < limit
    assert _peak(lambda: load_finished(big, big.with_name("side.jsonl"))) < limit
    assert _peak(lambda: old_iter_records(big).__next__()) > size  # the check can fail


def test_the_writers_do_not_hold_the_file(big: Path, tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    games.write_bytes(big.read_bytes() + b"not json\n" + big.read_bytes()[:500])
    size = games.stat().st_size
    limit = size // 10
    assert _peak(lambda: repair_lines(games, tmp_path / "side.jsonl")) < limit
    assert (tmp_path / "side.jsonl").read_bytes().count(b"\n") == 2
    assert _peak(lambda: write_games_csv(tmp_path / "games.csv", iter_records(games))) < limit
    assert _peak(lambda: atomic_write_chunks(tmp_path / "copy", _chunks(games))) < limit
    assert (tmp_path / "copy").read_bytes() == games.read_bytes()


def _fail() -> bytes:
    raise RuntimeError("the source failed")


def _chunks(path: Path, size: int = 65536) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(size):
            yield chunk
