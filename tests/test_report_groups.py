"""The notes of bots without a maximum-likelihood Elo say what the games show (issue 36):
a group "that won every game they played against the other N bots" only when each of its
bots did, and a separate group only when its bots never played the main group; never the
old "never lost a point to the other bots' group" for bots that lost many games."""

from __future__ import annotations

import random
import re

from arena.ratings import rate
from arena.records import GameRecord
from arena.report.html import page_context, render_html
from tests.synth_records import make_record, round_robin

GROUP = re.compile(r"one of (\d+) bots \((.*?)\) that (won|lost) every game they played "
                   r"against the other (\d+) bots")


def _top_group() -> list[GameRecord]:
    """40 bots far apart, no draws, one colour-swapped pair each: a few groups with no
    upset against the rest (seed 5 gives a top group of six bots that lost 1-10 games)."""
    rng = random.Random(5)
    elos = {f"s{k:02d}": rng.gauss(0, 900) for k in range(40)}
    return round_robin(elos, 1, seed=5, draw=0.0)


def test_a_group_note_is_true_of_every_bot_it_names() -> None:
    records = _top_group()
    st = rate(records)
    top = [r for r in st.rows if "won every game they played" in r.flag]
    assert top, "the scenario has a top group"
    assert any(r.losses >= 4 for r in top)  # bots that lost games, to their own group
    # the group: these bots and any that won every game (100 %: a note of their own)
    group = {r.bot for r in top} | {r.bot for r in st.rows if r.wins == r.games}
    for r in top:
        m = GROUP.search(r.flag)
        assert m is not None and m.group(3) == "won"
        assert int(m.group(1)) == len(group) and int(m.group(4)) == len(st.rows) - len(group)
        assert set(m.group(2).split(" and ")[0].split(", ")) <= group
        # every game it played against a bot outside the group is a win
        for g in records:
            color = "white" if g.white.name == r.bot else "black" if g.black.name == r.bot else ""
            other = g.black.name if color == "white" else g.white.name
            if color and other not in group:
                assert g.score(color) == 1.0, (r.bot, other)
    assert not any("never lost a point" in r.flag or "never took a point" in r.flag
                   for r in st.rows)
    html = render_html(page_context(records, [st], [], "class", "sandwich", None))
    assert "that won every game they played against the other" in html


def test_no_group_note_where_the_games_do_not_show_one() -> None:
    # a close round robin with draws: every bot has a maximum-likelihood Elo, no note
    records = round_robin({f"b{k}": 20.0 * k for k in range(8)}, 3, seed=2, draw=0.3)
    st = rate(records)
    assert not any(r.flag for r in st.rows)
    html = render_html(page_context(records, [st], [], "class", "sandwich", None))
    assert "every game they played against" not in html and "main group" not in html


def test_a_separate_group_is_named_and_only_when_it_never_played_the_main_group() -> None:
    records = round_robin({f"b{k}": 20.0 * k for k in range(6)}, 2, seed=2, draw=0.3)
    records += [make_record("x", "y", 1.0, game_id="xy"), make_record("y", "x", 0.5,
                                                                       game_id="yx")]
    st = rate(records)
    for name in ("x", "y"):
        flag = st.row(name).flag
        assert flag.startswith("not connected by games to the 6 bots of the main group")
        assert "one of 2 bots (x, y) that played only each other" in flag
    assert not any(st.row(f"b{k}").flag for k in range(6))
    html = render_html(page_context(records, [st], [], "class", "sandwich", None))
    assert "one of 2 bots (x, y) that played only each other" in html
    assert "never lost a point" not in html
