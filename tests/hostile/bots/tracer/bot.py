"""Hostile bot: ``ptrace(PTRACE_SEIZE)``s every process whose command line holds the
``Victim`` option (the test's marked opponent), reporting ``TRACED <pid>`` (and detaching at
once) or ``BLOCKED <pid>: <errno name>`` on stderr (``NOTFOUND`` if it sees none); then an
illegal move.  A tracer could read the opponent's memory or steer its moves."""

import ctypes
import errno
import os
import sys

from arena.botkit import Bot, run, string

PTRACE_DETACH, PTRACE_SEIZE = 17, 0x4206


def marked(marker):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args:
            found.append(int(name))
    return found


class Tracer(Bot):
    name, author = "tracer", "Morris Arena tests"
    option_decls = (string("Victim"),)

    def choose(self, position, clock):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        marker = self.options["Victim"]
        pids = marked(marker) if marker else []
        if not pids:
            print("NOTFOUND", file=sys.stderr, flush=True)
        for pid in pids:
            if libc.ptrace(PTRACE_SEIZE, pid, None, None) == 0:
                libc.ptrace(PTRACE_DETACH, pid, None, None)
                print(f"TRACED {pid}", file=sys.stderr, flush=True)
            else:
                code = ctypes.get_errno()
                print(f"BLOCKED {pid}: {errno.errorcode.get(code, code)}", file=sys.stderr,
                      flush=True)
        os.write(1, b"bestmove zz9\n")
        os._exit(0)


run(Tracer())
