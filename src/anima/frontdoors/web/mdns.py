"""The dashboard announced over mDNS (``web.mdns: true``; off by default), so a robot's page can
be found on a LAN; ``anima fleet find`` lists those announced. Only the dashboard's address is
announced: commands never go by mDNS, and the fleet is a broker's (docs/fleet.md).

The service is ``_http._tcp`` (what Bonjour and Avahi browsers list), named ``anima <name>``,
with the robot's prefix, body, driver and anima's version in its TXT record (``anima=<version>``
tells it from other web servers). On a loopback host it is announced on 127.0.0.1 only.
python-zeroconf is LGPL-2.1: the ``mdns`` extra, imported when this is on.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from anima.errors import MissingDependencyError
from anima.version import __version__

log = logging.getLogger(__name__)

SERVICE = "_http._tcp.local."
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _zeroconf() -> Any:
    try:
        import zeroconf
    except ImportError as exc:
        raise MissingDependencyError("zeroconf", "mdns") from exc
    return zeroconf


def _interfaces(zc: Any, host: str) -> tuple[Any, list[str]]:
    """What to bind, and the addresses to announce, for a dashboard on ``host``."""
    if host in LOOPBACK:
        return ["127.0.0.1"], ["127.0.0.1"]
    if host in ("0.0.0.0", "", "::"):
        addresses = [a for a in zc.get_all_addresses() if not a.startswith("127.")]
        return zc.InterfaceChoice.All, addresses or ["127.0.0.1"]
    return [host], [host]


class Announcer:
    """Registers the dashboard on a thread (mDNS probing takes a second or two), and removes
    it at stop."""

    def __init__(self, name: str, host: str, port: int, properties: dict[str, str]) -> None:
        self.name = name
        self.host = host
        self.port = port
        self.properties = {"anima": __version__, "path": "/", **properties}
        self._zc: Any = None
        self._info: Any = None
        self.registered = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Announcer:
        zc = _zeroconf()
        interfaces, addresses = _interfaces(zc, self.host)
        self._zc = zc.Zeroconf(interfaces=interfaces, ip_version=zc.IPVersion.V4Only)
        self._info = zc.ServiceInfo(
            SERVICE,
            f"anima {self.name}.{SERVICE}",
            addresses=[socket.inet_aton(a) for a in addresses],
            port=self.port,
            properties=self.properties,
            server=f"{socket.gethostname()}.local.",
        )
        self._thread = threading.Thread(target=self._register, name="anima-mdns", daemon=True)
        self._thread.start()
        return self

    def _register(self) -> None:
        try:
            self._zc.register_service(self._info, allow_name_change=True)
            self.registered.set()
            log.info("mDNS: the dashboard announced as %r", self._info.name)
        except Exception as exc:  # the dashboard works without it
            log.warning("mDNS: could not announce the dashboard: %s", exc)

    def stop(self) -> None:
        if self._thread is not None:
            self._thread.join(5)
        zc, self._zc = self._zc, None
        if zc is None:
            return
        try:
            if self.registered.is_set():
                zc.unregister_service(self._info)
        finally:
            zc.close()


@dataclass(frozen=True)
class Dashboard:
    name: str  # the service's name without the type: "anima Nadine"
    url: str
    prefix: str
    body: str
    version: str


def find_dashboards(seconds: float = 2.0, *, loopback: bool = False) -> list[Dashboard]:
    """The anima dashboards announced on the LAN (on 127.0.0.1 only with ``loopback``)."""
    zc = _zeroconf()
    interfaces = ["127.0.0.1"] if loopback else zc.InterfaceChoice.All
    browser_zc = zc.Zeroconf(interfaces=interfaces, ip_version=zc.IPVersion.V4Only)
    names: set[str] = set()

    class Listener:
        def add_service(self, _zc: Any, _type: str, name: str) -> None:
            names.add(name)

        def update_service(self, _zc: Any, _type: str, name: str) -> None:
            names.add(name)

        def remove_service(self, _zc: Any, _type: str, name: str) -> None:
            names.discard(name)

    found: list[Dashboard] = []
    try:
        zc.ServiceBrowser(browser_zc, SERVICE, Listener())
        time.sleep(seconds)
        for name in sorted(names):
            info = browser_zc.get_service_info(SERVICE, name, timeout=1000)
            if info is None:
                continue
            props = {
                k.decode(): (v or b"").decode("utf-8", "replace")
                for k, v in info.properties.items()
            }
            if "anima" not in props or not info.parsed_addresses():
                continue  # another web server
            found.append(
                Dashboard(
                    name=name.removesuffix("." + SERVICE),
                    url=f"http://{info.parsed_addresses()[0]}:{info.port}{props.get('path', '/')}",
                    prefix=props.get("prefix", ""),
                    body=props.get("body", ""),
                    version=props["anima"],
                )
            )
    finally:
        browser_zc.close()
    return found
