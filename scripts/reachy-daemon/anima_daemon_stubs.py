"""Stand-ins for what Pollen's Reachy Mini daemon imports but its mockup simulation never uses,
loaded first by ``anima_daemon_stubs.pth`` in ``.venv-reachy`` only (setup.sh).

reachy_mini 1.13.0 imports these packages at module level on the daemon's import path: PyGObject
(``gi``, for media), onnxruntime and huggingface_hub (face tracking, recorded moves, apps),
questionary, rich and rustypot (the motor tools), reachy_mini_motor_controller, pyusb and
libusb_package (the real robot's backend and audio). With ``--mockup-sim --no-media`` none is
called. Each resolves here to a stub module whose names are placeholder classes (good in
annotations, ``except`` clauses and as base classes); calling one raises RuntimeError, so a
real use fails loudly.

The daemon also always announces itself over mDNS: zeroconf is confined to 127.0.0.1 (IPv4,
unicast), so no announcement leaves the machine.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

STUBBED = {
    "gi",
    "onnxruntime",
    "huggingface_hub",
    "questionary",
    "rich",
    "rustypot",
    "reachy_mini_motor_controller",
    "usb",
    "libusb_package",
}


class _Placeholder(type):
    def __getattr__(cls, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _placeholder(f"{cls.__qualname__}.{attr}", cls.__module__)

    def __call__(cls, *args: object, **kwargs: object) -> Any:
        raise RuntimeError(
            f"anima's daemon stub: {cls.__module__}.{cls.__qualname__} was called, but it is not "
            "installed in this venv (scripts/reachy-daemon/anima_daemon_stubs.py)"
        )


def _placeholder(name: str, module: str) -> type:
    return _Placeholder(
        name.rsplit(".", 1)[-1], (Exception,), {"__qualname__": name, "__module__": module}
    )


class _StubModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = _placeholder(attr, self.__name__)
        setattr(self, attr, value)
        return value


class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: object, target: object = None) -> Any:
        if name.partition(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []
        if spec.name == "gi":
            module.require_version = lambda *args, **kwargs: None  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _confine(zeroconf: Any) -> None:
    """Zeroconf(…) on 127.0.0.1 only, IPv4, unicast: no 0.0.0.0:5353 listener, no multicast
    beyond loopback."""
    original = zeroconf.Zeroconf.__init__

    def confined(self: Any, *args: object, **kwargs: Any) -> None:
        keep = {k: v for k, v in kwargs.items() if k == "apple_p2p"}
        original(
            self,
            interfaces=["127.0.0.1"],
            unicast=True,
            ip_version=zeroconf.IPVersion.V4Only,
            **keep,
        )

    zeroconf.Zeroconf.__init__ = confined


class _ZeroconfHook(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> Any:
        if name != "zeroconf":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def exec_and_confine(module: types.ModuleType) -> None:
                run(module)
                _confine(module)

            spec.loader.exec_module = exec_and_confine  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _Stubs())
sys.meta_path.insert(0, _ZeroconfHook())
