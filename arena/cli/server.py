"""``arena server``: a competition server (``docs/SERVER.md``).  Option parsing only: the
competition is :mod:`arena.server.service`, the site :mod:`arena.server.web`.

``init`` makes a competition folder, ``user`` adds a participant (their token is the last
line printed), ``users`` adds a roster's (``name,token`` CSV), ``run`` serves the site and
runs the judge, ``results`` prints the final's standings (or the ladder before the deadline)
as CSV, ``final`` lists the finals and plays one again (``--rerun``), ``gc`` removes the uploads' files that the disk rules allow.  Needs the ``server``
extra.
"""

from __future__ import annotations

from typing import Any, Optional

import click


@click.group()
def server() -> None:
    """A competition: participants upload bots over the web, a sandboxed judge runs a ladder."""


_DB_URL = click.option("--db-url", default=None, metavar="URL",
                       help="A database URL (postgresql://user@host/db) instead of DIR/arena.db "
                            "(or the config's db_url).")


@server.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True),
              default=None, help="The competition's YAML settings (docs/SERVER.md).")
@_DB_URL
def init(folder: str, config_file: Optional[str], db_url: Optional[str]) -> None:
    """Make a new competition in DIR: settings, database, folders for uploads."""
    import dataclasses

    from arena.server import require_server_extra

    require_server_extra()
    from arena.server.config import ServerConfig, load_server_config
    from arena.server.service import init_competition

    config = load_server_config(config_file) if config_file else ServerConfig()
    if db_url:
        config = dataclasses.replace(config, db_url=db_url)
    out = init_competition(folder, config)
    click.echo(f"competition {config.name!r} in {out}")
    click.echo(f"next: arena server user {folder} NAME [--admin], then arena server run {folder}")


@server.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("name")
@click.option("--admin", is_flag=True, help="The participant may administer the competition.")
@click.option("--new-token", is_flag=True,
              help="Give the existing participant NAME a new token (printed as the last "
                   "line) and revoke their old one.")
@click.option("--revoke", is_flag=True,
              help="Revoke the existing participant NAME's token (no new one).")
@_DB_URL
def user(folder: str, name: str, admin: bool, new_token: bool, revoke: bool,
         db_url: Optional[str]) -> None:
    """Add participant NAME; prints their access token as the last line (keep it: only its
    hash is stored).  With --new-token or --revoke: replace or revoke an existing
    participant's token."""
    if sum((admin, new_token, revoke)) > 1:
        raise click.UsageError("choose one of --admin (a new participant), --new-token "
                               "and --revoke")
    from arena.server import require_server_extra

    require_server_extra()
    from arena.server.service import OPERATOR, Competition

    comp = Competition(folder, db_url=db_url)
    try:
        if revoke:
            comp.revoke_token(name, OPERATOR)
            click.echo(f"revoked {name}'s token (arena server user {folder} {name} "
                       f"--new-token gives a new one)")
            return
        if new_token:
            token = comp.new_token(name, OPERATOR)
            click.echo(f"{name}'s old token is revoked; their new token:")
        else:
            token = comp.add_user(name, admin=admin)
            click.echo(f"added {'admin' if admin else 'participant'} {name}; their token:")
    finally:
        comp.close()
    click.echo(token)


@server.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("roster", metavar="ROSTER.csv", type=click.Path(dir_okay=False, exists=True))
@_DB_URL
def users(folder: str, roster: str, db_url: Optional[str]) -> None:
    """Add the participants of ROSTER.csv (a 'name' column; an optional 'admin' column,
    true/false) and print 'name,token' CSV of the new ones to stdout: the tokens are shown
    this once (only their hashes are kept).  Names that exist already are left alone and
    reported on stderr."""
    import csv
    import sys

    from arena.server import require_server_extra

    require_server_extra()
    from arena.server.participants import read_roster
    from arena.server.service import Competition

    people = read_roster(roster)
    comp = Competition(folder, db_url=db_url)
    try:
        made, existing = comp.add_users(people)
    finally:
        comp.close()
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["name", "token"])
    out.writerows(made)
    sys.stdout.flush()
    for name in existing:
        click.echo(f"{name} exists already: left alone (arena server user {folder} {name} "
                   f"--new-token gives a new token)", err=True)
    click.echo(f"added {len(made)} participant(s); {len(existing)} existed already", err=True)


@server.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--final", "number", type=click.IntRange(1, 1 << 62), default=None,
              metavar="N", help="The standings of final N (default: the latest).")
@_DB_URL
def results(folder: str, number: Optional[int], db_url: Optional[str]) -> None:
    """Print the final's standings as CSV for a grade book, one row per variant and
    participant, the whole roster: variant, rank, participant, bot, version, points, elo,
    elo95, games, score, place (5= for a shared place), h2h and sb (the tie-breaks),
    status (entry, no accepted bot, no upload) and final (its number).  Before the
    deadline: the current ladder in the same columns.  Exit status 1, with a message,
    while the final is not done."""
    import csv
    import sys

    from arena.server import require_server_extra

    require_server_extra()
    from arena.records import spreadsheet_safe
    from arena.server.service import RESULT_COLUMNS, Competition, NotReady

    comp = Competition(folder, db_url=db_url)
    deadline = comp.deadline_text()
    try:
        kind, rows = comp.results(number)
        state = comp.final_state(number=number) if kind != "ladder" else {}
    except NotReady as e:
        click.echo(f"Error: {e}; try again once it is (arena server results {folder})",
                   err=True)
        sys.exit(1)
    finally:
        comp.close()
    def cell(value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:g}"
        return spreadsheet_safe(value)

    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(RESULT_COLUMNS)
    for row in rows:
        out.writerow([cell(row[k]) for k in RESULT_COLUMNS])
    sys.stdout.flush()
    if state:
        settings = state["settings"]
        played = (f", a Swiss of {settings.get('rounds')} rounds, {settings['pairs']} "
                  f"pair(s) per pairing" if settings.get("format") == "swiss" and
                  settings.get("pairs") else
                  f", {settings['pairs']} pair(s) per meeting" if settings.get("pairs")
                  else "")
        click.echo(f"{kind} ({state['reason']}{played}), finished {state['finished']}",
                   err=True)
    if kind == "ladder":
        click.echo(f"the ladder's current standings: the final's come after the deadline, "
                   f"{deadline}" if deadline else "the ladder's current standings (no deadline "
                   "is set, so no final)", err=True)


@server.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--rerun", is_flag=True,
              help="Play a new final among the latest final's entries, with the settings "
                   "as they are now in server.yaml (deadline, final.pairs, variants).")
@click.option("--pairs", type=click.IntRange(1, 1000), default=None,
              help="With --rerun: colour-swapped pairs per meeting (default: final.pairs).")
@_DB_URL
def final(folder: str, rerun: bool, pairs: Optional[int], db_url: Optional[str]) -> None:
    """Show the finals played so far; with --rerun, start a new one (the running server's
    judge plays it; the results name it).  A final is never changed by editing the
    settings: this is how a teacher plays it again."""
    from arena.server import require_server_extra

    require_server_extra()
    from arena.server.service import OPERATOR, Competition

    if pairs is not None and not rerun:
        raise click.UsageError("--pairs goes with --rerun")
    comp = Competition(folder, db_url=db_url)
    try:
        if rerun:
            state = comp.rerun_final(OPERATOR, pairs)
            click.echo(f"final {state['number']} starts: {state['games_total']} games among "
                       f"{len(state['bots'])} entries ({state['settings']['pairs']} pair(s) "
                       f"per meeting); arena server run {folder} plays them")
        for f in comp.finals():
            click.echo(f"final {f['number']}: {f['status']}, {f['games_done']} of "
                       f"{f['games_total']} games stored ({f['reason']}; started "
                       f"{f['started']})")
        if not comp.finals():
            click.echo("no final yet: the first starts at the deadline"
                       + (f", {comp.deadline_text()}" if comp.deadline_text() else
                          " (none is set in server.yaml)"))
    finally:
        comp.close()


@server.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on (0.0.0.0: every interface; see docs/SERVER.md "
                   "before doing so).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@_DB_URL
def run(folder: str, host: str, port: int, db_url: Optional[str]) -> None:
    """Serve the site and API of DIR and run its judge until interrupted."""
    from arena.server import require_server_extra

    require_server_extra()
    from arena.server.web import serve

    click.echo(f"serving {folder} on http://{host}:{port}/ (Ctrl-C stops)")
    serve(folder, host=host, port=port, db_url=db_url)


@server.command()
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@_DB_URL
def gc(folder: str, dry_run: bool, db_url: Optional[str]) -> None:
    """Remove the uploads' files that the disk rules allow: the folders of rejected uploads
    (their archive and log stay) and the folders and archives of retired versions past
    upload.keep_versions.  Games, records and replays stay.  Safe while the server runs."""
    from arena.server import require_server_extra

    require_server_extra()
    from arena.server.service import Competition

    comp = Competition(folder, db_url=db_url)
    try:
        removed = comp.collect_garbage(dry_run=dry_run)
    finally:
        comp.close()
    verb = "would remove" if dry_run else "removed"
    for item in removed:
        click.echo(f"{verb} bot {item['id']} ({item['bot']} by {item['owner']}): "
                   f"{item['what']}, {item['bytes'] / 1e6:.1f} MB")
    total = sum(item["bytes"] for item in removed)
    click.echo(f"{verb} {len(removed)} upload(s)' files, {total / 1e6:.1f} MB in all")


@server.command("export")
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("out", metavar="OUT", type=click.Path(file_okay=False))
@click.option("--kind", type=click.Choice(["final", "ladder", "all"]), default=None,
              help="Which games: a final's, the ladder's (retired versions' too), or the "
                   "ladder's and every final's (default: the final's once one has "
                   "started, else the ladder's).  Test matches never.")
@click.option("--final", "number", type=click.IntRange(1, 1 << 62), default=None,
              metavar="N", help="The games of final N (default: the latest; arena server "
                                "final lists them).")
@_DB_URL
def export_games(folder: str, out: str, kind: Optional[str], number: Optional[int],
                 db_url: Optional[str]) -> None:
    """Write DIR's finished games as the results folder OUT (games.jsonl, games.csv,
    standings.csv, games.pgn), as 'arena run' writes one: arena rate, report and export
    read it.  DIR is only read (safe while its server runs); OUT must be new or empty."""
    from typing import cast

    from arena.server.export import Kind, export_competition

    done = export_competition(folder, out, cast(Optional[Kind], kind), final=number,
                              db_url=db_url)
    what = {"all": "ladder and final", "ladder": "ladder"}.get(done.kind, "final")
    if done.final is not None:
        what = f"final {done.final}"
    click.echo(f"wrote {done.games} games ({what}) of {folder} to {out} "
               f"({', '.join(done.files)}); next: arena rate {out}")
