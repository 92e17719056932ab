"""One TLS context for anima's HTTP clients (the SDK's, the planners')."""

from __future__ import annotations

import functools
import ssl


@functools.cache
def client_tls() -> ssl.SSLContext:
    """httpx's default verifying context (certifi's authorities, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` as httpx reads them), made once per process and shared: httpx makes and
    loads one for every client it builds, even for an ``http://`` address (~0.13 s of CPU each
    on the 2-core machine), which the SDK paid at every :class:`~anima.sdk.Robot` opened and the
    planners at every client. An ``SSLContext`` is safe to share between threads."""
    import httpx

    return httpx.create_ssl_context()
