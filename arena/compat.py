"""cutechess-cli's and fastchess's spellings, mapped onto Morris Arena's own settings.

Engine authors come with command lines from cutechess-cli and fastchess; where an option
means the same here, its spelling is accepted and translated to the setting it means, in
this one module (the rest of the code knows only its own names).  Where a spelling has no
Morris meaning, a one-line :class:`~arena.errors.ConfigError` says so.  The table is
docs/TOURNAMENTS.md's, *For engine authors*.

Two uses:

* ``--draw`` / ``--resign`` of ``arena play`` and ``arena sprt`` take cutechess's keys
  (:func:`adjudication_tokens`);
* ``arena run`` without a tournament file takes cutechess's whole command line, single
  dash and ``key=value`` groups (``-engine cmd=./a name=a -each tc=10+0.1 -rounds 50``):
  :func:`split_command_line` picks those options out of the arguments, and
  :func:`tournament_mapping` turns them into the mapping a tournament file would give,
  which :func:`arena.config.parse_config` checks as it checks every file (so the meanings,
  the ranges and the results folder's hash are the file's).  :func:`explain` puts the
  option's name on a checker's message about the key it became.

Adjudication (``-draw`` / ``-resign`` in cutechess, ``--draw`` / ``--resign`` here):

=====================  ==================  ==============================================
cutechess / fastchess  Morris Arena         meaning (the same in both)
=====================  ==================  ==============================================
draw ``movenumber=N``  draw ``after_turn``  from move number N on (plies / 2)
draw ``movecount=M``   draw ``turns``       both scores within ±S for M moves each
draw ``score=S``       draw ``score``       in the engine's own units (cutechess: cp)
resign ``movecount``   resign ``turns``     a side at -S or below for M of its moves
resign ``score``       resign ``score``
resign ``twosided``    resign ``twosided``  the winner's score must agree
=====================  ==================  ==============================================
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from arena.errors import ConfigError
from arena.hints import did_you_mean

#: per rule, cutechess's and fastchess's key -> this project's key
ADJUDICATION_KEYS: dict[str, dict[str, str]] = {
    "draw": {"movenumber": "after_turn", "movecount": "turns", "score": "score"},
    "resign": {"movecount": "turns", "score": "score", "twosided": "twosided"},
}


def adjudication_tokens(rule: str, tokens: Mapping[str, Any]) -> dict[str, Any]:
    """``tokens`` of a ``draw`` or ``resign`` rule with cutechess's keys translated to this
    project's (its own keys, and keys it does not know, are left as they are: the rule's
    parser names what is wrong)."""
    names = ADJUDICATION_KEYS.get(rule, {})
    out: dict[str, Any] = {}
    for key, value in tokens.items():
        out[names.get(key, key)] = value
    return out


# -- cutechess-cli's command line ---------------------------------------------------------

#: every option ``arena run`` understands in cutechess's spelling, and what it becomes
#: (the tournament file's key); the same rows as docs/TOURNAMENTS.md's table and
#: ``arena run --help``
OPTIONS: dict[str, str] = {
    "-engine": "bots: [{engine: ...}] (tc st nodes plies: time:, restart: restart:)",
    "-each": "the same keys for every -engine (an engine's own win)",
    "-tournament": "format: round-robin (roundrobin), gauntlet, knockout, swiss",
    "-rounds": "format: {rounds: N}",
    "-games": "games_per_pairing: N (even: colour-swapped pairs)",
    "-repeat": "(always: both games of a pair play the same opening)",
    "-seeds": "format: {seeds: [the first N engines]}",
    "-concurrency": "workers: N",
    "-openings": "openings: {file, format: pgn|epd|text, order, plies}",
    "-draw": "adjudicate: {draw: {after_turn, turns, score}}",
    "-resign": "adjudicate: {resign: {turns, score, twosided}}",
    "-maxmoves": "adjudicate: {max_turns: N}",
    "-tb": "adjudicate: {tablebase: DIR} (Morris tables)",
    "-pgnout": "pgn_out: FILE",
    "-event": "name: NAME (and the results folder, results/NAME)",
    "-srand": "seed: N",
    "-variant": "variants: [NAME] (repeatable)",
    "-recover": "(always: a crashed engine loses its game, the run goes on)",
    "-resume": "(always: the same command again resumes)",
    "-debug": "-vv (the log on stderr)",
    "-sprt": "arena sprt A B --elo0 --elo1 --alpha --beta (two engines)",
}

#: cutechess's and fastchess's options without a Morris meaning, and why
NO_MEANING: dict[str, str] = {
    "-pgnin": "openings come from -openings file=BOOK.pgn format=pgn",
    "-epdin": "openings come from -openings file=BOOK format=epd",
    "-epdout": "no EPD of the final positions is written (the records keep every position)",
    "-ponder": "the referee plays no pondering (an engine's 'bestmove M ponder P' is "
               "accepted, the ponder move ignored)",
    "-tbpieces": "Morris tables cover whole endgames; there is no piece limit to set",
    "-tbignore50": "the no-capture rule is honoured exactly, never ignored",
    "-tbadjudicate": "a table's value ends the game, win, loss or draw",
    "-noswap": "games are always played in colour-swapped pairs",
    "-reverse": "games are always played in colour-swapped pairs",
    "-wait": "games start as soon as a worker is free",
    "-site": "the PGN's Site is not set from the command line",
    "-config": "fastchess's JSON configuration has no reader here: write a tournament file "
               "(docs/TOURNAMENTS.md) and run 'arena run FILE.yaml'",
    "-ratinginterval": "the progress line shows the standings live",
    "-outcomeinterval": "the progress line shows the standings live",
    "-scoreinterval": "the progress line shows the standings live",
    "-autosaveinterval": "every game is saved as it ends",
    "-report": "the ratings and a report are written at the end (standings.csv, report/)",
    "-output": "the output is Morris Arena's own",
    "-log": "the log is the results folder's arena.log",
    "-use-affinity": "the sandbox places the engines",
    "-affinity": "the sandbox places the engines",
    "-quick": "write the options out",
    "-crc32": "no CRC checks",
    "-version": "'arena --version'",
}

#: cutechess's chess variants (``-variant``): no Morris meaning (``standard`` is Nine
#: Men's Morris here, :data:`arena.variants.ALIASES`)
CHESS_VARIANTS = frozenset((
    "fischerandom", "chess960", "frc", "3check", "5check", "ai-wok", "almost", "amazon",
    "andernach", "antiandernach", "atomic", "berolina", "capablanca", "caparandom",
    "changeover", "checkless", "chessgi", "codrus", "crazyhouse", "embassy", "extinction",
    "giveaway", "gothic", "gryphon", "horde", "janus", "jesonmor", "kinglet",
    "kingofthehill", "knightmate", "loop", "losalamos", "losers", "makruk", "racingkings",
    "seirawan", "shatranj", "shogi", "suicide", "threekings", "xiangqi"))

#: an engine's keys (``-engine`` / ``-each``) that go to the engine string as they are
_ENGINE_WORDS = ("cmd", "name", "dir", "arg", "proto", "legal_moves", "variants")
#: an engine's keys that make the tournament's time control
_TIME_WORDS = ("tc", "st", "nodes", "plies", "depth", "timemargin")
#: an engine's cutechess keys without a Morris meaning, and why
_ENGINE_NO_MEANING: dict[str, str] = {
    "conf": "cutechess's engines.json has no reader here: give cmd= (and name=, dir=)",
    "book": "openings are the tournament's: -openings file=BOOK",
    "bookdepth": "openings are the tournament's: -openings file=BOOK plies=N",
    "whitepov": "an engine's score is always from its own side here",
    "trust": "a mate score ends a game only through -resign",
    "initstr": "the protocol sends no free text; use option.NAME=VALUE",
    "stderr": "an engine's stderr is kept with each game record",
    "ponder": "the referee plays no pondering (an engine's 'bestmove M ponder P' is "
              "accepted, the ponder move ignored)",
    "tscale": "every move is charged as docs/TOURNAMENTS.md, time: says",
}
_RESTART = {"on": "per-game", "auto": "per-game", "off": "per-pairing"}
_TOURNAMENTS = {"round-robin": "round-robin", "roundrobin": "round-robin",
                "gauntlet": "gauntlet", "knockout": "knockout", "swiss": "swiss",
                "match": "match"}
_BOOK_FORMATS = {"pgn": "pgn", "epd": "epd", "txt": "text", "text": "text"}
_SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")
_OPENING_KEYS = ("file", "format", "order", "plies", "start", "policy")
_OPTION_RE = re.compile(r"^-[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*$")
_NUMBER_RE = re.compile(r"^-\d")
#: single-dash words that are the command's own (click's): help and -v/-vv
_OWN_WORDS = frozenset(("-help",))


def is_cutechess_option(arg: str) -> bool:
    """True for a single-dash word of two letters or more (``-engine``, ``-each``), the
    form of every cutechess and fastchess option, but not ``-help`` nor ``-vv``."""
    return (bool(_OPTION_RE.match(arg)) and len(arg) > 2 and arg not in _OWN_WORDS
            and not re.match(r"^-v+$", arg) and not re.match(r"^-[a-z]\d", arg))


def split_command_line(args: Sequence[str]) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """``args`` split into cutechess's options, each with its values (the words after it up
    to the next word that begins with ``-``, a negative number excepted), and the rest (the
    command's own options and arguments, in order)."""
    groups: list[tuple[str, list[str]]] = []
    rest: list[str] = []
    current: Optional[list[str]] = None
    for k, arg in enumerate(args):
        if arg == "--":
            rest.extend(args[k:])
            break
        if is_cutechess_option(arg):
            current = []
            groups.append((arg, current))
        elif current is not None and (not arg.startswith("-") or _NUMBER_RE.match(arg)):
            current.append(arg)
        else:
            current = None
            rest.append(arg)
    return groups, rest


@dataclass
class Translation:
    """A cutechess command line as a tournament file's mapping (:attr:`data`), with each
    key path's option for messages (:attr:`labels`) and the verbosity ``-debug`` asks."""

    data: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    verbose: int = 0
    #: ``-sprt``'s words (``elo0``...): the run is ``arena sprt`` (:func:`sprt_arguments`)
    sprt: Optional[dict[str, str]] = None


def tournament_mapping(groups: Sequence[tuple[str, Sequence[str]]], *,
                       default_name: str = "cutechess") -> Translation:
    """The tournament file's mapping that cutechess's options (:func:`split_command_line`)
    mean, for :func:`arena.config.parse_config`: key by key, see :data:`OPTIONS`.  The name
    (and so the results folder, ``results/NAME``) is ``-event``'s, else ``default_name``.

    Values are converted (whole numbers, true/false) but not range-checked: the checker
    does that, as for a file.

    :raises ConfigError: an unknown option, one without a Morris meaning, a value that is
        not of its kind, or engines with different time controls; the path is the option.
    """
    out = Translation()
    data = out.data
    engines: list[tuple[str, list[str]]] = []
    each: list[str] = []
    seen: set[str] = set()
    repeat = False
    for option, values in groups:
        if option in NO_MEANING:
            raise ConfigError(f"no Morris meaning: {NO_MEANING[option]}", option)
        if option not in OPTIONS:
            hint = did_you_mean(option, list(OPTIONS))
            raise ConfigError(f"unknown option ({hint}the cutechess-cli and fastchess options "
                              f"understood: {', '.join(OPTIONS)}; see arena run --help)",
                              option)
        if option in seen and option not in ("-engine", "-each", "-variant"):
            raise ConfigError("given twice", option)
        seen.add(option)
        if option == "-engine":
            engines.append((f"-engine #{len(engines) + 1}", list(values)))
        elif option == "-each":
            each.extend(values)
        elif option in ("-recover", "-resume", "-repeat", "-debug"):
            if option == "-repeat" and values and values != ["2"]:
                raise ConfigError(f"each opening is played by both games of a pair, twice: "
                                  f"-repeat {values[0]} cannot be kept (-repeat or -repeat 2)",
                                  option)
            if option != "-repeat" and values:
                raise ConfigError(f"takes no value, got {' '.join(values)[:40]!r}", option)
            repeat = repeat or option == "-repeat"
            out.verbose = 2 if option == "-debug" else out.verbose
        elif option == "-sprt":
            out.sprt = _pairs(option, values, _SPRT_KEYS)
        elif option == "-variant":
            data.setdefault("variants", []).append(_variant(_one(option, values)))
            out.labels["variants"] = option
        else:
            _SIMPLE[option](data, option, values)
    if not engines:
        raise ConfigError("no engine: give two or more, e.g. -engine cmd=./mybot name=a "
                          "-engine cmd=./other name=b", "-engine")
    data.setdefault("name", default_name)
    _engines(out, engines, _words("-each", each))
    _games(data, repeat)
    _seeds(out, seeds=data.pop("_seeds", None))
    for key, label in _LABELS.items():
        if key.partition(".")[0] in data:
            out.labels.setdefault(key, label)
    out.data = {key: data[key] for key in _ORDER if key in data}
    return out


def explain(message: str, labels: Mapping[str, str]) -> str:
    """A checker's message about a key path (``config: games_per_pairing: expected ...``)
    with the option it came from in front (``-games (games_per_pairing): expected ...``)."""
    text = message[len("config: "):] if message.startswith("config: ") else message
    path, sep, rest = text.partition(": ")
    if not sep:
        return text
    best = max((k for k in labels if path == k or path.startswith((f"{k}.", f"{k}["))),
               key=len, default=None)
    if best is None:
        return text
    return f"{labels[best]} ({path}): {rest}"


def sprt_arguments(translation: Translation) -> list[str]:
    """``arena sprt``'s arguments for a cutechess command line with ``-sprt`` (the two
    engines, the test's bounds, and the tournament's settings that a test has: time,
    openings, adjudication, workers, seed, PGN, variants); ``-games`` x ``-rounds`` is the
    most games (``--max-pairs``: half of them), ``results/NAME`` the test's folder.

    :raises ConfigError: not two engines, or a setting a test cannot keep.
    """
    data, sprt = translation.data, translation.sprt or {}
    bots = data["bots"]
    if len(bots) != 2:
        raise ConfigError(f"a test of two engines, got {len(bots)}", "-sprt")
    args = [bots[0]["engine"], bots[1]["engine"]]
    for key in ("elo0", "elo1", "alpha", "beta", "model"):
        if key in sprt:
            value = sprt[key]
            if key == "model" and value == "bayesian":
                raise ConfigError("model=bayesian: no Morris meaning: logistic or normalized",
                                  "-sprt")
            args += [f"--{key}", value]
    fmt = data.get("format", {})
    if fmt.get("type", "round-robin") not in ("round-robin", "match") or "seeds" in fmt:
        raise ConfigError(f"a test of two engines is a match: -tournament {fmt.get('type')} "
                          f"cannot be kept", "-sprt")
    if "rounds" in fmt or "games_per_pairing" in data:
        games = fmt.get("rounds", 1) * data.get("games_per_pairing", 2)
        args += ["--max-pairs", str(max(1, (games + 1) // 2))]
    time = data.get("time", {})
    for key, flag in (("clock", "--clock"), ("movetime", "--movetime"), ("nodes", "--nodes"),
                      ("depth", "--depth"), ("margin", "--margin")):
        if key in time:
            args += [flag, str(time[key])]
    book = data.get("openings")
    if book is not None:
        fmt_given = book.get("format")
        if "plies" in book or (fmt_given is not None and fmt_given
                               != ("pgn" if book["file"].lower().endswith(".pgn") else "text")):
            raise ConfigError("with -sprt, a book is read whole, and as its name says (a "
                              ".pgn file as PGN): plies= and format= cannot be kept",
                              "-openings")
        args += ["--book", book["file"], "--book-order", book.get("order", "sequential")]
    if "restart" in data:
        args += ["--restart-bots", data["restart"]]
    adjudicate = data.get("adjudicate", {})
    for rule in ("draw", "resign"):
        if rule in adjudicate:
            args += [f"--{rule}", " ".join(f"{k}={str(v).lower()}"
                                           for k, v in adjudicate[rule].items())]
    if "max_turns" in adjudicate:
        args += ["--max-turns", str(adjudicate["max_turns"])]
    if "tablebase" in adjudicate:
        args += [f"--tablebase={adjudicate['tablebase']}"]
    for key, flag in (("workers", "-j"), ("seed", "--seed"), ("pgn_out", "--pgn-out")):
        if key in data:
            args += [flag, str(data[key])]
    for variant in data.get("variants", []):
        args += ["--variant", variant]
    return args + ["--output", f"results/{data['name']}"]


# -- the options, one by one ---------------------------------------------------------------

#: the tournament file's keys in its documented order (docs/TOURNAMENTS.md)
_ORDER = ("name", "bots", "variants", "format", "games_per_pairing", "openings", "time",
          "workers", "seed", "restart", "adjudicate", "pgn_out")
_LABELS = {"name": "-event", "format": "-tournament", "format.rounds": "-rounds",
           "format.seeds": "-seeds", "games_per_pairing": "-games", "workers": "-concurrency",
           "openings": "-openings", "adjudicate.draw": "-draw", "adjudicate.resign": "-resign",
           "adjudicate.max_turns": "-maxmoves", "adjudicate.tablebase": "-tb",
           "pgn_out": "-pgnout", "seed": "-srand", "output": "the results folder"}


def _one(option: str, values: Sequence[str]) -> str:
    if len(values) != 1:
        raise ConfigError(f"expected one value, got {len(values)}"
                          + (f": {' '.join(values)[:60]!r}" if values else ""), option)
    return values[0]


def _whole(text: str, where: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ConfigError(f"expected a whole number, got {text[:40]!r}", where) from None


def _flag(text: str, where: str) -> bool:
    low = text.strip().lower()
    if low not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
        raise ConfigError(f"expected true or false, got {text[:40]!r}", where)
    return low in ("true", "on", "yes", "1")


def _pairs(option: str, values: Sequence[str], keys: Sequence[str]) -> dict[str, str]:
    """``key=value`` words of ``option``, each key one of ``keys``, each once."""
    out: dict[str, str] = {}
    for word in values:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise ConfigError(f"expected KEY=VALUE words ({', '.join(keys)}), got "
                              f"{word[:40]!r}", option)
        if key not in keys:
            raise ConfigError(f"unknown key {key[:40]!r} ({did_you_mean(key, keys)}expected "
                              f"one of: {', '.join(keys)})", option)
        if key in out:
            raise ConfigError(f"{key} is given twice", option)
        out[key] = value
    return out


def _name(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    data["name"] = _one(option, values)


def _tournament(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    value = _one(option, values)
    if value == "pyramid":
        raise ConfigError("no Morris meaning: a pyramid has no counterpart here (round-robin, "
                          "gauntlet, knockout or swiss)", option)
    data["format"] = {**data.get("format", {}), "type": _TOURNAMENTS.get(value, value)}


def _rounds(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    data["format"] = {"type": "round-robin", **data.get("format", {}),
                      "rounds": _whole(_one(option, values), option)}


def _number_of(key: str) -> Any:
    def handle(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
        data[key] = _whole(_one(option, values), option)
    return handle


def _openings(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    given = _pairs(option, values, _OPENING_KEYS)
    for key, why in (("start", "the book is used from its first opening (cut the file)"),
                     ("policy", "both games of a pair always share an opening")):
        if key in given:
            raise ConfigError(f"{key}=: no Morris meaning: {why}", option)
    if "file" not in given:
        raise ConfigError("expected file=BOOK (and format=pgn|epd|txt, order=random|"
                          "sequential, plies=N)", option)
    book: dict[str, Any] = {"file": given["file"]}
    if "format" in given:
        book["format"] = _BOOK_FORMATS.get(given["format"].lower(), given["format"])
    if "order" in given:
        book["order"] = given["order"]
    if "plies" in given:
        book["plies"] = _whole(given["plies"], f"{option} plies")
    data["openings"] = book


def _rule(rule: str) -> Any:
    def handle(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
        names = ADJUDICATION_KEYS[rule]
        given = _pairs(option, values, tuple(names) + tuple(v for v in names.values()
                                                            if v not in names))
        tokens: dict[str, Any] = {}
        for key, value in given.items():
            tokens[key] = (_flag(value, f"{option} {key}") if names.get(key) == "twosided"
                           else _whole(value, f"{option} {key}"))
        data.setdefault("adjudicate", {})[rule] = adjudication_tokens(rule, tokens)
    return handle


def _maxmoves(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    data.setdefault("adjudicate", {})["max_turns"] = _whole(_one(option, values), option)


def _tablebase(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    path = _one(option, values)
    if os.path.isdir(path) and any(name.lower().endswith((".rtbw", ".rtbz"))
                                   for name in os.listdir(path)):
        raise ConfigError(f"no Morris meaning: {path} holds Syzygy tables, which are chess "
                          f"tables; Morris endgame tables are built by 'arena tablebase "
                          f"build' (docs/TABLEBASES.md)", option)
    data.setdefault("adjudicate", {})["tablebase"] = path


def _pgnout(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    extra = [v for v in values if v in ("min", "fi") or ("=" in v and
                                                        not v.startswith("file="))]
    files = [v[len("file="):] if v.startswith("file=") else v for v in values
             if v not in extra]
    if extra:
        raise ConfigError(f"{extra[0][:40]}: no Morris meaning: the PGN is always written in "
                          f"full, with each move's score, depth and time", option)
    data["pgn_out"] = _one(option, files)


def _seeds_count(data: dict[str, Any], option: str, values: Sequence[str]) -> None:
    data["_seeds"] = _whole(_one(option, values), option)


def _variant(value: str) -> str:
    if value.lower() in CHESS_VARIANTS:
        raise ConfigError(f"{value[:40]}: no Morris meaning: a chess variant; Morris variants "
                          f"are listed by 'arena variants' (nine-mens-morris, lasker-morris, "
                          f"...)", "-variant")
    return value


_SIMPLE = {"-event": _name, "-tournament": _tournament, "-rounds": _rounds,
           "-games": _number_of("games_per_pairing"),
           "-concurrency": _number_of("workers"), "-srand": _number_of("seed"),
           "-openings": _openings, "-draw": _rule("draw"), "-resign": _rule("resign"),
           "-maxmoves": _maxmoves, "-tb": _tablebase, "-pgnout": _pgnout,
           "-seeds": _seeds_count}


def _games(data: dict[str, Any], repeat: bool) -> None:
    """cutechess's ``-games 1 -rounds 2N -repeat`` (one game a round, each opening played
    twice) is ``-games 2 -rounds N`` here: the same games, in colour-swapped pairs."""
    rounds = data.get("format", {}).get("rounds")
    if (repeat and data.get("games_per_pairing") == 1 and isinstance(rounds, int)
            and rounds >= 2 and rounds % 2 == 0):
        data["games_per_pairing"] = 2
        data["format"]["rounds"] = rounds // 2


# -- engines ------------------------------------------------------------------------------


def _words(where: str, values: Sequence[str]) -> list[tuple[str, str]]:
    """An engine's ``key=value`` words, fastchess's ``args="..."`` split into ``arg``\\ s;
    a key without a Morris meaning is refused."""
    out: list[tuple[str, str]] = []
    for word in values:
        key, eq, value = word.partition("=")
        if key in _ENGINE_NO_MEANING:
            raise ConfigError(f"{key}: no Morris meaning: {_ENGINE_NO_MEANING[key]}", where)
        if not eq or not key:
            raise ConfigError(f"expected KEY=VALUE words, got {word[:40]!r} (quote a value "
                              f"with spaces: cmd='./mybot --fast')", where)
        if key == "args":
            try:
                out.extend(("arg", a) for a in shlex.split(value))
            except ValueError as e:
                raise ConfigError(f"args: cannot split it as a shell would: {e}",
                                  where) from None
            continue
        known = (*_ENGINE_WORDS, *_TIME_WORDS, "restart")
        if key not in known and not key.startswith("option."):
            raise ConfigError(f"unknown key {key[:40]!r} ({did_you_mean(key, known)}expected "
                              f"one of: {', '.join(known)}, option.NAME)", where)
        out.append((key, value))
    return out


def _engines(out: Translation, engines: Sequence[tuple[str, list[str]]],
             each: list[tuple[str, str]]) -> None:
    """``bots:`` (one engine string each), and ``time:`` and ``restart:``, which every
    engine must agree on (they are the tournament's here)."""
    bots: list[dict[str, str]] = []
    times: list[tuple[str, dict[str, Any]]] = []
    restarts: list[tuple[str, str]] = []
    for k, (label, values) in enumerate(engines):
        own = _words(label, values)
        single = {key for key, _ in own if key != "arg"}
        words = [(key, v) for key, v in each if key == "arg" or key not in single] + own
        text: list[str] = []
        time: dict[str, Any] = {}
        restart = "per-game"
        for key, value in words:
            if key in _TIME_WORDS:
                _time_word(time, key, value, label)
            elif key == "restart":
                if value not in _RESTART:
                    raise ConfigError(f"restart: expected on, off or auto, got "
                                      f"{value[:20]!r}", label)
                restart = _RESTART[value]
            else:
                text.append(f"{key}={shlex.quote(value)}" if value else f"{key}=''")
        if time.pop("_inf", False) and not {"clock", "movetime", "nodes", "depth"} & set(time):
            time["clock"] = "inf"  # tc=inf alone: the checker says why no limit is refused
        if not any(key == "cmd" for key, _ in words):
            raise ConfigError("cmd is required: the command that starts the engine "
                              "(cmd=./mybot, or cmd='{python} bot.py' dir=bots/mine)", label)
        text.sort(key=lambda w: not w.startswith("cmd="))  # cmd first: an engine string
        bots.append({"engine": " ".join(text)})
        times.append((label, time))
        restarts.append((label, restart))
        out.labels[f"bots[{k}]"] = label
    for (label, time), (_, restart) in zip(times[1:], restarts[1:]):
        if time != times[0][1]:
            raise ConfigError(f"its time control ({_shown_time(time)}) is not the first "
                              f"engine's ({_shown_time(times[0][1])}): every engine plays "
                              f"under the tournament's one time control here (give it with "
                              f"-each)", label)
        if restart != restarts[0][1]:
            raise ConfigError("its restart is not the first engine's: a tournament restarts "
                              "every engine alike here (give it with -each)", label)
    out.data["bots"] = bots
    if times[0][1]:
        out.data["time"] = times[0][1]
        out.labels["time"] = "tc/st/nodes/plies (-each)"
    if restarts[0][1] != "per-game":
        out.data["restart"] = restarts[0][1]
        out.labels["restart"] = "restart=off (-each)"


def _time_word(time: dict[str, Any], key: str, value: str, where: str) -> None:
    """One of an engine's time words into ``time:`` (seconds become ms where the file has
    ms)."""
    if key == "tc":
        if value.strip().lower() in ("inf", "infinite"):  # no clock: nodes or depth alone
            time["_inf"] = True
            return
        # a base alone (tc=60) is a 60 s clock, no increment, as in cutechess
        time["clock"] = value if any(c in value for c in "+/:") else f"{value.strip()}+0"
    elif key == "st":
        try:
            seconds = float(value)
        except ValueError:
            raise ConfigError(f"st: expected seconds per move, got {value[:20]!r}",
                              where) from None
        time["movetime"] = max(1, round(seconds * 1000))
    elif key == "timemargin":
        time["margin"] = _whole(value, f"{where} timemargin")
    else:  # nodes; plies (cutechess) or depth (fastchess): the search depth
        time["nodes" if key == "nodes" else "depth"] = _whole(value, f"{where} {key}")


def _shown_time(time: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(time.items())) or "none"


def _seeds(out: Translation, seeds: Optional[int]) -> None:
    """``-seeds N``: the first N engines as ``format.seeds``; a gauntlet's seed is the
    first engine when ``-seeds`` is not given (cutechess's gauntlet: the first engine
    against all the others)."""
    data = out.data
    fmt = data.get("format", {})
    if seeds is None and fmt.get("type") != "gauntlet":
        return
    count = 1 if seeds is None else seeds
    if not 1 <= count <= len(data["bots"]):
        raise ConfigError(f"expected 1 to {len(data['bots'])} (the engines), got {count}",
                          "-seeds")
    from arena.manifest import parse_engine

    names = []
    for k, bot in enumerate(data["bots"][:count]):
        try:
            names.append(parse_engine(bot["engine"]).name)
        except ConfigError as e:
            raise ConfigError(str(e), out.labels[f"bots[{k}]"]) from None
    data["format"] = {"type": fmt.get("type", "round-robin"), **fmt, "seeds": names}


__all__ = ["ADJUDICATION_KEYS", "CHESS_VARIANTS", "NO_MEANING", "OPTIONS", "Translation",
           "adjudication_tokens", "explain", "is_cutechess_option", "split_command_line",
           "sprt_arguments", "tournament_mapping"]
