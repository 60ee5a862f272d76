"""Charts, tables and a self-contained ``report.html`` for a results folder.

:func:`build_report` (and the runner's :func:`write_report`) reads nothing but the records it
is given (or ``games.jsonl``), computes the standings with :mod:`arena.ratings`, draws PNG
charts with matplotlib (Agg, no pyplot state) and renders one HTML file with jinja2: bot
names, offending lines, details and stderr are untrusted text, so every value the page shows
has its control characters escaped and is then HTML-escaped.  The images are embedded as
base64 so the HTML stands alone.  Every file is written to a temporary name and moved into
place with ``os.replace``.

Only this package imports pandas, matplotlib and jinja2, and only inside the functions that
need them, so importing it (as the runner and the CLI do) stays cheap.  This package is the
public face; one module per concern sits behind it, each importing only the ones above it:

* :mod:`~arena.report.text`: untrusted names made safe to show, numbers formatted;
* :mod:`~arena.report.words`: what each column means in plain words (hover, glossary,
  console legend) and the sentence saying how a table is ranked;
* :mod:`~arena.report.results`: reading a results folder's ``games.jsonl``, picking a variant;
* :mod:`~arena.report.tables`: the standings as text, CSV and JSON (``arena rate``);
* :mod:`~arena.report.forfeits`: forfeits grouped by bot and reason (the page, the console);
* :mod:`~arena.report.charts`: the charts, PNG bytes each (None when there is nothing to draw);
* :mod:`~arena.report.viewer`: the game viewer, a self-contained page per game
  (``games/*.html``) from the rules engine's positions, and a game replayed for ``arena show``;
* :mod:`~arena.report.html`: the page and its template (its style, screen and print, in
  ``report.css``);
* :mod:`~arena.report.folder`: :func:`build_report`, every file of the report in the folder.
"""

from __future__ import annotations

from arena.report.charts import (Chart, build_charts, chart_elo, chart_score_over_rounds,
                                 chart_game_lengths, chart_head_to_head, chart_variant_comparison)
from arena.report.folder import RATINGS_FILE, REPORT_FILE, build_report, write_report
from arena.report.html import MAX_FORFEITS_LISTED, MAX_GAMES_LISTED, render_html, shown
from arena.report.results import (GAMES_FILE, games_path, load_games, load_tallies,
                                  select_variant, stream_folder)
from arena.report.tables import (csv_safe, format_estimate, format_match, format_standings,
                                 standings_csv, standings_json)
from arena.report.text import clean_text, short, slug

__all__ = [
    "Chart", "build_charts", "chart_elo", "chart_score_over_rounds", "chart_game_lengths",
    "chart_head_to_head", "chart_variant_comparison",
    "RATINGS_FILE", "REPORT_FILE", "build_report", "write_report",
    "MAX_FORFEITS_LISTED", "MAX_GAMES_LISTED", "render_html", "shown",
    "GAMES_FILE", "games_path", "load_games", "load_tallies", "select_variant",
    "stream_folder",
    "csv_safe", "format_estimate", "format_match", "format_standings", "standings_csv",
    "standings_json",
    "clean_text", "short", "slug",
]
