"""A real Mosquitto broker on a free loopback port, for tests (anima's and yours).

The same class ``anima serve`` runs as its zero-set-up broker
(:mod:`anima.frontdoors.mqtt.mosquitto`): its own config (loopback only, anonymous, sessions
kept across a restart unless ``persistence=False``, ``set_tcp_nodelay`` on unless asked
otherwise) in a temporary folder that ``stop()`` removes, ``mosquitto -c`` as a child process
this object owns. ``restart()`` (or ``halt()`` then ``start()``) brings it back on the same
port, so clients can be checked for reconnecting::

    with Mosquitto() as broker:
        door = MqttFrontDoor(runtime, config.mqtt, broker.address)
        ...
        broker.restart()

The Debian package is ``mosquitto``; when its binary cannot be found, :meth:`Mosquitto.start`
raises :class:`MosquittoNotFoundError` saying so (use :func:`find_mosquitto` to skip a test).
"""

from anima.frontdoors.mqtt.mosquitto import (
    Mosquitto,
    MosquittoError,
    MosquittoNotFoundError,
    find_mosquitto,
)

__all__ = ["Mosquitto", "MosquittoError", "MosquittoNotFoundError", "find_mosquitto"]
