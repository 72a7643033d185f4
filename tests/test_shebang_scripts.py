"""Scripts without a suffix that run Python (`./train` with `#!/usr/bin/env python3`): a folder
walk checks them, as pre-commit's file types count them, and the project view reads them, so a
helper module only such a script calls is hot."""

from __future__ import annotations

from advisor.config import Config
from advisor.discovery import discover, is_python_script
from advisor.engine import check_file
from advisor.project.view import forget_views

TRAIN = """#!/usr/bin/env python3
import torch
from helpers import log_images

for epoch in range(100):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_images(x.cuda())
        print(loss.item())
"""

HELPERS = """import torch


def log_images(images):
    return images[0].cpu().numpy()
"""


def _project(tmp_path):
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = shebang\n")
    (tmp_path / "train").write_text(TRAIN)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "LICENSE").write_text("MIT License\n")
    (tmp_path / "run").write_text("#!/bin/sh\npython3 train\n")
    return tmp_path


def test_only_scripts_that_run_python_count(tmp_path):
    root = _project(tmp_path)
    assert is_python_script(str(root / "train"))
    assert not is_python_script(str(root / "LICENSE"))
    assert not is_python_script(str(root / "run"))
    assert not is_python_script(str(root / "missing"))


def test_a_folder_walk_checks_a_python_script_without_suffix(tmp_path):
    root = _project(tmp_path)
    names = sorted(found.path.name for found in discover([str(root)], None, lambda path: None))
    assert names == ["helpers.py", "train"]


def test_a_helper_only_such_a_script_calls_is_hot(tmp_path):
    root = _project(tmp_path)
    forget_views()
    script = check_file(root / "train", Config(show_info=True))
    assert script.problem is None and any(f.code == "GPU101" for f in script.findings)
    helper = check_file(root / "helpers.py", Config(show_info=True))
    assert [(f.code, f.start.row, f.severity.value) for f in helper.findings] == [("GPU103", 5, "warning")]
