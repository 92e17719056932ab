"""anima: a runtime that makes expressive robots come alive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.version import __version__

if TYPE_CHECKING:
    from anima.sdk.robot import Robot

__all__ = ["Robot", "__version__"]


def __getattr__(name: str) -> object:
    # lazily, so `import anima` (the CLI, the tests) stays light
    if name == "Robot":
        from anima.sdk.robot import Robot

        return Robot
    raise AttributeError(f"module 'anima' has no attribute {name!r}")
