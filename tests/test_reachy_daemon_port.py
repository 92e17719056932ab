"""anima.testing.reachy_daemon: a port the harness chose and another process took before the
daemon bound it is replaced by a new one (a CI run lost a test to it); a port given, or a
restart's, is not. A stand-in for Pollen's daemon: a script taking its flags, that says what
uvicorn says on a taken port, or answers the status the harness waits for."""

from __future__ import annotations

import socket
import sys
import textwrap
from pathlib import Path

import pytest

from anima.errors import DriverError
from anima.testing.reachy_daemon import MockupDaemon

pytestmark = pytest.mark.integration

STAND_IN = textwrap.dedent(
    """\
    #!{python}
    import http.server, json, signal, sys
    # the harness stops it with SIGINT, which a process started in the background ignores
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    port = int(sys.argv[sys.argv.index("--fastapi-port") + 1])
    class Status(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({{"state": "running"}}).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    try:
        server = http.server.HTTPServer(("127.0.0.1", port), Status)
    except OSError as exc:
        print(f"uvicorn.error - ERROR - [Errno 98] error while attempting to bind on address "
              f"('127.0.0.1', {{port}}): address already in use", flush=True)
        sys.exit(3)
    server.serve_forever()
    """
)


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    exe = tmp_path / "reachy-mini-daemon"
    exe.write_text(STAND_IN.format(python=sys.executable))
    exe.chmod(0o755)
    return exe


def test_a_port_taken_before_the_daemon_binds_it_is_replaced(stand_in: Path) -> None:
    with socket.socket() as taker:
        taker.bind(("127.0.0.1", 0))
        taker.listen()
        taken = taker.getsockname()[1]
        daemon = MockupDaemon(stand_in, ready_s=10)
        daemon.port = taken  # as if another process got the number after free_port() closed it
        with daemon:
            assert daemon.port != taken
            assert daemon.status() == {"state": "running"}


def test_a_port_given_that_is_taken_is_an_error(stand_in: Path) -> None:
    with socket.socket() as taker:
        taker.bind(("127.0.0.1", 0))
        taker.listen()
        taken = taker.getsockname()[1]
        with pytest.raises(DriverError, match="address already in use"):
            MockupDaemon(stand_in, taken, ready_s=10).start()
