"""Unpacking an uploaded bot archive (``.zip`` or ``.tar.gz``) without trusting it.

:func:`safe_unpack` refuses, before writing anything it should not:

* names that escape the folder (absolute, ``..``, backslashes, NUL) — *zip slip*;
* names that are not valid UTF-8, hold control characters, or have a part over 255 bytes;
* an entry listed twice, or a name that is both a file and a folder (``a`` and ``a/b``, or
  ``a/`` and ``a``);
* links of any kind (symbolic or hard), devices, FIFOs: only regular files and folders;
* encrypted zip entries, and compression methods other than stored, deflate, bzip2, lzma;
* more than ``max_files`` entries, or more than ``max_bytes`` unpacked in all — counted on
  the bytes actually written, not only on what the archive's headers claim, so an *archive
  bomb* stops at the cap (a tar's headers are read one by one, so a huge member is refused
  before its data is decompressed);
* anything that is neither a zip nor a gzip'd tar, and damaged or truncated archives (bad
  CRCs, cut-off data, broken headers).

The metadata macOS adds when it packs a folder (Finder's *Compress*, ``ditto``, its ``tar``)
is checked like any entry and then left out: the ``__MACOSX/`` folder, AppleDouble files
``._*`` and ``.DS_Store`` files.  The bot's folder is the archive's top or its one folder
holding ``bot.yaml``; a ``bot.yaml`` found deeper is named in the refusal.  What is
unpacked is readable by every user (folders 0755, files 0644, or 0755 where the archive
says executable), whatever the process's umask: as root, bots run as an unprivileged uid.

An upload is unpacked and its manifest read by :func:`stage_upload`, in a folder of its own
below ``incoming/``, before the short part of an upload that takes a lock and a database
transaction (:meth:`~arena.server.uploads.Uploads.submit`): one participant's slow archive
or parse bomb never makes another's upload wait.  :meth:`Staged.place` then moves the
archive and the folder under the upload's id (two renames in one file system).

Whatever the bytes, the only exception :func:`safe_unpack` raises is :class:`UnpackError`,
whose message is one line starting with ``refused:``.  Tar members are extracted with
Python's ``data`` filter (:pep:`706`) on top of these checks; zip members are written by
hand, each to a new file (``O_EXCL``, no following of links) with permissions reduced to
``rw`` (plus ``x`` where the archive says so).  A refused archive leaves its destination
folder removed.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Callable

from arena.errors import ArenaError, ConfigError
from arena.server.common import INCOMING

_CHUNK = 1 << 16
#: the zip compression methods unpacked (others, e.g. 99 for AES, are refused)
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate",
            zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}
#: the general-purpose flags of a zip entry: encrypted, and its name in UTF-8
_ENCRYPTED, _UTF8 = 0x1, 0x800
#: bytes of one part of a path (Linux's NAME_MAX)
_NAME_MAX = 255
#: the folder of macOS's zip metadata (resource forks, extended attributes)
_MACOSX = "__MACOSX"
#: a folder's view settings in macOS's Finder
_DS_STORE = ".DS_Store"


class UnpackError(ArenaError):
    """An archive was refused (the message says why, in one line)."""


def _shown(name: str) -> str:
    """A name for a message: cut, quoted, on one line (repr escapes what is odd)."""
    return repr(name[:80])


def is_macos_metadata(path: PurePosixPath) -> bool:
    """True for what macOS adds to an archive of a folder and is no part of the bot: the
    ``__MACOSX/`` folder, AppleDouble files (``._bot.py``) and ``.DS_Store``."""
    parts = path.parts
    return bool(parts) and (parts[0] == _MACOSX or parts[-1].startswith("._")
                            or parts[-1] == _DS_STORE)


def _check_name(name: str) -> PurePosixPath:
    if not name or "\x00" in name or "\\" in name:
        raise UnpackError(f"refused: bad file name {_shown(name)}")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):  # undecodable bytes (surrogateescape)
        raise UnpackError(f"refused: the file name {_shown(name)} is not valid UTF-8")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise UnpackError(f"refused: the file name {_shown(name)} holds control characters")
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts:
        raise UnpackError(f"refused: {_shown(name)} would be written outside the bot's folder")
    if any(len(part.encode("utf-8")) > _NAME_MAX for part in p.parts):
        raise UnpackError(f"refused: the file name {_shown(name)} has a part over "
                          f"{_NAME_MAX} bytes")
    return p


class _Layout:
    """The tree an archive's entries make, checked entry by entry before anything is
    written: no entry twice, no name both a file and a folder (in either order)."""

    def __init__(self) -> None:
        self.files: set[tuple[str, ...]] = set()
        self.dirs: set[tuple[str, ...]] = set()
        self.listed: set[tuple[str, ...]] = set()

    def add(self, path: PurePosixPath, is_dir: bool, name: str) -> None:
        parts = path.parts
        if not parts:  # "." or "./": the folder itself
            if is_dir:
                return
            raise UnpackError(f"refused: bad file name {_shown(name)}")
        for i in range(1, len(parts)):
            if parts[:i] in self.files:
                raise UnpackError(f"refused: {_shown('/'.join(parts[:i]))} is both a file and "
                                  f"a folder in the archive")
            self.dirs.add(parts[:i])
        if parts in (self.dirs if not is_dir else self.files):
            raise UnpackError(f"refused: {_shown(name)} is both a file and a folder in the "
                              f"archive")
        if parts in self.listed:
            raise UnpackError(f"refused: {_shown(name)} is in the archive twice")
        self.listed.add(parts)
        (self.dirs if is_dir else self.files).add(parts)


def _copy_capped(src: IO[bytes], dst: IO[bytes], budget: int) -> int:
    """Copy at most ``budget`` bytes; more is an archive bomb."""
    written = 0
    while True:
        chunk = src.read(_CHUNK)
        if not chunk:
            return written
        written += len(chunk)
        if written > budget:
            raise UnpackError("refused: the archive unpacks to more than the size limit")
        dst.write(chunk)


def _zip_name(info: zipfile.ZipInfo) -> str:
    """An entry's name as UTF-8: zip names without the UTF-8 flag were decoded as CP437
    (the format's old default), but the usual tools write UTF-8 there too; anything that is
    not UTF-8 either way is refused."""
    name = info.filename
    if info.flag_bits & _UTF8 or name.isascii():
        return name
    try:
        return name.encode("cp437").decode("utf-8")
    except UnicodeError:
        raise UnpackError(f"refused: the file name {_shown(name)} is not valid UTF-8") from None


def _unpack_zip(archive: Path, dest: Path, max_bytes: int, max_files: int) -> None:
    try:
        zf = zipfile.ZipFile(archive)
    except UnicodeDecodeError:  # a name flagged UTF-8 that is not
        raise UnpackError("refused: a file name in the archive is not valid UTF-8") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > max_files:
            raise UnpackError(f"refused: more than {max_files} files")
        declared = 0
        layout = _Layout()
        entries = []
        for info in infos:
            name = _zip_name(info)
            path = _check_name(name)
            kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no Unix type recorded
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise UnpackError(f"refused: {_shown(name)} is a link or special file")
            if info.flag_bits & _ENCRYPTED:
                raise UnpackError(f"refused: {_shown(name)} is encrypted")
            if info.compress_type not in _METHODS:
                raise UnpackError(f"refused: {_shown(name)} uses compression method "
                                  f"{info.compress_type} (not one of "
                                  f"{', '.join(_METHODS.values())})")
            is_dir = info.is_dir() or kind == stat.S_IFDIR
            if is_macos_metadata(path):  # checked, then left out
                continue
            layout.add(path, is_dir, name)
            entries.append((info, path, is_dir))
            declared += info.file_size
        if declared > max_bytes:
            raise UnpackError("refused: the archive unpacks to more than the size limit")
        budget = max_bytes
        for info, path, is_dir in entries:
            target = dest / path
            if is_dir:
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            executable = bool((info.external_attr >> 16) & 0o100)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o755 if executable else 0o644)
            with zf.open(info) as src, os.fdopen(fd, "wb") as out:
                budget -= _copy_capped(src, out, min(budget, info.file_size))


def _unpack_tar(archive: Path, dest: Path, max_bytes: int, max_files: int) -> None:
    try:
        tf = tarfile.open(archive, mode="r:gz")
    except (tarfile.TarError, EOFError, OSError, zlib.error):
        raise UnpackError("refused: not a .zip or .tar.gz archive") from None
    with tf:
        members = []
        total = 0
        layout = _Layout()
        for member in tf:  # header by header: a bomb is refused at its first huge header
            path = _check_name(member.name)
            if not (member.isreg() or member.isdir()):
                raise UnpackError(f"refused: {_shown(member.name)} is a link or special file")
            if is_macos_metadata(path):  # checked, then left out
                continue
            layout.add(path, member.isdir(), member.name)
            members.append(member)
            total += member.size
            if len(members) > max_files:
                raise UnpackError(f"refused: more than {max_files} files")
            if total > max_bytes:
                raise UnpackError("refused: the archive unpacks to more than the size limit")
        tf.extractall(dest, members=members, filter="data")


def _damaged(error: Exception) -> UnpackError:
    """What a failure of the zip or tar reader says about the archive, in one line."""
    detail = " ".join(str(error).split())[:120]
    if isinstance(error, NotImplementedError):
        why = "it uses a compression method that cannot be unpacked"
    elif isinstance(error, tarfile.FilterError):
        why = "a member is not a plain file or folder inside the bot's folder"
    elif isinstance(error, UnicodeError):
        why = "a file name in it is not valid UTF-8"
    elif isinstance(error, (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error,
                            OSError, ValueError)):
        why = "the archive is damaged or cut short"
    else:
        why = "the archive cannot be read"
    return UnpackError(f"refused: {why}" + (f" ({detail})" if detail else ""))


def safe_unpack(archive: str | os.PathLike[str], dest: str | os.PathLike[str], *,
                max_bytes: int, max_files: int) -> Path:
    """Unpack ``archive`` into the new folder ``dest`` and return the bot's folder in it:
    ``dest`` itself when ``bot.yaml`` is at the top, or the single folder that holds it.

    :raises UnpackError: the archive is refused (see the module's docstring), cannot be
        read (damaged, truncated, a method or encryption not supported: any failure of the
        readers becomes this) or holds no ``bot.yaml``; ``dest`` is then removed.
    """
    src, out = Path(archive), Path(dest)
    out.mkdir(parents=True)
    try:
        if zipfile.is_zipfile(src):
            _unpack_zip(src, out, max_bytes, max_files)
        else:
            _unpack_tar(src, out, max_bytes, max_files)
        _open_to_all(out)
        return _bot_folder(out)
    except UnpackError:
        shutil.rmtree(out, ignore_errors=True)
        raise
    except Exception as e:  # noqa: BLE001 - any bytes: a reader's failure is a refusal
        shutil.rmtree(out, ignore_errors=True)
        raise _damaged(e) from None
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise


def _bot_folder(out: Path) -> Path:
    """The bot's folder in the unpacked ``out``: ``out`` itself, or its one folder, holding
    ``bot.yaml``.

    :raises UnpackError: neither; the message names a ``bot.yaml`` found deeper (the
        shallowest, e.g. ``a/b/bot.yaml``) or says there is none."""
    if (out / "bot.yaml").is_file():
        return out
    entries = [p for p in out.iterdir()]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() \
            and (entries[0] / "bot.yaml").is_file():
        return entries[0]
    found = sorted((p.relative_to(out) for p in out.rglob("bot.yaml") if p.is_file()),
                   key=lambda p: (len(p.parts), str(p)))
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise UnpackError(f"refused: no bot.yaml at the top of the archive (or in its one "
                          f"folder): found at {_shown(found[0].as_posix())}{more}; archive "
                          f"the folder that holds bot.yaml, or its contents")
    raise UnpackError("refused: no bot.yaml in the archive (a bot's folder holds bot.yaml: "
                      "docs/BOTS.md)")


def _open_to_all(out: Path) -> None:
    """Make the unpacked tree readable by every user whatever the umask: folders 0755,
    files 0644 (0755 where any execute bit was set).  It holds no links."""
    os.chmod(out, 0o755)
    for dirpath, dirs, files in os.walk(out):
        for name in dirs:
            os.chmod(os.path.join(dirpath, name), 0o755)
        for name in files:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                os.chmod(path, 0o755 if mode & 0o111 else 0o644)


# -- an upload, unpacked aside ----------------------------------------------------------

@dataclass
class Staged:
    """An upload unpacked and read aside (:func:`stage_upload`): its private folder, the
    archive and the unpacked tree in it, the bot's folder in that tree, the bot's
    :class:`~arena.manifest.BotSpec` and the tree's bytes."""

    folder: Path
    archive: Path
    unpacked: Path
    root: Path
    spec: Any
    bytes: int

    def place(self, archive: Path, target: Path) -> Path:
        """Move the archive to ``archive`` and the unpacked tree to ``target`` (neither may
        exist; both in the competition folder's file system); returns the bot's folder
        below ``target``."""
        os.rename(self.archive, archive)
        os.rename(self.unpacked, target)
        return target / self.root.relative_to(self.unpacked)

    def discard(self) -> None:
        """Remove the private folder and what is still in it (nothing once placed)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def stage_upload(competition: Path, data: bytes, suffix: str, *, max_bytes: int,
                 max_files: int, measure: Callable[[Path], int]) -> Staged:
    """Write the archive ``data`` (``suffix``: ``.zip`` or ``.tar.gz``) into a new private
    folder below ``competition/incoming/``, unpack it there (:func:`safe_unpack`) and read
    its ``bot.yaml`` (:func:`~arena.manifest.load_bot`): the costly part of an upload, done
    before it has an id, under no lock.  ``measure`` counts the unpacked tree's bytes.  The
    folder is named after this process (``<pid>-...``): a later start removes what a killed
    server left (:func:`remove_stale_incoming`).

    :raises UnpackError: the archive or its manifest is refused (one line; the private
        folder's path shown as ``<bot>``); nothing is left behind.
    """
    from arena.manifest import load_bot

    base = competition / INCOMING
    base.mkdir(mode=0o700, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base))
    try:
        archive = folder / f"archive{suffix}"
        fd = os.open(archive, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        unpacked = folder / "bot"
        try:
            root = safe_unpack(archive, unpacked, max_bytes=max_bytes, max_files=max_files)
            spec = load_bot(root)
        except (UnpackError, ConfigError) as e:
            raise UnpackError(str(e).replace(str(unpacked), "<bot>")) from None
        return Staged(folder, archive, unpacked, root, spec, measure(unpacked))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def remove_stale_incoming(competition: Path) -> int:
    """Remove the private folders of uploads that processes now gone were unpacking (a
    killed server's); returns how many."""
    try:
        entries = list(os.scandir(competition / INCOMING))
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        pid = entry.name.partition("-")[0]
        if pid.isdigit() and _alive(int(pid)):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
