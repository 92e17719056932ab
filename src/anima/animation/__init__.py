"""Nadine's XML animations: the format, the library, and the animations anima ships."""

from anima.animation.library import AnimationLibrary, LoadReport, shipped_folder
from anima.animation.xml_format import (
    DEFAULT_FRAME_MS,
    Animation,
    parse_animation,
    parse_animation_file,
)

__all__ = [
    "DEFAULT_FRAME_MS",
    "Animation",
    "AnimationLibrary",
    "LoadReport",
    "parse_animation",
    "parse_animation_file",
    "shipped_folder",
]
