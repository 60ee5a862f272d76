"""``python -m arena.cli``: the ``arena`` command (as the console script)."""

from arena.cli import main

main()
