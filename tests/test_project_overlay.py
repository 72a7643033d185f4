"""Texts that stand in for files on disk (an editor's unsaved buffers, advisor/project/view.py
`Views`): a file is checked against its neighbours as they are held, saved or not, and what a
view worked out from a neighbour's old text is dropped when that text changes."""

from __future__ import annotations

from pathlib import Path

from advisor.config import Config
from advisor.engine import check_source
from advisor.project.view import Views

# The same two-file project the language-server test edits (tests/test_lsp_project.py).
from tests.test_lsp_project import DATA, TRAIN_DATA as TRAIN, TRAIN_DATA_CPU as TRAIN_CPU


def project(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def codes(views: Views, path: Path, text: str = None) -> list:
    text = path.read_text(encoding="utf-8") if text is None else text
    result = check_source(text, str(path), Config(), path=path, views=views)
    assert result.problem is None
    return sorted(f.code for f in result.findings)


def test_a_stand_in_text_is_read_instead_of_the_disk(tmp_path):
    root = project(tmp_path, {"data.py": DATA, "train.py": TRAIN})
    views = Views()
    assert "GPU201" in codes(views, root / "data.py")  # train.py on disk moves batches to the GPU

    assert views.set_texts({str(root / "train.py"): TRAIN_CPU}) == [str(root / "train.py")]
    assert "GPU201" not in codes(views, root / "data.py")
    assert (root / "train.py").read_text(encoding="utf-8") == TRAIN

    views.set_texts({})  # the buffer is closed unsaved: the disk counts again
    assert "GPU201" in codes(views, root / "data.py")


def test_views_with_different_stand_ins_do_not_see_each_other(tmp_path):
    root = project(tmp_path, {"data.py": DATA, "train.py": TRAIN})
    edited, plain = Views(), Views()
    edited.set_texts({str(root / "train.py"): TRAIN_CPU})
    assert "GPU201" not in codes(edited, root / "data.py")
    assert "GPU201" in codes(plain, root / "data.py")


MODELS = '''\
import torch


def build_model():
    return torch.nn.Linear(4, 2)
'''

TRAIN_MODELS = '''\
import torch

from models import build_model

model = build_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in zip(torch.randn(10, 8, 4), torch.randint(0, 2, (10, 8))):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print("loss", loss.item())
'''


def test_answers_about_a_neighbour_are_dropped_when_its_text_changes(tmp_path):
    """train.py's own text stays the same, so its model is reused; whether the project may use
    a GPU was worked out from models.py's old text and must be asked again."""
    root = project(tmp_path, {"models.py": MODELS, "train.py": TRAIN_MODELS})
    views = Views()
    assert "GPU101" not in codes(views, root / "train.py")
    views.set_texts({str(root / "models.py"): MODELS.replace("Linear(4, 2)", "Linear(4, 2).cuda()")})
    assert "GPU101" in codes(views, root / "train.py")


def test_a_file_changed_on_disk_is_read_again_once_reported(tmp_path):
    root = project(tmp_path, {"models.py": MODELS, "train.py": TRAIN_MODELS})
    views = Views()
    assert "GPU101" not in codes(views, root / "train.py")
    (root / "models.py").write_text(MODELS.replace("Linear(4, 2)", "Linear(4, 2).cuda()"), encoding="utf-8")
    views.changed(str(root / "models.py"))
    assert "GPU101" in codes(views, root / "train.py")


def test_an_unsaved_new_file_that_imports_a_module_is_read_with_it(tmp_path):
    """A buffer for a file not on disk yet (nothing imports it, but it imports data.py) is one
    of data.py's neighbours: its loop is where data.py's loaders are consumed."""
    root = project(tmp_path, {"data.py": DATA})
    views = Views()
    assert "GPU201" not in codes(views, root / "data.py")
    views.set_texts({str(root / "train.py"): TRAIN})
    result = check_source(DATA, str(root / "data.py"), Config(), path=root / "data.py", views=views)
    assert str(root / "train.py") in result.dependencies
    assert "GPU201" in sorted(f.code for f in result.findings)


INIT_PATHS = '''\
import os.path as osp
import sys

this_dir = osp.dirname(__file__)
sys.path.insert(0, osp.join(this_dir, "lib"))
'''
INIT_PATHS_NONE = "import sys\n"
LIB_METRICS = '''\
def accuracy(outputs, targets):
    return (outputs.argmax(1) == targets).float().mean().item()
'''
TRAIN_WITH_INIT_PATHS = '''\
import torch

import _init_paths
from metrics import accuracy


def train(model, loader, optimizer):
    for inputs, targets in loader:
        outputs = model(inputs.cuda())
        loss = torch.nn.functional.cross_entropy(outputs, targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(accuracy(outputs, targets.cuda()))
'''


def test_editing_an_init_paths_helper_moves_where_its_importers_imports_lead(tmp_path):
    root = project(tmp_path, {"_init_paths.py": INIT_PATHS, "train.py": TRAIN_WITH_INIT_PATHS})
    (root / "lib").mkdir()
    (root / "lib" / "metrics.py").write_text(LIB_METRICS, encoding="utf-8")
    views = Views()
    assert codes(views, root / "lib" / "metrics.py") == ["GPU101"]  # train.py imports it through ../lib

    views.set_texts({str(root / "_init_paths.py"): INIT_PATHS_NONE})
    assert codes(views, root / "lib" / "metrics.py") == []

    views.set_texts({})
    assert codes(views, root / "lib" / "metrics.py") == ["GPU101"]
