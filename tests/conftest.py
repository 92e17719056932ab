"""Shared fixtures: a fast test body, an event hub with a recorder, the frames a sim was sent; and
the rule that every test names its tier.

Tiers (the markers in pyproject.toml), fastest first: ``make test`` runs them in this order, each
with ``pytest --tier NAME``, and stops at the first that fails; ``make test-fast`` runs ``fast``.

- ``fast``: unit and fake-time tests: no real broker, server, browser, subprocess or model, no
  wait on the real clock.
- ``integration``: real time: Mosquitto, servers on 127.0.0.1, browsers, subprocesses, the clock.
- ``model``: loads Whisper, Piper, Silero or pocketsphinx (in the test or a process it starts).
- ``serial``: asserts a wall-clock rate or plays audio in real time: run last, alone.

A file states its tier once (``pytestmark = pytest.mark.fast``); a test slower than its file names
its own (``@pytest.mark.serial`` in an integration file), which wins. A test with no tier, a node
naming two, or a test naming a faster tier than its file stops the run before it starts: a new
file cannot forget its tier.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rich.style  # noqa: F401  (see below)

from anima.body import Body, FloatArray, parse_body
from anima.drivers.sim import SimDriver
from anima.events import Event, EventHub

# rich is imported here, once, and not lazily in the middle of a hypothesis draw (a CLI's output or
# an error's formatting importing it): its import draws from the global random
# (rich/style.py: count(getrandbits(24))), which hypothesis reports as "Do not use the `random`
# module inside strategies" and warnings-as-errors failed the MQTT and web fuzz tests now and then.

TIERS = ("fast", "integration", "model", "serial")  # fastest first: make test's order


def _tiers(text: str) -> frozenset[str]:
    """``--tier``'s value: one tier, or several separated by commas."""
    names = frozenset(t.strip() for t in text.split(","))
    unknown = sorted(names - set(TIERS))
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown tier {', '.join(unknown)!r}: {', '.join(TIERS)}")
    return names


_DATA_HOME = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """The robot's memory (agent.memory, $XDG_DATA_HOME/anima/memory.sqlite3) of every runtime
    and `anima` process the tests start lives in a directory of this run's own, never in the
    developer's own memory file."""
    data = Path(tempfile.mkdtemp(prefix="anima-test-data-"))
    os.environ["XDG_DATA_HOME"] = str(data)
    config.stash[_DATA_HOME] = data


def pytest_unconfigure(config: pytest.Config) -> None:
    data = config.stash.get(_DATA_HOME, None)
    if data is not None:
        shutil.rmtree(data, ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        type=_tiers,
        help="run only this tier's tests (a test's own tier, else its class's, else its file's);"
        " several, comma-separated, run together",
    )
    parser.addoption(
        "--record-durations",
        action="store_true",
        help=f"write each file's time in this run into {DURATIONS.name} (its order of files)",
    )


# The slowest files first: xdist hands the workers whole files in collection order, and the
# heaviest (the browsers' tests/web/*) came last alphabetically, so the tier ended with one worker
# busy and the others idle. Each file's seconds in a recorded run (``--record-durations``, kept in
# tests/durations.json, refreshed by hand) give the order; a file not recorded counts as average.
DURATIONS = Path(__file__).with_name("durations.json")
_spent: dict[str, float] = {}


def slowest_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    try:
        weights: dict[str, float] = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return items
    average = sum(weights.values()) / len(weights) if weights else 0.0
    order = {
        path: n for n, path in enumerate(dict.fromkeys(i.nodeid.split("::")[0] for i in items))
    }
    return sorted(
        items,
        key=lambda i: (-weights.get(f := i.nodeid.split("::")[0], average), order[f]),
    )


# The files whose journeys run in real browsers go to one worker together: each test process
# launches Chromium and Firefox once (tests/web/browsers.py), and with a file per worker three
# workers launched both at the same moment (a fresh Firefox profile up to 20 s of set-up under
# that load), two of those launches for nothing.
BROWSER_FILES = frozenset(
    f"tests/web/{name}.py" for name in ("test_web_browser", "test_web_body", "test_web_fleet")
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the browser files as one unit of work (:data:`BROWSER_FILES`)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BrowsersTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return "tests/web/[browsers]" if path in BROWSER_FILES else path

    return BrowsersTogether(config, log)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::")[0]
    _spent[path] = _spent.get(path, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With ``--record-durations``, on the controller (or a run without workers): this run's
    files join tests/durations.json (to the nearest 0.1 s)."""
    if not session.config.getoption("--record-durations") or hasattr(session.config, "workerinput"):
        return
    try:
        known = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    known.update({path: round(seconds, 1) for path, seconds in _spent.items()})
    DURATIONS.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n", encoding="utf-8")


# a file's own tier, read without importing it: ``pytestmark = pytest.mark.fast`` or a list that
# starts with one; and every tier the file names anywhere (a test slower than its file names
# its own)
_FILE_TIER = re.compile(r"^pytestmark\s*=\s*\[?\s*pytest\.mark\.(\w+)", re.MULTILINE)
_TIER_NAMED = re.compile(r"pytest\.mark\.(" + "|".join(TIERS) + r")\b")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``--tier``, a file that names the tier nowhere (not as its own, not on a test) is not
    even imported: half of the fast tier's time was the import of the other tiers' files, and each
    worker of the slower tiers imported every fast file too. A file with no tier of its own is
    imported, so that the run stops on it."""
    wanted = config.getoption("--tier")
    if (
        wanted is None
        or collection_path.suffix != ".py"
        or not collection_path.name.startswith("test_")
    ):
        return None
    text = collection_path.read_text(encoding="utf-8")
    found = _FILE_TIER.search(text)
    if found is None or found[1] not in TIERS:
        return None
    if not wanted & set(_TIER_NAMED.findall(text)):
        return True
    return None


def tier_of(item: pytest.Item) -> str:
    """The tier a test names, else its class's, else its file's; raises ValueError when unclear."""
    named: list[str] = []
    for node in item.listchain():
        here = sorted({m.name for m in node.own_markers if m.name in TIERS}, key=TIERS.index)
        if len(here) > 1:
            raise ValueError(f"{' and '.join(here)} at once")
        named += here
    if not named:
        raise ValueError("no tier")
    if named != sorted(named, key=TIERS.index):
        raise ValueError(f"{named[-1]} inside {named[-2]}: a test may only be slower than its file")
    return named[-1]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test has one tier, or the run stops before it starts; ``--tier`` keeps its tiers."""
    wanted = config.getoption("--tier")
    wrong: list[str] = []
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        try:
            tier = tier_of(item)
        except ValueError as exc:
            wrong.append(f"  {item.nodeid}: {exc}")
            continue
        (kept if wanted is None or tier in wanted else dropped).append(item)
    if wrong:
        raise pytest.UsageError(
            f"{len(wrong)} test(s) without one clear tier of {', '.join(TIERS)}; a file says"
            " pytestmark = pytest.mark.<tier> (tests/conftest.py says which):\n"
            + "\n".join(wrong[:40])
            + (f"\n  … and {len(wrong) - 40} more" if len(wrong) > 40 else "")
        )
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = slowest_files_first(kept)


# A small body whose speed limits are effectively infinite, so the safety stage's step limiter
# cannot hide a discontinuity: any jump the motion layers make reaches the driver unchanged.
# Head channels are calibrated at 0.01 rad per unit around 128, with ranges wide enough that
# head-rotation tests never touch a limit.
FAST_BODY_INI = """\
[board]
channels = 9

[safety]
max_speed = 1000000

[channels]
1 = eyelids     170  40  225  role=eyelids closed=40
2 = eyes_yaw    128  0   255  role=eyes.yaw zero=128 rad=0.01
3 = lip_open    30   20  200  role=lips.open
4 = lip_wide    20   20  200  role=lips.wide
5 = lip_narrow  20   20  200  role=lips.narrow
6 = neck_yaw    128  0   255  role=neck.yaw zero=128 rad=0.01
7 = neck_pitch  128  0   255  role=neck.pitch zero=128 rad=0.01
8 = neck_roll   128  0   255  role=neck.roll zero=128 rad=0.01
9 = arm         100  0   1000
"""


@pytest.fixture
def fast_body() -> Body:
    return parse_body(FAST_BODY_INI, source="fast_body.ini")


@pytest.fixture
def hub() -> EventHub:
    """An event hub nobody starts: tests deliver with ``hub.drain()`` on their own thread."""
    return EventHub()


@pytest.fixture
def seen(hub: EventHub) -> list[Event]:
    """Every event published on ``hub``, appended when the test calls ``hub.drain()``."""
    events: list[Event] = []
    hub.subscribe(events.append)
    return events


def frames_of(driver: SimDriver) -> FloatArray:
    """Every frame in the driver's history as a (ticks × channels) array."""
    return np.array([f.values for f in driver.history()], dtype=np.float64)


@pytest.fixture
def frames() -> Callable[[SimDriver], FloatArray]:
    return frames_of
