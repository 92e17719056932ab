"""The vision process: ``python -m anima.vision.child FD``, started by the runtime with one end
of a socket pair as file descriptor ``FD``.

Its first message says what it is for: ``("detect", config)``, the face detector alone (frames
sent to it, faces back: :mod:`anima.vision.faces.process`), or ``("see", config)``, the camera
and the detector (:mod:`anima.vision.seeing`). It ends when told to or when its socket closes
(the runtime ended, even by ``kill -9``), and ignores Ctrl-C (the runtime's to handle: the child
is in a session of its own anyway).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from multiprocessing.connection import Connection


def serve(conn: Connection) -> int:
    """Read what the child is for, then serve it until the socket closes."""
    try:
        mode, config = conn.recv()
    except EOFError:
        return 0
    if mode == "see":
        from anima.vision.seeing import serve_seeing

        return serve_seeing(conn, config)
    from anima.vision.faces.process import serve_detecting

    return serve_detecting(conn, config)


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="anima vision process: %(message)s")
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: python -m anima.vision.child FD (the runtime starts it)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the runtime's to handle
    return serve(Connection(int(argv[0])))


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))  # no atexit work: the model's threads need no join
