"""People from faces: ids kept across frames, occlusions and fast moves; a smoothed direction;
facing; speaking from the mouth and from a voice's direction."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from anima.attention.tracker import Detection, OneEuro, Person, Tracker, wrap
from anima.listening.direction.types import VoiceDirection
from anima.vision.types import Box

pytestmark = pytest.mark.fast

FPS = 15.0
BOX = Box(0.4, 0.4, 0.5, 0.5)


def det(
    t: float,
    az_deg: float,
    el_deg: float = 0.0,
    *,
    distance: float = 1.2,
    yaw_deg: float | None = None,
    mouth: float | None = None,
) -> Detection:
    return Detection(
        t=t,
        azimuth=math.radians(az_deg),
        elevation=math.radians(el_deg),
        distance=distance,
        box=BOX,
        yaw_deg=yaw_deg,
        mouth_open=mouth,
    )


def voice(t: float, az_deg: float, *, speech: bool = True, own: bool = False) -> VoiceDirection:
    return VoiceDirection(
        t=t, azimuth=math.radians(az_deg), confidence=0.9, speech=speech, own_voice=own
    )


def frames(start: float, seconds: float) -> list[float]:
    return [start + k / FPS for k in range(round(seconds * FPS))]


def only(people: list[Person]) -> Person:
    assert len(people) == 1, people
    return people[0]


def test_one_face_keeps_one_id_and_its_jitter_is_smoothed() -> None:
    tracker = Tracker()
    rng = random.Random(3)
    raw, smooth, ids = [], [], set()
    for t in frames(0.0, 4.0):
        az = 10.0 + rng.gauss(0.0, 0.5)
        p = only(tracker.update(t, [det(t, az)]))
        raw.append(az)
        smooth.append(math.degrees(p.azimuth))
        ids.add(p.id)
    assert ids == {1}

    def spread(xs: list[float]) -> float:
        m = sum(xs) / len(xs)
        return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))

    assert spread(smooth[15:]) < 0.6 * spread(raw[15:])
    assert sum(smooth[15:]) / len(smooth[15:]) == pytest.approx(10.0, abs=0.3)


def test_two_people_keep_their_ids_while_they_move() -> None:
    tracker = Tracker()
    ids_left, ids_right = set(), set()
    for k, t in enumerate(frames(0.0, 2.0)):
        drift = 0.5 * k  # each walks 7.5°/s toward the other (20° → 5°, −20° → −5°)
        people = tracker.update(t, [det(t, 20.0 - drift), det(t, -20.0 + drift, distance=2.0)])
        assert len(people) == 2
        left = max(people, key=lambda p: p.azimuth)
        right = min(people, key=lambda p: p.azimuth)
        ids_left.add(left.id)
        ids_right.add(right.id)
    assert len(ids_left) == len(ids_right) == 1
    assert ids_left != ids_right


def test_a_brief_occlusion_keeps_the_id_and_the_last_direction() -> None:
    tracker = Tracker(lost_s=1.0)
    for t in frames(0.0, 1.0):
        first = only(tracker.update(t, [det(t, -15.0)]))
    for t in frames(1.0, 0.6):  # hidden for 0.6 s: the frames have no face
        hidden = only(tracker.update(t, []))
        assert hidden.id == first.id
        assert not hidden.visible
        assert math.degrees(hidden.azimuth) == pytest.approx(-15.0, abs=0.1)
    back = only(tracker.update(1.6, [det(1.6, -14.0)]))
    assert back.id == first.id
    assert back.visible


def test_an_occlusion_longer_than_lost_s_drops_the_person() -> None:
    tracker = Tracker(lost_s=1.0)
    first = only(tracker.update(0.0, [det(0.0, 5.0)]))
    assert tracker.update(0.9, []) != []
    assert tracker.update(1.1, []) == []
    again = only(tracker.update(1.2, [det(1.2, 5.0)]))
    assert again.id != first.id


def test_a_face_that_jumps_is_the_same_person_at_its_new_place_at_once() -> None:
    tracker = Tracker()
    for t in frames(0.0, 1.0):
        before = only(tracker.update(t, [det(t, 0.0)]))
    after = only(tracker.update(1.0, [det(1.0, 30.0)]))
    assert after.id == before.id
    assert math.degrees(after.azimuth) == pytest.approx(30.0)  # the filter restarted there


def test_a_face_of_another_size_far_away_is_someone_else() -> None:
    tracker = Tracker()
    first = only(tracker.update(0.0, [det(0.0, 0.0, distance=1.0)]))
    people = tracker.update(1 / FPS, [det(1 / FPS, 30.0, distance=3.0)])
    assert {p.id for p in people} == {first.id, first.id + 1}
    assert [p.visible for p in sorted(people, key=lambda p: p.id)] == [False, True]


def test_a_face_crossing_behind_the_robot_keeps_its_id_and_direction() -> None:
    tracker = Tracker()
    a = only(tracker.update(0.0, [det(0.0, 178.0)]))
    b = only(tracker.update(0.1, [det(0.1, -178.0)]))
    assert b.id == a.id
    assert abs(math.degrees(b.azimuth)) > 175.0  # filtered around ±180°, not through 0°
    assert wrap(math.radians(190.0)) == pytest.approx(math.radians(-170.0))


@pytest.mark.parametrize(
    ("yaw", "facing"), [(0.0, True), (-20.0, True), (30.0, False), (-70.0, False), (None, True)]
)
def test_facing_from_the_faces_yaw(yaw: float | None, facing: bool) -> None:
    p = only(Tracker().update(0.0, [det(0.0, 0.0, yaw_deg=yaw)]))
    assert p.facing is facing


def test_a_frame_the_mesh_did_not_read_keeps_the_last_yaw() -> None:
    """vision.detect_every: frames between the mesh's readings carry no yaw; the person
    turned away stays turned away."""
    tracker = Tracker()
    assert not only(tracker.update(0.0, [det(0.0, 0.0, yaw_deg=60.0)])).facing
    p = only(tracker.update(1 / FPS, [det(1 / FPS, 0.0, yaw_deg=None)]))
    assert not p.facing
    assert only(tracker.update(2 / FPS, [det(2 / FPS, 0.0, yaw_deg=5.0)])).facing


def test_a_mouth_read_every_other_frame_is_still_speaking() -> None:
    """The mesh on every 2nd frame at 15 fps (the default) reads a mouth at 7.5 Hz: enough
    for the speaking window."""
    tracker = Tracker()
    for k, t in enumerate(frames(0.0, 1.0)):
        mouth = None if k % 2 else (0.08 if k % 4 == 0 else 0.01)
        p = only(tracker.update(t, [det(t, 0.0, mouth=mouth)]))
    assert p.speaking


def test_a_moving_mouth_is_speaking_and_a_still_one_is_not() -> None:
    tracker = Tracker()
    talking = frames(0.0, 1.0)
    for k, t in enumerate(talking):
        p = only(tracker.update(t, [det(t, 0.0, mouth=0.08 if k % 3 == 0 else 0.01)]))
    assert p.speaking
    # silent again: still speaking for the hold (a pause between words), then not
    for t in frames(talking[-1] + 1 / FPS, 2.0):
        p = only(tracker.update(t, [det(t, 0.0, mouth=0.02)]))
        if t < talking[-1] + tracker.speaking_hold_s - 0.2:
            assert p.speaking
    assert not p.speaking
    quiet = Tracker()
    for t in frames(0.0, 1.0):
        q = only(quiet.update(t, [det(t, 0.0, mouth=0.05)]))  # open, but still
    assert not q.speaking


def test_a_voice_from_a_persons_direction_makes_them_the_speaker() -> None:
    tracker = Tracker()
    left = det(0.0, 30.0)
    right = det(0.0, -30.0)
    people = tracker.update(0.0, [left, right])
    left_id = max(people, key=lambda p: p.azimuth).id
    assert tracker.voice(voice(0.1, 40.0)) == left_id  # 10° off: matched
    speaking = {p.id: p.speaking for p in tracker.people(0.2)}
    assert speaking[left_id]
    assert not any(v for k, v in speaking.items() if k != left_id)
    assert not any(p.speaking for p in tracker.people(0.2 + tracker.speaking_hold_s))


@pytest.mark.parametrize(
    "heard",
    [
        voice(0.1, 0.0),  # nobody there
        voice(0.1, 30.0, own=True),  # the robot's own voice, from where a person is
        voice(0.1, 30.0, speech=False),  # a noise
    ],
)
def test_voices_that_match_nobody(heard: VoiceDirection) -> None:
    tracker = Tracker()
    tracker.update(0.0, [det(0.0, 30.0)])
    assert tracker.voice(heard) is None
    assert not only(tracker.people(0.2)).speaking


def test_a_late_frame_changes_nothing() -> None:
    tracker = Tracker()
    tracker.update(1.0, [det(1.0, 10.0)])
    p = only(tracker.update(0.9, [det(0.9, -40.0)]))
    assert math.degrees(p.azimuth) == pytest.approx(10.0)


def test_the_one_euro_filter_follows_a_step_without_overshoot() -> None:
    f = OneEuro(0.0, 0.0)
    out = [f(k / FPS, 1.0) for k in range(1, 60)]
    assert max(out) <= 1.0
    assert out[-1] == pytest.approx(1.0, abs=0.01)
    assert all(b >= a for a, b in itertools.pairwise(out))
