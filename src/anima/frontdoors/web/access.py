"""Who may ask, and how a refusal answers: the token check and the refusal every route raises."""

from __future__ import annotations

import hmac


class RefusedError(Exception):
    """A request answered with ``status`` and the reason, as ``{"v":1,"path":…,"reason":…}``."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def token_matches(expected: str | None, given: str | None) -> bool:
    if expected is None:
        return True
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())
