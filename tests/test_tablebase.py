"""Endgame tablebases (arena/tablebase, issue 28): the board's symmetries, the index (numpy
and pure Python agree), every entry against its successors as the rules engine generates
them (a sample of nine men's morris 3-3, every entry of small tables on the six-point-ring
board, exhaustively for 3-3), symmetric positions, short wins proven by plain search, the
quiet-turn count, the file's checksum and rules, the command line, and the perfect endgame
bot converting won positions against bots/alphabeta in real games.

The tables are built once per module in temporary folders: nine men's morris 3-3 (a few
seconds) and small tables of variants on the 16-point board (six men's morris with and
without flying, a variant with every unusual rule the tables hold)."""

from __future__ import annotations

import os

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Optional

import numpy as np
import pytest
from click.testing import CliRunner

from arena.board import get_topology
from arena.cli import cli
from arena.rules import BLACK, WHITE, Position
from arena.tablebase import (MissingTable, NotCovered, TableRules, Tablebase, TablebaseCorrupt,
                             TablebaseMismatch, UnsupportedVariant, build_tables, open_tablebase,
                             table_name)
from arena.tablebase.build import NpLayout, decode
from arena.tablebase.geometry import automorphisms, geometry
from arena.tablebase.index import Layout
from arena.variants import Variant, get_variant

ROOT = Path(__file__).resolve().parent.parent
NMM = get_variant("nine-mens-morris")
SIX = get_variant("six-mens-morris")  # six board, no flying
SIX_FLY = Variant(name="six-flying", board="six", men=6, flying=True)
#: every rule the tables hold that the presets above do not: a blocked player removes and
#: moves on, captures may be declined, men in mills are never taken, a double mill takes two
SIX_ODD = Variant(name="six-odd", board="six", men=6, flying=True, blocked="remove-and-move",
                  optional_capture=True, mill_capture="never", multi_mill_captures=2)
#: three against three drawn after 6 quiet turns: captures into 3-3 win only if quick enough
SIX_33 = Variant(name="six-33", board="six", men=6, flying=True, three_three_draw=6)

SMALL = [(SIX, (4, 4)), (SIX_FLY, (4, 4)), (SIX_ODD, (5, 4)), (SIX_33, (4, 3))]


@pytest.fixture(scope="module")
def nmm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("nmm-tables")
    build_tables(NMM, (3, 3), folder)
    return folder


@pytest.fixture(scope="module")
def six_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("six-tables")
    for variant, top in SMALL:
        build_tables(variant, top, folder)
    return folder


@pytest.fixture(scope="module")
def nmm_tb(nmm_dir: Path) -> Iterator[Tablebase]:
    with open_tablebase(nmm_dir) as tb:
        yield tb


@pytest.fixture(scope="module")
def six_tb(six_dir: Path) -> Iterator[Tablebase]:
    with open_tablebase(six_dir) as tb:
        yield tb


def position(variant: Variant, white: int, black: int, turn: int = WHITE, quiet: int = 0,
             ply: int = 60) -> Position:
    """A moving-phase position from masks (no man in hand)."""
    n = get_topology(variant.board).size
    text = "".join("W" if white >> i & 1 else "B" if black >> i & 1 else "." for i in range(n))
    return Position.from_text(variant, f"{text} {'wb'[turn]} 0 0 {quiet} - - {ply}")


def random_position(variant: Variant, rng: random.Random, w: int, b: int,
                    quiet: int = 0) -> Position:
    n = get_topology(variant.board).size
    pts = rng.sample(range(n), w + b)
    return position(variant, sum(1 << p for p in pts[:w]), sum(1 << p for p in pts[w:]),
                    rng.choice((WHITE, BLACK)), quiet)


def agrees_with_moves(tb: Tablebase, pos: Position) -> Optional[str]:
    """None if the tables' answer for ``pos`` is the best of its legal moves' answers (the
    value, and the distance: shortest win, longest loss), else what differs."""
    p = tb.probe(pos)
    moves = tb.probe_moves(pos)
    if not moves:
        ended = pos.outcome()
        if ended is None or p.distance != 0:
            return f"{pos.to_text()}: no move but {p} and outcome {ended}"
        return None
    best = moves[0]
    if (best.value, best.distance) != (p.value, p.distance):
        return f"{pos.to_text()}: {p}, but the best move {best}"
    return None


def entries(variant: Variant, m: int, o: int) -> Iterator[tuple[int, int]]:
    """Every index entry of the orientation ``m`` against ``o`` as (mover, opponent) masks."""
    lay = NpLayout(variant.board, m, o)
    mover, opp = lay.decode(0, lay.size)
    yield from zip(mover.tolist(), opp.tolist())


# -- symmetries and index ---------------------------------------------------------------------


def test_the_symmetries_are_found_and_are_automorphisms() -> None:
    counts = {name: len(automorphisms(get_topology(name)))
              for name in ("standard", "diagonals", "six", "three")}
    assert counts == {"standard": 16, "diagonals": 16, "six": 16, "three": 8}
    topo = get_topology("standard")
    idx = topo.index
    swap = {"a1": "c3", "a4": "c4", "a7": "c5", "d7": "d5", "g7": "e5", "g4": "e4", "g1": "e3",
            "d1": "d3"}  # the outer and inner rings exchanged
    swap |= {v: k for k, v in swap.items()}
    as_perm = tuple(idx[swap.get(p, p)] for p in topo.points)
    assert as_perm in automorphisms(topo)
    for name in ("standard", "diagonals"):
        topo = get_topology(name)
        mills = set(topo.mills)
        edges = set(topo.edges)
        for perm in automorphisms(topo):
            assert {sum(1 << perm[i] for i in range(topo.size) if m >> i & 1) for m in mills} \
                == mills
            assert {tuple(sorted((perm[a], perm[b]))) for a, b in edges} == edges


def test_numpy_and_python_indexes_agree() -> None:
    rng = random.Random(3)
    for board, m, o in (("standard", 3, 3), ("standard", 4, 3), ("diagonals", 3, 4),
                        ("six", 5, 4)):
        geo = geometry(board)
        lay = NpLayout(board, m, o)
        py = Layout(geo, m, o, lay.classes.tolist())
        movers, opps = [], []
        for _ in range(300):
            pts = rng.sample(range(geo.size), m + o)
            movers.append(sum(1 << p for p in pts[:m]))
            opps.append(sum(1 << p for p in pts[m:]))
        got = lay.index(np.array(movers, dtype=np.int64), np.array(opps, dtype=np.int64))
        assert got.tolist() == [py.index(a, b) for a, b in zip(movers, opps)]
        # a number decodes to a position with that number, its images too
        back_m, back_o = lay.decode(0, lay.size)
        sample = rng.sample(range(lay.size), 200)
        for i in sample:
            a, b = int(back_m[i]), int(back_o[i])
            for g in range(len(geo.perms)):
                j = py.index(geo.apply(g, a), geo.apply(g, b))
                assert j == py.index(a, b)


# -- the tables against the rules engine --------------------------------------------------------


def test_nine_mens_morris_3_3_counts(nmm_dir: Path, nmm_tb: Tablebase) -> None:
    """2,691,920 positions; the side to move wins 82.9 % of them (Gasser 1996, fig. 11: 83 %)."""
    from arena.tablebase.fileformat import read_header

    assert [h.men for h in nmm_tb.preload(NMM)] == [(3, 3)]
    assert nmm_tb.preload(get_variant("lasker-morris"))  # the same rules once placing is over
    assert nmm_tb.preload(get_variant("nine-mens-morris-no-flying")) == []

    header = read_header(nmm_dir / table_name(TableRules.of(NMM), 3, 3))
    stats = header.data["orientations"][0]["stats"]
    assert stats["positions"] == 2_691_920
    assert (stats["won"]["positions"], stats["drawn"]["positions"],
            stats["lost"]["positions"]) == (2_232_160, 4_112, 455_648)
    assert header.data["symmetries"] == 16 and header.rules == TableRules.of(NMM)


def test_nine_mens_morris_3_3_sample_agrees_with_every_move(nmm_tb: Tablebase) -> None:
    rng = random.Random(11)
    bad = [e for e in (agrees_with_moves(nmm_tb, random_position(NMM, rng, 3, 3))
                       for _ in range(1500)) if e]
    assert bad == []


@pytest.mark.slow
def test_nine_mens_morris_3_3_every_entry_agrees_with_every_move(nmm_tb: Tablebase) -> None:
    """Every 3-3 entry checked against every legal move takes about five minutes here, too
    long for every ``make test``: it checks every 48th entry (a different one each day, so
    the whole table is covered over time), and every entry with
    MORRIS_ARENA_EXHAUSTIVE=1."""
    import datetime
    import os

    every = 1 if os.environ.get("MORRIS_ARENA_EXHAUSTIVE") == "1" else 48
    start = datetime.date.today().toordinal() % every
    bad = []
    for n, (mover, opp) in enumerate(entries(NMM, 3, 3)):
        if n % every != start:
            continue
        e = agrees_with_moves(nmm_tb, position(NMM, mover, opp))
        if e:
            bad.append(e)
    assert bad == []


@pytest.mark.parametrize("variant", [SIX, pytest.param(SIX_FLY, marks=pytest.mark.slow),
                                     pytest.param(SIX_ODD, marks=pytest.mark.slow),
                                     pytest.param(SIX_33, marks=pytest.mark.slow)],
                         ids=lambda v: v.name)
def test_six_board_3_3_every_entry_agrees_with_every_move(six_tb: Tablebase,
                                                          variant: Variant) -> None:
    """Every entry of Six Men's Morris; of the other variants every 4th (a different
    quarter each day), every entry with MORRIS_ARENA_EXHAUSTIVE=1."""
    import datetime
    import os

    every = 1 if variant is SIX or os.environ.get("MORRIS_ARENA_EXHAUSTIVE") == "1" else 4
    start = datetime.date.today().toordinal() % every
    bad = [e for n, (mover, opp) in enumerate(entries(variant, 3, 3)) if n % every == start
           if (e := agrees_with_moves(six_tb, position(variant, mover, opp)))]
    assert bad == []


@pytest.mark.parametrize("variant,men", [(SIX, (4, 3)), (SIX, (4, 4)), (SIX_FLY, (4, 3)),
                                         (SIX_FLY, (4, 4)), (SIX_ODD, (4, 4)),
                                         (SIX_ODD, (5, 4)), (SIX_33, (4, 3))],
                         ids=lambda x: getattr(x, "name", None) or f"{x[0]}-{x[1]}")
def test_larger_tables_agree_with_every_move_on_a_sample(six_tb: Tablebase, variant: Variant,
                                                         men: tuple[int, int]) -> None:
    """Captures lead into the smaller tables: their values and the rules for them (a
    declined capture, an untouchable mill, a double capture, a blocked player's removal,
    three against three drawn) all meet the engine's moves here."""
    rng = random.Random(hash(variant.name) & 0xFFFF)
    bad = []
    for _ in range(400):
        w, b = men if rng.random() < 0.5 else men[::-1]
        e = agrees_with_moves(six_tb, random_position(variant, rng, w, b))
        if e:
            bad.append(e)
    assert bad == []


def test_the_unusual_rules_matter(six_dir: Path) -> None:
    """The variants' tables differ: each rule changes values, so each has its own file."""
    keys = {TableRules.of(v).key for v, _ in SMALL}
    assert len(keys) == len(SMALL)
    with open_tablebase(six_dir) as tb:
        rng = random.Random(5)
        differ = 0
        for _ in range(300):
            pos = random_position(SIX_FLY, rng, 4, 4)
            odd = Position.from_text(SIX_ODD, pos.to_text())
            differ += tb.probe(pos) != tb.probe(odd)
        assert differ > 0


def test_symmetric_positions_agree(nmm_tb: Tablebase, six_tb: Tablebase) -> None:
    rng = random.Random(8)
    for tb, variant, men in ((nmm_tb, NMM, (3, 3)), (six_tb, SIX_FLY, (4, 3)),
                             (six_tb, SIX, (4, 4))):
        geo = geometry(variant.board)
        for _ in range(60):
            pos = random_position(variant, rng, *men)
            first = tb.probe(pos)
            for g in range(len(geo.perms)):
                image = position(variant, geo.apply(g, pos.men[WHITE]),
                                 geo.apply(g, pos.men[BLACK]), pos.turn)
                assert tb.probe(image) == first


def _forced_end(pos: Position, plies: int, me: int) -> bool:
    """Plain search, no tables: can ``me`` force a win within ``plies`` plies?"""
    outcome = pos.outcome()
    if outcome is not None:
        return outcome.winner == me
    if plies == 0:
        return False
    moves = pos.generate_raw()
    results = []
    for raw in moves:
        pos.push_raw(raw)
        won = _forced_end(pos, plies - 1, me)
        pos.pop_raw()
        if pos.turn == me and won:
            return True
        if pos.turn != me and not won:
            return False
        results.append(won)
    return pos.turn != me and all(results)


def test_short_wins_and_losses_are_proven_by_plain_search(nmm_tb: Tablebase,
                                                          six_tb: Tablebase) -> None:
    """In 3-3 every capture ends the game, so the distance is the distance to the end: a
    win in d is a forced win within d plies and not within d - 2; a loss likewise."""
    rng = random.Random(21)
    for tb, variant, most in ((nmm_tb, NMM, 3), (six_tb, SIX, 7), (six_tb, SIX_FLY, 3)):
        seen: dict[tuple[str, int], int] = {}
        for _ in range(4000):
            pos = random_position(variant, rng, 3, 3)
            p = tb.probe(pos)
            if p.value == "draw" or p.distance > most or seen.get((p.value, p.distance), 0) >= 3:
                continue
            seen[(p.value, p.distance)] = seen.get((p.value, p.distance), 0) + 1
            me = pos.turn if p.value == "win" else 1 - pos.turn
            assert _forced_end(pos, p.distance, me), (pos.to_text(), p)
            if p.distance >= 2:
                assert not _forced_end(pos, p.distance - 2, me), (pos.to_text(), p)
        assert len(seen) >= 3, variant.name


# -- the quiet-turn count and coverage -------------------------------------------------------


def test_a_win_needs_room_under_the_no_capture_rule(nmm_tb: Tablebase) -> None:
    rng = random.Random(4)
    while True:
        pos = random_position(NMM, rng, 3, 3)
        p = nmm_tb.probe(pos)
        if p.value == "win" and p.distance >= 5:
            break
    limit = NMM.no_capture_draw
    text = pos.to_text().split()
    for quiet, value in ((limit - p.distance, "win"), (limit - p.distance + 1, "draw")):
        text[4] = str(quiet)
        assert nmm_tb.probe(Position.from_text(NMM, " ".join(text))).value == value
    # three against three drawn after 10 quiet turns: a longer win is a draw at once
    short = Variant(name="nmm-33", three_three_draw=p.distance - 1)
    rules = TableRules.of(short)
    assert rules != TableRules.of(NMM)


def test_what_the_tables_do_not_cover(nmm_tb: Tablebase, nmm_dir: Path) -> None:
    placing = Position.from_text(NMM, "WW.W....B.B..........B.. w 1 0 0 - - 40")
    with pytest.raises(NotCovered, match="men in hand"):
        nmm_tb.probe(placing)
    rng = random.Random(2)
    with pytest.raises(MissingTable, match="4-3"):
        nmm_tb.probe(random_position(NMM, rng, 4, 3))
    other = get_variant("nine-mens-morris-no-flying")
    with pytest.raises(TablebaseMismatch, match="flying=false"):
        nmm_tb.probe(random_position(other, rng, 3, 3))
    with pytest.raises(UnsupportedVariant, match="no_immediate_reform"):
        nmm_tb.probe(random_position(get_variant("nine-mens-morris-options"), rng, 3, 3))
    short = Variant(name="short", no_capture_draw=10)
    with pytest.raises(TablebaseMismatch, match="no_capture_draw=10"):
        nmm_tb.probe(random_position(short, rng, 3, 3))
    # a game already over: the loser to move, distance 0
    lost = position(NMM, 0b111 << 9, 0b11 << 3, BLACK)
    assert nmm_tb.probe(lost).value == "loss" and nmm_tb.probe(lost).distance == 0
    with pytest.raises(MissingTable):
        open_tablebase(nmm_dir / "nowhere")


# -- the file ---------------------------------------------------------------------------------


def test_a_damaged_file_is_refused(nmm_dir: Path, tmp_path: Path) -> None:
    name = table_name(TableRules.of(NMM), 3, 3)
    blob = (nmm_dir / name).read_bytes()
    pos = random_position(NMM, random.Random(1), 3, 3)
    for label, damaged in (("flipped", blob[:-100] + bytes([blob[-100] ^ 1]) + blob[-99:]),
                           ("cut", blob[:-10]), ("header", blob.replace(b'"longest_win": 25',
                                                                          b'"longest_win": 24'))):
        folder = tmp_path / label
        folder.mkdir()
        (folder / name).write_bytes(damaged)
        with open_tablebase(folder) as tb:
            with pytest.raises(TablebaseCorrupt, match="checksum|cut short|payload"):
                tb.probe(pos)
    folder = tmp_path / "magic"
    folder.mkdir()
    (folder / name).write_bytes(b"NOTATABLE" + blob[9:])
    with pytest.raises(TablebaseCorrupt, match="bad magic"):
        open_tablebase(folder)


def test_a_table_of_another_variant_is_refused(nmm_dir: Path, tmp_path: Path) -> None:
    """A file renamed to another variant's name still says its rules: refused by them."""
    other = get_variant("nine-mens-morris-no-flying")
    (tmp_path / table_name(TableRules.of(other), 3, 3)).write_bytes(
        (nmm_dir / table_name(TableRules.of(NMM), 3, 3)).read_bytes())
    with open_tablebase(tmp_path) as tb:
        with pytest.raises(TablebaseMismatch, match="flying=false \\(table: true\\)"):
            tb.probe(random_position(other, random.Random(3), 3, 3))


def test_importing_the_prober_loads_no_numpy() -> None:
    code = ("import sys, arena.tablebase; "
            "print([m for m in ('numpy', 'pandas') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


# -- the command line -------------------------------------------------------------------------


def test_cli_build_is_resumable_and_probe_answers(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = tmp_path / "tables"
    done = runner.invoke(cli, ["tablebase", "build", "six-mens-morris", "--men", "3-3",
                               "--dir", str(folder)])
    assert done.exit_code == 0, done.output
    assert "3-3: built" in done.output and "1 tables of six-mens-morris" in done.output
    path = folder / table_name(TableRules.of(SIX), 3, 3)
    assert path.exists() and not list(folder.glob(".*"))
    # a half-written file of a dead build is swept, a whole file kept, a damaged one rebuilt
    (folder / f".{path.name}.999999.partial").write_bytes(b"half")
    done = runner.invoke(cli, ["tablebase", "build", "6mm", "--men", "4-3", "--dir",
                               str(folder)])
    assert done.exit_code == 0, done.output
    assert "3-3: kept" in done.output and "4-3: built" in done.output
    assert not list(folder.glob(".*"))
    path.write_bytes(path.read_bytes()[:-1] + b"\x00")
    done = runner.invoke(cli, ["tablebase", "build", "6mm", "--men", "3-3", "--dir",
                               str(folder)])
    assert "3-3: rebuilt" in done.output

    pos = position(SIX, 0b111, 0b111 << 10, WHITE)
    done = runner.invoke(cli, ["tablebase", "probe", "6mm", pos.to_text(), "--dir", str(folder),
                               "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.output)
    assert set(answer) == {"value", "distance", "moves"}
    assert answer["value"] in ("win", "draw", "loss") and isinstance(answer["distance"], int)
    legal = {str(m) for m in pos.legal_moves()}
    assert {m["move"] for m in answer["moves"]} == legal
    for m in answer["moves"]:
        assert set(m) == {"move", "value", "distance"}
    with open_tablebase(folder) as tb:
        expected = tb.probe(pos)
    assert (answer["value"], answer["distance"]) == (expected.value, expected.distance)
    text = runner.invoke(cli, ["tablebase", "probe", "6mm", pos.to_text(), "--dir", str(folder)])
    assert text.exit_code == 0 and "white to move" in text.output


def test_cli_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    placing = "................ w 6 6 0 - - 0"
    done = runner.invoke(cli, ["tablebase", "probe", "6mm", placing, "--dir", str(tmp_path)])
    assert done.exit_code == 1 and "not covered" in done.output
    done = runner.invoke(cli, ["tablebase", "probe", "6mm", "WWW" + 13 * "." + " w 0 0 0 - - 9",
                               "--dir", str(tmp_path), "--json"])
    # a game already over needs no table: black has too few men, white (to move) has won
    assert done.exit_code == 0 and json.loads(done.output) == {"value": "win", "distance": 0,
                                                               "moves": []}
    for args, message in ((["build", "6mm", "--men", "four"], "--men"),
                          (["build", "no-such-variant"], "unknown variant"),
                          (["build", "nine-mens-morris-options"], "no_immediate_reform"),
                          (["build", "6mm", "--men", "2-2"], "no table up to 2-2"),
                          (["probe", "6mm", "garbage", "--dir", str(tmp_path)], "position")):
        done = runner.invoke(cli, ["tablebase", *args, "--dir", str(tmp_path)]
                             if args[0] == "build" else ["tablebase", *args])
        assert done.exit_code == 2, (args, done.output)
        assert message in done.output and len(done.output.strip().splitlines()) == 1, done.output


# -- the perfect endgame bot ------------------------------------------------------------------


def won_openings(tb: Tablebase, variant: Variant, count: int, seed: int) -> list[list[str]]:
    """Move lists from the start of ``variant`` (random play) to positions the tables
    cover and call won for the side to move."""
    rng = random.Random(seed)
    out: list[list[str]] = []
    while len(out) < count:
        pos = Position(variant)
        moves: list[str] = []
        while pos.outcome() is None and len(moves) < 400:
            if not pos.hand[0] and not pos.hand[1]:
                try:
                    p = tb.probe(pos)
                except NotCovered:
                    p = None
                if p is not None and p.value == "win" and p.distance >= 3:
                    out.append(moves)
                    break
            move = rng.choice(pos.legal_moves())
            pos.push(move)
            moves.append(str(move))
    return out


def _load_perfect_bot() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("perfect_bot",
                                                  ROOT / "bots" / "perfect-endgame" / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bot_plays_the_tables_and_falls_back(nmm_dir: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    module = _load_perfect_bot()
    bot = module.PerfectEndgameBot()  # type: ignore[attr-defined]
    bot.options.set("TablebaseDir", str(nmm_dir))
    bot.new_game(NMM)
    rng = random.Random(6)
    with open_tablebase(nmm_dir) as tb:
        for _ in range(30):
            pos = random_position(NMM, rng, 3, 3)
            move = bot.table_move(pos)
            best = tb.probe_moves(pos)[0]
            chosen = next(m for m in tb.probe_moves(pos) if m.move == move)
            assert (chosen.value, chosen.distance) == (best.value, best.distance)
    assert bot.table_move(Position(NMM)) is None  # placing: alpha-beta's turn
    empty = tmp_path / "empty"
    empty.mkdir()
    bot.options.set("TablebaseDir", str(empty))
    bot.set_option("TablebaseDir", str(empty))
    for _ in range(3):
        assert bot.table_move(random_position(NMM, rng, 3, 3)) is None
    err = capsys.readouterr().err
    assert err.count("no endgame tables found") == 1 and "alpha-beta" in err


@pytest.mark.parametrize("seed", [1, 2])
def test_the_bot_converts_won_positions_against_alphabeta(nmm_dir: Path, nmm_tb: Tablebase,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          seed: int) -> None:
    from arena.clock import TimeControl
    from arena.manifest import load_bot
    from arena.referee import play_game

    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")
    perfect = load_bot(ROOT / "bots" / "perfect-endgame",
                       options={"TablebaseDir": str(nmm_dir)})
    alphabeta = load_bot(ROOT / "bots" / "alphabeta")
    tc = TimeControl(movetime_ms=150, handshake_ms=10000, margin_ms=500)
    for opening in won_openings(nmm_tb, NMM, 2, seed):
        pos = Position(NMM)
        for m in opening:
            pos.push_text(m)
        winner = pos.turn
        white, black = (perfect, alphabeta) if winner == WHITE else (alphabeta, perfect)
        record = play_game(white, black, NMM, tc, opening=opening, seed=seed)
        assert record.result == ("1-0" if winner == WHITE else "0-1"), (
            opening, record.result, record.termination)
        assert record.termination in ("too-few-men", "blocked")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MORRIS_ARENA_EXHAUSTIVE") != "1",
                    reason="builds the 4-4 tables and plays six games: about a minute; run "
                           "with MORRIS_ARENA_EXHAUSTIVE=1 (the 3-3 conversion is tested above)")
def test_the_bot_converts_won_4_men_positions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From 4-3 and 4-4 positions: a capture into 3-3, then the 3-3 win (a minute or two)."""
    from arena.clock import TimeControl
    from arena.manifest import load_bot
    from arena.referee import play_game

    build_tables(NMM, (4, 4), tmp_path)
    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")
    perfect = load_bot(ROOT / "bots" / "perfect-endgame", options={"TablebaseDir": str(tmp_path)})
    alphabeta = load_bot(ROOT / "bots" / "alphabeta")
    tc = TimeControl(movetime_ms=150, handshake_ms=10000, margin_ms=500)
    with open_tablebase(tmp_path) as tb:
        openings = won_openings(tb, NMM, 6, 3)
    for opening in openings:
        pos = Position(NMM)
        for m in opening:
            pos.push_text(m)
        winner = pos.turn
        white, black = (perfect, alphabeta) if winner == WHITE else (alphabeta, perfect)
        record = play_game(white, black, NMM, tc, opening=opening, seed=3)
        assert record.result == ("1-0" if winner == WHITE else "0-1"), opening
