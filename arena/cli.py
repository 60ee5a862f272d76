"""The ``arena`` command line: a thin click layer over the library."""

from __future__ import annotations

import click

from arena.errors import ArenaError


class Failure(click.ClickException):
    """A one-line error message and exit status 2."""

    exit_code = 2


class _Group(click.Group):
    """Turns the library's typed errors into one-line messages and exit status 2."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except ArenaError as e:
            raise Failure(str(e)) from None


@click.group(cls=_Group)
@click.version_option(package_name="morris-arena")
def cli() -> None:
    """Morris Arena: referee, tournaments and ratings for Nine Men's Morris bots."""


@cli.command()
def variants() -> None:
    """List the rule variant presets and where their rules come from."""
    from arena.variants import ALIASES, PRESETS

    for name, v in PRESETS.items():
        aliases = [a for a, target in ALIASES.items() if target == name]
        extra = f"  (aliases: {', '.join(aliases)})" if aliases else ""
        click.echo(f"{name}{extra}")
        click.echo(f"    board={v.board} men={v.men} " + " ".join(
            f"{k}={val}" for k, val in v.to_params().items() if k not in ("board", "men")))
        click.echo(f"    {v.source}")


@cli.command()
@click.argument("variant")
@click.argument("depth", type=click.IntRange(0, 12))
@click.option("--divide", is_flag=True, help="Print the count below each first move.")
def perft(variant: str, depth: int, divide: bool) -> None:
    """Count the legal move sequences of DEPTH turns from the start of VARIANT.

    A turn includes its captures.  VARIANT is a preset name or a variant YAML file.
    """
    from arena.rules import Position
    from arena.variants import load_variant

    pos = Position(load_variant(variant))
    if divide and depth > 0:
        total = 0
        for move in pos.legal_moves():
            pos.push(move)
            n = pos.perft(depth - 1)
            pos.pop()
            total += n
            click.echo(f"{move}: {n}")
        click.echo(f"total: {total}")
    else:
        click.echo(pos.perft(depth))


# --- play / check (referee) -----------------------------------------------------------


# --- run (tournaments) -------------------------------------------------------------------


# --- rate / report / sprt (ratings) ------------------------------------------------------


# --- doctor (sandboxing) -----------------------------------------------------------------


def main() -> None:
    """Entry point of the ``arena`` console script."""
    cli(prog_name="arena")
