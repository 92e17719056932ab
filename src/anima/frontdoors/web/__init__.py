"""The dashboard front door: a REST API, a WebSocket of live state and events, and the page.

``WebFrontDoor`` runs uvicorn on its own thread (loopback by default; a token is required on
any other address). Commands are parsed by :mod:`anima.wire.payloads`, the same functions
the MQTT door uses, and executed by a :class:`~anima.frontdoors.dispatch.CommandDispatcher`.
"""

from anima.frontdoors.web.server import WebFrontDoor

__all__ = ["WebFrontDoor"]
