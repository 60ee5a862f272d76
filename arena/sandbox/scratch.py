"""The scratch copy a build writes (:mod:`arena.build`): the bot folder copied into a fresh
folder that the confined build may write (:func:`copy_in`, :func:`hand_over`), and what it
made copied back (:func:`snapshot`, :func:`copy_back`).

Both directions open every entry without following links and copy what was opened.  The
copy in makes every file afresh (never a hard link) and, as root, leaves out what the
build's uid could not read in place.  The copy back writes only regular files, whatever
their link count (a hard link is a file: each name gets the content), through descriptors
opened without following links at every step, to a temporary name renamed into place;
symbolic links, FIFOs, sockets and devices the build made are named (:data:`NOT_COPIED`),
not copied.  Why a hard link is safe to copy is in :mod:`arena.build`'s docstring.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Optional, Sequence

#: the start of the output line naming a file of the build that was not copied back
NOT_COPIED = "not copied back: "


def walk(folder: str, skip: Sequence[str] = ()) -> list[tuple[str, os.stat_result]]:
    """Every entry below ``folder`` (links not followed), sorted by relative path, without
    the top-level names ``skip``; unreadable folders are skipped."""
    found: list[tuple[str, os.stat_result]] = []

    def visit(path: str, rel: str) -> None:
        try:
            with os.scandir(path) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for item in items:
            name = f"{rel}{item.name}"
            if not rel and name in skip:
                continue
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            found.append((name, st))
            if stat.S_ISDIR(st.st_mode):
                visit(item.path, name + "/")

    visit(folder, "")
    return found


def copy_in(src: str, dst: str, *, as_other: bool, skip: Sequence[str] = ()) -> list[str]:
    """Copy the folder ``src`` into the empty folder ``dst``: regular files (with their
    permission bits and modification time, each made afresh: never a hard link), folders,
    links as links; not the top-level names ``skip``, not FIFOs, sockets or devices.  Every
    entry is opened without following links and copied as what was opened, so a link
    swapped in meanwhile is never followed.

    ``as_other`` (the referee is root, the build runs as a uid of its own): what that uid
    could not read in place is left out, a file other users may not read or anything in a
    folder they may not enter, however root could; returns those names (a folder with a
    trailing ``/``)."""
    left: list[str] = []
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    src_fd = os.open(src, flags | os.O_DIRECTORY)
    try:
        dst_fd = os.open(dst, flags | os.O_DIRECTORY)
        try:
            _copy_folder(src_fd, dst_fd, "", as_other, left, tuple(skip))
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)
    return left


def _copy_bytes(src: int, out: int, size: int) -> None:
    """Copy ``size`` bytes (what the file held when it was opened: a file that grows
    meanwhile is not copied without end) from descriptor ``src`` to ``out``, every short
    write continued."""
    while size > 0:
        chunk = memoryview(os.read(src, min(size, 1 << 20)))
        if not chunk:
            break
        size -= len(chunk)
        while chunk:
            chunk = chunk[os.write(out, chunk):]


def _copy_folder(src_fd: int, dst_fd: int, rel: str, as_other: bool, left: list[str],
                 skip: tuple[str, ...]) -> None:
    """:func:`copy_in` of the folder open at ``src_fd`` (``rel`` below the copied folder)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        names = sorted(os.listdir(src_fd))
    except PermissionError:  # not root: a folder we may enter but not list
        left.append(rel)
        return
    for name in names:
        if not rel and name in skip:
            continue
        try:
            mode = os.stat(name, dir_fd=src_fd, follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                os.symlink(os.readlink(name, dir_fd=src_fd), name, dir_fd=dst_fd)
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                continue
            fd = os.open(name, flags | (os.O_DIRECTORY if stat.S_ISDIR(mode) else 0),
                         dir_fd=src_fd)
        except PermissionError:  # not root: we may not read it ourselves
            left.append(rel + name)
            continue
        except OSError:  # gone, or swapped for another kind of file, meanwhile
            continue
        try:
            st = os.fstat(fd)  # what was opened decides, not what lstat saw
            is_dir = stat.S_ISDIR(st.st_mode)
            if as_other and not st.st_mode & (0o001 if is_dir else 0o004):
                left.append(rel + name + ("/" if is_dir else ""))
            elif is_dir:
                os.mkdir(name, 0o700, dir_fd=dst_fd)
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=dst_fd)
                try:
                    _copy_folder(fd, sub, f"{rel}{name}/", as_other, left, skip)
                    os.chmod(sub, st.st_mode & 0o777)
                    os.utime(sub, ns=(st.st_atime_ns, st.st_mtime_ns))
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                              | os.O_CLOEXEC, 0o600, dir_fd=dst_fd)
                try:
                    _copy_bytes(fd, out, st.st_size)
                    os.chmod(out, st.st_mode & 0o777)  # never set-user-ID
                    os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
                finally:
                    os.close(out)
        finally:
            os.close(fd)


def left_out_notes(left: list[str]) -> list[str]:
    """The output lines naming what :func:`copy_in` left out (at most 20, then a count)."""
    more = [f"left out of the build: {len(left) - 20} more unreadable file(s)"] * (len(left) > 20)
    return [f"left out of the build: {name} (" + ("a folder the sandbox user may not enter)"
            if name.endswith("/") else "not readable by the sandbox user)")
            for name in left[:20]] + more


def hand_over(folder: str, uid: int) -> None:
    """Give the scratch folder to the sandbox's uid (as root)."""
    os.lchown(folder, uid, uid)
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def _kind(mode: int) -> str:
    """What a file that is not copied back is, in words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def snapshot(work: str) -> dict[str, tuple[Any, ...]]:
    """What the scratch copy holds before the build: a regular file's size and modification
    time, a link's target (what the build leaves as it was is not copied back)."""
    found: dict[str, tuple[Any, ...]] = {}
    for name, st in walk(work):
        if stat.S_ISREG(st.st_mode):
            found[name] = (st.st_size, st.st_mtime_ns)
        elif stat.S_ISLNK(st.st_mode):
            try:
                found[name] = ("link", os.readlink(os.path.join(work, name)))
            except OSError:
                pass
    return found


def copy_back(work: str, folder: str, before: dict[str, tuple[Any, ...]],
              left: Sequence[str] = (), *, keep: Sequence[str] = ()) -> list[str]:
    """Copy the regular files the build made or changed (not as :func:`snapshot` saw them
    ``before``) from ``work`` into ``folder``, whatever their link count, never the
    top-level names ``keep``, nor over what :func:`copy_in` ``left`` out (the build could
    not read it: it may not replace it either); returns notes on what was copied and
    skipped (links the build made, FIFOs, sockets, devices: a link the folder already held,
    unchanged, is not named).  See the module's docstring and :mod:`arena.build`'s.

    :raises OSError: a file cannot be written (a folder where a file should go, a link on
        the way, no space).
    """
    notes: list[str] = []
    copied = 0
    size = 0
    root_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name, st in walk(work):
            if stat.S_ISDIR(st.st_mode) or name in keep:
                continue
            if not stat.S_ISREG(st.st_mode):
                if stat.S_ISLNK(st.st_mode) and before.get(name) == ("link", _readlink(
                        os.path.join(work, name))):
                    continue  # the bot folder's own link, as it was
                notes.append(f"{NOT_COPIED}{name} ({_kind(st.st_mode)})")
                continue
            if any(name == x or x.endswith("/") and name.startswith(x) for x in left):
                notes.append(f"{NOT_COPIED}{name} (left out of the build)")
                continue
            if before.get(name) == (st.st_size, st.st_mtime_ns):
                continue
            _copy_file(os.path.join(work, name), root_fd, name, st)
            copied += 1
            size += st.st_size
    finally:
        os.close(root_fd)
    notes.append(f"copied back {copied} file(s), {size / 1024:.0f} KiB")
    return notes


def _readlink(path: str) -> Optional[str]:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _copy_file(src: str, root_fd: int, name: str, st: os.stat_result) -> None:
    """Write the regular file ``src`` as ``name`` below the folder open at ``root_fd``,
    following no link on the way, through a temporary name renamed into place."""
    parts = name.split("/")
    dir_fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            try:
                os.mkdir(part, 0o755, dir_fd=dir_fd)
                made = True
            except FileExistsError:
                made = False
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=dir_fd)
            if made:  # 0755 whatever the umask: the bot's uid enters it
                os.fchmod(next_fd, 0o755)
            os.close(dir_fd)
            dir_fd = next_fd
        mode = 0o755 if st.st_mode & 0o111 else 0o644
        tmp = f".{parts[-1]}.arena-{os.urandom(4).hex()}"
        src_fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            opened = os.fstat(src_fd)
            if not stat.S_ISREG(opened.st_mode) or opened.st_ino != st.st_ino:
                raise OSError(f"{name} changed while it was copied")
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                          0o600, dir_fd=dir_fd)
            try:
                _copy_bytes(src_fd, out, st.st_size)
                os.fchmod(out, mode)
                os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
            finally:
                os.close(out)
            try:
                os.replace(tmp, parts[-1], src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except OSError:
                os.unlink(tmp, dir_fd=dir_fd)
                raise
        finally:
            os.close(src_fd)
    finally:
        os.close(dir_fd)


__all__ = ["NOT_COPIED", "walk", "copy_in", "left_out_notes", "hand_over", "snapshot",
           "copy_back"]
