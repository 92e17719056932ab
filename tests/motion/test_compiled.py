"""The compiled motion tick (anima.motion.compiled): used only when built for the sources as
they are, the same frames as plain Python, and plain Python said plainly when it runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from anima.motion import compiled

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sources the fingerprint reads, the module pointed at it, and an empty
    place for builds."""
    anima = Path(compiled.__file__).resolve().parents[1]
    copy = tmp_path / "anima"
    shutil.copytree(anima, copy, ignore=compiled._not_python)
    monkeypatch.setattr(compiled, "_ANIMA", copy)
    monkeypatch.setattr(compiled, "_HERE", copy / "motion")
    monkeypatch.setattr(compiled, "native_root", lambda: tmp_path / "native")
    monkeypatch.delenv("ANIMA_PURE_PYTHON", raising=False)
    monkeypatch.setattr(compiled, "_state", dict(compiled._state))  # this process's, kept
    return copy


def fake_build(fingerprint: str, root: Path, library: str = "") -> Path:
    """A build as ``anima compile`` lays one out, its shared library a Python module."""
    build = root / fingerprint
    (build / "anima" / "motion").mkdir(parents=True)
    name = f"fake{abs(hash(str(root)))}__mypyc"  # each test's own: imported modules are kept
    lib = build / f"{name}.py"
    lib.write_text(library or "LOADED = True\n", encoding="utf-8")
    manifest = {
        "fingerprint": fingerprint,
        "library": name,
        "files": {lib.name: lib.stat().st_size},
    }
    (build / "built.json").write_text(json.dumps(manifest))
    return build


def test_the_fingerprint_follows_every_byte_of_the_sources_the_build_depends_on(
    sources: Path,
) -> None:
    first = compiled.fingerprint()
    assert compiled.fingerprint() == first
    for edited in ("motion/offsets.py", "body/model.py", "events.py"):
        path = sources / edited
        text = path.read_bytes()
        path.write_bytes(text + b"\n# an edit\n")
        assert compiled.fingerprint() != first, edited
        path.write_bytes(text)
        assert compiled.fingerprint() == first
    # a module nothing compiled depends on does not rebuild the tick
    (sources / "agent" / "new_module.py").write_text("# an edit\n", encoding="utf-8")
    assert compiled.fingerprint() == first


def test_a_build_is_used_only_for_the_sources_it_was_made_from(
    sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    path: list[str] = []
    assert compiled.activate(path) is None
    assert compiled.status().startswith("plain Python (not built for these sources")
    assert "anima compile" in compiled.status()

    build = fake_build(compiled.fingerprint(), tmp_path / "native")
    assert compiled.activate(path) == str(build)
    assert path == [str(build / "anima" / "motion")]
    assert str(build) in sys.path  # where mypyc's shared library is found
    assert compiled.status() == f"compiled (mypyc) ({build})"

    # an edited source: the old build is not used, whatever is in it
    (sources / "motion" / "safety.py").write_text("# edited\n", encoding="utf-8")
    path.clear()
    assert compiled.activate(path) is None
    assert path == []
    assert compiled.status().startswith("plain Python (not built for these sources")


def test_a_damaged_build_is_not_used_and_says_so(
    sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    build = fake_build(compiled.fingerprint(), tmp_path / "native")
    (lib,) = build.glob("*__mypyc.py")
    lib.write_text("LOADED = True  # cut short\n", encoding="utf-8")
    path: list[str] = []
    assert compiled.activate(path) is None
    assert path == []
    assert compiled.status().startswith("plain Python (the build is damaged (")
    assert "not the size it was built" in compiled.status()
    assert compiled.status().endswith("anima compile --force)")
    for manifest in ("[]", "{}", "not json", '{"files": {"gone.so": 1}}'):
        (build / "built.json").write_text(manifest, encoding="utf-8")
        assert compiled.activate(path) is None, manifest
        assert path == []
        assert compiled.status().startswith("plain Python (the build is damaged ("), manifest


def test_a_build_whose_library_does_not_load_is_not_used(
    sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    fake_build(compiled.fingerprint(), tmp_path / "native", library="raise ImportError('x')\n")
    before = list(sys.path)
    path: list[str] = []
    assert compiled.activate(path) is None
    assert path == []
    assert sys.path == before
    assert compiled.status().startswith("plain Python (the build does not load (ImportError")


def test_anima_pure_python_runs_plain_python_whatever_is_built(
    sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_build(compiled.fingerprint(), tmp_path / "native")
    monkeypatch.setenv("ANIMA_PURE_PYTHON", "1")
    path: list[str] = []
    assert compiled.activate(path) is None
    assert path == []
    assert compiled.status() == "plain Python (ANIMA_PURE_PYTHON is set)"


def test_a_machine_without_a_compiler_is_told_what_is_missing(
    sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compiled.shutil, "which", lambda name: None)
    with pytest.raises(compiled.BuildError, match=r"needs a C compiler \(Debian: gcc\)"):
        compiled.build(quiet=True)


# --- the real build (make test's bootstrap made it) ----------------------------------------------
SCENE = """
import sys, numpy as np
from anima.bench.scene import set_gaze, set_lips, set_sway, wave
from anima.body import load_body
from anima.motion import compiled
from anima.testing import make_engine
body = load_body()
engine, driver, clock = make_engine(body=body)
set_lips(engine)
frames = []
for k in range(900):
    if k % 300 == 0:
        engine.queue_move(wave(body))
    if k % 3 == 0 and k < 600:
        set_gaze(engine, k)
    if k % 5 == 0 and k < 650:
        set_sway(engine, k)
    if k == 400:
        engine.set_offset("brow", deltas={"brows": 5.0}, bandwidth_hz=2.0)
    if k == 620:
        engine.clear_offset("gaze")
    if k == 700:
        engine.release_override("lips")
    if k == 750:
        engine.estop()
    if k == 800:
        engine.reset()
    engine.run(1)
    frames.append(engine.last_frame)
np.save(sys.argv[1], np.array(frames))
print(compiled.compiled())
"""


def run_scene(out: Path, *, pure: bool) -> bool:
    env = {k: v for k, v in os.environ.items() if k != "ANIMA_PURE_PYTHON"}
    if pure:
        env["ANIMA_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCENE, str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.integration
def test_the_compiled_tick_sends_the_same_frames_as_plain_python(tmp_path: Path) -> None:
    assert compiled.compiled(), (
        f"the motion tick is not compiled here: {compiled.status()} "
        "(make test's bootstrap builds it: anima compile says what it lacks)"
    )
    assert run_scene(tmp_path / "compiled.npy", pure=False)
    assert not run_scene(tmp_path / "plain.npy", pure=True)
    ours, theirs = np.load(tmp_path / "compiled.npy"), np.load(tmp_path / "plain.npy")
    assert ours.shape == (900, 28)
    assert np.ptp(ours, axis=0).max() > 10  # the scene moves: the comparison compares motion
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.integration
def test_the_motion_tests_pass_as_plain_python_too() -> None:
    """make test runs every test on the compiled tick; the plain one (a robot without a
    compiler) runs the motion package's own tests here."""
    env = dict(os.environ, ANIMA_PURE_PYTHON="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "tests/motion", "--ignore=tests/motion/test_compiled.py"],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]
