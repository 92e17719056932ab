"""The two real browsers the dashboard is tested in, behind one small interface.

* ``chromium`` — Debian's Chromium, driven by Playwright (``executable_path`` set to it);
* ``firefox`` — Debian's Firefox ESR, driven over WebDriver BiDi (:mod:`.bidi`).

Each test journey is written once against :class:`Browser` and runs in both. A test process
launches each browser once (:class:`BrowserPool`, the ``browser`` fixture in ``conftest.py``): a
launch costs seconds, a fresh Firefox profile up to 18 s with four test workers on two cores.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from .bidi import FIREFOX, firefox

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BROWSERS = ["chromium", "firefox"]
VIEWPORT = (1400, 900)
T = TypeVar("T")
On = Callable[[Callable[[], T]], T]  # runs a call on the thread that owns the Playwright session


class Browser(Protocol):
    """One page in a real browser. Selectors are CSS; expressions are JavaScript."""

    errors: list[str]  # console errors and uncaught exceptions so far

    def goto(self, url: str) -> None: ...
    def click(self, selector: str) -> None: ...
    def type(self, selector: str, text: str) -> None: ...
    def select(self, selector: str, value: str) -> None: ...
    def evaluate(self, expression: str) -> Any: ...
    def wait_for(self, expression: str, timeout: float = 10.0) -> Any: ...
    def screenshot(self, path: Path) -> None: ...


class PlaywrightPage:
    """:class:`Browser` over a Playwright page, each call run on the thread that owns it (``on``).

    Playwright's sync API is bound to the thread that started it and keeps an asyncio loop
    there: on the test's thread it would refuse every later ``asyncio.run`` of the process (a
    WebSocket client in another test), so a browser kept across tests lives on a thread of its
    own."""

    def __init__(self, page: Any, on: On[Any]) -> None:
        self._page = page
        self._on = on
        self.errors: list[str] = []

        def listen() -> None:
            page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: self.errors.append(str(e)))

        on(listen)  # a subscription too runs on Playwright's loop, on its thread

    def goto(self, url: str) -> None:
        self._on(lambda: self._page.goto(url))

    def click(self, selector: str) -> None:
        self._on(lambda: self._page.click(selector))

    def type(self, selector: str, text: str) -> None:
        def click_and_type() -> None:
            self._page.click(selector)
            self._page.keyboard.type(text)

        self._on(click_and_type)

    def select(self, selector: str, value: str) -> None:
        self._on(lambda: self._page.select_option(selector, value))

    def evaluate(self, expression: str) -> Any:
        return self._on(lambda: self._page.evaluate(expression))

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        return self._on(
            lambda: self._page.wait_for_function(expression, timeout=timeout * 1000).json_value()
        )

    def screenshot(self, path: Path) -> None:
        self._on(lambda: self._page.screenshot(path=str(path)))


@contextmanager
def open_browser(name: str, tmp_path: Path) -> Iterator[Browser]:
    """A page in the named browser (``chromium`` or ``firefox``); skips, saying why, when that
    browser is not installed."""
    if name == "chromium":
        with _chromium() as page:
            yield page
    elif name == "firefox":
        if not Path(FIREFOX).exists():
            pytest.skip("Debian firefox-esr is not installed (scripts/apt-packages.txt)")
        with firefox(tmp_path / "firefox-profile") as ff:
            ff.set_viewport(*VIEWPORT)
            yield ff
    else:
        raise ValueError(f"unknown browser {name!r}: one of {', '.join(BROWSERS)}")


@contextmanager
def _chromium() -> Iterator[PlaywrightPage]:
    """Chromium's page, its Playwright session on a thread of its own (see PlaywrightPage)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (scripts/apt-packages.txt)")
    owner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="playwright")

    def on(call: Callable[[], T]) -> T:
        return owner.submit(call).result()

    try:
        p = on(lambda: sync_api.sync_playwright().start())
        try:
            browser = on(lambda: p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS))
            try:
                width, height = VIEWPORT
                viewport = {"width": width, "height": height}
                yield PlaywrightPage(on(lambda: browser.new_page(viewport=viewport)), on)
            finally:
                on(browser.close)
        finally:
            on(p.stop)
    finally:
        owner.shutdown(wait=True)


class BrowserPool:
    """The browsers of one test process, each launched on its first use and closed at the end
    (or when a test left it broken): the tests share them, each on a page of its own."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._open: dict[str, tuple[ExitStack, Browser]] = {}
        self._launches = 0

    def get(self, name: str) -> Browser:
        """The named browser, launched now if it is not open; skips when it is not installed."""
        if name not in self._open:
            self._launches += 1  # a fresh profile each time: a dead browser's may be locked
            stack = ExitStack()
            browser = stack.enter_context(open_browser(name, self._root / str(self._launches)))
            self._open[name] = (stack, browser)
        return self._open[name][1]

    def discard(self, name: str) -> None:
        """Close the named browser (the next test launches another)."""
        opened = self._open.pop(name, None)
        if opened is not None:
            opened[0].close()

    def close(self) -> None:
        for name in list(self._open):
            self.discard(name)
