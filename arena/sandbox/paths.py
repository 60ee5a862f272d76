"""Which host paths a bot needs to see: the Python installation, the ``arena`` package, the
installation of its command and the host's toolchains (:func:`toolchains`).  Both
confinements (bwrap's mounts and ``basic`` as root) show a bot (and a build) these,
read-only, and nothing else of the host's closed places.

The toolchain rule
------------------
A build (``cargo build``, ``go build``, ``javac``, ``make``) and a game (``java -jar``,
``node``) must find the compilers and runtimes the host has, although the sandbox's
``HOME`` is a private temporary folder and its environment is cleared.  So the toolchains
found on the host when the referee starts (:data:`TOOLCHAINS`, each looked for once) are
shown read-only at their own paths to every bot and build at ``basic`` and ``bwrap``, and
the variables that point at them are set in the sandbox's environment
(:func:`toolchain_env`):

* **rustup**: ``RUSTUP_HOME`` (the referee's, else ``~/.rustup``): the installed
  toolchains and ``settings.toml`` (the default toolchain); ``RUSTUP_HOME`` set;
* **cargo**: of ``CARGO_HOME`` (the referee's, else ``~/.cargo``) only ``bin`` (the rustup
  proxies, tools from ``cargo install``), ``registry`` and ``git`` (crates the host has
  downloaded), never its ``config.toml`` or ``credentials.toml``; ``CARGO_HOME`` set and
  ``bin`` added to the end of ``PATH``.  Wherever there is a cargo (a distribution's
  too), ``CARGO_NET_OFFLINE=true``: a crate that is not vendored (or in that registry) fails
  at once, at every level, instead of after three tries of the network;
* **Go**: ``GOROOT`` (the referee's, else the installation of ``go`` on ``PATH``), with
  ``GOTOOLCHAIN=local`` (never download another Go), ``GOPROXY=off`` and
  ``GOFLAGS=-mod=vendor`` (no network: dependencies come from the module's ``vendor/``);
  ``GOPATH``, ``GOCACHE`` and ``GOMODCACHE`` stay at their defaults below the private
  ``HOME``: the bot's own, empty at every build;
* **Java**: ``JAVA_HOME`` (the referee's, else the installation of ``javac`` or ``java`` on
  ``PATH``), set;
* **Node**: the installation of ``node`` on ``PATH`` (``.../bin/node`` -> ``...``).

A home below ``/usr`` is visible anyway (``/usr`` is mounted whole); one elsewhere
(``/opt/go``, ``~/.nvm/versions/node/v20``, ``/root/.rustup``) is mounted at its own path.
Top-level folders (``/opt``, ``/home``) are never shown whole.  The host decides, not the
bot: a bot cannot add a path (``isolation.read_only`` in a tournament file can).
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import arena


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


@functools.lru_cache(maxsize=1)
def _own_runtime() -> tuple[str, ...]:
    """The Python installation and the arena package: the same for every bot (worked out
    once, not at every bot start)."""
    exe = os.path.realpath(sys.executable)
    found = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(arena.__file__).resolve().parent),
             str(Path(exe).parent.parent if Path(exe).parent.name == "bin" else Path(exe).parent))
    return tuple(os.path.realpath(p) for p in found)


def _prefix(executable: str) -> str:
    """The installation an executable belongs to: ``.../bin/node`` -> ``...``."""
    real = Path(os.path.realpath(executable))
    return str(real.parent.parent if real.parent.name == "bin" else real.parent)


def _shown(path: str) -> bool:
    """A path that may be shown to a bot: never ``/`` or a top-level folder (``/opt``)."""
    return path.count("/") >= 2 or inside(path, "/usr")


def runtime_paths(command: Sequence[str], env_path: str) -> list[str]:
    """Real paths of the Python installation, the arena package and the command's own
    installation (``.../bin/node`` -> ``...``), to mount read-only.  Top-level folders
    (``/opt``, ``/home``) are never mounted whole: name such paths in ``read_only``.  A
    command of a known toolchain's home (``~/.cargo/bin/cargo``) adds nothing: the
    toolchain's own paths (:func:`toolchain_paths`) are what is shown of that home."""
    found = list(_own_runtime())
    if command:
        which = shutil.which(command[0], path=env_path) if "/" not in command[0] else command[0]
        if which and os.path.isabs(which):
            prefix = _prefix(which)
            if not any(t.home and inside(prefix, t.home) for t in toolchains()):
                found.append(prefix)
    return [p for p in found if _shown(p)]


def bot_paths(command: Sequence[str], read_only: Sequence[str]) -> list[str]:
    """Real paths a bot running ``command`` sees read-only besides its folder: the runtime
    (:func:`runtime_paths`, the command looked up on our ``PATH``), the host's toolchains
    (:func:`toolchain_paths`) and the ``read_only`` paths it was given."""
    return [*runtime_paths(command, os.environ.get("PATH", os.defpath)), *toolchain_paths(),
            *(os.path.realpath(p) for p in read_only)]


# -- the host's toolchains -------------------------------------------------------------
@dataclass(frozen=True)
class Toolchain:
    """A toolchain found on the host (see the module's docstring)."""

    #: ``rustup``, ``cargo``, ``go``, ``java`` or ``node``
    name: str
    #: its home (real path; "" for none): a command found below it adds no mount of its own
    home: str
    #: the real paths shown read-only (the home, or the parts of it a build needs)
    paths: tuple[str, ...]
    #: variables set in the sandbox (a caller's explicit value wins)
    env: tuple[tuple[str, str], ...] = ()
    #: a folder of its programs added to the end of the sandbox's ``PATH`` ("" for none)
    bin: str = ""


def _home(variable: str, default: str) -> Optional[str]:
    """The real path of the folder named by our ``variable``, else of ``~/default``; None
    when it is not a folder."""
    path = os.environ.get(variable) or os.path.join(os.path.expanduser("~"), default)
    real = os.path.realpath(path)
    return real if os.path.isabs(path) and os.path.isdir(real) else None


def _installed(*programs: str) -> Optional[str]:
    """The installation (:func:`_prefix`) of the first of ``programs`` on our ``PATH``."""
    for program in programs:
        found = shutil.which(program)
        if found and os.path.isabs(found):
            return _prefix(found)
    return None


def _rustup() -> Optional[Toolchain]:
    home = _home("RUSTUP_HOME", ".rustup")
    if home is None or not os.path.isdir(os.path.join(home, "toolchains")):
        return None
    return Toolchain("rustup", home, (home,), (("RUSTUP_HOME", home),))


def _cargo() -> Optional[Toolchain]:
    home = _home("CARGO_HOME", ".cargo")
    parts = tuple(p for p in (os.path.join(home, n) for n in ("bin", "registry", "git"))
                  if os.path.isdir(p)) if home is not None else ()
    offline = ("CARGO_NET_OFFLINE", "true")  # fail at once, not after three tries
    if home is None or not parts:  # a distribution's cargo: its HOME's .cargo is private
        return Toolchain("cargo", "", (), (offline,)) if shutil.which("cargo") else None
    return Toolchain("cargo", home, parts, (("CARGO_HOME", home), offline),
                     os.path.join(home, "bin") if os.path.isdir(os.path.join(home, "bin")) else "")


def _go() -> Optional[Toolchain]:
    root = os.environ.get("GOROOT")
    home = os.path.realpath(root) if root and os.path.isabs(root) else _installed("go")
    if home is None or not os.path.isfile(os.path.join(home, "bin", "go")):
        return None
    return Toolchain("go", home, (home,), (("GOROOT", home), ("GOTOOLCHAIN", "local"),
                                           ("GOPROXY", "off"), ("GOFLAGS", "-mod=vendor")),
                     os.path.join(home, "bin"))


def _java() -> Optional[Toolchain]:
    given = os.environ.get("JAVA_HOME")
    home = (os.path.realpath(given) if given and os.path.isabs(given)
            else _installed("javac", "java"))
    if home is None or not os.path.isfile(os.path.join(home, "bin", "java")):
        return None
    return Toolchain("java", home, (home,), (("JAVA_HOME", home),), os.path.join(home, "bin"))


def _node() -> Optional[Toolchain]:
    home = _installed("node", "nodejs")
    if home is None or home == "/usr":  # a system package: visible anyway, on PATH anyway
        return None
    return Toolchain("node", home, (home,), (), os.path.join(home, "bin"))


#: how each known toolchain is found on the host (see the module's docstring)
TOOLCHAINS: tuple[Callable[[], Optional[Toolchain]], ...] = (_rustup, _cargo, _go, _java, _node)


@functools.lru_cache(maxsize=1)
def toolchains() -> tuple[Toolchain, ...]:
    """The toolchains found on the host (looked for once per referee process)."""
    found = []
    for find in TOOLCHAINS:
        try:
            tool = find()
        except OSError:
            continue
        if tool is not None:
            found.append(Toolchain(tool.name, tool.home,
                                   tuple(p for p in tool.paths if _shown(p)), tool.env, tool.bin))
    return tuple(found)


def toolchain_paths() -> list[str]:
    """The real paths of the host's toolchains that a bot sees read-only."""
    return [p for tool in toolchains() for p in tool.paths]


def toolchain_env(path: str) -> dict[str, str]:
    """The variables the host's toolchains set in a sandbox whose ``PATH`` is ``path``:
    their homes, Go's offline settings, and ``PATH`` with the toolchains' program folders
    that are not on it added at its end."""
    env: dict[str, str] = {}
    folders = path.split(os.pathsep) if path else []
    for tool in toolchains():
        env.update(tool.env)
        if tool.bin and tool.bin not in folders and os.path.isdir(tool.bin):
            folders.append(tool.bin)
    env["PATH"] = os.pathsep.join(folders)
    return env
