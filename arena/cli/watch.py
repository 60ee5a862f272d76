"""``arena watch``: a results folder followed live in a browser (:mod:`arena.watch`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import click

from arena.cli.common import Failure

#: the default port (then the next free ones)
PORT = 8765
#: ports tried after the default one when it is taken
PORTS_TRIED = 20


@click.command()
@click.argument("results", metavar="RESULTS", type=click.Path(path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=None, metavar="P",
              help=f"The port (default: {PORT}, or the next free one; 0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True, metavar="ADDRESS",
              help="The address to listen on. The default is this machine only; another "
                   "address (0.0.0.0: every interface) lets other machines see the page.")
@click.option("--open", "open_browser", is_flag=True,
              help="Open the page in the default web browser.")
@click.option("--projector", is_flag=True,
              help="Open (with --open) the projector layout: large boards and type, no "
                   "controls.")
@click.option("--wait", is_flag=True, hidden=True,
              help="RESULTS need not exist yet (arena run --watch: the run makes it).")
def watch(results: Path, port: Optional[int], host: str, open_browser: bool,
          projector: bool, wait: bool) -> None:
    """Follow RESULTS (a results folder of arena run, arena sprt --out or arena tune --out)
    in a web page while it is written, or show a finished one: the games being played, the
    standings, crosstable and Elo table, an SPRT's LLR and Elo, a tune's parameters.

    The page only reads the folder; nothing on it changes the run. Stop with Ctrl-C.
    """
    from arena.watch.server import open_server

    if not results.is_dir() and not (wait and not results.exists()):
        raise Failure(f"no such results folder: {results}")
    server = None
    errors = []
    ports = [port] if port is not None else [PORT + k for k in range(PORTS_TRIED)]
    for p in ports:
        try:
            server = open_server(results, host, p)
            break
        except OSError as e:
            errors.append(f"{host}:{p}: {e.strerror or e}")
    if server is None:
        raise Failure(f"cannot listen on {errors[0] if len(errors) == 1 else errors[-1]}"
                      + ("" if port is not None else f" (nor on the {PORTS_TRIED - 1} ports "
                                                      f"before it)"))
    url = server.url
    where = ("this machine only" if server.loopback else
             "every machine that can reach this address: anyone there can see the games")
    click.echo(f"watching {results} at {url}{'?layout=projector' if projector else ''} "
               f"(open to {where}); Ctrl-C stops", err=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url + ("?layout=projector" if projector else ""))
    def stopped(signum: int, frame: object) -> None:  # SIGTERM (the run ended): as Ctrl-C
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stopped)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.watcher.stop()  # the pages' streams say "end" and close
        time.sleep(0.2)
        server.server_close()


def watch_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--watch`` for a command that writes a results folder (``what``: which)."""
    return click.option("--watch", is_flag=True,
                        help=f"Follow the run in a web page (arena watch {what}, on this "
                             f"machine only) while it plays; its address is printed.")


def start_beside(results: Path, *, port: Optional[int] = None, host: str = "127.0.0.1",
                 open_browser: bool = False) -> subprocess.Popen[bytes]:
    """``arena watch RESULTS`` as a process of its own beside a run (``--watch``): its own
    interpreter, so the page costs the run's process nothing; ended by the caller
    (:func:`stop_beside`).  It prints its address on standard error."""
    args = [sys.executable, "-m", "arena.cli", "watch", os.fspath(results), "--host", host,
            "--wait"]
    if port is not None:
        args += ["--port", str(port)]
    if open_browser:
        args.append("--open")
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=True)


def stop_beside(process: subprocess.Popen[bytes]) -> None:
    """End a watch process started by :func:`start_beside` (by its pid, which it is)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
