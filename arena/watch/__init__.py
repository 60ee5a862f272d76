"""``arena watch``: a local, read-only web page that follows a results folder while ``arena
run``, ``arena sprt --out`` or ``arena tune --out`` writes it (and shows a finished one the
same way): the games being played, the standings and Elo table, an SPRT's LLR, a tune's
parameters.

* :mod:`arena.watch.follow`: reads the folder as it grows (a line at a time, from where it
  stopped) and keeps the page's state (standings, crosstable, Elo, LLR and Elo series,
  parameter trajectories);
* :mod:`arena.watch.live`: the games in progress, from the ply files the runner writes;
* :mod:`arena.watch.server`: the page, its state as JSON and as server-sent events (stdlib
  ``http.server``, loopback by default).
"""
