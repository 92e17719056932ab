"""`anima animations …` in-process (typer's runner), and a SIGHUP reload of a real `anima serve`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from anima.animation import AnimationLibrary, shipped_folder
from anima.body import load_body
from anima.cli import app
from anima.testing.serve import ServeProcess

pytestmark = pytest.mark.integration

runner = CliRunner()

# A 9-channel body whose channel 9 is an arm, not the shipped body's neck_pitch.
SMALL_BODY_INI = """\
[board]
channels = 9

[channels]
1 = eyelids     170  40  225  role=eyelids closed=40
2 = eyes_yaw    128  0   255  role=eyes.yaw zero=128 rad=0.01
3 = lip_open    30   20  200  role=lips.open
4 = lip_wide    20   20  200  role=lips.wide
5 = lip_narrow  20   20  200  role=lips.narrow
6 = neck_yaw    128  0   255  role=neck.yaw zero=128 rad=0.01
7 = neck_pitch  128  0   255  role=neck.pitch zero=128 rad=0.01
8 = neck_roll   128  0   255  role=neck.roll zero=128 rad=0.01
9 = arm         100  0   250
"""


def write_anim(folder: Path, filename: str, name: str, inner: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text(
        f"<animation><animation_name>{name}</animation_name>{inner}</animation>\n",
        encoding="utf-8",
    )
    return path


def shipped_names() -> list[str]:
    lib = AnimationLibrary([shipped_folder()], len(load_body()))
    lib.load()
    return lib.names()


# --------------------------------------------------------------------------- list and show


def test_list_shows_every_animation() -> None:
    result = runner.invoke(app, ["animations", "list"])
    assert result.exit_code == 0, result.output
    names = shipped_names()
    assert len(names) >= 12
    listed = [line.split()[0] for line in result.output.splitlines() if line.strip()]
    assert listed == names
    assert re.search(r"^nod\s+1\.26 s\s+2 channels\s+nod\.xml$", result.output, re.M)
    assert re.search(r"^Posture_LookAtZoom\s+posture\s+6 channels", result.output, re.M)


def test_list_includes_configured_folders_and_reports_skipped_files(tmp_path: Path) -> None:
    folder = tmp_path / "anims"
    write_anim(folder, "wiggle.xml", "wiggle", "<channel4>128 140 128</channel4>")
    broken = write_anim(folder, "broken.xml", "broken", "<channel4>1 x</channel4>")
    config = tmp_path / "anima.yaml"
    config.write_text(f"animation:\n  folders: [{folder}]\n")
    result = runner.invoke(app, ["animations", "list", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert re.search(r"^wiggle\s", result.output, re.M)
    assert re.search(r"^nod\s", result.output, re.M)
    assert f"skipped: {broken}: <channel4>: frame 2: 'x' is not an integer" in result.output


def test_show_prints_each_channel_with_its_range() -> None:
    result = runner.invoke(app, ["animations", "show", "nod"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"nod: {shipped_folder() / 'nod.xml'}"
    assert lines[1].strip() == "43 frames, 1.26 s, 30 ms per frame"
    assert re.fullmatch(r"\s+channel4\s+brows\s+128 …\s+140", lines[2])
    assert re.fullmatch(r"\s+channel9\s+neck_pitch\s+122 …\s+150", lines[3])
    assert len(lines) == 4


def test_show_a_posture() -> None:
    result = runner.invoke(app, ["animations", "show", "Posture_LookAtZoom"])
    assert result.exit_code == 0, result.output
    assert "posture, 30 ms per frame" in result.output
    assert re.search(r"channel8\s+neck_yaw\s+138 …\s+138", result.output)


def test_show_an_unknown_name_suggests_close_ones() -> None:
    result = runner.invoke(app, ["animations", "show", "nodd"])
    assert result.exit_code == 2
    assert "error: unknown animation 'nodd' (did you mean nod?)" in result.output
    assert "Traceback" not in result.output


def test_show_labels_channels_with_the_configured_body(tmp_path: Path) -> None:
    ini = tmp_path / "small.ini"
    ini.write_text(SMALL_BODY_INI)
    folder = tmp_path / "anims"
    write_anim(folder, "lift.xml", "lift", "<channel9>100 200</channel9>")
    config = tmp_path / "anima.yaml"
    config.write_text(f"body:\n  checker_ini: {ini}\nanimation:\n  folders: [{folder}]\n")
    result = runner.invoke(app, ["animations", "show", "lift", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert re.search(r"channel9\s+arm\s", result.output), result.output


# --------------------------------------------------------------------------- validate


def test_validate_a_good_file(tmp_path: Path) -> None:
    good = write_anim(tmp_path, "wave.xml", "wave", "<channel13>40 90 40</channel13>")
    result = runner.invoke(app, ["animations", "validate", str(good)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{good}: ok (wave, 3 frames)"


def test_validate_the_shipped_folder() -> None:
    result = runner.invoke(app, ["animations", "validate", str(shipped_folder())])
    assert result.exit_code == 0, result.output
    assert result.output.count(": ok (") == len(list(shipped_folder().glob("*.xml")))
    assert "ok (Posture_LookAtZoom, posture)" in result.output


def test_validate_a_folder_with_a_bad_file(tmp_path: Path) -> None:
    good = write_anim(tmp_path, "a_good.xml", "wave", "<channel13>40 90 40</channel13>")
    bad = write_anim(tmp_path, "b_bad.xml", "oops", "<channel2>128 300</channel2>")
    result = runner.invoke(app, ["animations", "validate", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{good}: ok (wave, 3 frames)" in result.output
    assert f"error: {bad}: <channel2>: frame 2: 300 is outside 0–255" in result.output


def test_validate_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "gone.xml"
    result = runner.invoke(app, ["animations", "validate", str(missing)])
    assert result.exit_code == 2
    assert f"error: {missing}: cannot read" in result.output


def test_validate_refuses_a_fifo_a_device_link_and_a_big_file_each_in_one_line(
    tmp_path: Path,
) -> None:
    good = write_anim(tmp_path, "a_good.xml", "wave", "<channel13>40 90 40</channel13>")
    fifo = tmp_path / "b_pipe.xml"
    os.mkfifo(fifo)
    zero = tmp_path / "c_zero.xml"
    zero.symlink_to("/dev/zero")
    big = tmp_path / "d_big.xml"
    with big.open("wb") as f:
        f.truncate(9 * 1024 * 1024)
    done: list[Result] = []
    worker = threading.Thread(
        target=lambda: done.append(runner.invoke(app, ["animations", "validate", str(tmp_path)])),
        daemon=True,  # a regression blocks on the FIFO: the test fails instead of hanging
    )
    worker.start()
    worker.join(30)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert done, "validate blocked"
    result = done[0]
    assert result.exit_code == 2
    assert result.stdout == f"{good}: ok (wave, 3 frames)\n"
    assert result.stderr.splitlines() == [
        f"error: {fifo}: a FIFO, not a regular file: not read",
        f"error: {zero}: a character device, not a regular file: not read",
        f"error: {big}: 9.0 MiB is over the limit of 8.0 MiB",
    ]


def test_validate_uses_the_configured_body(tmp_path: Path) -> None:
    ini = tmp_path / "small.ini"
    ini.write_text(SMALL_BODY_INI)
    far = write_anim(tmp_path / "anims", "far.xml", "far", "<channel20>100 200</channel20>")
    result = runner.invoke(
        app, ["animations", "validate", str(far)], env={"ANIMA_BODY__CHECKER_INI": str(ini)}
    )
    assert result.exit_code == 2, result.output
    assert "channel 20 is beyond the body's 9 channels" in result.output


# --------------------------------------------------------------------------- reload


def _pid_file(folder: Path, prefix: str = "nadine") -> Path:
    return folder / f"anima-{os.getuid()}-{prefix}.pid"


def test_reload_without_a_running_server(tmp_path: Path) -> None:
    result = runner.invoke(app, ["animations", "reload"], env={"XDG_RUNTIME_DIR": str(tmp_path)})
    assert result.exit_code == 2
    assert "error: no running anima serve found" in result.output
    assert str(tmp_path) in result.output


def test_reload_with_a_garbled_pid_file(tmp_path: Path) -> None:
    _pid_file(tmp_path).write_text("not a pid\n")
    result = runner.invoke(app, ["animations", "reload"], env={"XDG_RUNTIME_DIR": str(tmp_path)})
    assert result.exit_code == 2
    assert "error: no running anima serve found" in result.output
    assert "does not hold a process id" in result.output


def test_reload_does_not_signal_a_process_that_is_not_anima_serve(tmp_path: Path) -> None:
    # a process of ours standing in for an unrelated one that reused a dead server's pid
    victim = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
    try:
        _pid_file(tmp_path).write_text(str(victim.pid))
        result = runner.invoke(
            app, ["animations", "reload"], env={"XDG_RUNTIME_DIR": str(tmp_path)}
        )
        with pytest.raises(subprocess.TimeoutExpired):
            victim.wait(timeout=1.0)  # still alive
        assert result.exit_code == 2, result.output
        assert "stale pid file" in result.output
    finally:
        victim.kill()
        victim.wait(timeout=5)


class Server(ServeProcess):
    """`anima serve` for these tests: its own runtime folder and prefix, no MQTT, no web."""

    def __init__(self, tmp_path: Path, *args: str, prefix: str = "nadine") -> None:
        env: dict[str, str | None] = {
            "ANIMA_CONFIG": None,  # the test's own --config only
            "XDG_RUNTIME_DIR": str(tmp_path),
            "ANIMA_MQTT__PREFIX": prefix,  # the instance's name: its pid file
            "ANIMA_MQTT__ENABLED": "false",  # reload is the subject, not MQTT
            "ANIMA_WEB__ENABLED": "false",  # no dashboard: tests would share port 8080
        }
        super().__init__(args, env=env, cwd=tmp_path)


def test_sighup_reloads_the_animations_of_a_running_server(tmp_path: Path) -> None:
    folder = tmp_path / "anims"
    write_anim(folder, "first.xml", "extra_first", "<channel4>128 140 128</channel4>")
    config = tmp_path / "anima.yaml"
    config.write_text(f"animation:\n  folders: [{folder}]\n")
    shipped = len(shipped_names())
    pid_file = _pid_file(tmp_path)

    server = Server(tmp_path, "--config", str(config))
    try:
        server.wait_for(rf"animations: {shipped + 1} loaded from {shipped + 1} files$")
        server.wait_for("anima ready")
        assert pid_file.read_text().strip() == str(server.proc.pid)

        write_anim(folder, "second.xml", "extra_second", "<channel13>40 90 40</channel13>")
        broken = write_anim(folder, "third.xml", "broken", "<channel99>1</channel99>")
        result = runner.invoke(
            app, ["animations", "reload"], env={"XDG_RUNTIME_DIR": str(tmp_path)}
        )
        assert result.exit_code == 0, result.output
        assert f"asked anima serve 'nadine' (pid {server.proc.pid})" in result.output

        line = server.wait_for(rf"animations: {shipped + 2} loaded from {shipped + 3} files")
        assert f"1 skipped: {broken}: <channel99>" in line

        os.kill(server.proc.pid, signal.SIGHUP)  # and again, sent by hand
        server.wait_for(rf"animations: {shipped + 2} loaded from {shipped + 3} files")
    finally:
        code = server.stop()
    out = "".join(server.lines)
    assert code == 0, out
    assert "Traceback" not in out
    assert "stopped" in out
    assert not pid_file.exists()


def test_reload_signals_only_the_instance_it_names(tmp_path: Path) -> None:
    """Two robots served from one account: each has its own pid file; reload picks by prefix."""
    folder = tmp_path / "anims"
    write_anim(folder, "first.xml", "extra_first", "<channel4>128 140 128</channel4>")
    config = tmp_path / "anima.yaml"
    config.write_text(f"animation:\n  folders: [{folder}]\n")
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    one = Server(tmp_path, "--config", str(config), prefix="robot_one")
    two = Server(tmp_path, "--config", str(config), prefix="robot_two")
    try:
        for server in (one, two):
            server.wait_for("anima ready")
        assert _pid_file(tmp_path, "robot_one").read_text().strip() == str(one.proc.pid)
        assert _pid_file(tmp_path, "robot_two").read_text().strip() == str(two.proc.pid)

        ambiguous = runner.invoke(app, ["animations", "reload"], env=env)
        assert ambiguous.exit_code == 2, ambiguous.output
        assert "2 are running" in ambiguous.output
        assert "--prefix" in ambiguous.output

        result = runner.invoke(app, ["animations", "reload", "--prefix", "robot_two"], env=env)
        assert result.exit_code == 0, result.output
        assert f"asked anima serve 'robot_two' (pid {two.proc.pid})" in result.output
        two.wait_for("animations: .* loaded")  # the reload's summary
        unknown = runner.invoke(app, ["animations", "reload", "--prefix", "robot_3"], env=env)
        assert unknown.exit_code == 2
        assert "no running anima serve found for prefix 'robot_3'" in unknown.output
    finally:
        codes = (one.stop(), two.stop())
    assert codes == (0, 0)
    first_loads = [line for line in one.lines if "animations:" in line]
    second_loads = [line for line in two.lines if "animations:" in line]
    assert len(first_loads) == 1, first_loads  # robot_one was never signalled
    assert len(second_loads) == 2, second_loads
    assert not _pid_file(tmp_path, "robot_one").exists()
