"""Findings in test modules are info: a test's tiny workload is not a training run's cost, and
tests call legacy APIs on purpose. They stay visible with --show-info."""

from __future__ import annotations

import subprocess
import sys

import pytest

LOOP = (
    "import torch\n"
    "model = model.cuda()\n"
    "for x, y in loader:\n"
    "    loss = criterion(model(x.cuda()), y.cuda())\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
    "    print(loss.item())\n"
)


def check(*args):
    return subprocess.run([sys.executable, "-m", "advisor", "check", "--no-cache", "--format", "concise", *args],
                          capture_output=True, text=True)


@pytest.mark.parametrize("name, header", [
    ("test_training.py", "def test_loss_is_finite():\n    pass\n"),
    ("training_test.py", "class TestTraining:\n    pass\n"),
    ("conftest.py", ""),
    ("helpers.py", "import pytest\n"),
    ("cases.py", "import unittest\n"),
    ("harness.py", "from torch.testing._internal.common_utils import run_tests\n"),
    ("checkpoint_test.py", "class CheckpointCases(DTensorTestBase):\n    def test_resume(self):\n        pass\n"),
])
def test_findings_in_a_test_module_are_info(tmp_path, name, header):
    path = tmp_path / name
    path.write_text(header + LOOP)
    hidden = check(str(path))
    assert hidden.returncode == 0 and "GPU101" not in hidden.stdout, hidden.stdout
    shown = check("--show-info", str(path))
    assert f"{path}:{7 + header.count(chr(10))}:11: GPU101 [info]" in shown.stdout, shown.stdout


def test_a_test_script_in_the_tests_folder_is_test_code(tmp_path):
    folder = tmp_path / "tests"
    folder.mkdir()
    path = folder / "actions_test.py"
    path.write_text(LOOP)
    assert "GPU101" not in check(str(path)).stdout


@pytest.mark.parametrize("name", ["testing_loop.py", "test_net.py"])
def test_a_script_that_defines_no_tests_keeps_its_severity(tmp_path, name):
    # "test" in a name (an evaluation script called test_net.py with a `def test(cfg)` that
    # reads its command line), or a folder called tests, does not make a module a test.
    folder = tmp_path / "tests"
    folder.mkdir()
    path = folder / name
    path.write_text("import argparse\ndef test(cfg):\n    pass\n" + LOOP)
    out = check(str(path))
    assert out.returncode == 1
    assert f"{path}:10:11: GPU101 `loss.item()`" in out.stdout, out.stdout


def test_a_smoke_script_named_as_a_test_in_a_test_folder_is_test_code(tmp_path):
    folder = tmp_path / "test"
    folder.mkdir()
    path = folder / "test_las.py"
    path.write_text(LOOP)
    assert "GPU101" not in check(str(path)).stdout
    (tmp_path / "test_las.py").write_text(LOOP)  # the same script beside the training scripts
    assert "GPU101" in check(str(tmp_path / "test_las.py")).stdout
