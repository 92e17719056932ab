"""What the simulated head camera films (:mod:`anima.testing.head_camera`): people with real
faces, scripted over time, before a world-fixed background.

A person stands at a direction from the head's centre (azimuth positive to the robot's left,
elevation positive up, degrees) and a distance, facing the robot. Faces are photographs that
ship in scikit-image (a ``dev`` dependency): ``astronaut`` (public domain) cropped to the face,
and ``mirrored``, the same face mirrored and tinted, for a second person. The background is a
panorama of scikit-image's ``coffee`` (no face in it) tiled around the robot, a smooth gradient,
or one plain colour (a test then finds each drawn face's pixels exactly).
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.errors import ConfigError, MissingDependencyError
from anima.vision.types import Image

FACE_WIDTH_M = 0.16  # a typical face, cheek to cheek: what sets a face's size in the image
# astronaut(): rows and columns of a square crop centred on the face (between the eyes and the
# mouth), whose cheeks span 80 of its 200 pixels
_ASTRONAUT_CROP = (22, 222, 122, 322)
CROP_FACE_WIDTHS = 2.5  # a face image's width over the face's own width (hair and shoulders)
FACES = ("astronaut", "mirrored")  # the faces a Scene draws by name
BACKGROUNDS = ("coffee", "gradient")  # or a plain colour, (r, g, b)

FloatArray = NDArray[np.float64]
Colour = tuple[int, int, int]


def _skimage_data() -> Any:
    try:
        from skimage import data
    except ImportError as exc:
        raise MissingDependencyError("scikit-image", "dev") from exc
    return data


def face_image(name: str) -> Image:
    """A face by name (:data:`FACES`): a square RGB crop, the face centred in it and
    1/:data:`CROP_FACE_WIDTHS` of its width."""
    if name not in FACES:
        raise ConfigError(f"sim camera: face must be one of {', '.join(FACES)}, got {name!r}")
    y0, y1, x0, x1 = _ASTRONAUT_CROP
    face: Image = np.ascontiguousarray(_skimage_data().astronaut()[y0:y1, x0:x1])
    if name == "mirrored":  # another person to the tracker: mirrored, cooler and darker
        tinted = face[:, ::-1].astype(np.float32) * np.array([0.8, 0.9, 1.1], np.float32)
        face = np.ascontiguousarray(np.clip(tinted, 0, 255).astype(np.uint8))
    return face


def panorama(kind: str) -> Image:
    """A background all around the robot (:data:`BACKGROUNDS`): columns run from azimuth 0
    rightward (decreasing azimuth) round to 360°, rows from straight up to straight down."""
    if kind == "coffee":
        # four cups around, none mirrored (a mirrored seam is symmetric, and BlazeFace took one
        # for a face at 0.66), the middle of one straight ahead; stretched from zenith to nadir:
        # BlazeFace finds nothing in it above 0.3 for any yaw, pitch within ±10°
        cup = _skimage_data().coffee()
        row = np.concatenate([cup] * 4, axis=1)
        out: Image = np.ascontiguousarray(np.roll(row, -(cup.shape[1] // 2), axis=1))
        return out
    if kind == "gradient":  # hue by azimuth, brightness by elevation
        az = np.linspace(0, 2 * np.pi, 720, endpoint=False)[None, :]
        el = np.linspace(np.pi / 2, -np.pi / 2, 360)[:, None]
        rgb = [110 + 60 * np.cos(az + k * 2.1) + 40 * np.sin(el) for k in range(3)]
        gradient: Image = np.clip(np.stack(rgb, axis=-1), 0, 255).astype(np.uint8)
        return gradient
    raise _unknown(kind)


def _unknown(kind: str) -> ConfigError:
    return ConfigError(
        f"sim camera: background must be one of {', '.join(BACKGROUNDS)} or (r, g, b), got {kind!r}"
    )


@dataclass(frozen=True)
class Place:
    """Where a person's face is: a direction from the head's centre and a distance."""

    azimuth_deg: float  # positive to the robot's left
    elevation_deg: float = 0.0  # positive up
    distance_m: float = 1.0

    def point(self) -> FloatArray:
        """The face's centre in the robot frame (metres)."""
        az, el = math.radians(self.azimuth_deg), math.radians(self.elevation_deg)
        d = self.distance_m
        return d * np.array(
            [math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)]
        )


Path = Callable[[float], Place | None]  # a person's place at a time (None: not there)


@dataclass
class _Person:
    face: Image
    keys: list[tuple[float, Place | None]]  # (from this time, the place), sorted by time
    path: Path | None = None


class Scene:
    """People in the world, each with a face and a script of where they are over time.

    ``scene.add("ann", 0)``; ``scene.move("ann", 30, at=t)`` (a jump at ``t`` on the runtime
    clock); ``scene.follow("bob", lambda t: Place(10 * math.sin(t)))``; ``scene.remove("ann",
    at=t)``. Safe to script from one thread while a camera renders on another.
    """

    def __init__(self, background: str | Colour = "coffee") -> None:
        """``background``: one of :data:`BACKGROUNDS` or a plain colour (r, g, b)."""
        if isinstance(background, str):
            if background not in BACKGROUNDS:
                raise _unknown(background)
        elif len(background) != 3 or not all(0 <= int(c) <= 255 for c in background):
            raise ConfigError(f"sim camera: a plain background is (r, g, b), got {background!r}")
        self.background = background
        self._lock = threading.Lock()
        self._people: dict[str, _Person] = {}

    def add(
        self,
        name: str,
        azimuth_deg: float = 0.0,
        elevation_deg: float = 0.0,
        distance_m: float = 1.0,
        *,
        face: str | Image = "astronaut",
        at: float = -math.inf,
    ) -> None:
        """A person from ``at`` on (always, by default); ``face``: a name of :data:`FACES` or
        a square RGB image with the face centred, 1/:data:`CROP_FACE_WIDTHS` of its width."""
        place = _checked(name, Place(azimuth_deg, elevation_deg, distance_m))
        image = face_image(face) if isinstance(face, str) else np.ascontiguousarray(face)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ConfigError(f"sim camera: {name!r}'s face must be an RGB uint8 image")
        with self._lock:
            if name in self._people:
                raise ConfigError(f"sim camera: {name!r} is already in the scene")
            keys: list[tuple[float, Place | None]] = [(at, place)]
            if at != -math.inf:
                keys.insert(0, (-math.inf, None))
            self._people[name] = _Person(image, keys)

    def move(
        self,
        name: str,
        azimuth_deg: float | None = None,
        elevation_deg: float | None = None,
        distance_m: float | None = None,
        *,
        at: float,
    ) -> None:
        """From ``at`` on, ``name`` is there (what is not given stays as it was just before)."""
        with self._lock:
            person = self._person(name)
            before = _key_at(person.keys, at) or Place(0.0)
            place = _checked(
                name,
                Place(
                    before.azimuth_deg if azimuth_deg is None else azimuth_deg,
                    before.elevation_deg if elevation_deg is None else elevation_deg,
                    before.distance_m if distance_m is None else distance_m,
                ),
            )
            _insert(person.keys, at, place)

    def remove(self, name: str, *, at: float) -> None:
        """From ``at`` on, ``name`` is not there (out of the room)."""
        with self._lock:
            _insert(self._person(name).keys, at, None)

    def follow(self, name: str, path: Path) -> None:
        """``name`` moves on ``path`` (a place for each time), instead of the script."""
        with self._lock:
            self._person(name).path = path

    @property
    def names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._people)

    def place(self, name: str, t: float) -> Place | None:
        """Where ``name`` is at ``t`` (None: not there)."""
        with self._lock:
            person = self._person(name)
            path, keys = person.path, person.keys
        return path(t) if path is not None else _key_at(keys, t)

    def face(self, name: str) -> Image:
        with self._lock:
            return self._person(name).face

    def _person(self, name: str) -> _Person:
        try:
            return self._people[name]
        except KeyError:
            raise ConfigError(f"sim camera: nobody called {name!r} in the scene") from None


def _checked(name: str, place: Place) -> Place:
    values = (place.azimuth_deg, place.elevation_deg, place.distance_m)
    if not all(math.isfinite(v) for v in values) or place.distance_m <= 0:
        raise ConfigError(f"sim camera: {name!r} needs finite angles and a distance > 0: {place}")
    return place


def _key_at(keys: list[tuple[float, Place | None]], t: float) -> Place | None:
    i = bisect.bisect_right([k for k, _ in keys], t) - 1
    return keys[i][1] if i >= 0 else None


def _insert(keys: list[tuple[float, Place | None]], at: float, place: Place | None) -> None:
    times = [k for k, _ in keys]
    i = bisect.bisect_left(times, at)
    if i < len(keys) and keys[i][0] == at:
        keys[i] = (at, place)
    else:
        keys.insert(i, (at, place))
