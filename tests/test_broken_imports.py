"""A vendored library file whose relative imports its folder lacks is reported below the
default view, and the answer follows the folder: adding the missing module brings the
warnings back, through the cache too."""

from __future__ import annotations

from pathlib import Path

from advisor.cli import main
from advisor.project.view import forget_views

_TRAINER = '''import torch

from .trainer_utils import seed_everything


def train(model, loader, optimizer):
    seed_everything(0)
    model = model.cuda()
    for epoch in range(10):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(loss.item())
'''


def _check(capsys, path: Path, *extra: str):
    code = main(["check", "--format", "concise", *extra, str(path)])
    out, _ = capsys.readouterr()
    return code, out


def test_missing_module_lowers_the_file_until_it_is_added(tmp_path, capsys, cache_dir):
    project = tmp_path / "project"
    (project / "finetune").mkdir(parents=True)
    (project / "setup.cfg").write_text("[metadata]\nname = copy\n")
    (project / "finetune" / "__init__.py").write_text("")
    trainer = project / "finetune" / "trainer.py"
    trainer.write_text(_TRAINER)

    code, out = _check(capsys, project)
    assert code == 0 and "GPU101" not in out
    code, out = _check(capsys, project, "--show-info")
    assert "trainer.py:15" in out and "GPU101" in out

    (project / "finetune" / "trainer_utils.py").write_text("def seed_everything(seed):\n    return seed\n")
    forget_views()  # a new run, as a new process would start
    code, out = _check(capsys, project)
    assert code == 1 and "trainer.py:15" in out and "GPU101" in out


def test_an_import_in_a_try_may_fall_back(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "setup.cfg").write_text("[metadata]\nname = fallback\n")
    text = _TRAINER.replace(
        "from .trainer_utils import seed_everything\n",
        "try:\n    from .trainer_utils import seed_everything\nexcept ImportError:\n    seed_everything = print\n",
    )
    (project / "trainer.py").write_text(text)
    code, out = _check(capsys, project, "--no-cache")
    assert code == 1 and "GPU101" in out
