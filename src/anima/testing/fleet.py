"""A robot on a broker for fleet tests: the simulated driver, no speech, no web, its own prefix
(and name), its MQTT door attached; not started."""

from __future__ import annotations

from anima.config import AnimaConfig, BehaviourConfig, MqttConfig, SpeechConfig, WebConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.wire.mqtt import BrokerAddress


def mqtt_robot(
    prefix: str, address: BrokerAddress, *, name: str | None = None
) -> tuple[Runtime, MqttFrontDoor]:
    cfg = AnimaConfig(
        mqtt=MqttConfig(prefix=prefix, name=name),
        behaviour=BehaviourConfig(full_blink_every_s=600.0),  # no periodic animation events
        speech=SpeechConfig(enabled=False),
        web=WebConfig(enabled=False),
    )
    runtime = Runtime(cfg, driver=SimDriver())
    door = MqttFrontDoor(runtime, cfg.mqtt, address)
    runtime.attach(door)
    return runtime, door
