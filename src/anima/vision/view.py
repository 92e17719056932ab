"""The dashboard's camera view: a frame as JPEG with its faces boxed, the one attention looks
at in orange, the others in green, each with its detector score. Drawn where the frame's pixels
are: in the runtime's process for a camera there, in the vision process for one there
(:mod:`anima.vision.seeing`)."""

from __future__ import annotations

from collections.abc import Sequence

from anima.vision.types import Image

# a face to draw: its box (normalised x0, y0, x1, y1), its score, and whether it is looked at
Mark = tuple[float, float, float, float, float, bool]
LOOKED_AT = (0, 140, 255)  # BGR: orange
SEEN = (0, 200, 0)  # BGR: green


def render(image: Image, marks: Sequence[Mark], quality: int = 70) -> bytes | None:
    """``image`` (RGB) as JPEG at ``quality`` with ``marks`` drawn; None if encoding failed."""
    from anima.vision.sources.opencv import load_cv2

    cv2 = load_cv2()
    bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    h, w = bgr.shape[:2]
    for x0, y0, x1, y1, score, looked_at in marks:
        colour = LOOKED_AT if looked_at else SEEN
        p0 = (int(x0 * w), int(y0 * h))
        p1 = (int(x1 * w), int(y1 * h))
        cv2.rectangle(bgr, p0, p1, colour, 2 if looked_at else 1)
        cv2.putText(
            bgr, f"{score:.2f}", (p0[0], max(10, p0[1] - 3)),
            cv2.FONT_HERSHEY_SIMPLEX, 0.35, colour, 1,
        )  # fmt: skip
    ok, jpeg = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return bytes(jpeg) if ok else None
