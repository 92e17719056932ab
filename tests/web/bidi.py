"""Headless Firefox driven over WebDriver BiDi, the W3C protocol Firefox speaks natively.

Firefox ≥ 129 serves BiDi itself on ``--remote-debugging-port`` (``ws://127.0.0.1:PORT/session``),
so no geckodriver is needed: Debian's ``firefox-esr`` is enough. (Playwright's ``moz-firefox``
channel speaks the same protocol but needs commands newer than the ESR, e.g.
``emulation.setMediaFeaturesOverride``.) This is the small part of the protocol the dashboard
tests use: navigate, evaluate, real pointer clicks and key presses (``input.performActions``),
screenshots, and the console and uncaught errors (``log.entryAdded``).
"""

from __future__ import annotations

import base64
import itertools
import json
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox") or "/usr/bin/firefox-esr"
ENTER = "\ue007"  # WebDriver's key code for Enter
_LISTENING = re.compile(r"WebDriver BiDi listening on (ws://\S+)")
STABLE_FRAMES = 3  # a click waits until the element's box is the same over this many frames
STABLE_TIMEOUT_S = 5.0
CLICK_ATTEMPTS = 3  # a click that did not reach its element is made again, this many in all
# marks the element when a click reaches it (capture: before the page's own handlers run)
_WATCH_JS = (
    "e => { e.__bidiClicked = false;"
    " e.addEventListener('click', () => { e.__bidiClicked = true; },"
    " {once: true, capture: true}); }"
)
_STABLE_JS = (  # resolves true once the element's box held still, false after the timeout
    "e => new Promise(resolve => {"
    f" const end = performance.now() + {STABLE_TIMEOUT_S * 1000:.0f};"
    " let last = '', same = 0;"
    " const check = () => {"
    "  const r = e.getBoundingClientRect();"
    "  const box = [r.x, r.y, r.width, r.height].join(',');"
    "  same = box === last ? same + 1 : 0; last = box;"
    f"  if (same >= {STABLE_FRAMES}) resolve(true);"
    "  else if (performance.now() > end) resolve(false);"
    "  else requestAnimationFrame(check);"
    " };"
    " check();"
    "})"
)
# offline and quiet: no update checks, telemetry or remote settings, no first-run pages
_PREFS = {
    "app.update.disabledForTesting": True,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "services.settings.server": "http://127.0.0.1:9/",
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "extensions.update.enabled": False,
    "remote.prefs.recommended": True,
}


class BidiError(RuntimeError):
    """The browser answered a command with an error, or did not answer in time."""


class Firefox:
    """One headless Firefox and one BiDi session on its first tab. Use :func:`firefox`."""

    def __init__(self, process: subprocess.Popen[str], ws: ClientConnection) -> None:
        self._process = process
        self._ws = ws
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.errors: list[str] = []  # console errors and uncaught exceptions, as text
        self._reader = threading.Thread(target=self._read, name="bidi-reader", daemon=True)
        self._reader.start()
        # a browser's first session is its slowest answer: 15 s was not enough once with four
        # test workers on two cores starting browsers together
        self.send("session.new", {"capabilities": {}}, timeout=45.0)
        self.send("session.subscribe", {"events": ["log.entryAdded"]})
        tree = self.send("browsingContext.getTree", {"maxDepth": 0})
        self.context: str = tree["contexts"][0]["context"]

    def _read(self) -> None:
        try:
            for raw in self._ws:
                msg = json.loads(raw)
                if "id" in msg:
                    with self._lock:
                        waiter = self._waiting.pop(msg["id"], None)
                    if waiter is not None:
                        waiter.put(msg)
                elif msg.get("method") == "log.entryAdded":
                    entry = msg["params"]
                    if entry.get("type") == "javascript" or entry.get("level") == "error":
                        self.errors.append(str(entry.get("text")))
        except ConnectionClosed:
            pass

    def send(self, method: str, params: dict[str, Any], timeout: float = 15.0) -> dict[str, Any]:
        """One command; its result, or :class:`BidiError` with the browser's message."""
        n = next(self._ids)
        answer: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=1)
        with self._lock:
            self._waiting[n] = answer
        self._ws.send(json.dumps({"id": n, "method": method, "params": params}))
        try:
            msg = answer.get(timeout=timeout)
        except queue.Empty:
            raise BidiError(f"{method}: no answer within {timeout} s") from None
        if msg.get("type") == "error":
            raise BidiError(f"{method}: {msg.get('error')}: {msg.get('message')}")
        result: dict[str, Any] = msg["result"]
        return result

    # -- pages -------------------------------------------------------------------------------

    def goto(self, url: str) -> None:
        params = {"context": self.context, "url": url, "wait": "complete"}
        self.send("browsingContext.navigate", params)

    def set_viewport(self, width: int, height: int) -> None:
        params = {"context": self.context, "viewport": {"width": width, "height": height}}
        self.send("browsingContext.setViewport", params)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (JSON-like values), or its exception as error."""
        return self._evaluate(expression, 15.0, expression)

    def _evaluate(self, expression: str, timeout: float, shown: str) -> Any:
        """``expression``'s value, a promise awaited; errors name it as ``shown``."""
        result = self.send(
            "script.evaluate",
            {"expression": expression, "target": {"context": self.context}, "awaitPromise": True},
            timeout=timeout,
        )
        if result["type"] == "exception":
            raise BidiError(f"{shown}: {result['exceptionDetails']['text']}")
        return _value(result["result"])

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        """Once ``expression`` is truthy, its value. One evaluate of a promise: the page checks
        the expression on each of its frames (as Playwright's ``wait_for_function`` does) and
        answers as soon as it holds, so nothing polls from here."""
        script = (
            "new Promise((resolve, reject) => {"
            f" const end = performance.now() + {timeout * 1000:.0f};"
            " const check = () => {"
            f"  let value; try {{ value = ({expression}); }} catch (e) {{ reject(e); return; }}"
            "  if (value) resolve({value});"
            "  else if (performance.now() > end) resolve(null);"
            "  else requestAnimationFrame(check);"
            " };"
            " check();"
            "})"
        )
        found = self._evaluate(script, timeout + 5.0, expression)
        if found is None:
            raise BidiError(f"not true within {timeout} s: {expression}")
        return found["value"]

    def _element(self, selector: str) -> dict[str, Any]:
        found = self.send(
            "browsingContext.locateNodes",
            {"context": self.context, "locator": {"type": "css", "value": selector}},
        )
        if not found["nodes"]:
            raise BidiError(f"no element matches {selector!r}")
        return {"sharedId": found["nodes"][0]["sharedId"]}

    def click(self, selector: str) -> None:
        """A real click (pointer move, down, up) in the middle of the element, once it has
        stopped moving: its box the same over :data:`STABLE_FRAMES` frames, as Playwright waits
        for before it clicks. Without that, a panel filled in above it after the page went live
        (28 px, in Firefox) moved the button between the pointer's aim and its press: the click
        landed on the page behind, and nothing happened. The element is then asked whether the
        click reached it (a listener put on it just before); a click that missed — the page
        still moved between the check and the press — is made again, as a person clicks again
        when nothing happened, up to :data:`CLICK_ATTEMPTS` times."""
        element = self._element(selector)
        for _attempt in range(CLICK_ATTEMPTS):
            self._call(element, "e => e.scrollIntoView({block: 'center'})")
            stable = self._call(element, _STABLE_JS, timeout=STABLE_TIMEOUT_S + 5.0)
            if stable["type"] == "exception" or not _value(stable["result"]):
                raise BidiError(f"{selector!r} kept moving for {STABLE_TIMEOUT_S:g} s: not clicked")
            self._call(element, _WATCH_JS)
            pointer = [
                {
                    "type": "pointerMove",
                    "x": 0,
                    "y": 0,
                    "origin": {"type": "element", "element": element},
                },
                {"type": "pointerDown", "button": 0},
                {"type": "pointerUp", "button": 0},
            ]
            self._act({"type": "pointer", "id": "mouse", "actions": pointer})
            reached = self._call(element, "e => e.__bidiClicked === true")
            if reached["type"] != "exception" and _value(reached["result"]):
                return
        raise BidiError(f"{selector!r}: {CLICK_ATTEMPTS} clicks never reached it")

    def _call(self, element: Any, function: str, timeout: float | None = None) -> Any:
        """``function`` called with the element, in the page (its promise awaited)."""
        params = {
            "functionDeclaration": function,
            "arguments": [element],
            "target": {"context": self.context},
            "awaitPromise": True,
        }
        return self.send("script.callFunction", params, 15.0 if timeout is None else timeout)

    def type(self, selector: str, text: str) -> None:
        """Click into the element, then press one key per character."""
        self.click(selector)
        self._press(text)

    def select(self, selector: str, value: str) -> None:
        """Choose an option of a ``<select>`` by value, as a person would with the keyboard:
        focus the list, type the option's label (type-ahead), press Enter."""
        self.click(selector)  # opens the list in a headed browser; focuses it here
        label = self.evaluate(
            f"document.querySelector({json.dumps(selector)} + ' option[value=' + "
            f"JSON.stringify({json.dumps(value)}) + ']').textContent"
        )
        self._press(label + ENTER)  # type-ahead, then Enter
        chosen = self.evaluate(f"document.querySelector({json.dumps(selector)}).value")
        if chosen != value:
            raise BidiError(f"{selector}: typing {label!r} chose {chosen!r}, not {value!r}")

    def _press(self, keys: str) -> None:
        """One key press per character (WebDriver key codes such as :data:`ENTER` included)."""
        actions: list[dict[str, Any]] = []
        for key in keys:
            actions += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        self._act({"type": "key", "id": "keyboard", "actions": actions})

    def _act(self, source: dict[str, Any]) -> None:
        self.send("input.performActions", {"context": self.context, "actions": [source]})
        self.send("input.releaseActions", {"context": self.context})

    def screenshot(self, path: Path) -> None:
        shot = self.send("browsingContext.captureScreenshot", {"context": self.context})
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        with suppress(BidiError, ConnectionClosed):
            self.send("browser.close", {}, timeout=5.0)
        self._ws.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)


def _value(remote: dict[str, Any]) -> Any:
    """A BiDi remote value as Python (primitives, arrays, plain objects)."""
    kind = remote["type"]
    if kind in ("undefined", "null"):
        return None
    if kind in ("string", "boolean"):
        return remote["value"]
    if kind == "number":
        value = remote["value"]
        return float("nan") if value == "NaN" else value
    if kind == "array":
        return [_value(v) for v in remote.get("value", [])]
    if kind == "object":
        return {_value(k) if isinstance(k, dict) else k: _value(v) for k, v in remote["value"]}
    return remote  # nodes, functions…: the raw description


@contextmanager
def firefox(
    profile: Path, *, executable: str = FIREFOX, timeout: float = 30.0
) -> Iterator[Firefox]:
    """Start headless Firefox with a fresh ``profile`` directory; close it on exit."""
    profile.mkdir(parents=True, exist_ok=True)
    prefs = "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in _PREFS.items())
    (profile / "user.js").write_text(prefs)
    args = [executable, "--headless", "--no-remote", "--profile", str(profile)]
    process = subprocess.Popen(
        [*args, "--remote-debugging-port=0", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines: queue.Queue[str] = queue.Queue()

    def drain() -> None:  # keep reading, so Firefox never blocks on a full stderr pipe
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)

    drainer = threading.Thread(target=drain, name="firefox-stderr", daemon=True)
    drainer.start()
    end = time.monotonic() + timeout
    url = None
    seen: list[str] = []
    while url is None:
        try:
            line = lines.get(timeout=max(0.0, end - time.monotonic()))
        except queue.Empty:
            process.kill()
            raise BidiError(
                f"Firefox did not start in {timeout} s: {''.join(seen)[-500:]}"
            ) from None
        seen.append(line)
        if match := _LISTENING.search(line):
            url = match.group(1) + "/session"
    browser = Firefox(process, connect(url, max_size=2**26, open_timeout=timeout))
    try:
        yield browser
    finally:
        browser.close()
        drainer.join(5.0)  # Firefox has ended: its stderr is at its end
        process.stderr.close()  # left open, the collector finds it later (a ResourceWarning)
