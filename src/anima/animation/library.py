"""The animation library: every ``*.xml`` in the configured folders, by ``<animation_name>``.

Loading never fails as a whole: a broken file is skipped and reported (``LoadReport.errors``),
and so is anything that is not a regular file (a FIFO or a directory named ``*.xml``, a link
to a device). ``reload()`` builds a new table and its report on the calling thread (the
runtime's reload thread) and swaps both in one assignment, so lookups from other threads see
either the whole old library or the whole new one, and the motion loop never waits: it never
looks at the library, and parsing holds the GIL only in short pieces.

Names are looked up as people write them (:mod:`anima.language.names`): ``get("wave")`` and
``get("lookup_waving")`` give ``LOOKUP_Waving``, whose ``name`` is what every command built
from it, and every event, carries. :meth:`AnimationLibrary.resolve` is that lookup, done once
for every door (the payload parsers, the behaviour's ``play_animation``, the agent's actions);
an unknown name is refused with the closest names and aliases.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from anima.animation.xml_format import Animation, parse_animation_file
from anima.errors import AnimationFileError, ConfigError, UnknownAnimationError
from anima.language.names import Names

if TYPE_CHECKING:
    from anima.config import AnimationConfig

log = logging.getLogger(__name__)


SHIPPED_SETS = ("nadine", "reachy_mini")  # the animation sets that ship, by body


def shipped_folder(animations: str = "nadine") -> Path:
    """The folder of the animations that ship with anima for a body (its ``[body]
    animations``): Nadine's in ``data/``, another body's in ``data/<name>/``."""
    if animations not in SHIPPED_SETS:
        raise ConfigError(
            f"body animations {animations!r}: no such shipped set "
            f"(shipped: {', '.join(SHIPPED_SETS)})"
        )
    root = Path(str(resources.files("anima.animation") / "data"))
    return root if animations == "nadine" else root / animations


def configured_folders(config: AnimationConfig, animations: str = "nadine") -> list[Path]:
    """The folders ``config`` names, the body's shipped set first when ``animation.shipped``."""
    folders = [shipped_folder(animations)] if config.shipped else []
    return folders + [Path(f) for f in config.folders]


@dataclass(frozen=True, kw_only=True)
class LoadReport:
    loaded: int  # animations now in the library
    files: int  # XML files looked at
    errors: tuple[AnimationFileError, ...]  # files skipped, each with its reason

    def summary(self, shown: int = 5) -> str:
        """One line: what loaded, and the first ``shown`` files skipped (the rest counted)."""
        line = f"animations: {self.loaded} loaded from {self.files} files"
        if self.errors:
            named = "; ".join(str(e) for e in self.errors[:shown])
            more = len(self.errors) - shown
            if more > 0:  # a folder of thousands of bad files must not make a megabyte line
                named += f"; and {more} more (anima animations validate lists them all)"
            line += f", {len(self.errors)} skipped: {named}"
        return line


class AnimationLibrary:
    """Name → :class:`Animation`, loaded from folders of XML files."""

    def __init__(self, folders: Iterable[str | Path], channel_count: int) -> None:
        self.folders = tuple(Path(f) for f in folders)
        self.channel_count = channel_count
        # the table, the report that describes it and the names' spellings and aliases,
        # swapped together in one assignment
        self._state: tuple[Mapping[str, Animation], LoadReport, Names] = (
            {},
            LoadReport(loaded=0, files=0, errors=()),
            Names(()),
        )
        self._lock = threading.Lock()  # one reload at a time; lookups take no lock

    @property
    def _animations(self) -> Mapping[str, Animation]:
        return self._state[0]

    @property
    def last_report(self) -> LoadReport:
        """What the last load found (``loaded`` counts the table lookups see now)."""
        return self._state[1]

    def load(self) -> LoadReport:
        """(Re)load every folder; the new table replaces the old one atomically."""
        with self._lock:
            table: dict[str, Animation] = {}
            errors: list[AnimationFileError] = []
            files = 0
            for folder in self.folders:
                if not folder.is_dir():
                    errors.append(AnimationFileError(str(folder), None, "not a folder"))
                    continue
                for path in sorted(folder.glob("*.xml")):
                    files += 1
                    try:
                        anim = parse_animation_file(path, self.channel_count)
                    except AnimationFileError as exc:
                        errors.append(exc)
                        continue
                    if anim.name in table:
                        first = table[anim.name].source
                        errors.append(
                            AnimationFileError(
                                str(path),
                                "animation_name",
                                f"duplicate name {anim.name!r} (already loaded from {first})",
                            )
                        )
                        continue
                    table[anim.name] = anim
            report = LoadReport(loaded=len(table), files=files, errors=tuple(errors))
            self._state = (table, report, Names(table))
            for err in errors:
                log.warning("animation skipped: %s", err)
            return report

    reload = load

    def get(self, name: str) -> Animation:
        """The animation ``name`` stands for: its own name, another spelling or an alias
        (``wave``); its ``name`` is the library's. UnknownAnimationError with the closest."""
        table, _, names = self._state  # one snapshot: a reload may swap the state meanwhile
        found = table.get(name)
        if found is not None:
            return found
        real = names.resolve(name)
        if real is None:
            raise UnknownAnimationError(names.refusal(name))
        return table[real]

    def resolve(self, name: str) -> str:
        """The library's name for ``name`` (itself, another spelling, an alias: ``wave`` →
        ``LOOKUP_Waving``); UnknownAnimationError saying what is close when there is none."""
        return self.get(name).name

    def aliases(self) -> dict[str, str]:
        """Friendly name → the library's name, for the animations loaded now."""
        return self._state[2].aliases()

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is one of the library's own names (exactly: no alias)."""
        return name in self._animations

    def __len__(self) -> int:
        return len(self._animations)

    def names(self) -> list[str]:
        return sorted(self._animations)

    def postures(self) -> list[str]:
        return sorted(n for n, a in self._animations.items() if a.is_posture)

    def gestures(self) -> list[str]:
        return sorted(n for n, a in self._animations.items() if not a.is_posture)
