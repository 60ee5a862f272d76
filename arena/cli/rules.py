"""The rules commands: ``arena variants`` (the presets) and ``arena perft`` (move counts)."""

from __future__ import annotations

import click


@click.command()
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


@click.command()
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
