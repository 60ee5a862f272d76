"""Unpacking an uploaded bot archive (``.zip`` or ``.tar.gz``) without trusting it.

:func:`safe_unpack` refuses, before writing anything it should not:

* names that escape the folder (absolute, ``..``, backslashes, NUL) — *zip slip*;
* links of any kind (symbolic or hard), devices, FIFOs: only regular files and folders;
* more than ``max_files`` entries, or more than ``max_bytes`` unpacked in all — counted on
  the bytes actually written, not only on what the archive's headers claim, so an *archive
  bomb* stops at the cap (a tar's headers are read one by one, so a huge member is refused
  before its data is decompressed);
* anything that is neither a zip nor a gzip'd tar.

Tar members are extracted with Python's ``data`` filter (:pep:`706`) on top of these checks;
zip members are written by hand, each to a new file (``O_EXCL``, no following of links) with
permissions reduced to ``rw`` (plus ``x`` where the archive says so).  A refused archive
leaves its destination folder removed.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from arena.errors import ArenaError

_CHUNK = 1 << 16


class UnpackError(ArenaError):
    """An archive was refused (the message says why, in one line)."""


def _check_name(name: str) -> PurePosixPath:
    if not name or "\x00" in name or "\\" in name:
        raise UnpackError(f"refused: bad file name {name[:80]!r}")
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts:
        raise UnpackError(f"refused: {name[:80]!r} would be written outside the bot's folder")
    return p


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


def _unpack_zip(archive: Path, dest: Path, max_bytes: int, max_files: int) -> None:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        if len(infos) > max_files:
            raise UnpackError(f"refused: more than {max_files} files")
        declared = 0
        for info in infos:
            _check_name(info.filename)
            kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no Unix type recorded
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise UnpackError(f"refused: {info.filename[:80]!r} is a link or special file")
            declared += info.file_size
        if declared > max_bytes:
            raise UnpackError("refused: the archive unpacks to more than the size limit")
        budget = max_bytes
        for info in infos:
            target = dest / _check_name(info.filename)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            executable = bool((info.external_attr >> 16) & 0o100)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o755 if executable else 0o644)
            with zf.open(info) as src, os.fdopen(fd, "wb") as out:
                budget -= _copy_capped(src, out, min(budget, info.file_size))


def _unpack_tar(archive: Path, dest: Path, max_bytes: int, max_files: int) -> None:
    with tarfile.open(archive, mode="r:gz") as tf:
        members = []
        total = 0
        for member in tf:  # header by header: a bomb is refused at its first huge header
            _check_name(member.name)
            if not (member.isreg() or member.isdir()):
                raise UnpackError(f"refused: {member.name[:80]!r} is a link or special file")
            members.append(member)
            total += member.size
            if len(members) > max_files:
                raise UnpackError(f"refused: more than {max_files} files")
            if total > max_bytes:
                raise UnpackError("refused: the archive unpacks to more than the size limit")
        tf.extractall(dest, members=members, filter="data")


def safe_unpack(archive: str | os.PathLike[str], dest: str | os.PathLike[str], *,
                max_bytes: int, max_files: int) -> Path:
    """Unpack ``archive`` into the new folder ``dest`` and return the bot's folder in it:
    ``dest`` itself when ``bot.yaml`` is at the top, or the single folder that holds it.

    :raises UnpackError: the archive is refused (see the module's docstring) or holds no
        ``bot.yaml``; ``dest`` is then removed.
    """
    src, out = Path(archive), Path(dest)
    out.mkdir(parents=True)
    try:
        if zipfile.is_zipfile(src):
            _unpack_zip(src, out, max_bytes, max_files)
        else:
            try:
                _unpack_tar(src, out, max_bytes, max_files)
            except (tarfile.TarError, EOFError, OSError) as e:
                if isinstance(e, tarfile.FilterError):
                    raise UnpackError(f"refused: {e}") from None
                raise UnpackError("refused: not a .zip or .tar.gz archive") from None
        return _bot_folder(out)
    except zipfile.BadZipFile:
        shutil.rmtree(out, ignore_errors=True)
        raise UnpackError("refused: a damaged .zip archive") from None
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise


def _bot_folder(out: Path) -> Path:
    if (out / "bot.yaml").is_file():
        return out
    entries = [p for p in out.iterdir()]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() \
            and (entries[0] / "bot.yaml").is_file():
        return entries[0]
    raise UnpackError("refused: no bot.yaml at the top of the archive (or in its one folder)")
