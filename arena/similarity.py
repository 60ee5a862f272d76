"""How alike participants' bots are: identical files and near-identical source, pair by pair.

A report in the manner of MOSS and JPlag for a class competition: folders in, records out.
:func:`compare` takes bot folders by name and returns one :class:`Pair` per two bots, most
similar first; :func:`flagged` keeps those at or above :data:`SUSPECT`.  The folders are
untrusted uploads: nothing in them is executed, no symbolic link is followed (links are
skipped and listed, and every file and folder is opened relative to its parent's descriptor
with ``O_NOFOLLOW``, so a link swapped in later is not followed either), only regular files are
read, and sizes and counts are capped (:data:`MAX_FILES`, :data:`MAX_HASH_BYTES`,
:data:`MAX_SOURCE_BYTES`, :data:`MAX_BOT_SOURCE_BYTES`, :data:`MAX_DEPTH`).

Two measures, combined into one score between 0 and 1:

**Identical files.**  Every file is hashed (SHA-256).  A file shorter than
:data:`MIN_IDENTICAL_BYTES` is not evidence (a one-line ``.gitignore``) and a file that is
byte-identical to one in a *template* folder (the example a class started from) is the
template's, not the student's; the rest are listed pair by pair (``identical_files``).  The
identical share of a pair is the larger of the two bots' shares of their own bytes (those
files, template and tiny files left out) that the other bot has too: a bot copied whole into
another scores 1 even if the other added files.

**Near-identical source** (winnowing, Schleimer, Wilkerson and Aiken, *Winnowing: local
algorithms for document fingerprinting*, SIGMOD 2003, the algorithm of MOSS):

1. A file is source if Pygments has a lexer for its name (or for the interpreter of its
   ``#!`` line) that is not one for data, configuration or markup (YAML, TOML, JSON, INI,
   Markdown, HTML, Makefiles, plain text ...): Python, C, C++, Java, JavaScript, Rust, Go,
   C#, Kotlin, Lua and every other language Pygments knows.  Binary files (a NUL byte) and
   files over :data:`MAX_SOURCE_BYTES` are hashed but not read as source.
2. Its tokens are normalised, so that renaming and reformatting change nothing: comments,
   docstrings and whitespace are dropped; every identifier (variable, function, class,
   attribute, builtin) becomes ``N``; a string literal (all its parts) becomes ``S``; a
   number ``0``; keywords, operators and punctuation stay as they are.
3. Every run of :data:`K` consecutive tokens (a *k-gram*) is hashed (Karp-Rabin over
   BLAKE2b token hashes: the same on every run and machine), and of every :data:`WINDOW`
   consecutive k-gram hashes the smallest is kept.  The kept hashes are the file's
   fingerprints; a bot's are those of all its source files.  Winnowing guarantees that a
   match of at least ``WINDOW + K - 1`` tokens is found and that nothing shorter than ``K``
   tokens is: :data:`K` is the noise threshold (short idioms such as ``for (i = 0; i < n;
   i++)`` are not evidence), ``WINDOW + K - 1`` the guarantee threshold.
4. Fingerprints of the template folders' source are removed from every bot (MOSS's base
   file), and so are those found in more than ``max_common`` bots (MOSS's ``-m``, 10 by
   default): code every second student has is the course's, not a copy.
5. The code score of a pair is the share of the smaller bot's fingerprints that the other
   has too (``shared / min(|A|, |B|)``, JPlag's maximum similarity), with the smaller size
   counted as at least :data:`MIN_FINGERPRINTS` so that a ten-line bot is not a copy of
   every bot that uses the same three idioms.

A pair's ``score`` is the larger of its code score and its identical share; at
:data:`SUSPECT` (0.8) or above it is flagged.  Measured on this repository (tests
``tests/test_similarity.py``): a copy under another name scores 1.0, a copy with every
identifier renamed, comments rewritten and the layout changed scores 1.0 as well, and the
bots shipped in ``bots/`` and ``docs/examples/`` score at most 0.45 against each other
(``docs/examples/first`` and ``minimal``, which share their protocol loop; ``greedy`` and
``random`` 0.25, the kit's boilerplate).  A bot under about :data:`MIN_FINGERPRINTS`
fingerprints (15 lines of code) cannot reach the threshold by its code alone: a renamed copy
of so little is not told apart from shared idioms, though a byte-identical one is.  A score
is a reason to read the two bots side by side, not a verdict: the ``reason`` text says where
to look.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from collections import Counter
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

#: a pair scoring at least this is flagged (:func:`flagged`)
SUSPECT = 0.8
#: tokens per k-gram: the noise threshold (no match shorter than this counts)
K = 12
#: k-gram hashes per window: every match of ``WINDOW + K - 1`` tokens is found
WINDOW = 8
#: the smaller bot's fingerprints are counted as at least this many in the code score
MIN_FINGERPRINTS = 20
#: a fingerprint in more bots than this is ignored (MOSS's -m); None keeps all
MAX_COMMON = 10
#: identical files shorter than this are not evidence
MIN_IDENTICAL_BYTES = 64
#: files larger than this are skipped (not hashed)
MAX_HASH_BYTES = 32 * 1024 * 1024
#: files larger than this are hashed but not read as source
MAX_SOURCE_BYTES = 256 * 1024
#: at most this much source is read per bot (the rest is hashed only)
MAX_BOT_SOURCE_BYTES = 4 * 1024 * 1024
#: at most this many files and folders per bot; the rest are not read
MAX_FILES = 2000
#: folders nested deeper than this are skipped
MAX_DEPTH = 24
#: folders never read: version control, caches, installed dependencies, build output
IGNORED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "__MACOSX", "node_modules",
                          ".venv", "venv", "target", ".mypy_cache", ".pytest_cache", ".idea",
                          ".vscode"})
#: files never read (macOS Finder leftovers)
IGNORED_FILES = frozenset({".DS_Store", "Thumbs.db"})
#: Pygments lexer modules of data, configuration and markup: such files are not source
_NOT_SOURCE = frozenset({"data", "configs", "special", "markup", "html", "make", "diff",
                         "textfmts", "css", "templates"})
#: file names Pygments mistakes for source (go.mod is not Modula-2)
_NOT_SOURCE_NAMES = frozenset({"go.mod", "go.sum"})
#: interpreters of ``#!`` lines that are not the name of their language's lexer
_INTERPRETERS = {"node": "javascript", "nodejs": "javascript", "deno": "javascript"}

_MOD = (1 << 61) - 1  # the Karp-Rabin modulus, a Mersenne prime
_BASE = 1_000_003


class SimilarityError(ArenaError):
    """A bot folder (or template) cannot be read, or fewer than two bots were given."""


@dataclass(frozen=True)
class ScannedFile:
    """One regular file of a bot folder.

    ``path`` is relative to the folder, with ``/``; ``language`` is the Pygments lexer's
    name for source files and None otherwise; ``fingerprints`` are the winnowed k-gram
    hashes of its normalised tokens (empty for files that are not source).
    """

    path: str
    size: int
    sha256: str
    language: str | None
    fingerprints: frozenset[int]


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found in one folder: its files and what it skipped, with why
    (``("link.py", "a symbolic link")``).  A scan depends on the folder only, so a server
    may keep one per upload and pass it to :func:`compare_scans`."""

    root: str
    files: tuple[ScannedFile, ...]
    skipped: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Pair:
    """How alike two bots are; ``a`` sorts before ``b``.

    ``score`` (0 to 1) is the larger of ``code_score`` (the share of the smaller bot's source
    fingerprints the other has, see the module's text) and ``identical_share`` (the share of
    a bot's bytes in files the other has byte for byte).  ``identical_files`` pairs the paths
    (in ``a``, in ``b``) of files with the same SHA-256; ``shared`` counts the fingerprints in
    common; ``reason`` says in a line what was found and where.
    """

    a: str
    b: str
    score: float
    identical_files: tuple[tuple[str, str], ...]
    reason: str
    code_score: float = 0.0
    identical_share: float = 0.0
    shared: int = 0

    @property
    def suspect(self) -> bool:
        """Whether the score reaches :data:`SUSPECT`."""
        return self.score >= SUSPECT

    def as_dict(self) -> dict[str, Any]:
        """The pair as JSON-ready data (lists for tuples, scores rounded to 4 places)."""
        out = dataclasses.asdict(self)
        out["identical_files"] = [list(p) for p in self.identical_files]
        for key in ("score", "code_score", "identical_share"):
            out[key] = round(out[key], 4)
        out["suspect"] = self.suspect
        return out


def compare(bots: Mapping[str, Path | str], templates: Iterable[Path | str] = (), *,
            max_common: int | None = MAX_COMMON) -> list[Pair]:
    """Every pair of ``bots`` (name to folder), most similar first.

    ``templates`` are folders whose files and source are the course's (an example the
    students started from): files identical to theirs and their code's fingerprints are not
    evidence.  ``max_common``: a fingerprint in more bots than this is ignored (None: never).

    :raises SimilarityError: fewer than two bots, or a folder that is not a readable folder.
    """
    if len(bots) < 2:
        raise SimilarityError(f"need at least two bots to compare, got {len(bots)}")
    scans = {name: scan(folder) for name, folder in bots.items()}
    return compare_scans(scans, [scan(t) for t in templates], max_common=max_common)


def flagged(pairs: Iterable[Pair], threshold: float = SUSPECT) -> list[Pair]:
    """The pairs scoring at least ``threshold``, in the order given."""
    return [p for p in pairs if p.score >= threshold]


def compare_scans(scans: Mapping[str, Scan], templates: Sequence[Scan] = (), *,
                  max_common: int | None = MAX_COMMON) -> list[Pair]:
    """:func:`compare` over folders already scanned (:func:`scan`)."""
    base_hashes = {f.sha256 for t in templates for f in t.files}
    base_prints: set[int] = set()
    for t in templates:
        for f in t.files:
            base_prints |= f.fingerprints
    bots = {name: _Evidence.of(s, base_hashes, base_prints) for name, s in scans.items()}
    if max_common is not None:
        counts = Counter(h for e in bots.values() for h in e.prints)
        common = {h for h, n in counts.items() if n > max_common}
        if common:
            bots = {name: e.without(common) for name, e in bots.items()}
    names = sorted(bots)
    pairs = [_pair(a, bots[a], b, bots[b]) for i, a in enumerate(names) for b in names[i + 1:]]
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs


def scan(folder: Path | str) -> Scan:
    """Hash every regular file of ``folder`` and fingerprint its source (see the module's
    text); symbolic links, special files and ignored folders are skipped, never followed.

    :raises SimilarityError: ``folder`` is not a folder that can be opened.
    """
    root = os.fspath(folder)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise SimilarityError(f"{root}: not a readable folder ({e.strerror})") from None
    files: list[ScannedFile] = []
    skipped: list[tuple[str, str]] = []
    budget = [MAX_BOT_SOURCE_BYTES]
    walk = _walk(fd, "", 0, skipped, [MAX_FILES])
    try:
        for rel, file_fd in walk:
            scanned = _read(file_fd, rel, skipped, budget)
            if scanned is not None:
                files.append(scanned)
    finally:
        walk.close()  # closes the folders it holds open
        os.close(fd)
    return Scan(root, tuple(sorted(files, key=lambda f: f.path)), tuple(skipped))


def normalise(text: str, lexer: Any) -> list[str]:
    """The tokens of ``text`` (by a Pygments ``lexer``) that survive renaming and
    reformatting: no comments, docstrings or whitespace; ``N`` for every identifier, ``S``
    for a string literal, ``0`` for a number."""
    from pygments.token import Comment, Literal, Name, Number, String, Text, Whitespace

    out: list[str] = []
    for ttype, value in lexer.get_tokens(text):
        if ttype in Comment or ttype in String.Doc or ttype in Whitespace or (
                ttype in Text and not value.strip()):
            continue
        if ttype in Name:
            word = "N"
        elif ttype in String:
            if out and out[-1] == "S":
                continue  # the parts of one literal (quotes, escapes, interpolation)
            word = "S"
        elif ttype in Number:
            word = "0"
        elif ttype in Literal:
            word = "L"
        else:  # keywords, operators, punctuation
            word = value.strip()
        if word:
            out.append(word)
    return out


# ---------------------------------------------------------------------------------------------
# reading a folder


def _walk(dir_fd: int, prefix: str, depth: int, skipped: list[tuple[str, str]],
          left: list[int]) -> Generator[tuple[str, int], None, None]:
    """(relative path, open descriptor) of every regular file under ``dir_fd``, in name
    order, at most ``left[0]`` files and folders in all; the caller closes each
    descriptor."""
    try:
        entries = sorted(os.scandir(dir_fd), key=lambda e: e.name)
    except OSError as e:
        skipped.append((prefix or ".", f"unreadable folder ({e.strerror})"))
        return
    for entry in entries:
        rel = prefix + entry.name
        if left[0] <= 0:
            if left[0] == 0:  # said once, not by every folder on the way up
                skipped.append((rel, f"more than {MAX_FILES} files and folders: the rest "
                                     f"unread"))
                left[0] = -1
            return
        left[0] -= 1
        if entry.is_symlink():
            skipped.append((rel, "a symbolic link"))
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.name in IGNORED_DIRS:
                continue
            if depth >= MAX_DEPTH:
                skipped.append((rel, f"nested deeper than {MAX_DEPTH} folders"))
                continue
            try:
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                              dir_fd=dir_fd)
            except OSError as e:
                skipped.append((rel, f"unreadable folder ({e.strerror})"))
                continue
            try:
                yield from _walk(sub, rel + "/", depth + 1, skipped, left)
            finally:
                os.close(sub)
            continue
        if entry.name in IGNORED_FILES or entry.name.startswith("._"):
            continue
        if not entry.is_file(follow_symlinks=False):  # a fifo or device is never opened
            skipped.append((rel, "not a regular file"))
            continue
        try:
            fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                         dir_fd=dir_fd)
        except OSError as e:
            skipped.append((rel, f"unreadable ({e.strerror})"))
            continue
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            skipped.append((rel, "not a regular file"))
            continue
        yield rel, fd


def _read(fd: int, rel: str, skipped: list[tuple[str, str]],
          budget: list[int]) -> ScannedFile | None:
    """Hash (and fingerprint, if source) the open file ``fd``; closes it."""
    try:
        size = os.fstat(fd).st_size
        if size > MAX_HASH_BYTES:
            skipped.append((rel, f"larger than {MAX_HASH_BYTES // (1024 * 1024)} MiB"))
            return None
        digest = hashlib.sha256()
        head = bytearray()
        with os.fdopen(fd, "rb", closefd=False) as f:
            while chunk := f.read(1 << 16):
                digest.update(chunk)
                if len(head) <= MAX_SOURCE_BYTES:
                    head += chunk
                size = f.tell()
                if size > MAX_HASH_BYTES:  # it grew while read
                    skipped.append((rel, f"larger than {MAX_HASH_BYTES // (1024 * 1024)} MiB"))
                    return None
    except OSError as e:
        skipped.append((rel, f"unreadable ({e.strerror})"))
        return None
    finally:
        os.close(fd)
    language: str | None = None
    prints: frozenset[int] = frozenset()
    name = rel.rsplit("/", 1)[-1]
    if size <= MAX_SOURCE_BYTES and b"\0" not in head and name not in _NOT_SOURCE_NAMES:
        text = bytes(head).decode("utf-8", errors="replace")
        lexer = _lexer(name, text)
        if lexer is not None:
            if size > budget[0]:
                skipped.append((rel, f"not read as source: more than "
                                     f"{MAX_BOT_SOURCE_BYTES // (1024 * 1024)} MiB of source"))
            else:
                budget[0] -= size
                language = str(lexer.name)
                prints = _winnow(_kgrams(normalise(text, lexer)))
    return ScannedFile(rel, size, digest.hexdigest(), language, prints)


def _lexer(filename: str, text: str) -> Any:
    """A Pygments lexer for source named ``filename`` (or run by its ``#!`` line), None for
    data, configuration, markup and unknown files."""
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    options = {"stripnl": False, "ensurenl": False}
    try:
        lexer = get_lexer_for_filename(filename, **options)
    except ClassNotFound:
        lexer = None
        words = text[2:].split("\n", 1)[0].split() if text.startswith("#!") else []
        if words:  # #!/usr/bin/python3, #!/usr/bin/env python3 -u
            program = words[0].rsplit("/", 1)[-1]
            if program == "env" and len(words) > 1:
                program = words[1]
            program = _INTERPRETERS.get(program, program)
            try:
                lexer = get_lexer_by_name(program.rstrip("0123456789.") or program, **options)
            except ClassNotFound:
                pass
    if lexer is None or type(lexer).__module__.rsplit(".", 1)[-1] in _NOT_SOURCE:
        return None
    return lexer


# ---------------------------------------------------------------------------------------------
# fingerprints


_TOKEN_HASHES: dict[str, int] = {}


def _kgrams(tokens: Sequence[str], k: int = K) -> list[int]:
    """The Karp-Rabin hash of every ``k`` consecutive tokens."""
    if len(tokens) < k:
        return []
    ids = []
    for t in tokens:
        h = _TOKEN_HASHES.get(t)
        if h is None:
            h = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "big") % _MOD
            if len(_TOKEN_HASHES) < 100_000:
                _TOKEN_HASHES[t] = h
        ids.append(h)
    top = pow(_BASE, k - 1, _MOD)
    h = 0
    for token_id in ids[:k]:
        h = (h * _BASE + token_id) % _MOD
    out = [h]
    for i in range(k, len(ids)):
        h = ((h - ids[i - k] * top) * _BASE + ids[i]) % _MOD
        out.append(h)
    return out


def _winnow(hashes: Sequence[int], window: int = WINDOW) -> frozenset[int]:
    """The smallest hash of every ``window`` consecutive ones (all of a shorter list's
    smallest).  As a set, the rightmost-minimum rule of robust winnowing changes nothing."""
    if not hashes:
        return frozenset()
    if len(hashes) <= window:
        return frozenset((min(hashes),))
    return frozenset(min(hashes[i:i + window]) for i in range(len(hashes) - window + 1))


# ---------------------------------------------------------------------------------------------
# comparing


@dataclass(frozen=True)
class _Evidence:
    """A bot's files and fingerprints as evidence: template and tiny files left out."""

    files: tuple[ScannedFile, ...]  # the files compared byte for byte
    total: int  # their bytes
    prints: frozenset[int]
    by_file: tuple[tuple[str, frozenset[int]], ...]  # source files and their fingerprints

    @classmethod
    def of(cls, s: Scan, base_hashes: set[str], base_prints: set[int]) -> _Evidence:
        files = tuple(f for f in s.files
                      if f.size >= MIN_IDENTICAL_BYTES and f.sha256 not in base_hashes)
        by_file = tuple((f.path, f.fingerprints - base_prints) for f in s.files
                        if f.fingerprints and f.sha256 not in base_hashes)
        prints = frozenset().union(*(p for _, p in by_file))
        return cls(files, sum(f.size for f in files), prints, by_file)

    def without(self, common: set[int]) -> _Evidence:
        return dataclasses.replace(self, prints=self.prints - common,
                                   by_file=tuple((p, f - common) for p, f in self.by_file))


def _pair(a: str, ea: _Evidence, b: str, eb: _Evidence) -> Pair:
    hashes_b: dict[str, list[ScannedFile]] = {}
    for f in eb.files:
        hashes_b.setdefault(f.sha256, []).append(f)
    identical = [(fa, fb) for fa in ea.files for fb in hashes_b.get(fa.sha256, ())]
    share = 0.0
    if identical:
        bytes_a = sum({fa.path: fa.size for fa, _ in identical}.values())
        bytes_b = sum({fb.path: fb.size for _, fb in identical}.values())
        share = max(bytes_a / ea.total, bytes_b / eb.total)
    shared = ea.prints & eb.prints
    smaller = max(min(len(ea.prints), len(eb.prints)), MIN_FINGERPRINTS)
    code = len(shared) / smaller if shared else 0.0
    score = min(1.0, max(code, share))
    files = tuple((fa.path, fb.path) for fa, fb in identical)
    return Pair(a, b, score, files, _reason(ea, eb, files, shared, smaller), code_score=code,
                identical_share=share, shared=len(shared))


def _reason(ea: _Evidence, eb: _Evidence, identical: tuple[tuple[str, str], ...],
            shared: frozenset[int], smaller: int) -> str:
    parts = []
    if identical:
        shown = ", ".join(x if x == y else f"{x} = {y}" for x, y in identical[:3])
        more = f" and {len(identical) - 3} more" if len(identical) > 3 else ""
        parts.append(f"{len(identical)} identical file{'s' * (len(identical) > 1)}: "
                     f"{shown}{more}")
    if shared:
        # the files with most of the shared fingerprints, a few on each side
        side_a = sorted(((len(p & shared), x, p) for x, p in ea.by_file), reverse=True)[:20]
        side_b = sorted(((len(p & shared), y, p) for y, p in eb.by_file), reverse=True)[:20]
        best = max(((len(pa & pb), x, y) for _, x, pa in side_a for _, y, pb in side_b),
                   key=lambda t: (t[0], -len(t[1]), -len(t[2])))
        where = best[1] if best[1] == best[2] else f"{best[1]} ~ {best[2]}"
        parts.append(f"{len(shared)} of {smaller} fingerprints shared, most in {where}")
    return "; ".join(parts) if parts else "no code in common"
