"""The ``arena`` command line: a thin click layer over the library.

:data:`cli` is the click group and :func:`main` the console script.  The commands live in one
module per concern (:mod:`.rules`, :mod:`.play`, :mod:`.run`, :mod:`.analysis`, :mod:`.show`,
:mod:`.sprt`, :mod:`.export`, :mod:`.server`, :mod:`.similarity`, :mod:`.watch`)
and are added to the group here; what they share is in :mod:`.common`.  Importing this package
stays cheap (``arena --help`` must start fast): each command imports the library it needs when
it runs.
"""

from __future__ import annotations

import click

from arena.cli import (analysis, export, play, rules, run, server, show, similarity, sprt,
                       tablebase, tune, watch)
from arena.cli.common import ArenaGroup, Failure


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "-help", "--help"]})
@click.version_option(package_name="morris-arena")
def cli() -> None:
    """Morris Arena: referee, tournaments and ratings for Nine Men's Morris bots."""


for _command in (rules.variants, rules.perft, play.play, play.check, play.doctor, run.run,
                 analysis.rate, analysis.report, analysis.analyse, export.export, show.show,
                 sprt.sprt,
                 server.server, tablebase.tablebase, tune.tune, similarity.similarity,
                 watch.watch):
    cli.add_command(_command)
del _command


def main() -> None:
    """Entry point of the ``arena`` console script."""
    cli(prog_name="arena")


__all__ = ["Failure", "cli", "main"]
