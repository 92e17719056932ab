"""Seeing people: cameras (:mod:`anima.vision.sources`), faces (:mod:`anima.vision.faces`) and
the frame and face types they share (:mod:`anima.vision.types`). docs/attention.md.

The package imports neither OpenCV nor a model until a part is made: the optional engines are
in the ``vision`` extra.
"""

from anima.vision.types import Box, Camera, Face, FaceDetector, FrameSink, VideoFrame

__all__ = ["Box", "Camera", "Face", "FaceDetector", "FrameSink", "VideoFrame"]
