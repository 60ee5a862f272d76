"""Endgame tablebases for the moving and flying phases, by retrograde analysis.

The public face (no numpy is imported here: the referee and bots use the prober):

* :func:`open_tablebase` (a folder of table files, or one file) -> :class:`Tablebase`, a
  context manager with :meth:`~Tablebase.probe` (-> :class:`Probe`: ``value`` ``win``,
  ``draw`` or ``loss`` for the side to move, ``distance`` in plies to the next capture or the
  end) and :meth:`~Tablebase.probe_moves` (-> :class:`MoveProbe` per legal move);
* the errors: :class:`NotCovered` (:class:`MissingTable`, :class:`TablebaseMismatch`,
  :class:`UnsupportedVariant`) where no table answers, :class:`TablebaseCorrupt` for a damaged
  file, all :class:`TablebaseError`\\ s and so :class:`~arena.errors.ArenaError`\\ s;
* :class:`TableRules` (the rule parameters a table depends on), :func:`default_directory`;
* :func:`build_tables`, the resumable build of a folder (numpy, imported when it runs).

The modules behind it: ``geometry`` (the board's automorphisms), ``index`` (a position's
number), ``build`` (the retrograde computation: rules in, arrays out), ``fileformat`` (header,
payload, checksum), ``probe`` (the prober), ``store`` (the build of a folder).
docs/TABLEBASES.md describes them.
"""

from __future__ import annotations

from arena.tablebase.errors import (MissingTable, NotCovered, TablebaseCorrupt, TablebaseError,
                                    TablebaseMismatch, UnsupportedVariant)
from arena.tablebase.params import TableRules, default_directory, parse_men, table_name
from arena.tablebase.probe import MoveProbe, Probe, Tablebase, open_tablebase, rank
from arena.tablebase.store import BuildResult, build_tables, plan

__all__ = ["BuildResult", "MissingTable", "MoveProbe", "NotCovered", "Probe", "TableRules",
           "Tablebase", "TablebaseCorrupt", "TablebaseError", "TablebaseMismatch",
           "UnsupportedVariant", "build_tables", "default_directory", "open_tablebase",
           "parse_men", "plan", "rank", "table_name"]
