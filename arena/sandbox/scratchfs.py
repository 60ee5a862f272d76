"""A build's scratch folder as a file system of its own, where the machine allows it.

A build's disk is counted by looking (:func:`arena.build._disk_use`: blocks and entries of its
folders, deleted files its processes hold), which cannot see a file no process holds: one
whose descriptor the build sent through a Unix socket and never received ("in flight").
A tmpfs mounted on the scratch folder with ``size=`` and ``nr_inodes=`` bounds everything the
build writes, in flight or not, where the kernel counts it (as ioi/isolate and DMOJ bound
their sandboxes' disk): the file system is full at the cap, and what outlives the build on
a lazily unmounted tmpfs is bounded by the same size.

Mounting needs ``CAP_SYS_ADMIN`` (the referee as root, as the competition server runs); a
normal user's referee falls back to counting.  The mount is made in the referee's mount
namespace under its temporary folder (``morris-arena-<pid>-build-…``) and removed by
:func:`unmount` (lazily: a descriptor in flight keeps the detached tmpfs, bounded, until the
kernel collects the socket); if the referee is killed, its watchdog's sweep removes the
folder with the same call (:func:`arena.sandbox.watchdog.remove_tree`).
"""

from __future__ import annotations

import ctypes
import logging
import os
import stat

from arena.sandbox import procs
from arena.sandbox.values import Check

log = logging.getLogger(__name__)

_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_MNT_DETACH, _UMOUNT_NOFOLLOW = 0x2, 0x8


def mount_bounded(path: str, size_bytes: int, inodes: int) -> bool:
    """Mount a tmpfs of ``size_bytes`` and ``inodes`` entries on the empty folder ``path``
    (its mode kept); True when it is mounted, False where the machine does not allow it
    (not root, no ``CAP_SYS_ADMIN`` in a container, not Linux): the caller counts instead."""
    if os.geteuid() != 0 or not os.path.isdir("/proc/self"):
        return False
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    data = f"size={size_bytes},nr_inodes={inodes},mode={mode:04o}".encode()
    result = procs.libc().mount(b"tmpfs", os.fsencode(path), b"tmpfs",
                                ctypes.c_ulong(_MS_NOSUID | _MS_NODEV), data)
    if result < 0:
        log.debug("a build's scratch folder stays on its parent's file system: mount: %s",
                  os.strerror(ctypes.get_errno()))
        return False
    return True


def is_mount(path: str) -> bool:
    """Whether ``path`` (not followed if a link) is a mount point."""
    try:
        return not os.path.islink(path) and os.path.ismount(path)
    except OSError:
        return False


def unmount(path: str) -> bool:
    """Detach the file system mounted on ``path`` (lazily: it is freed once nothing holds
    it); True when it is gone from ``path``."""
    result = procs.libc().umount2(os.fsencode(path), ctypes.c_int(_MNT_DETACH | _UMOUNT_NOFOLLOW))
    if result < 0:
        log.warning("cannot unmount %s: %s", path, os.strerror(ctypes.get_errno()))
        return False
    return True


def full(path: str) -> bool:
    """Whether the file system of ``path`` has no free block or no free entry left."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bavail == 0 or st.f_favail == 0


def capacity(path: str) -> tuple[int, int]:
    """The size in bytes and entries of the file system of ``path``."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_files


def scratch_status() -> Check:
    """``arena doctor``'s line: whether builds get a file system of their own here (a
    tmpfs mounted on a probe folder and detached at once)."""
    import tempfile

    probe = tempfile.mkdtemp(prefix="morris-arena-probe-")
    try:
        if mount_bounded(probe, 1 << 20, 16):
            unmount(probe)
            return Check("build disk", True, "a tmpfs of its own per build (the kernel bounds "
                                             "its bytes and entries)")
    finally:
        os.rmdir(probe)
    why = "not root" if os.geteuid() != 0 else "no mount allowed here (CAP_SYS_ADMIN)"
    return Check("build disk", False, f"counted by looks every 0.25 s ({why}: see "
                                      f"docs/SECURITY.md, Builds)")
