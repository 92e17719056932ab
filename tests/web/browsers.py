"""The two real browsers the dashboard is tested in, behind one small interface.

* ``chromium`` — Debian's Chromium, driven by Playwright (``executable_path`` set to it);
* ``firefox`` — Debian's Firefox ESR, driven over WebDriver BiDi (:mod:`.bidi`).

Each test journey is written once against :class:`Browser` and runs in both.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

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
    """:class:`Browser` over a Playwright page."""

    def __init__(self, page: Any) -> None:
        self._page = page
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def goto(self, url: str) -> None:
        self._page.goto(url)

    def click(self, selector: str) -> None:
        self._page.click(selector)

    def type(self, selector: str, text: str) -> None:
        self._page.click(selector)
        self._page.keyboard.type(text)

    def select(self, selector: str, value: str) -> None:
        self._page.select_option(selector, value)

    def evaluate(self, expression: str) -> Any:
        return self._page.evaluate(expression)

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        return self._page.wait_for_function(expression, timeout=timeout * 1000).json_value()

    def screenshot(self, path: Path) -> None:
        self._page.screenshot(path=str(path))


@contextmanager
def open_browser(name: str, tmp_path: Path) -> Iterator[Browser]:
    """A page in the named browser (``chromium`` or ``firefox``); skips, saying why, when that
    browser is not installed."""
    if name == "chromium":
        sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
        if not Path(CHROMIUM).exists():
            pytest.skip("Debian chromium is not installed (scripts/apt-packages.txt)")
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                width, height = VIEWPORT
                yield PlaywrightPage(browser.new_page(viewport={"width": width, "height": height}))
            finally:
                browser.close()
    elif name == "firefox":
        if not Path(FIREFOX).exists():
            pytest.skip("Debian firefox-esr is not installed (scripts/apt-packages.txt)")
        with firefox(tmp_path / "firefox-profile") as ff:
            ff.set_viewport(*VIEWPORT)
            yield ff
    else:
        raise ValueError(f"unknown browser {name!r}: one of {', '.join(BROWSERS)}")
