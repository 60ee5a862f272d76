"""Bot manifests: ``bots/<name>/bot.yaml`` becomes a frozen :class:`BotSpec` (:func:`load_bot`);
an engine named on the command line without a folder, cutechess's way
(``"cmd='./mybot --fast' name=fast option.Depth=3"``), becomes one too (:func:`parse_engine`).

The referee reads manifests outside any sandbox, often as root, so :func:`read_manifest` reads
only a regular file of at most :data:`MANIFEST_CAP` bytes inside the bot folder (and, for a
caller who is not the folder's owner, none the owner could not read), and no error shows
anything of a file beyond a key's name (the manifest may be another file's content).  Before
the YAML is parsed, a cheap scan of its tokens refuses a manifest nested more than
:data:`MAX_DEPTH` levels deep, with more than :data:`MAX_NODES` values or more than
:data:`MAX_ALIASES` aliases: parse bombs (32,000 nested ``[`` cost PyYAML seconds of CPU
before a RecursionError) cost at most the scan, a fraction of a second.
What the manifest may say is in ``docs/PROTOCOL.md`` (*The bot folder*).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from arena.errors import ConfigError
from arena.hints import did_you_mean
from arena.interpreter import python_path

MANIFEST = "bot.yaml"
#: the largest ``bot.yaml`` read (bytes)
MANIFEST_CAP = 64 * 1024
#: the longest display name a manifest may give (characters)
NAME_CAP = 100
_MANIFEST_KEYS = ("name", "author", "command", "cwd", "options", "description", "version",
                  "language", "build", "build_timeout", "legal_moves", "variants")
#: the time a ``build:`` step may take when ``build_timeout`` does not say (seconds)
BUILD_TIMEOUT_S = 300.0
#: the longest ``build_timeout`` a manifest may ask for (seconds)
BUILD_TIMEOUT_MAX_S = 3600.0
#: the deepest nesting of mappings and lists a manifest may have (a real one has 3)
MAX_DEPTH = 50
#: the most values (keys, items, scalars, collections) a manifest may hold
MAX_NODES = 2000
#: the most aliases (``*name``) a manifest may use: a *billion laughs* needs many
MAX_ALIASES = 10


@dataclass(frozen=True)
class BotSpec:
    """A bot ready to spawn: display name, folder, argv, working directory, options to set."""

    name: str
    path: str
    command: tuple[str, ...]
    cwd: str
    options: dict[str, str] = field(default_factory=dict, hash=False)
    author: str = ""
    #: the ``build:`` step as argv (a string runs through ``/bin/sh -c``); empty: none
    build: tuple[str, ...] = ()
    #: how long the build may take (seconds)
    build_timeout_s: float = BUILD_TIMEOUT_S
    #: ``legal_moves: true``: the referee sends ``legalmoves ...`` before each ``go``
    legal_moves: bool = False
    #: the variants the bot says it plays (``variants:``); empty: any
    variants: tuple[str, ...] = ()
    #: an engine named by a string of ``key=value`` words (:func:`parse_engine`): that
    #: string; empty for a bot folder
    engine: str = ""

    @property
    def folder_name(self) -> str:
        """The bot folder's own name (``random`` for ``bots/random``)."""
        return Path(self.path).name


def option_text(value: Any, path: str) -> str:
    """An option's value as the protocol's text (true/false, a number, a string), or a
    ConfigError naming ``path``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ConfigError(f"expected a number, string or true/false, got {_kind(value)}", path)


def _kind(value: Any) -> str:
    """What ``value`` is, for a message that must not show it (a manifest's values may be
    another file's content): ``a list``, ``a mapping``..."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def _key_label(key: Any) -> str:
    """A manifest key as shown in a key path: itself when it is a plain name (letters,
    digits, ``_ . -``, at most 40 characters), else a placeholder that shows nothing of it."""
    if isinstance(key, str) and _PLAIN_KEY_RE.fullmatch(key):
        return key
    return "<a key that is not a plain name>"


def _yaml_error(e: Exception) -> str:
    """A YAML error as ``broken YAML at line L, column C: <problem>``, showing none of the
    text: pyyaml's own message quotes the offending line and characters, and a manifest
    may be another file's content.  The problem keeps only pyyaml's wording, with anything
    it quotes removed."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(e, "problem", None)
    position = getattr(e, "position", None)
    if position is not None and problem is None:  # a ReaderError
        return f"broken YAML: a character YAML does not allow, at character {position + 1}"
    text = _QUOTED_RE.sub(_token_or_dots, problem) if isinstance(problem, str) else ""
    if not _PROBLEM_RE.fullmatch(text):
        text = ""
    return f"broken YAML{where}" + (f": {text}" if text else "")


def _token_or_dots(quoted: re.Match[str]) -> str:
    """A quoted part of a pyyaml problem: kept if it is one of YAML's own tokens
    (``'<block end>'``, ``']'``), else ``...``."""
    return quoted.group(0) if _TOKEN_RE.fullmatch(quoted.group(0)[1:-1]) else "..."


_TOKEN_RE = re.compile(r"<[a-z ]{1,30}>|[\[\]{},:?!&*|>#%@-]")
_PLAIN_KEY_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}$")
_QUOTED_RE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_PROBLEM_RE = re.compile(r"^[A-Za-z0-9 <>,;:()_.'\[\]{}?!&*|#%@-]{1,160}$")


def _is_inside(path: str, folder: str) -> bool:
    """True when the resolved ``path`` is ``folder`` or below it (both resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def read_manifest(root: Path) -> bytes:
    """The bytes of ``root/bot.yaml``, read safely: the referee reads manifests outside any
    sandbox, often as root, so a manifest must be a regular file of at most
    :data:`MANIFEST_CAP` bytes inside the bot folder.  A link inside the folder is followed
    (and the folder itself may be a link); a link leading out of it, a FIFO, a device or a
    folder is refused without being read, and nothing of any file appears in an error.

    :raises ConfigError: no manifest, or one that may not be read.
    """
    manifest = root / MANIFEST
    where = str(manifest)
    if not os.path.lexists(manifest):
        raise ConfigError(f"no {MANIFEST} in bot folder {root}")
    real_root = os.path.realpath(root)
    real = os.path.realpath(manifest)
    if not _is_inside(real, real_root):
        raise ConfigError("a link leading outside the bot folder: refused (bot.yaml must be "
                          "a file inside the bot folder)", where)
    try:
        before = os.stat(real)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", where) from None
    if not stat.S_ISREG(before.st_mode):  # never opened: a FIFO would block, a device act
        raise ConfigError("not a regular file: refused", where)
    if _foreign(before, real_root):  # never opened: root must not read it for another user
        raise ConfigError("the file belongs to another user than the bot folder's owner, who "
                          "may not read it (a hard link to someone else's file?): refused",
                          where)
    flags = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        fd = os.open(real, flags)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", where) from None
    try:
        # the file opened is the one checked, even if the folder changed in between
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode)
                or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino)
                or not _is_inside(_opened_path(fd, real), real_root)):
            raise ConfigError("changed while it was read, or not a regular file: refused",
                              where)
        if st.st_size > MANIFEST_CAP:
            raise ConfigError(f"{MANIFEST} is larger than {MANIFEST_CAP // 1024} KiB", where)
        chunks: list[bytes] = []
        size = 0
        while size <= MANIFEST_CAP:
            chunk = os.read(fd, MANIFEST_CAP + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", where) from None
    finally:
        os.close(fd)
    if size > MANIFEST_CAP:
        raise ConfigError(f"{MANIFEST} is larger than {MANIFEST_CAP // 1024} KiB", where)
    return b"".join(chunks)


def _foreign(st: os.stat_result, folder: str) -> bool:
    """True when the file of ``st`` in bot folder ``folder`` is one the folder's owner could
    not read, read for someone else (root checking a participant's folder): a hard link to
    a root-only file put there would otherwise show its key names in an error.  Never for
    the folder's owner themselves (nothing they could not read reaches anyone else)."""
    try:
        owner = os.stat(folder).st_uid
    except OSError:
        return False  # reading the manifest fails with its own message
    if owner == os.geteuid() or st.st_uid == owner or st.st_mode & stat.S_IROTH:
        return False
    return not (st.st_mode & stat.S_IRGRP and st.st_gid in _groups(owner))


def _groups(uid: int) -> set[int]:
    """The groups of user ``uid`` (none known for a uid without a passwd entry)."""
    import pwd

    try:
        entry = pwd.getpwuid(uid)
        return set(os.getgrouplist(entry.pw_name, entry.pw_gid))
    except (KeyError, OSError):
        return set()


def _opened_path(fd: int, fallback: str) -> str:
    """The path of the file open at ``fd`` as the kernel knows it (Linux), else ``fallback``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return fallback


@functools.cache
def _manifest_loader() -> type:
    """A SafeLoader that refuses a key given twice (the later one would silently win); built
    on first use, since yaml is imported lazily."""
    import yaml

    class ManifestLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not _hashable(key):
                    continue  # pyyaml reports it below
                if key in seen:
                    line = key_node.start_mark.line + 1
                    raise ConfigError(f"the key {_key_label(key)} is given twice (line {line})")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return ManifestLoader


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _prescan(text: str, where: str) -> None:
    """Refuse a parse bomb before it is parsed: the manifest's tokens (pyyaml's own scanner,
    the one its parser reads, so what is counted is what would be parsed) nested more than
    :data:`MAX_DEPTH` deep, more than :data:`MAX_NODES` values or :data:`MAX_ALIASES`
    aliases.  It stops at the first count over its bound, and a scanning error is left to
    the parse (which stops there too, with its usual message).  Cost: at most about a
    quarter of a second for 64 KiB of ``[``; pyyaml took seconds to fail on them.

    :raises ConfigError: one line naming the bound and where it was passed.
    """
    import yaml
    from yaml import tokens as t

    opening = (t.BlockMappingStartToken, t.BlockSequenceStartToken, t.FlowMappingStartToken,
               t.FlowSequenceStartToken)
    closing = (t.BlockEndToken, t.FlowMappingEndToken, t.FlowSequenceEndToken)
    scanner = yaml.SafeLoader(text)
    depth = nodes = aliases = 0
    try:
        while scanner.check_token():
            token = scanner.get_token()
            if isinstance(token, opening):
                depth, nodes = depth + 1, nodes + 1
            elif isinstance(token, closing):
                depth -= 1
            elif isinstance(token, (t.ScalarToken, t.AliasToken)):
                nodes += 1
                aliases += isinstance(token, t.AliasToken)
            else:
                continue
            mark = token.start_mark
            at = f"line {mark.line + 1}, column {mark.column + 1}"
            if depth > MAX_DEPTH:
                raise ConfigError(f"broken YAML: nested more than {MAX_DEPTH} levels deep at "
                                  f"{at} (a bot.yaml may nest at most {MAX_DEPTH})", where)
            if nodes > MAX_NODES:
                raise ConfigError(f"more than {MAX_NODES} values (keys and items) by {at} (a "
                                  f"bot.yaml may hold at most {MAX_NODES})", where)
            if aliases > MAX_ALIASES:
                raise ConfigError(f"more than {MAX_ALIASES} aliases (*name) by {at} (a "
                                  f"bot.yaml may use at most {MAX_ALIASES})", where)
    except yaml.YAMLError:
        return  # the parse reports it
    finally:
        scanner.dispose()


def _parse_manifest(raw: bytes, where: str) -> dict[Any, Any]:
    """The manifest's mapping; errors name the file (and line and column), never its text."""
    import yaml  # local: only needed at the edge

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"not UTF-8 text (byte {e.start + 1})", where) from None
    _prescan(text, where)
    try:
        data = yaml.load(text, Loader=_manifest_loader())  # noqa: S506 (a SafeLoader subclass)
    except ConfigError as e:
        raise ConfigError(str(e), where) from None
    except yaml.YAMLError as e:
        raise ConfigError(_yaml_error(e), where) from None
    except RecursionError:
        raise ConfigError("broken YAML: nested too deeply", where) from None
    except (ValueError, TypeError, OverflowError):  # a tagged or dated value pyyaml rejects
        raise ConfigError("broken YAML: a value that cannot be read (a bad date or tag)",
                          where) from None
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping (keys {', '.join(_MANIFEST_KEYS)}), got "
                          f"{_kind(data)}", where)
    for key in data:
        if key not in _MANIFEST_KEYS:
            raise ConfigError(f"unknown key ({did_you_mean(str(key), _MANIFEST_KEYS)}known: "
                              f"{', '.join(_MANIFEST_KEYS)})",
                              f"{where}:{_key_label(key)}")
    return data


def load_bot(folder: str | os.PathLike[str], *, name: Optional[str] = None,
             options: Optional[Mapping[str, Any]] = None) -> BotSpec:
    """Read ``folder/bot.yaml`` into a :class:`BotSpec`.

    ``command`` is a string (split like a shell would) or a list; ``{python}`` stands for
    this interpreter and ``{dir}`` for the bot folder.  ``name`` overrides the manifest's
    name; ``options`` are merged over the manifest's.

    The manifest is read with :func:`read_manifest` (a regular file inside the folder, at
    most 64 KiB), and no error shows its content beyond a key's name.

    :raises ConfigError: no such folder, no or broken ``bot.yaml``, a wrong key or value.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"bot folder not found: {root}")
    where = str(root / MANIFEST)
    data = _parse_manifest(read_manifest(root), where)
    abs_root = root.resolve()

    raw_cmd = data.get("command")
    if isinstance(raw_cmd, str):
        try:
            argv = shlex.split(raw_cmd)
        except ValueError as e:
            raise ConfigError(f"cannot split the command: {e}", f"{where}:command") from None
    elif isinstance(raw_cmd, list) and all(isinstance(a, (str, int, float)) for a in raw_cmd):
        argv = [str(a) for a in raw_cmd]
    else:
        raise ConfigError("expected a command: a string or a list of strings", f"{where}:command")
    if not argv:
        raise ConfigError("the command is empty", f"{where}:command")
    python = python_path()
    argv = [a.replace("{python}", python).replace("{dir}", str(abs_root)) for a in argv]

    cwd_text = data.get("cwd", ".")
    if not isinstance(cwd_text, str):
        raise ConfigError(f"expected a folder path, got {_kind(cwd_text)}", f"{where}:cwd")
    cwd = (abs_root / cwd_text).resolve()
    if not cwd.is_dir():
        raise ConfigError("no such folder (relative to the bot folder)", f"{where}:cwd")

    opts_raw = data.get("options") or {}
    if not isinstance(opts_raw, dict):
        raise ConfigError("expected a mapping of option names to values", f"{where}:options")
    opts = {str(k): option_text(v, f"{where}:options.{_key_label(k)}")
            for k, v in opts_raw.items()}
    for k, v in (options or {}).items():
        opts[str(k)] = option_text(v, f"options.{k}")

    display = name if name is not None else data.get("name", root.name)
    author = data.get("author", "")
    for key, value in (("name", display), ("author", author),
                       *((k, data[k]) for k in ("description", "language") if k in data)):
        if not isinstance(value, str):
            raise ConfigError(f"expected a string, got {_kind(value)}", f"{where}:{key}")
    version = data.get("version", "")
    if isinstance(version, bool) or not isinstance(version, (str, int, float)):
        raise ConfigError(f"expected a string or a number, got {_kind(version)}",
                          f"{where}:version")
    if name is None and (len(display) > NAME_CAP or not display.isprintable()):
        raise ConfigError(f"expected a display name of at most {NAME_CAP} printable "
                          f"characters on one line", f"{where}:name")
    return BotSpec(name=str(display) or root.name, path=str(abs_root), command=tuple(argv),
                   cwd=str(cwd), options=opts, author=str(author),
                   build=_build(data.get("build"), where),
                   build_timeout_s=_build_timeout(data.get("build_timeout"), where),
                   legal_moves=_flag(data.get("legal_moves", False), f"{where}:legal_moves"),
                   variants=_variant_names(data.get("variants"), where))


def _build(value: Any, where: str) -> tuple[str, ...]:
    """``build:``: a string runs through ``/bin/sh -c`` (so ``make && strip bot`` works), a
    list of words is run as it is; nothing means no build step."""
    if value is None:
        return ()
    if isinstance(value, str) and value.strip():
        return ("/bin/sh", "-c", value)
    if (isinstance(value, list) and value
            and all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in value)):
        return tuple(str(a) for a in value)
    raise ConfigError("expected a build command: a string (run by /bin/sh) or a list of words",
                      f"{where}:build")


def _build_timeout(value: Any, where: str) -> float:
    if value is None:
        return BUILD_TIMEOUT_S
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not 0 < value <= BUILD_TIMEOUT_MAX_S):
        raise ConfigError(f"expected a number of seconds, more than 0 and at most "
                          f"{BUILD_TIMEOUT_MAX_S:.0f}", f"{where}:build_timeout")
    return float(value)


def _flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"expected true or false, got {_kind(value)}", path)
    return value


def _variant_names(value: Any, where: str) -> tuple[str, ...]:
    """``variants:``: the preset names (or aliases) the bot plays, as canonical names."""
    from arena.variants import ALIASES, PRESETS

    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ConfigError("expected a list of variant names", f"{where}:variants")
    names: list[str] = []
    for i, item in enumerate(value):
        key = ALIASES.get(item, item) if isinstance(item, str) else None
        if key not in PRESETS:
            raise ConfigError(f"not a variant (known: {', '.join(PRESETS)})",
                              f"{where}:variants[{i}]")
        if key not in names:
            names.append(key)
    return tuple(names)


# -- engines named on the command line ---------------------------------------------------

#: the keys of an engine string; ``option.<NAME>`` sets an option, ``arg`` (repeatable) adds
#: a word to the command, as in cutechess
ENGINE_KEYS = ("cmd", "name", "dir", "arg", "option.<NAME>", "legal_moves", "variants")
_ENGINE_WORD_RE = re.compile(r"^(cmd|name|dir|arg|legal_moves|variants|option\.[^=\s]+)=")
#: the longest engine string read (characters)
ENGINE_CAP = 4096


def is_engine_string(text: str) -> bool:
    """True when ``text`` names an engine (:func:`parse_engine`) rather than a bot folder:
    its first word is one of :data:`ENGINE_KEYS` followed by ``=`` (``cmd=./sf``,
    ``name=x cmd=...``, ``option.Hash=64 ...``)."""
    return bool(_ENGINE_WORD_RE.match(text.lstrip()))


def parse_engine(text: str, *, bases: Sequence[Path] = ()) -> BotSpec:
    """An engine without a bot folder, named as cutechess's ``-engine`` does: ``key=value``
    words, quoted as a shell would (``"cmd='./mybot --fast' name=fast option.Depth=3"``).

    * ``cmd`` (required): the command, split like a shell would (``{python}`` is this
      interpreter, ``{dir}`` the working folder, as in a ``bot.yaml``); ``arg=WORD``
      (repeatable) adds a word to it.
    * ``dir``: the working folder, which is also the bot's folder for the sandbox (it sees
      it read-only, as a bot folder); default the current folder.  A relative one is
      looked up from the current folder, then from each of ``bases`` (a tournament file's
      folder).
    * ``name``: the display name; default the command's base name (``mybot`` for
      ``./mybot``, ``bot`` for ``{python} bot.py``).
    * ``option.NAME=VALUE``: an option, checked against those the engine declares before
      the first game, like a ``bot.yaml``'s.
    * ``legal_moves=true``, ``variants=nine-mens-morris,six-mens-morris``: as in a
      ``bot.yaml``.

    The isolation is the run's, as for every bot: not a key.

    :raises ConfigError: one line naming the engine string and what is wrong with it.
    """
    shown = text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"
    where = f"engine {shown!r}"
    if len(text) > ENGINE_CAP:
        raise ConfigError(f"longer than {ENGINE_CAP} characters", where)
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise ConfigError(f"cannot split it as a shell would: {e}", where) from None
    values: dict[str, str] = {}
    args: list[str] = []
    options: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise ConfigError(f"expected KEY=VALUE words, got {word[:40]!r} (quote a value "
                              f"with spaces: cmd='./mybot --fast')", where)
        if key == "proto":  # cutechess's and fastchess's key: one protocol here
            if value.strip().lower() == "morris":
                continue
            raise ConfigError(f"proto={value[:20]}: the referee speaks one protocol, the "
                              f"Morris protocol (docs/PROTOCOL.md), whose handshake is "
                              f"'morris'/'morrisok'; a {value[:20]} engine needs a port that "
                              f"answers it (leave proto out, or write proto=morris)", where)
        if key.startswith("option."):
            name = key[len("option."):]
            if not name.strip():
                raise ConfigError(f"{word[:40]!r}: expected option.NAME=VALUE", where)
            options[name] = value
        elif key == "arg":
            args.append(value)
        elif key in ENGINE_KEYS:
            if key in values:
                raise ConfigError(f"{key} is given twice", where)
            values[key] = value
        else:
            why = (" (the isolation is the run's, as for every bot: --isolation, or a "
                   "tournament's isolation:)" if key == "isolation" else "")
            head, dot, tail = key.partition(".")  # optoin.Depth: did you mean option.Depth?
            hint = did_you_mean(head, [k.partition(".")[0] for k in ENGINE_KEYS])
            if hint and dot:
                hint = hint.replace("? ", f".{tail[:40]}? ", 1)
            raise ConfigError(f"unknown key {key[:40]!r} ({hint}expected one of: "
                              f"{', '.join(ENGINE_KEYS)}){why}", where)
    if not values.get("cmd", "").strip():
        raise ConfigError("cmd is required: the command that starts the engine "
                          "(cmd=./mybot, or cmd='{python} bot.py' dir=bots/mine)", where)
    folder = _engine_dir(values.get("dir"), bases, where)
    try:
        argv = shlex.split(values["cmd"]) + args
    except ValueError as e:
        raise ConfigError(f"cannot split cmd: {e}", where) from None
    display = values.get("name", "")
    if "name" in values and (not display.strip() or len(display) > NAME_CAP
                             or not display.isprintable()):
        raise ConfigError(f"name: expected a display name of at most {NAME_CAP} printable "
                          f"characters", where)
    if not display:
        display = _engine_name(argv)
    legal = values.get("legal_moves", "false").lower()
    if legal not in ("true", "false"):
        raise ConfigError(f"legal_moves: expected true or false, got {legal[:20]!r}", where)
    variants: tuple[str, ...] = ()
    if "variants" in values:
        from arena.variants import ALIASES, PRESETS

        names = [v.strip() for v in values["variants"].split(",") if v.strip()]
        for item in names:
            if ALIASES.get(item, item) not in PRESETS:
                raise ConfigError(f"variants: {item[:40]!r} is not a variant (known: "
                                  f"{', '.join(PRESETS)})", where)
        variants = _variant_names(names or None, where)
    python = python_path()
    argv = [a.replace("{python}", python).replace("{dir}", str(folder)) for a in argv]
    return BotSpec(name=display, path=str(folder), command=tuple(argv), cwd=str(folder),
                   options=options, legal_moves=legal == "true", variants=variants,
                   engine=text.strip())


def _engine_dir(value: Optional[str], bases: Sequence[Path], where: str) -> Path:
    """An engine's ``dir`` (default: the current folder), resolved."""
    if value is None:
        return Path.cwd().resolve()
    if not value.strip():
        raise ConfigError("dir: expected a folder", where)
    for base in (Path.cwd(), *bases):
        folder = base / os.path.expanduser(value)
        if folder.is_dir():
            return folder.resolve()
    raise ConfigError(f"dir: no such folder: {value}", where)


def _engine_name(argv: Sequence[str]) -> str:
    """The default display name: the program's base name, or for an interpreter given a
    script (``{python} bot.py``, ``node bot.js``, ``java -jar bot.jar``) the script's."""
    program = Path(argv[0]).name
    interpreter = argv[0] == "{python}" or re.match(r"^(python|pypy|node|java|ruby|perl)",
                                                    program)
    if interpreter:
        script = next((a for a in argv[1:] if not a.startswith("-")), None)
        if script is not None:
            return Path(script).stem or program
    return program or "engine"


__all__ = ["BotSpec", "load_bot", "read_manifest", "parse_engine", "is_engine_string",
           "MANIFEST", "MANIFEST_CAP", "NAME_CAP", "ENGINE_KEYS", "BUILD_TIMEOUT_S",
           "BUILD_TIMEOUT_MAX_S", "MAX_DEPTH", "MAX_NODES", "MAX_ALIASES", "python_path"]
