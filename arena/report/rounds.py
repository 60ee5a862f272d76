"""A Swiss's rounds and a knockout's bracket in the report (issue 38).

:func:`load_rounds` reads a results folder's ``rounds.jsonl`` (:func:`arena.rounds.read_rounds`;
None for a folder without one: every other format) and, from its ``config.json``, how long a
match is.  :func:`rounds_section` turns the rounds and the records into the report's section,
an HTML fragment (every name escaped here: control characters as
:func:`arena.protocol.escape_controls` writes them, then HTML):

* a **Swiss**: "Rounds", one small table per round in the style of a chess pairing table:
  board, each player with its score before the round in brackets, the pairing's points
  (``1½–½``; the winner in bold), its games (each player A's points in that game, linked to
  the game's viewer page where the report has one), and the bye (``X: bye (+2 points)``);
* a **knockout**: "Bracket", an inline SVG (no script; ``<title>``, ``<desc>``, text labels)
  with one column per round, each match with both names and its points (summed over all its
  games, the tie-break pairs too), the player through in bold, "through on seed" under a
  tied match, "bye" for an empty line, rounds not yet paired drawn empty, and the champion
  at the right; then the same as a table (with the games' links) for screen readers and
  readers who want the numbers.

Which games form a pairing is read from the records alone: the games of round ``N`` between
its two players (one pairing per player and round in both formats).  A knockout match's
winner is the player on the next round's line when that round is recorded; otherwise the
match is decided once its games are complete (``games_per_pairing`` × variants, then
colour-swapped pairs while tied, up to ``tiebreak_pairs``), by points, then by the better
seed (the seeds are read off the first round's lines, :func:`arena.rounds.bracket_lines`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Mapping, Optional, Sequence

from arena.protocol import escape_controls
from arena.records import GameRecord
from arena.rounds import Round, bracket_lines, match_winner, read_rounds

#: characters of a name drawn in the bracket (the full name is its tooltip and in the table)
NAME_CAP = 26
_ROUND_RE = re.compile(r"/r(\d+)/")
_PAIR_GAME_RE = re.compile(r"/p(\d+)/g(\d+)$")


@dataclass(frozen=True)
class MatchRules:
    """How many games a pairing has: ``games_per_pairing`` per variant, and a tied knockout
    match's further colour-swapped pairs (at most ``tiebreak_pairs``).  ``variants`` None:
    as many as the records show."""

    games_per_pairing: int = 2
    variants: Optional[int] = None
    tiebreak_pairs: int = 2


@dataclass(frozen=True)
class RoundsData:
    """What :func:`load_rounds` read: the recorded rounds and the length of a match."""

    rounds: tuple[Round, ...]
    rules: MatchRules = MatchRules()


def load_rounds(folder: Path) -> Optional[RoundsData]:
    """The rounds of the Swiss or knockout in ``folder`` (None without ``rounds.jsonl``, or
    with an empty one), with the match length from its ``config.json`` (the defaults where
    it cannot be read).

    :raises arena.rounds.RoundsFileError: ``rounds.jsonl`` cannot be read.
    """
    rounds = read_rounds(folder)
    if not rounds:
        return None
    return RoundsData(tuple(rounds), _rules(folder / "config.json"))


def _rules(path: Path) -> MatchRules:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))["config"]
        fmt = config.get("format") or {}
        return MatchRules(games_per_pairing=int(config.get("games_per_pairing", 2)),
                          variants=len(config["variants"]) if config.get("variants") else None,
                          tiebreak_pairs=int(fmt.get("tiebreak_pairs", 2)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return MatchRules()


# -- the pairings and their games ----------------------------------------------------------
@dataclass
class Pairing:
    """Two players' games in one round: their points, and (a knockout) who went through."""

    a: str
    b: str
    games: list[GameRecord] = field(default_factory=list)
    points: dict[str, float] = field(default_factory=dict)
    winner: Optional[str] = None
    by_seed: bool = False
    complete: bool = False


def _round_of(r: GameRecord) -> Optional[int]:
    if r.round is not None:
        return r.round
    m = _ROUND_RE.search(r.game_id)
    return int(m.group(1)) if m else None


def _game_order(r: GameRecord) -> tuple[str, int, int, str]:
    m = _PAIR_GAME_RE.search(r.game_id)
    return (r.variant, int(m.group(1)), int(m.group(2)), "") if m else (r.variant, 0, 0,
                                                                         r.game_id)


def _by_pairing(records: Sequence[GameRecord]) -> dict[tuple[int, frozenset[str]],
                                                         list[GameRecord]]:
    out: dict[tuple[int, frozenset[str]], list[GameRecord]] = {}
    for r in records:
        rnd = _round_of(r)
        if rnd is None or r.void:
            continue
        out.setdefault((rnd, frozenset((r.white.name, r.black.name))), []).append(r)
    for games in out.values():
        games.sort(key=_game_order)
    return out


def _pairing(a: str, b: str, games: list[GameRecord]) -> Pairing:
    points = {a: 0.0, b: 0.0}
    for r in games:
        points[r.white.name] += r.score("white")
        points[r.black.name] += r.score("black")
    return Pairing(a, b, games, points)


def _variants(data: RoundsData, records: Sequence[GameRecord]) -> int:
    return data.rules.variants or max(1, len({r.variant for r in records}))


def _decide(p: Pairing, rules: MatchRules, variants: int, seed: Mapping[str, int],
            through: Optional[str]) -> None:
    """Set ``p``'s winner: the player on the next round's line (``through``) when that round
    is recorded; else, once the match is complete, more points, then the better seed."""
    level = p.points[p.a] == p.points[p.b]
    if through in (p.a, p.b):
        p.winner, p.by_seed, p.complete = through, level, True
        return
    base, extra = rules.games_per_pairing * variants, 2 * variants
    n = len(p.games)
    if n < base or (n - base) % extra:
        return
    if level and (n - base) // extra < rules.tiebreak_pairs:
        return  # a further pair is to come
    p.complete = True
    p.winner, p.by_seed = match_winner(p.a, p.b, p.points, seed)


# -- text -----------------------------------------------------------------------------------
def points_text(x: float) -> str:
    """Points as chess tables write them: ``2``, ``1½``, ``½``."""
    whole = int(x)
    half = abs(x - whole) >= 0.25
    if whole == 0 and half:
        return "½"
    return f"{whole}{'½' if half else ''}"


def _e(text: str) -> str:
    """Untrusted text (a bot's name) for the page: control characters escaped, then HTML."""
    return escape(escape_controls(text), quote=True)


def _short(name: str, cap: int = NAME_CAP) -> str:
    return name if len(name) <= cap else name[:cap - 1] + "…"


def _game_links(p: Pairing, pages: Mapping[str, str]) -> str:
    """Each game of ``p`` as player A's points in it, linked to its viewer page if listed."""
    out = []
    for k, r in enumerate(p.games, 1):
        score = r.score("white") if r.white.name == p.a else r.score("black")
        title = _e(f"game {k}: {r.white.name} (white) vs {r.black.name} (black), {r.result}, "
                   f"{r.variant}")
        text = points_text(score)
        page = pages.get(r.game_id)
        if page is None:
            out.append(f'<span class="g" title="{title}">{text}</span>')
        else:
            out.append(f'<a class="g" href="{escape(page, quote=True)}" title="{title}">{text}</a>')
    return " ".join(out)


def _score_cell(p: Pairing) -> str:
    if not p.games:
        return "–"
    return f"{points_text(p.points[p.a])}–{points_text(p.points[p.b])}"


def _player(name: str, winner: Optional[str]) -> str:
    return f"<b>{_e(name)}</b>" if winner == name else _e(name)


_BEFORE = "The player and, in brackets, its points before the round"


# -- a Swiss --------------------------------------------------------------------------------
def swiss_html(data: RoundsData, records: Sequence[GameRecord],
               pages: Mapping[str, str]) -> str:
    """The "Rounds" section of a Swiss: a table per round (see the module's docstring)."""
    groups = _by_pairing(records)
    per_pairing = data.rules.games_per_pairing * _variants(data, records)
    score: dict[str, float] = {}
    parts = ['<section id="rounds" class="rounds-section">', "<h2>Rounds</h2>",
             '<p class="read">Each round of the Swiss: its pairings by board, each player with '
             "its points before the round in brackets, as chess pairing tables show them; the "
             "pairing's points (the winner in bold) and its games, each as the first player's "
             "points in it (a link opens the game). A bye scores as stated on its line.</p>",
             '<div class="rounds">']
    for entry in data.rounds:
        rows = []
        after = dict(score)
        for board, (a, b) in enumerate(entry.pairs, 1):
            p = _pairing(a, b, groups.get((entry.number, frozenset((a, b))), []))
            for x in (a, b):
                after[x] = after.get(x, 0.0) + p.points[x]
            lead = None if p.points[a] == p.points[b] else max((a, b), key=p.points.__getitem__)
            note = ("" if len(p.games) >= per_pairing else
                    f' <span class="meta">({len(p.games)} of {per_pairing} games)</span>')
            cells = [f'{_player(x, lead)} <span class="pts">({points_text(score.get(x, 0.0))})'
                     "</span>" for x in (a, b)]
            rows.append(f'<tr><td>{board}</td><td class="name">{cells[0]}</td>'
                        f'<td class="result">{_score_cell(p)}{note}</td>'
                        f'<td class="name">{cells[1]}</td>'
                        f'<td class="name games">{_game_links(p, pages)}</td></tr>')
        for x in entry.bye:
            after[x] = after.get(x, 0.0) + entry.bye_points
            plural = "" if entry.bye_points == 1 else "s"
            rows.append(f'<tr class="bye"><td></td><td class="name" colspan="4">{_e(x)} '
                        f'<span class="pts">({points_text(score.get(x, 0.0))})</span>: bye '
                        f"(+{points_text(entry.bye_points)} point{plural})</td></tr>")
        parts.append(
            '<div class="round"><table class="round">'
            f'<caption id="round-{entry.number}">Round {entry.number}</caption>'
            '<thead><tr><th scope="col">board</th>'
            f'<th class="name" scope="col" title="{_BEFORE}">player (points)</th>'
            '<th scope="col" title="The points of the pairing, its games summed">result</th>'
            f'<th class="name" scope="col" title="{_BEFORE}">player (points)</th>'
            '<th class="name" scope="col" title="The first player\'s points in each game">'
            'games</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>")
        score = after
    parts.append("</div></section>")
    return "\n".join(parts)


# -- a knockout -----------------------------------------------------------------------------
@dataclass
class _Slot:
    """A line of the bracket: a player, an empty line (``bye``) or not yet known."""

    name: Optional[str] = None
    bye: bool = False


def round_name(number: int, rounds: int, sep: str = ": ") -> str:
    """``Round N: final`` (``semi-finals``, ``quarter-finals``), else ``Round N``."""
    left = rounds - number
    named = {0: "final", 1: "semi-finals", 2: "quarter-finals"}
    return f"Round {number}{sep}{named[left]}" if left in named else f"Round {number}"


def bracket(data: RoundsData, records: Sequence[GameRecord]
            ) -> tuple[list[list[tuple[_Slot, _Slot, Optional[Pairing]]]], Optional[str]]:
    """The knockout's matches round by round (every round of the bracket, the ones not yet
    paired with unknown lines), each as its two lines and its pairing (None beside a bye or
    an unknown line), and the champion (None before the end)."""
    first = data.rounds[0].lines
    size = len(first)
    total = max(1, size.bit_length() - 1)
    seed = {name: s for name, s in zip(first, bracket_lines(size)) if name is not None}
    groups = _by_pairing(records)
    variants = _variants(data, records)
    out: list[list[tuple[_Slot, _Slot, Optional[Pairing]]]] = []
    lines: list[_Slot] = []
    for number in range(1, total + 1):
        if number <= len(data.rounds):  # a recorded round: its lines as recorded
            lines = [_Slot(x, bye=x is None) for x in data.rounds[number - 1].lines]
        nxt = data.rounds[number].lines if number < len(data.rounds) else None
        matches = []
        through: list[_Slot] = []
        for k in range(len(lines) // 2):
            a, b = lines[2 * k], lines[2 * k + 1]
            p = None
            if a.name is not None and b.name is not None:
                p = _pairing(a.name, b.name,
                             groups.get((number, frozenset((a.name, b.name))), []))
                _decide(p, data.rules, variants, seed,
                        nxt[k] if nxt is not None and k < len(nxt) else None)
                through.append(_Slot(p.winner))
            elif a.bye or b.bye:
                through.append(_Slot(a.name if b.bye else b.name))
            else:
                through.append(_Slot())
            matches.append((a, b, p))
        out.append(matches)
        lines = through
    return out, lines[0].name if len(lines) == 1 else None


def bracket_places(rounds: Sequence[Sequence[tuple[_Slot, _Slot, Optional[Pairing]]]]
                   ) -> dict[str, int]:
    """Each player's place as the bracket (:func:`bracket`) decides it so far, as the runner
    places a knockout (:func:`arena.rounds.knockout_places`): a round's losers share the
    place after the players it leaves in (the final's loser 2nd, the semi-finals' 3rd, the
    quarter-finals' 5th), the champion 1st; the players still in share 1st.  A match's loser
    is placed as soon as the match is decided."""
    out: dict[str, int] = {}
    size = 2 * len(rounds[0]) if rounds else 0
    for number, matches in enumerate(rounds, 1):
        for a, b, p in matches:
            for slot in (a, b):
                if slot.name is not None:
                    out.setdefault(slot.name, 1)
            if p is not None and p.winner is not None:
                out[p.b if p.winner == p.a else p.a] = (size >> number) + 1
    return out


# the bracket's geometry (SVG user units: pixels at 100%)
_FONT = 15.0
_CHAR = 9.4      # width of a character at _FONT in bold, generous (system-ui's wide lowercase)
#: the share of its size the bracket may shrink to on a narrow screen before it scrolls
_SHRINK = 0.8
_ROW = 26.0      # one player's row in a match box
_SLOT = 2 * _ROW + 26.0   # room for a first-round match, its note included
_SCORE_W = 46.0
_GAP = 44.0      # between two columns: the connectors
_HEAD = 58.0
_PAD = 8.0


def _box(x: float, y: float, width: float, a: _Slot, b: _Slot, p: Optional[Pairing],
         clip: str) -> list[str]:
    """One match: two rows, a name and its points each."""
    out = [f'<g class="match"><rect x="{x:g}" y="{y:g}" width="{width:g}" height="{2 * _ROW:g}" '
           'rx="3" fill="#fff" stroke="#999"/>']
    winner = p.winner if p is not None else (a.name if b.bye else b.name if a.bye else None)
    for row, slot in enumerate((a, b)):
        top = y + row * _ROW
        base = top + _ROW / 2 + _FONT * 0.35
        if slot.name is not None and slot.name == winner:
            out.append(f'<rect x="{x + 1:g}" y="{top + 1:g}" width="{width - 2:g}" '
                       f'height="{_ROW - 2:g}" fill="#e7f0e4"/>')
        if slot.bye:
            out.append(f'<text x="{x + _PAD:g}" y="{base:g}" class="bye" fill="#666" '
                       f'font-style="italic">bye</text>')
        elif slot.name is None:
            out.append(f'<text x="{x + _PAD:g}" y="{base:g}" fill="#888">–</text>')
        else:
            weight = ' font-weight="bold"' if slot.name == winner else ""
            out.append(f'<text x="{x + _PAD:g}" y="{base:g}" clip-path="url(#{clip})"{weight}>'
                       f"<title>{_e(slot.name)}</title>{_e(_short(slot.name))}</text>")
            if p is not None and p.games:
                out.append(f'<text x="{x + width - _PAD:g}" y="{base:g}" text-anchor="end"'
                           f'{weight}>{points_text(p.points[slot.name])}</text>')
    out.append(f'<line x1="{x:g}" y1="{y + _ROW:g}" x2="{x + width:g}" y2="{y + _ROW:g}" '
               'stroke="#ccc"/>')
    if p is not None and p.by_seed:
        out.append(f'<text x="{x + _PAD:g}" y="{y + 2 * _ROW + 15:g}" font-size="13" '
                   'fill="#8a5a00" font-style="italic">tied: through on seed</text>')
    out.append("</g>")
    return out


def bracket_svg(data: RoundsData, records: Sequence[GameRecord], title: str = "Bracket", *,
                inline_style: bool = True) -> str:
    """The knockout's bracket as an inline SVG (see the module's docstring); without
    ``inline_style`` (for a page whose CSP allows none), no minimum width."""
    rounds, champ = bracket(data, records)
    names = [n for n in data.rounds[0].lines if n is not None]
    longest = max((len(_short(n)) for n in names), default=8)
    name_w = max(120.0, longest * _CHAR + 2 * _PAD)
    width = name_w + _SCORE_W
    columns = len(rounds) + 1
    first = len(rounds[0])
    total_w = columns * width + (columns - 1) * _GAP + 2
    total_h = _HEAD + first * _SLOT + 4
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="bracket" role="img" '
           f'aria-labelledby="bracket-title bracket-desc" width="{total_w:g}" '
           f'height="{total_h:g}" viewBox="0 0 {total_w:g} {total_h:g}" '
           + (f'style="min-width: {_SHRINK * total_w:.0f}px" ' if inline_style else "") +
           f'font-family="system-ui, -apple-system, \'Segoe UI\', sans-serif" '
           f'font-size="{_FONT:g}" fill="#222">',
           f'<title id="bracket-title">{_e(title)}</title>',
           f'<desc id="bracket-desc">{_e(_describe(rounds, champ))}</desc>',
           "<defs>" + "".join(  # a column's names stop before its points
               f'<clipPath id="bracket-name-{r}"><rect x="{1 + r * (width + _GAP):g}" y="0" '
               f'width="{name_w - 4:g}" height="{total_h:g}"/></clipPath>'
               for r in range(len(rounds))) + "</defs>"]
    centres: list[list[float]] = []
    for r, matches in enumerate(rounds):
        x = 1 + r * (width + _GAP)
        head = round_name(r + 1, len(rounds), "\n").split("\n")
        out.append(f'<text x="{x:g}" y="{_HEAD - 32:g}" font-weight="bold">{head[0]}</text>')
        if len(head) > 1:
            out.append(f'<text x="{x:g}" y="{_HEAD - 14:g}" fill="#555">{head[1]}</text>')
        span = _SLOT * (1 << r)
        centres.append([])
        for k, (a, b, p) in enumerate(matches):
            cy = _HEAD + span * (k + 0.5) - (_SLOT - 2 * _ROW) / 2 + 2
            centres[-1].append(cy)
            out.extend(_box(x, cy - _ROW, width, a, b, p, f"bracket-name-{r}"))
            if r > 0:  # the connector from the two matches before
                left = x - _GAP
                y1, y2 = centres[r - 1][2 * k], centres[r - 1][2 * k + 1]
                out.append(f'<path d="M{left:g} {y1:g}H{left + _GAP / 2:g}V{y2:g}H{left:g}'
                           f'M{left + _GAP / 2:g} {cy:g}H{x:g}" fill="none" stroke="#999"/>')
    # the champion
    x = 1 + len(rounds) * (width + _GAP)
    cy = centres[-1][0]
    left = x - _GAP
    out.append(f'<path d="M{left:g} {cy:g}H{x:g}" fill="none" stroke="#999"/>')
    out.append(f'<text x="{x:g}" y="{_HEAD - 32:g}" font-weight="bold">Champion</text>')
    out.append(f'<rect x="{x:g}" y="{cy - _ROW / 2 - 4:g}" width="{width:g}" height="{_ROW + 8:g}" '
               f'rx="3" fill="{"#e7f0e4" if champ else "#fff"}" stroke="#555" stroke-width="1.5"/>')
    if champ is None:
        out.append(f'<text x="{x + _PAD:g}" y="{cy + _FONT * 0.35:g}" fill="#888">'
                   "not yet decided</text>")
    else:
        out.append(f'<text x="{x + _PAD:g}" y="{cy + _FONT * 0.35:g}" font-weight="bold">'
                   f"<title>{_e(champ)}</title>{_e(_short(champ))}</text>")
    out.append("</svg>")
    return "\n".join(out)


def _describe(rounds: Sequence[Sequence[tuple[_Slot, _Slot, Optional[Pairing]]]],
              champ: Optional[str]) -> str:
    players = sum(1 for m in rounds[0] for s in m[:2] if s.name is not None)
    text = (f"Knockout bracket of {players} players over {len(rounds)} round"
            f"{'s' if len(rounds) != 1 else ''}; ")
    return text + (f"champion: {champ}." if champ else "no champion yet.") + (
        " The table below lists every match.")


def knockout_html(data: RoundsData, records: Sequence[GameRecord],
                  pages: Mapping[str, str]) -> str:
    """The "Bracket" section of a knockout: the SVG and the same as a table."""
    rounds, champ = bracket(data, records)
    rows = []
    for r, matches in enumerate(rounds, 1):
        for k, (a, b, p) in enumerate(matches, 1):
            name = round_name(r, len(rounds))
            if p is None:
                if a.bye or b.bye:
                    who = a.name if b.bye else b.name
                    rows.append(f'<tr><td class="name">{name}</td><td>{k}</td>'
                                f'<td class="name"><b>{_e(who or "")}</b></td>'
                                '<td class="result">–</td><td class="name">bye</td>'
                                f'<td class="name games"></td><td class="name">{_e(who or "")} '
                                "through (bye)</td></tr>")
                continue
            if p.winner is not None:
                note = (f"{_e(p.winner)} through on seed (tied)" if p.by_seed
                        else f"{_e(p.winner)} through")
            else:
                note = "in play" if p.games else "not yet played"
            rows.append(f'<tr><td class="name">{name}</td><td>{k}</td>'
                        f'<td class="name">{_player(p.a, p.winner)}</td>'
                        f'<td class="result">{_score_cell(p)}</td>'
                        f'<td class="name">{_player(p.b, p.winner)}</td>'
                        f'<td class="name games">{_game_links(p, pages)}</td>'
                        f'<td class="name">{note}</td></tr>')
    champion = (f"Champion: <b>{_e(champ)}</b>." if champ else "No champion yet.")
    return "\n".join([
        '<section id="bracket" class="rounds-section">', "<h2>Bracket</h2>",
        '<p class="read">Each match with its points (all its games, tie-break pairs included); '
        "the player through is in bold. A tied match after its tie-break pairs is won by the "
        "better seed (through on seed). The table under the picture lists the same matches "
        f"with their games.</p>\n<p class=\"champion\">{champion}</p>",
        f'<div class="scroll bracketwrap">{bracket_svg(data, records)}</div>',
        '<div class="scroll"><table class="round bracket-table">'
        "<caption>The bracket as a table: every match, its points and its games (player A's "
        "points in each; a link opens the game)</caption>"
        '<thead><tr><th class="name" scope="col">round</th><th scope="col">match</th>'
        '<th class="name" scope="col">player A</th><th scope="col">result</th>'
        '<th class="name" scope="col">player B</th><th class="name games" scope="col">games</th>'
        '<th class="name" scope="col">through</th></tr></thead><tbody>',
        *rows, "</tbody></table></div></section>"])


def rounds_section(data: Optional[RoundsData], records: Sequence[GameRecord],
                   pages: Optional[Mapping[str, str]] = None) -> Optional[tuple[str, str, str]]:
    """The report's section for the rounds ``data`` (None: no section) as ``(anchor, title,
    HTML fragment)``; games are linked to their viewer pages in ``pages`` (game id to a path
    relative to the report)."""
    if data is None or not data.rounds:
        return None
    if data.rounds[0].kind == "swiss":
        return "rounds", "Rounds", swiss_html(data, records, pages or {})
    return "bracket", "Bracket", knockout_html(data, records, pages or {})


__all__ = ["MatchRules", "RoundsData", "Pairing", "load_rounds", "rounds_section",
           "swiss_html", "knockout_html", "bracket", "bracket_places", "bracket_svg", "round_name",
           "points_text"]
