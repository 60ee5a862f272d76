"""The game viewer: one self-contained HTML page per game, and a game replayed for a terminal.

The rules engine replays each record's moves (:func:`replay`), so the page's JavaScript knows
no rules: it gets, per ply, the board as one character per point (``W``, ``B``, ``.``, or ``X``
for a point marked by ``placement_mill=mark``), the men in hand, the move, who played it, its
captures (whose men they were, and how many came from the opponent's hand, ``x*``), who is to
move next (not always the other side: removal-only turns, ``second_moves_first``), its time,
and the board's geometry (points on the 7x7 grid of :mod:`arena.board`, lines from the
adjacency).  The script and style (``board.js``, the board's drawing, shared with ``arena
watch``; ``viewer.js``; ``viewer.css``; next to this module, vanilla, no library) are inlined
in every page, so a page opens from disk with no network and stays
valid when copied alone.

What a bot said of its search for a move (its ``info`` fields, :attr:`MoveInfo.info`) goes
with the ply as ``e`` (:func:`engine_data`): its score as it sent it (``s``, a number in its
own units from its own side's view, or ``w``/``l``, a forced win or loss in that many plies),
depth, seldepth, nodes, nps, time, pv and string; the page shows them in the move list, under
the board and as an evaluation graph (the scores turned to White's view).  A record without
them (an old one, or bots that send none) has no ``e`` and the page shows no such column or
graph.

Everything a bot sent (its name, the offending line, details, stderr) has its control
characters escaped (:func:`arena.protocol.escape_controls`); the page writes it with
``textContent`` only, and the JSON embedded in the page has every ``<``, ``>`` and ``&``
written as a ``\\u`` escape, so no ``</script>`` or ``<!--`` can end it early.

Pages go to ``games/<name>.html`` next to ``report.html`` (:func:`write_game_pages`), so the
report stays light with 10,000 games: it links to them.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field, fields
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Optional, Sequence

from arena.errors import ArenaError, ConfigError, MoveError
from arena.protocol import escape_controls
from arena.records import GameRecord
from arena.report.text import page_paths
from arena.rules import COLOR_NAMES, FROM_HAND, Position
from arena.variants import Variant, get_variant

#: the folder of the game pages, next to report.html
GAMES_FOLDER = "games"
#: characters of a bot's stderr shown on its game page (the end of it)
STDERR_TAIL = 4000
#: moves of a pv, and characters of an info string, shown on a game page
PV_MOVES = 24
INFO_STRING = 300
#: the whole numbers of a move's info shown, by their short name on the page
_ENGINE_NUMBERS = (("depth", "d"), ("seldepth", "sd"), ("nodes", "n"), ("nps", "nps"),
                   ("time", "t"))

_ENDINGS = {
    "too-few-men": "{loser} has too few men left",
    "blocked": "{loser} cannot move",
    "mill": "{winner} formed a mill",
    "board-full": "the board is full",
    "three-vs-three": "three men each for too long without a capture",
    "no-capture": "too many turns without a capture",
    "repetition": "the same position occurred too often",
    "timeout": "{loser} ran out of time",
    "illegal-move": "{loser} sent an illegal move",
    "protocol-error": "{loser} broke the protocol",
    "crash": "{loser} crashed",
    "start-failure": "{loser} failed to start",
    "error": "{loser} failed",
}


@dataclass
class Ply:
    """The position after one move (ply 0: the start, no move)."""

    board: str
    hand: tuple[int, int]
    move: str = ""
    by: Optional[int] = None
    src: Optional[str] = None
    dst: Optional[str] = None
    captures: tuple[str, ...] = ()
    wall_ms: Optional[float] = None
    cpu_ms: Optional[float] = None
    opening: bool = False
    #: the mills the move formed, each as the three points of its line in order
    mills: tuple[tuple[str, str, str], ...] = ()
    #: the side to move after this ply
    turn: int = 0
    #: whose men the captures were: the opponent's, or the mover's own (El Filja's removals)
    victim: Optional[int] = None


@dataclass
class Replay:
    """A record's moves replayed by the rules engine: the variant and every ply's position.

    ``error`` says why the replay stopped early (a move the rules do not allow, an unknown
    variant); ``plies`` then holds the positions up to there.
    """

    variant: Variant
    plies: list[Ply] = field(default_factory=list)
    error: str = ""


def record_variant(record: GameRecord) -> tuple[Variant, str]:
    """The variant a record was played under (its ``variant_params``, else its preset name),
    and a note when neither is known (the standard game is used)."""
    params = record.variant_params
    if params:
        names = {f.name for f in fields(Variant)}
        try:
            return Variant(**{k: v for k, v in params.items() if k in names}), ""
        except (ConfigError, TypeError, ValueError, KeyError):
            pass
    try:
        return get_variant(record.variant), ""
    except KeyError:
        return get_variant("nine-mens-morris"), (f"unknown variant {record.variant!r}: "
                                                 "shown on the standard board")


def start_of(record: GameRecord, variant: Variant) -> Position:
    """The position ``record`` started from: its ``start_position``, else the variant's."""
    if record.start_position:
        try:
            return Position.from_text(variant, record.start_position)
        except ArenaError:
            pass
    return Position(variant)


def replay(record: GameRecord) -> Replay:
    """Replay ``record``'s moves with the rules engine, one :class:`Ply` per position."""
    variant, error = record_variant(record)
    pos = start_of(record, variant)
    out = Replay(variant, [Ply(pos.points_text(), (pos.hand[0], pos.hand[1]), turn=pos.turn)],
                 error)
    for n, info in enumerate(record.moves, 1):
        by = pos.turn
        try:
            move = pos.parse_move(info.move)
        except MoveError as e:
            out.error = (f"move {n} ({escape_controls(info.move)}) does not replay: "
                         f"{str(e).split(' (position ')[0]}")
            break
        victim = by if move.dst is None and pos.pending[by] < 0 else 1 - by
        pos.push(move)
        t = pos.topology
        formed = () if move.dst is None else tuple(  # a removal-only turn (xg7) forms none
            t.lines[n] for n, mask in t.mills_at[t.index[move.dst]] if pos.men[by] & mask == mask)
        out.plies.append(Ply(pos.points_text(), (pos.hand[0], pos.hand[1]), str(move), by,
                             move.src, move.dst, move.captures, info.wall_ms, info.cpu_ms,
                             info.opening, formed, pos.turn, victim))
    return out


def position_at(record: GameRecord, ply: Optional[int] = None) -> Position:
    """The rules engine's position after ``ply`` moves of ``record`` (None: the last one
    that replays).

    :raises ArenaError: ``ply`` is out of range or a move before it does not replay.
    """
    variant, _ = record_variant(record)
    pos = start_of(record, variant)
    last = len(record.moves) if ply is None else ply
    if not 0 <= last <= len(record.moves):
        raise ArenaError(f"no ply {ply} in game {record.game_id} (it has {len(record.moves)})")
    for n, info in enumerate(record.moves[:last], 1):
        try:
            pos.push(pos.parse_move(info.move))
        except MoveError as e:
            if ply is None:
                break
            raise ArenaError(f"move {n} of game {record.game_id} does not replay: {e}") from None
    return pos


def variant_title(name: str) -> str:
    """``nine-mens-morris`` as ``nine men's morris``."""
    return name.replace("mens-", "men's-").replace("-", " ")


def game_titles(records: Sequence[GameRecord]) -> dict[str, str]:
    """A readable title per game id: ``alice vs bob, nine men's morris, round 2, game 1``
    (games numbered from 1 within their variant and round, by pair and then game id, so
    the numbers do not depend on the order the games finished in)."""
    groups: dict[tuple[str, Optional[int]], list[GameRecord]] = {}
    for r in records:
        groups.setdefault((r.variant, r.round), []).append(r)
    number = {}
    for group in groups.values():
        group.sort(key=lambda r: (r.pair is None, r.pair or 0, r.game_id))
        number.update({r.game_id: k for k, r in enumerate(group, 1)})
    return {r.game_id: game_title(r, number[r.game_id]) for r in records}


def game_title(record: GameRecord, number: int) -> str:
    """The title of game ``number`` of its variant and round (:func:`game_titles`)."""
    parts = [f"{record.white.name} vs {record.black.name}", variant_title(record.variant)]
    if record.round is not None:
        parts.append(f"round {record.round}")
    parts.append(f"game {number}")
    return escape_controls(", ".join(parts))


def page_names(records: Sequence[GameRecord]) -> dict[str, str]:
    """The page of each game id, relative to the report: ``games/<slug of the id>.html``
    (a number added where two ids make the same name)."""
    return page_paths((r.game_id for r in records), GAMES_FOLDER)


def ending_text(record: GameRecord) -> str:
    """How the game ended, as a sentence: ``1-0: black has too few men left``."""
    winner = record.winner
    loser = record.forfeit or ({"white": "black", "black": "white"}.get(winner or ""))
    sentence = _ENDINGS.get(record.termination, record.termination or "unfinished")
    try:
        sentence = sentence.format(winner=winner or "a player", loser=loser or "a player")
    except (KeyError, IndexError):
        pass
    return escape_controls(f"{record.result}: {sentence}")


def _whole(value: Any) -> Optional[int]:
    """``value`` if it is a whole number a page can show exactly, else None."""
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 1 << 53:
        return None
    return value


def engine_data(info: Any) -> Optional[dict[str, Any]]:
    """A move's ``info`` fields as its ply's ``e`` on the page: ``s`` (the score, a number)
    or ``w``/``l`` (a forced win or loss in plies), ``d``, ``sd``, ``n``, ``nps``, ``t`` (ms),
    ``pv`` (the moves as one text, at most :data:`PV_MOVES` of them), ``str`` (the info
    string, cut); bot text escaped.  None when there is nothing to show."""
    if not isinstance(info, dict):
        return None
    out: dict[str, Any] = {}
    score = info.get("score")
    if isinstance(score, float) and score == score and abs(score) < 1e15:
        score = round(score)
    if _whole(score) is not None:
        out["s"] = score
    elif isinstance(score, dict) and len(score) == 1:
        (kind, plies), = score.items()
        if kind in ("win", "loss") and _whole(plies) is not None:
            out["w" if kind == "win" else "l"] = abs(plies)
    for key, short in _ENGINE_NUMBERS:
        value = _whole(info.get(key))
        if value is not None and value >= 0:
            out[short] = value
    pv = info.get("pv")
    if isinstance(pv, list) and pv:
        text = " ".join(str(m) for m in pv[:PV_MOVES])
        out["pv"] = escape_controls(text + (" ..." if len(pv) > PV_MOVES else ""))
    string = info.get("string")
    if isinstance(string, str) and string:
        cut = string[:INFO_STRING] + ("..." if len(string) > INFO_STRING else "")
        out["str"] = escape_controls(cut)
    return out or None


def game_data(record: GameRecord, title: str, back: str = "",
              back_text: str = "report", analysis: Any = None) -> dict[str, Any]:
    """What a game page's script shows, as plain JSON values (bot text escaped).
    ``analysis``: the game's :class:`arena.report.endgames.GameAnalysis` (``arena
    analyse``): each move played in a covered endgame gets a badge (kept, or thrown away)
    and the moves that keep the value."""
    rep = replay(record)
    marks = {m.ply: m for m in analysis.marks} if analysis is not None else {}
    t = rep.variant.topology
    idx = t.index
    plies = []
    for n, p in enumerate(rep.plies):
        row: dict[str, Any] = {"b": p.board, "h": list(p.hand), "t": p.turn}
        if p.by is not None:
            row.update(m=p.move, by=p.by, d=idx[p.dst] if p.dst else None,
                       c=[idx[c] for c in p.captures if c in idx],  # not x* (from the hand)
                       ms=None if p.wall_ms is None else round(p.wall_ms, 1),
                       cpu=None if p.cpu_ms is None else round(p.cpu_ms, 1))
            if p.captures:
                row["v"] = p.victim
            if FROM_HAND in p.captures:
                row["hc"] = p.captures.count(FROM_HAND)
            if p.src:
                row["s"] = idx[p.src]
            if p.opening:
                row["o"] = 1
            if p.mills:
                row["ml"] = [[idx[line[0]], idx[line[2]]] for line in p.mills]
            engine = engine_data(record.moves[n - 1].info)
            if engine is not None:
                row["e"] = engine
            mark = marks.get(n)
            if mark is not None:  # an endgame the tables cover: kept or thrown away
                row["tb"] = {"k": mark.thrown, "v": mark.before, "best": list(mark.best)}
        plies.append(row)
    forfeit = None
    if record.forfeit:
        color = record.forfeit
        player = record.white if color == "white" else record.black
        tail = record.stderr.get(color, "")[-STDERR_TAIL:]
        forfeit = {"who": escape_controls(f"{color} ({player.name})"),
                   "why": escape_controls(record.termination),
                   "detail": escape_controls(record.detail),
                   "line": None if record.offending_line is None
                   else escape_controls(record.offending_line),
                   "stderr": escape_controls(tail, "\n\t")}
    return {
        "title": title, "id": escape_controls(record.game_id),
        "variant": escape_controls(record.variant), "board": t.name,
        "white": escape_controls(record.white.name), "black": escape_controls(record.black.name),
        "men": rep.variant.men, "points": list(t.points), "edges": [list(e) for e in t.edges],
        "plies": plies, "result": escape_controls(record.result),
        "ending": ending_text(record), "detail": escape_controls(record.detail),
        "forfeit": forfeit, "error": rep.error, "back": back, "back_text": back_text,
        "played": len(record.moves),
    }


def script_json(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` (so no
    ``</script>`` or ``<!--``), no line separators."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    """``board.js``, ``viewer.js`` or ``viewer.css`` as inlined in every page: lines without their
    indentation, comment lines dropped (a quarter lighter; neither file breaks a string or a
    comment across lines, except the comments whose every line starts with ``/*`` or ``*``)."""
    text = resources.files("arena.report").joinpath(name).read_text(encoding="utf-8")
    lines = (line.strip() for line in text.splitlines())
    return "".join(line + "\n" for line in lines if line and not line.startswith(("/*", "*")))


def render_game_page(record: GameRecord, title: str, back: str = "../report.html",
                     back_text: str = "report", analysis: Any = None) -> str:
    """One game's self-contained page (script, style and data inline)."""
    data = game_data(record, title, back, back_text, analysis)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<link rel=\"icon\" href=\"data:,\">\n"  # none: a server is not asked for one
        f"<title>{html.escape(title)}</title>\n<style>\n{_asset('viewer.css')}</style>\n"
        "</head>\n<body>\n<div id=\"viewer\"><noscript>The game viewer needs JavaScript."
        "</noscript></div>\n"
        f"<script id=\"game-data\" type=\"application/json\">{script_json(data)}</script>\n"
        f"<script>\n{_asset('board.js')}{_asset('viewer.js')}</script>\n</body>\n</html>\n")


def write_game_pages(folder: str | os.PathLike[str], records: Sequence[GameRecord],
                     names: Optional[dict[str, str]] = None,
                     titles: Optional[dict[str, str]] = None,
                     analysis: Optional[dict[str, Any]] = None) -> int:
    """Write a page per game under ``folder/games/`` (removing the pages of games no longer
    given); returns how many.

    The pages can be made again from ``games.jsonl``, so each is written to a temporary name
    and renamed (never half a page) without an fsync (10,000 of them stay quick).
    """
    out = Path(folder)
    names = names if names is not None else page_names(records)
    titles = titles if titles is not None else game_titles(records)
    (out / GAMES_FOLDER).mkdir(exist_ok=True)
    wanted = {out / names[r.game_id] for r in records}
    for old in (out / GAMES_FOLDER).glob("*.html"):  # games no longer listed (a shorter list)
        if old not in wanted:
            old.unlink(missing_ok=True)
    for r in records:
        path = out / names[r.game_id]
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(render_game_page(r, titles[r.game_id],
                                        analysis=(analysis or {}).get(r.game_id)),
                       encoding="utf-8")
        os.replace(tmp, path)
    return len(records)
