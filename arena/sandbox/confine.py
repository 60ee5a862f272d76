"""``basic`` as root: each bot in a private, read-only mount namespace as a unique unprivileged
uid (:class:`Confinement`), and whether this machine allows it (:func:`confinement_status`)."""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from arena.interpreter import python_path
from arena.sandbox import procs
from arena.sandbox.paths import inside, runtime_paths
from arena.sandbox.values import Check

# A bot run by a root referee at ``basic`` would own the machine.  So, as root, ``basic``
# confines each bot in its child, before ``exec`` (only system calls, as bwrap would do
# them): a new mount namespace in which every mount is read-only, one private tmpfs of
# ``tmp_mb`` on ``/tmp`` (also bound on ``/var/tmp`` and ``/dev/shm``: the world-writable
# places), closed folders on the way to what the bot needs (``/root`` for a Python
# installed there) replaced by an empty read-only tmpfs holding just those paths, and then a
# unique unprivileged uid with no groups, no capabilities and ``no_new_privs``.  The bot
# then cannot write outside its ``/tmp``, cannot signal or trace other bots (other uids),
# and sees the results folder only if it is world-readable and not under ``/tmp``.

_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV = 0x1, 0x2, 0x4
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (added in Linux 5.12)
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID = 0x1, 0x2
_PR_SET_NO_NEW_PRIVS = 38
#: the world-writable folders that become the bot's private tmpfs at ``basic`` as root
PRIVATE_TMP = ("/tmp", "/var/tmp", "/dev/shm")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _check(result: int, what: str) -> None:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: Optional[str], target: str, fstype: Optional[str], flags: int,
           data: Optional[str] = None) -> None:
    enc = (lambda s: s.encode() if s is not None else None)
    _check(procs.libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags),
                         enc(data)), f"mount {target}")


@dataclass(frozen=True)
class Confinement:
    """How one bot is confined at ``basic`` as root: planned in the referee (it reads the
    file system), applied in the child before ``exec`` (:meth:`apply`: system calls only)."""

    uid: int
    tmp_mb: int
    cwd: str
    #: paths the bot needs (its folder, the runtime), read-only
    visible: tuple[str, ...]
    #: closed folders (no search permission for others) on the way to a visible path,
    #: covered by an empty read-only tmpfs holding just the visible paths below them
    masks: tuple[str, ...]
    #: visible folders left writable (a build's scratch copy of the bot folder); games: none
    writable: tuple[str, ...] = ()

    @classmethod
    def plan(cls, *, uid: int, tmp_mb: int, cwd: str, needed: Iterable[str],
             writable: Iterable[str] = ()) -> Confinement:
        """The confinement for a bot that needs ``needed`` (and ``cwd``) read-only, and the
        folders ``writable`` (made visible too) writable."""
        visible: list[str] = []
        rw = tuple(os.path.realpath(p) for p in writable)
        wanted = {os.path.realpath(p) for p in [*needed, *rw, cwd] if os.path.exists(p)} - {"/"}
        for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
            if not any(inside(path, v) for v in visible):
                visible.append(path)
        masks: list[str] = []
        for path in visible:
            if any(inside(path, t) for t in PRIVATE_TMP):
                continue  # re-created inside the private /tmp
            for parent in reversed(Path(path).parents):
                folder = str(parent)
                if folder == "/" or any(inside(folder, m) for m in masks):
                    continue
                try:
                    closed = not os.stat(folder).st_mode & 0o001
                except OSError:
                    closed = True
                if closed:
                    masks.append(folder)
                    break
        return cls(uid, tmp_mb, os.path.realpath(cwd), tuple(visible), tuple(masks), rw)

    def _hidden(self, path: str) -> bool:
        return any(inside(path, m) for m in (*PRIVATE_TMP, *self.masks))

    def apply(self) -> None:
        """In the child, before ``exec``: the mount namespace, then the uid.  Raises OSError
        if a step that protects the machine fails (the bot then does not start)."""
        libc = procs.libc()
        os.umask(0o022)
        _check(libc.unshare(ctypes.c_int(_CLONE_NEWNS)), "unshare")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing propagates to the host
        rebinds = [p for p in self.visible if self._hidden(p)]
        fds = [os.open(p, os.O_PATH | os.O_CLOEXEC) for p in rebinds]  # before hiding them
        attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, 0, 0, 0)
        _check(libc.syscall(ctypes.c_long(_SYS_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), b"/",
                            ctypes.c_uint(_AT_RECURSIVE), ctypes.byref(attr),
                            ctypes.c_size_t(ctypes.sizeof(attr))), "read-only mounts")
        _mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV,
               f"mode=1777,size={self.tmp_mb}m")
        for other in PRIVATE_TMP[1:]:
            if os.path.isdir(other):  # one tmpfs: the bot's whole writable space is tmp_mb
                _mount("/tmp", other, None, _MS_BIND)
        for mask in self.masks:
            _mount("tmpfs", mask, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
        for path, fd in zip(rebinds, fds):
            os.makedirs(path, 0o755, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)  # read-only already
            os.close(fd)
        for mask in self.masks:
            _mount(None, mask, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        for path in self.writable:  # a mount of its own, then the one writable mount
            _mount(path, path, None, _MS_BIND)
            _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV)
        os.chdir(self.cwd)
        os.setgroups([])
        os.setresgid(self.uid, self.uid, self.uid)
        os.setresuid(self.uid, self.uid, self.uid)
        _check(libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1),
                          ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
               "no_new_privs")


@functools.lru_cache(maxsize=1)
def confinement_status() -> Check:
    """Whether ``basic`` can confine a bot here when the referee is root (tried once, for
    real: a child in a private read-only mount namespace, as an unprivileged uid, must run
    this Python, write its private ``/tmp`` and fail to write ``/``)."""
    if not procs.is_root():
        return Check("confinement", False, "not root: basic bots run as you")
    python = python_path()  # without '..' parts: /root may be hidden from the child
    plan = Confinement.plan(uid=procs.unique_uid(), tmp_mb=1, cwd="/",
                             needed=runtime_paths([python], os.defpath))
    code = ("import os,sys\n"
            "open('/tmp/probe','w').write('x')\n"
            "try:\n open('/morris-arena-probe','w')\nexcept OSError: pass\n"
            "else: sys.exit(4)\n"
            "sys.exit(0 if os.getuid() != 0 else 3)")
    try:
        done = subprocess.run([python, "-I", "-S", "-c", code], capture_output=True,
                              text=True, timeout=20, preexec_fn=plan.apply, cwd="/",
                              env={"PATH": os.defpath})
    except (OSError, subprocess.SubprocessError) as e:
        return Check("confinement", False, f"unavailable (a confined child failed: {e})")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Check("confinement", False, f"unavailable (a confined child failed: {why})")
    return Check("confinement", True, "unique unprivileged uid, read-only mounts, private /tmp "
                                      "(basic as root)")
