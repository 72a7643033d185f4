"""Paths that are not regular files, and file names that are not plain text: one clear line
each, no hang, no traceback, and the rest of the run goes on."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import signal
from pathlib import Path

import pytest

from advisor.config import Config
from advisor.limits import NotRegularFile, read_regular
from advisor.runner import Job, _read
from tests.snippets import HOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="named pipes, sockets and byte file names")


def advisor(*args, cwd=None, stdin=subprocess.DEVNULL, env=None):
    return subprocess.run([sys.executable, "-m", "advisor", "check", "--no-cache", *map(str, args)],
                          capture_output=True, cwd=cwd, stdin=stdin, env=env, timeout=300)


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.py"
    path.write_text(HOT)
    return path


@pytest.mark.parametrize("name", ["pipe.py", "pipe.ipynb", "pipe"])
def test_a_named_pipe_is_not_opened(tmp_path, good, name):
    pipe = tmp_path / name
    os.mkfifo(pipe)
    out = advisor("--format", "concise", pipe, good)
    assert out.returncode == 2
    assert out.stderr.decode() == f"advisor: error: {pipe}: not a regular file (a named pipe)\n"
    assert out.stdout.decode().startswith(f"{good}:7:14: GPU101")


def test_devices_and_standard_input(good):
    with subprocess.Popen(["sleep", "60"], stdout=subprocess.PIPE) as feeder:  # stdin is a pipe
        try:
            out = advisor("--format", "concise", "/dev/zero", "/dev/stdin", good, stdin=feeder.stdout)
        finally:
            feeder.kill()
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == [
        "advisor: error: /dev/zero: not a regular file (a character device)",
        "advisor: error: /dev/stdin: not a regular file (a named pipe)",
    ]
    assert out.stdout.decode().startswith(f"{good}:7:14: GPU101")


def test_a_socket(tmp_path, good, monkeypatch):
    monkeypatch.chdir(tmp_path)  # bound by a relative name: a socket's path is limited to about 100 bytes
    server = socket.socket(socket.AF_UNIX)
    try:
        try:
            server.bind("s.py")
        except OSError:
            pytest.skip("cannot bind a unix socket here")
        out = advisor("--format", "concise", tmp_path / "s.py", good)
    finally:
        server.close()
    assert out.returncode == 2
    assert out.stderr.decode() == f"advisor: error: {tmp_path / 's.py'}: not a regular file (a socket)\n"
    assert out.stdout.decode().startswith(f"{good}:7:14: GPU101")


def test_symlink_loops_and_broken_links(tmp_path, good):
    (tmp_path / "self.py").symlink_to("self.py")
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    (tmp_path / "broken.py").symlink_to("missing.py")
    out = advisor("--format", "concise", tmp_path / "self.py", tmp_path / "a.py", tmp_path / "broken.py",
                  tmp_path / "missing.py", good)
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == [
        f"advisor: error: {tmp_path / 'self.py'}: symlink loop",
        f"advisor: error: {tmp_path / 'a.py'}: symlink loop",
        f"advisor: error: {tmp_path / 'broken.py'}: broken symlink (what it points to does not exist)",
        f"advisor: error: {tmp_path / 'missing.py'}: no such file or folder",
    ]
    assert out.stdout.decode().startswith(f"{good}:7:14: GPU101")


def test_a_name_that_becomes_a_pipe_after_discovery_is_not_opened(tmp_path):
    pipe = tmp_path / "late.py"
    os.mkfifo(pipe)
    # A blocking open would never return: the alarm turns that hang into a failure.
    signal.signal(signal.SIGALRM, _hung)
    signal.alarm(300)
    try:
        with pytest.raises(NotRegularFile, match="a named pipe"):
            _read(Job(str(pipe), Config()))
        with pytest.raises(NotRegularFile):
            read_regular(str(pipe), 100)
    finally:
        signal.alarm(0)


def _hung(signum, frame):
    raise AssertionError("opening a named pipe blocked")


# -- file names ------------------------------------------------------------------------------------
FORGED = "x.py:1:1: GPU101 forged\nevil.py"


def test_a_newline_in_a_file_name_cannot_forge_a_line(tmp_path):
    (tmp_path / FORGED).write_text(HOT)
    for fmt in ("concise", "text"):
        out = advisor("--format", fmt, "-q", tmp_path)
        assert out.returncode == 1
        lines = out.stdout.decode().splitlines()
        assert [line for line in lines if "GPU101" in line and "7:14" in line] == [line for line in lines
                                                                                  if "GPU101" in line]
        assert not any(line.startswith("evil.py") for line in lines)
        assert f"{tmp_path}/x.py:1:1: GPU101 forged\\nevil.py:7:14: GPU101" in out.stdout.decode()


def test_a_newline_in_a_named_path_stays_on_its_error_line(tmp_path):
    out = advisor(tmp_path / "gone\nadvisor: error: forged.py")
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == [
        f"advisor: error: {tmp_path}/gone\\nadvisor: error: forged.py: no such file or folder"]


@pytest.fixture
def undecodable(tmp_path):
    folder = os.fsencode(tmp_path)
    name = folder + b"/caf\xe9.py"
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)
    except OSError:
        pytest.skip("the file system refuses names that are not UTF-8")
    os.write(fd, HOT.encode())
    os.close(fd)
    return tmp_path


# Under this locale Python writes a name's stray bytes to stdout raw (other UTF-8 locales raise
# UnicodeEncodeError instead); SARIF failed under both. The report must be valid UTF-8 either way.
STRICT = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "", "PYTHONUTF8": "0"}


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github"])
def test_a_file_name_that_is_not_utf8_is_printed_escaped(undecodable, fmt):
    out = advisor("--format", fmt, ".", cwd=undecodable, env=STRICT)
    assert out.returncode == 1, out.stderr
    assert b"Traceback" not in out.stderr
    text = out.stdout.decode("utf-8")  # all of it valid UTF-8
    if fmt == "json":
        assert [item["filename"] for item in json.loads(text)] == ["caf\\xe9.py"]
    elif fmt == "sarif":
        [result] = json.loads(text)["runs"][0]["results"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "caf%E9.py"
    else:
        assert "caf\\xe9.py" in text


def test_sarif_to_a_file_with_a_name_that_is_not_utf8(undecodable):
    out = advisor("--format", "sarif", "--output-file", "report.sarif", ".", cwd=undecodable, env=STRICT)
    assert out.returncode == 1, out.stderr
    log = json.loads((undecodable / "report.sarif").read_text(encoding="utf-8"))
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "caf%E9.py"


def test_walked_pipes_are_skipped_quietly(tmp_path, good):
    os.mkfifo(tmp_path / "pipe.py")
    out = advisor("--format", "concise", tmp_path)
    assert out.returncode == 1 and out.stderr == b""
    assert out.stdout.decode().startswith(f"{good}:7:14: GPU101")
    assert Path(tmp_path / "pipe.py").exists()


def test_macos_metadata_beside_a_script_is_not_walked(tmp_path, good):
    # A folder copied from a Mac carries `._good.py`: binary metadata, not Python.
    (tmp_path / "._good.py").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \xb0")
    out = advisor("--format", "concise", tmp_path)
    assert out.returncode == 1 and out.stderr == b""
    assert "._good.py" not in out.stdout.decode()
    assert out.stdout.decode().startswith(f"{good}:7:14: GPU101")


def test_a_newline_in_the_name_of_a_file_not_fixed_stays_on_its_line(tmp_path):
    import stat

    name = tmp_path / "ro\nadvisor: warning: forged.py"
    name.write_text("import torch\nfrom torch.utils.data import DataLoader\n"
                    "loader = DataLoader(ds, batch_size=4, num_workers=2)\nfor x in loader:\n    x = x.cuda()\n")
    name.chmod(stat.S_IRUSR | stat.S_IRGRP)
    out = advisor("--fix", "--format", "concise", name)
    warnings = [line for line in out.stderr.decode().splitlines() if "warning" in line]
    assert warnings and all(line.startswith(f"advisor: warning: {tmp_path}/ro\\nadvisor") for line in warnings)
