"""Hostile bot: fills the disk.  In each of ``$TMPDIR``, ``/tmp``, ``/var/tmp``,
``/dev/shm``, its working directory and the ``Results`` option's folder it leaves a marker
file named after the ``Marker`` option and writes one big file until the first error, but
at most ``CapMb`` MiB (so a sandbox that fails to stop it cannot really fill the machine's
disk), then deletes the big file.  It reports ``FILLED <folder> <bytes>`` or
``BLOCKED <folder>: <error>`` and, for markers, ``MARKED <path>``; then an illegal move.
"""

import os
import sys

from arena.botkit import Bot, run, spin, string

CHUNK = b"\xa5" * (1 << 20)


def fill(folder, cap_mb, marker):
    try:
        with open(os.path.join(folder, f"HOSTILE-{marker}"), "w") as f:
            f.write("filled\n")
        print(f"MARKED {os.path.join(folder, f'HOSTILE-{marker}')}", file=sys.stderr, flush=True)
    except OSError as e:
        print(f"BLOCKED {folder}: {type(e).__name__}", file=sys.stderr, flush=True)
        return
    path = os.path.join(folder, f"HOSTILE-{marker}.fill")
    written = 0
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as e:
        print(f"BLOCKED {folder}: {type(e).__name__}", file=sys.stderr, flush=True)
        return
    try:
        while written < cap_mb << 20:
            written += os.write(fd, CHUNK)
    except OSError:
        pass  # ENOSPC, EFBIG (SIGXFSZ is ignored below)
    finally:
        os.close(fd)
        os.unlink(path)
    print(f"FILLED {folder} {written}", file=sys.stderr, flush=True)


class DiskFiller(Bot):
    name, author = "disk-filler", "Morris Arena tests"
    option_decls = (string("Results"), string("Marker"), spin("CapMb", 64, 1, 4096))

    def choose(self, position, clock):
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the file-size limit: EFBIG
        marker = self.options["Marker"] or "x"
        folders = [os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm", os.getcwd()]
        if self.options["Results"]:
            folders.append(self.options["Results"])
        for folder in dict.fromkeys(folders):
            fill(folder, self.options["CapMb"], marker)
        os.write(1, b"bestmove zz9\n")
        os._exit(0)


run(DiskFiller())
