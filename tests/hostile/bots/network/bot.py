"""Hostile bot: connects to 127.0.0.1:<Port option> (the test's listener), reporting
``CONNECTED <address>`` or ``BLOCKED <address>: <error>`` on stderr; then an illegal move.

Only loopback: at the levels without a network namespace the connection really happens, and
tests send no traffic off the machine."""

import os
import socket
import sys

from arena.botkit import Bot, run, spin


class Network(Bot):
    name, author = "network", "Morris Arena tests"
    option_decls = (spin("Port", 0, 0, 65535),)

    def choose(self, position, clock):
        targets = [("127.0.0.1", self.options["Port"])] if self.options["Port"] else []
        for address in targets:
            try:
                socket.create_connection(address, timeout=1.0).close()
                print(f"CONNECTED {address[0]}:{address[1]}", file=sys.stderr, flush=True)
            except OSError as e:
                print(f"BLOCKED {address[0]}:{address[1]}: {type(e).__name__}",
                      file=sys.stderr, flush=True)
        os.write(1, b"bestmove zz9\n")
        os._exit(0)


run(Network())
