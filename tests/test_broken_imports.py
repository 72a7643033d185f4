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


_SCRIPT = '''import torch

from utils import progress_bar, AverageMeter

model = torch.nn.Linear(8, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 8)), batch_size=8)
meter = AverageMeter()
for epoch in range(10):
    for (x,) in loader:
        loss = model(x.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item())
        progress_bar(meter)
'''

_UTILS = '''class AverageMeter:
    def update(self, value):
        self.value = value
'''


def _stale_script(tmp_path, utils: str = _UTILS, script: str = _SCRIPT, package: bool = False):
    project = tmp_path / "project"
    folder = project / "cifar"
    folder.mkdir(parents=True)
    (project / "setup.cfg").write_text("[metadata]\nname = stale\n")
    if package:
        (folder / "__init__.py").write_text("")
    (folder / "utils.py").write_text(utils)
    (folder / "train.py").write_text(script)
    return project


def test_a_script_importing_a_name_its_helper_lost_is_lowered_until_it_is_back(tmp_path, capsys, cache_dir):
    # A stale script kept after `progress_bar` left `utils.py`: Python stops at the import.
    project = _stale_script(tmp_path)
    code, out = _check(capsys, project)
    assert code == 0 and "GPU101" not in out
    code, out = _check(capsys, project, "--show-info")
    assert "train.py:15" in out and "GPU101" in out

    # Editing the helper re-checks the script: the cached answer depends on it.
    utils = project / "cifar" / "utils.py"
    utils.write_text(_UTILS + "\n\ndef progress_bar(meter):\n    return meter\n")
    forget_views()
    code, out = _check(capsys, project)
    assert code == 1 and "train.py:15" in out and "GPU101" in out


def test_names_a_helper_may_bind_out_of_sight_keep_the_script(tmp_path, capsys):
    # Look-alikes: the name comes from a star import, a module `__getattr__`, a branch or a
    # loop at the top level, a `global` in a function, or a submodule of a package.
    helpers = [
        _UTILS + "from meters import *\n",
        _UTILS + "def __getattr__(name):\n    return print\n",
        _UTILS + "__getattr__, __dir__, __all__ = lazy.attach(__name__, submod_attrs={})\n",
        _UTILS + "try:\n    from tqdm import tqdm as progress_bar\nexcept ImportError:\n    progress_bar = print\n",
        _UTILS + "for progress_bar in [print]:\n    pass\n",
        _UTILS + "def setup():\n    global progress_bar\n    progress_bar = print\n",
        _UTILS + "globals()['progress_bar'] = print\n",
    ]
    for index, utils in enumerate(helpers):
        project = _stale_script(tmp_path / str(index), utils=utils)
        forget_views()
        code, out = _check(capsys, project, "--no-cache")
        assert code == 1 and "train.py:15" in out, utils


def test_where_the_import_leads_is_uncertain_the_script_is_kept(tmp_path, capsys):
    # A module of a package (an absolute import is looked up on `sys.path`, not beside it), a
    # script that edits `sys.path` first, and an import in a `try`.
    cases = [
        dict(package=True),
        dict(script=_SCRIPT.replace("import torch\n", "import sys\nimport torch\nsys.path.insert(0, '..')\n", 1)),
        dict(script=_SCRIPT.replace(
            "from utils import progress_bar, AverageMeter\n",
            "from utils import AverageMeter\ntry:\n    from utils import progress_bar\nexcept ImportError:\n"
            "    progress_bar = print\n")),
    ]
    for index, case in enumerate(cases):
        project = _stale_script(tmp_path / str(index), **case)
        forget_views()
        code, out = _check(capsys, project, "--no-cache")
        assert code == 1 and "GPU101" in out, case


def test_a_submodule_of_a_package_is_importable(tmp_path, capsys):
    project = _stale_script(tmp_path, script=_SCRIPT.replace(
        "from utils import progress_bar, AverageMeter\n",
        "from utils import AverageMeter\nfrom models import resnet\n\nprogress_bar = print\n"))
    models = project / "cifar" / "models"
    models.mkdir()
    (models / "__init__.py").write_text("")
    (models / "resnet.py").write_text("import torch\n")
    code, out = _check(capsys, project, "--no-cache")
    assert code == 1 and "GPU101" in out


def _moved_module(tmp_path, init: str = "") -> Path:
    project = tmp_path / "project"
    data = project / "data"
    data.mkdir(parents=True)
    (project / "setup.cfg").write_text("[metadata]\nname = moved\n")
    if init is not None:
        (data / "__init__.py").write_text(init)
    (data / "datasets.py").write_text("def get_dataset():\n    return []\n")
    (project / "utils.py").write_text(_UTILS + "\n\ndef progress_bar(meter):\n    return meter\n")
    (project / "train.py").write_text(_SCRIPT.replace(
        "from utils import progress_bar, AverageMeter\n",
        "from utils import progress_bar, AverageMeter\nfrom data.config import Option\n"))
    return project


def test_a_script_importing_a_module_its_package_lost_is_lowered_until_it_is_back(tmp_path, capsys, cache_dir):
    # `data/` beside the script is the package Python loads, and it has no `config` any more.
    project = _moved_module(tmp_path)
    code, out = _check(capsys, project)
    assert code == 0 and "GPU101" not in out
    (project / "data" / "config.py").write_text("class Option:\n    pass\n")
    forget_views()
    code, out = _check(capsys, project)
    assert code == 1 and "train.py:16" in out and "GPU101" in out


def test_a_package_that_may_find_its_modules_elsewhere_keeps_the_script(tmp_path, capsys):
    # A namespace package (no `__init__.py`) or one that widens its `__path__` may have the
    # module in another folder on the path.
    for index, init in enumerate([None, "from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n"]):
        project = _moved_module(tmp_path / str(index), init=init)
        forget_views()
        code, out = _check(capsys, project, "--no-cache")
        assert code == 1 and "GPU101" in out, init
