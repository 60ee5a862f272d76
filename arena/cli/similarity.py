"""``arena similarity``: how alike students' bots are (identical files, near-identical
source), a thin layer over :mod:`arena.similarity`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from arena.cli.common import Failure


@click.command()
@click.argument("folders", nargs=-1, metavar="FOLDER...")
@click.option("-p", "--parent", "parents", multiple=True, metavar="DIR",
              help="Compare every folder inside DIR (one per student); repeatable.")
@click.option("-t", "--template", "templates", multiple=True, metavar="DIR",
              help="A folder the students started from (an example): its files and code are "
                   "not evidence; repeatable.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=None, metavar="SCORE",
              help="Flag pairs scoring at least this (default 0.8).")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="Show this many pairs, most similar first (0: all); flagged pairs are "
                   "always shown.")
@click.option("--max-common", type=click.IntRange(min=1), default=None, metavar="N",
              help="Ignore code found in more than N bots (default 10; MOSS's -m).")
@click.option("--json", "as_json", is_flag=True, help="Print the pairs as JSON.")
def similarity(folders: tuple[str, ...], parents: tuple[str, ...], templates: tuple[str, ...],
               threshold: float | None, top: int, max_common: int | None,
               as_json: bool) -> None:
    """Report how alike the bots in FOLDER... are, pair by pair, most similar first.

    Each FOLDER is one student's bot (or use --parent DIR for every folder in DIR).  Two
    measures make a pair's score (0-100%): files identical byte for byte (SHA-256; tiny files
    and the templates' files left out), and source that is the same once identifiers are
    renamed and comments and layout changed (Pygments tokens, winnowed fingerprints as in
    MOSS).  Pairs at or above the threshold are marked SUSPECT.  Nothing in the folders is
    run and no symbolic link is followed.  The exit status is 0 whatever is found.  See
    docs/SIMILARITY.md.
    """
    from arena import similarity as S

    bots = _bots(folders, parents)
    if len(bots) < 2:
        raise Failure("give at least two bot folders (FOLDER... or --parent DIR)")
    limit = S.SUSPECT if threshold is None else threshold
    scans = {name: S.scan(path) for name, path in bots.items()}
    pairs = S.compare_scans(scans, [S.scan(t) for t in templates],
                            max_common=S.MAX_COMMON if max_common is None else max_common)
    suspects = S.flagged(pairs, limit)
    if as_json:
        click.echo(json.dumps({"threshold": limit, "bots": sorted(bots),
                               "pairs": [p.as_dict() | {"suspect": p.score >= limit}
                                         for p in pairs],
                               "skipped": {n: [list(x) for x in s.skipped]
                                           for n, s in scans.items() if s.skipped}},
                              indent=2))
        return
    for name, s in sorted(scans.items()):
        for path, why in s.skipped[:5]:
            click.echo(f"note: {name}: skipped {path} ({why})", err=True)
        if len(s.skipped) > 5:
            click.echo(f"note: {name}: {len(s.skipped) - 5} more skipped", err=True)
    shown = pairs if top == 0 else pairs[:max(top, len(suspects))]
    width = max(len(f"{p.a} ~ {p.b}") for p in shown)
    click.echo(f"{'score':>5}  {'code':>4}  {'files':>5}  {'pair':<{width}}  reason")
    for p in shown:
        mark = "SUSPECT  " if p.score >= limit else ""
        click.echo(f"{p.score:>5.0%}  {p.code_score:>4.0%}  {p.identical_share:>5.0%}  "
                   f"{p.a + ' ~ ' + p.b:<{width}}  {mark}{p.reason}")
    if len(shown) < len(pairs):
        click.echo(f"({len(pairs) - len(shown)} more pairs below {shown[-1].score:.0%}; "
                   f"--top 0 shows all)")
    click.echo(f"{len(suspects)} of {len(pairs)} pairs at or above {limit:.0%} (SUSPECT).")
    click.echo("code: the share of the smaller bot's source fingerprints found in the other; "
               "files: the share of a bot's bytes in files the other has byte for byte.\n"
               "A score says where to look, not who copied.")


def _bots(folders: tuple[str, ...], parents: tuple[str, ...]) -> dict[str, Path]:
    """The bots named by the arguments: a folder by its own name, made longer (the path as
    given) where two share one; --parent's subfolders (not links, not hidden) likewise."""
    paths: list[Path] = []
    for folder in folders:
        if not os.path.isdir(folder):
            raise Failure(f"{folder}: not a folder")
        paths.append(Path(folder))
    for parent in parents:
        try:
            entries = sorted(os.scandir(parent), key=lambda e: e.name)
        except OSError as e:
            raise Failure(f"--parent {parent}: {e.strerror}") from None
        paths += [Path(e.path) for e in entries
                  if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                  and e.name != "__MACOSX"]
    names = [p.resolve().name or str(p) for p in paths]
    bots: dict[str, Path] = {}
    for name, path in zip(names, paths):
        key = name if names.count(name) == 1 else os.path.normpath(path)
        if key in bots:
            raise Failure(f"{path}: given twice")
        bots[str(key)] = path
    return bots
