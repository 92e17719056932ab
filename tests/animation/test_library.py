"""The animation library: XML folders by name, reloaded atomically, and what anima ships."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from anima.animation import AnimationLibrary, LoadReport, shipped_folder
from anima.body import load_body
from anima.errors import AnimationFileError, InvalidCommandError, UnknownAnimationError

pytestmark = pytest.mark.fast

CHANNELS = 28


def write_anim(folder: Path, filename: str, name: str, inner: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    body = inner or "<channel1>170 120 170</channel1>"
    path.write_text(
        f"<animation><animation_name>{name}</animation_name>{body}</animation>\n",
        encoding="utf-8",
    )
    return path


def loaded(*folders: Path) -> tuple[AnimationLibrary, LoadReport]:
    lib = AnimationLibrary(folders, CHANNELS)
    return lib, lib.load()


# --------------------------------------------------------------------------- loading


def test_every_xml_file_in_the_folders_is_loaded(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_anim(a, "one.xml", "wave")
    write_anim(a, "two.xml", "bow", "<channel13>40 90 40</channel13>")
    write_anim(b, "three.xml", "Posture_Up", "<channel9>150</channel9>")
    (a / "notes.txt").write_text("not an animation")
    (a / "backup.xml.bak").write_text("<broken")
    lib, report = loaded(a, b)
    assert report == LoadReport(loaded=3, files=3, errors=())
    assert lib.last_report is report
    assert lib.names() == ["Posture_Up", "bow", "wave"]
    assert len(lib) == 3
    assert "wave" in lib
    assert "nod" not in lib
    assert lib.get("wave").source == str(a / "one.xml")
    assert lib.get("Posture_Up").values() == {9: 150.0}


def test_the_library_is_empty_until_loaded(tmp_path: Path) -> None:
    write_anim(tmp_path, "one.xml", "wave")
    lib = AnimationLibrary([tmp_path], CHANNELS)
    assert len(lib) == 0
    assert lib.last_report == LoadReport(loaded=0, files=0, errors=())
    with pytest.raises(UnknownAnimationError):
        lib.get("wave")


def test_a_broken_file_is_skipped_and_reported_while_the_others_load(tmp_path: Path) -> None:
    write_anim(tmp_path, "a.xml", "wave")
    broken = write_anim(tmp_path, "b.xml", "bad", "<channel3>1 two 3</channel3>")
    (tmp_path / "c.xml").write_text("")
    write_anim(tmp_path, "d.xml", "bow")
    lib, report = loaded(tmp_path)
    assert lib.names() == ["bow", "wave"]
    assert report.loaded == 2
    assert report.files == 4
    assert len(report.errors) == 2
    first, second = report.errors
    assert isinstance(first, AnimationFileError)
    assert first.path == str(broken)
    assert first.element == "channel3"
    assert "'two' is not an integer" in str(first)
    assert second.path == str(tmp_path / "c.xml")
    assert "empty file" in str(second)


def test_a_duplicate_name_keeps_the_first_file_and_names_both(tmp_path: Path) -> None:
    first = write_anim(tmp_path / "a", "wave.xml", "wave", "<channel1>1 2</channel1>")
    second = write_anim(tmp_path / "b", "wave_copy.xml", "wave", "<channel2>3 4</channel2>")
    lib, report = loaded(tmp_path / "a", tmp_path / "b")
    assert lib.names() == ["wave"]
    assert lib.get("wave").source == str(first)
    assert lib.get("wave").channels == (1,)
    assert report.loaded == 1
    assert report.files == 2
    (err,) = report.errors
    assert err.path == str(second)
    assert err.element == "animation_name"
    assert str(first) in str(err)
    assert str(second) in str(err)
    assert "duplicate name 'wave'" in str(err)


def test_a_missing_folder_is_reported_not_fatal(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    write_anim(tmp_path / "real", "wave.xml", "wave")
    lib, report = loaded(missing, tmp_path / "real")
    assert lib.names() == ["wave"]
    (err,) = report.errors
    assert err.path == str(missing)
    assert "not a folder" in str(err)
    # a file given where a folder belongs is reported the same way
    lib, report = loaded(tmp_path / "real" / "wave.xml")
    assert len(lib) == 0
    assert "not a folder" in str(report.errors[0])


# --------------------------------------------------------------------------- reload


def test_reload_picks_up_added_removed_and_changed_files(tmp_path: Path) -> None:
    write_anim(tmp_path, "wave.xml", "wave", "<channel1>1 2</channel1>")
    gone = write_anim(tmp_path, "bow.xml", "bow")
    lib, _ = loaded(tmp_path)
    assert lib.names() == ["bow", "wave"]

    write_anim(tmp_path, "nod.xml", "nod")
    gone.unlink()
    write_anim(tmp_path, "wave.xml", "wave", "<channel1>5 6 7</channel1>")  # changed
    report = lib.reload()
    assert report == LoadReport(loaded=2, files=2, errors=())
    assert lib.names() == ["nod", "wave"]
    assert lib.get("wave").frame_count == 3
    with pytest.raises(UnknownAnimationError):
        lib.get("bow")


def test_a_reload_that_breaks_a_file_drops_only_that_animation(tmp_path: Path) -> None:
    write_anim(tmp_path, "wave.xml", "wave")
    write_anim(tmp_path, "bow.xml", "bow")
    lib, _ = loaded(tmp_path)
    (tmp_path / "bow.xml").write_text("<animation>")
    report = lib.reload()
    assert lib.names() == ["wave"]
    assert report.loaded == 1
    assert len(report.errors) == 1
    assert lib.last_report is report


def test_lookups_racing_a_reload_never_miss_a_name_in_both_tables(tmp_path: Path) -> None:
    write_anim(tmp_path, "stable.xml", "stable")
    for i in range(30):
        write_anim(tmp_path, f"extra{i:02}.xml", f"extra{i:02}")
    flicker = tmp_path / "flicker.xml"
    lib, _ = loaded(tmp_path)
    failures: list[BaseException] = []
    lookups = 0
    stop = threading.Event()

    def look() -> None:
        nonlocal lookups
        while not stop.is_set():
            try:
                assert lib.get("stable").name == "stable"
                assert "stable" in lib
                assert "stable" in lib.names()
                assert "extra07" in lib.gestures()
            except BaseException as exc:  # any failure, reported below
                failures.append(exc)
                return
            lookups += 1

    reader = threading.Thread(target=look, name="lookups")
    reader.start()
    reloads = 0
    deadline = time.monotonic() + 1.0
    try:
        # at least 10 reloads however slow the machine is, at most 200 or about a second
        while (time.monotonic() < deadline or reloads < 10) and reloads < 200 and not failures:
            # the old and the new tables differ (flicker comes and goes) but share "stable"
            if reloads % 2:
                flicker.unlink()
            else:
                write_anim(tmp_path, "flicker.xml", "flicker")
            lib.reload()
            reloads += 1
    finally:
        stop.set()
        reader.join(timeout=2.0)
    assert not reader.is_alive()
    assert failures == []
    assert reloads > 5
    assert lookups > 0


# --------------------------------------------------------------------------- lookup


def test_an_unknown_name_is_a_value_error_with_a_suggestion(tmp_path: Path) -> None:
    write_anim(tmp_path, "nod.xml", "nod")
    write_anim(tmp_path, "shake.xml", "shake")
    lib, _ = loaded(tmp_path)
    with pytest.raises(UnknownAnimationError) as info:
        lib.get("nodd")
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, InvalidCommandError)
    assert str(info.value) == "unknown animation 'nodd' (did you mean nod?)"
    with pytest.raises(UnknownAnimationError) as info:
        lib.get("xyzzy")
    assert str(info.value) == (  # nothing close: the shortest names, and how many
        "unknown animation 'xyzzy' (nothing close; did you mean one of nod, shake? 2 in all)"
    )


def test_postures_and_gestures_are_told_apart(tmp_path: Path) -> None:
    write_anim(tmp_path, "a.xml", "Posture_Up", "<channel9>150</channel9><channel1>170</channel1>")
    write_anim(tmp_path, "b.xml", "wave", "<channel13>40 90 40</channel13>")
    write_anim(tmp_path, "c.xml", "tilt", "<channel10>128 140</channel10><channel9>120</channel9>")
    lib, _ = loaded(tmp_path)
    assert lib.postures() == ["Posture_Up"]
    assert lib.gestures() == ["tilt", "wave"]


# --------------------------------------------------------------------------- what anima ships

SHIPPED = (
    "LOOKUPPostureDefault",
    "LOOKUPPostureDefaultBlink",
    "blink",
    "breathingSlow",
    "nod",
    "shake",
    "smile",
    "LOOKUP_Waving",
    "shakehand_TwoArgGesture",
    "Posture_LookAtInterviewer",
    "Posture_LookAtZoom",
    "SHUTDOWN_NADINE",
)
SHIPPED_POSTURES = ("LOOKUPPostureDefault", "Posture_LookAtInterviewer", "Posture_LookAtZoom")


@pytest.fixture(scope="module")
def shipped() -> AnimationLibrary:
    lib = AnimationLibrary([shipped_folder()], len(load_body()))
    lib.load()
    return lib


def test_the_shipped_library_loads_without_errors(shipped: AnimationLibrary) -> None:
    report = shipped.last_report
    assert report.errors == ()
    assert report.loaded == report.files == len(list(shipped_folder().glob("*.xml")))
    for name in SHIPPED:
        assert name in shipped, name


def test_the_shipped_postures_and_gestures(shipped: AnimationLibrary) -> None:
    for name in SHIPPED:
        assert shipped.get(name).is_posture == (name in SHIPPED_POSTURES), name
    assert set(SHIPPED_POSTURES) <= set(shipped.postures())
    assert set(SHIPPED) - set(SHIPPED_POSTURES) <= set(shipped.gestures())


def test_the_default_posture_sets_every_channel(shipped: AnimationLibrary) -> None:
    body = load_body()
    default = shipped.get("LOOKUPPostureDefault")
    assert default.channels == tuple(range(1, len(body) + 1))


def test_shipped_values_lie_within_the_body_ranges(shipped: AnimationLibrary) -> None:
    body = load_body()
    for name in shipped.names():
        anim = shipped.get(name)
        for j, c in enumerate(anim.channels):
            ch = body.channels[c - 1]
            column = anim.frames[:, j]
            where = f"{name}: channel{c} ({ch.name}) outside [{ch.min:g}, {ch.max:g}]"
            assert column.min() >= ch.min, where
            assert column.max() <= ch.max, where


def test_no_shipped_frame_has_both_lip_widths_active(shipped: AnimationLibrary) -> None:
    body = load_body()
    rule = body.lip_rule
    assert rule is not None
    for name in shipped.names():
        anim = shipped.get(name)
        columns = np.array([c - 1 for c in anim.channels])
        for i, row in enumerate(anim.frames):
            frame = body.defaults().copy()
            frame[columns] = row
            assert not rule.violated(frame), f"{name}: frame {i + 1} has lip_wide and lip_narrow"
