"""Runs Pollen's ``reachy-mini-daemon`` (reachy-mini 1.2.11) with its Zenoh link on the port in
``ANCHOR_ZENOH_PORT``; every other argument goes to the daemon unchanged. Run by the anchor's
interpreter (``.venv-anchor/bin/python daemon_main.py --mockup-sim …``)."""

from __future__ import annotations

import sys

from zenoh_port import use_port_from_env

if __name__ == "__main__":
    use_port_from_env()
    from reachy_mini.daemon.app.main import main

    sys.argv[0] = "reachy-mini-daemon"
    sys.exit(main())
