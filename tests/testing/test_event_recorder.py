"""anima.testing.EventRecorder: waits that wake on each event, and checks that fail."""

from __future__ import annotations

import threading

import pytest

from anima.events import EventHub, MoveFinished, Notice
from anima.testing import EventRecorder

pytestmark = pytest.mark.fast


def test_it_waits_for_an_event_by_type_kind_or_predicate_from_a_started_hub() -> None:
    hub = EventHub()
    recorder = EventRecorder().attach(hub)
    hub.start()
    try:
        timer = threading.Timer(0.05, hub.publish, [MoveFinished(name="nod", cut=False)])
        timer.start()
        assert recorder.wait_for(MoveFinished, timeout=5).name == "nod"
        mark = recorder.mark()
        hub.publish(Notice(source="a", message="one"))
        hub.publish(Notice(source="b", message="two"))
        second = recorder.wait_for(lambda e: getattr(e, "source", "") == "b", since=mark)
        assert second == Notice(source="b", message="two")
        assert [e.kind for e in recorder.of("notice")] == ["notice", "notice"]
        assert recorder.of(MoveFinished, since=mark) == []
        assert recorder.wait_for("notice", count=2) == Notice(source="b", message="two")
    finally:
        hub.stop()


def test_its_checks_fail_when_they_should() -> None:
    recorder = EventRecorder()
    recorder(Notice(source="x", message="y"))
    with pytest.raises(AssertionError, match=r"no matching event within 0\.05 s \(came: notice\)"):
        recorder.wait_for(MoveFinished, timeout=0.05)
    with pytest.raises(AssertionError, match=r"no matching event"):
        recorder.wait_for("notice", timeout=0.05, count=2)  # only one came
    with pytest.raises(AssertionError, match="must not come"):
        recorder.none_for("notice", seconds=0.01, since=0)
    recorder.none_for("notice", seconds=0.01)  # nothing new came after now
    recorder.detach()  # never attached: nothing to do
