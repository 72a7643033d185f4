"""A fix offered as safe must hold on the path it edits (issue 14 item 5, issue 16 §3). Each
case runs the script before and after `advisor check --fix`, as a user would."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _advisor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", "check", "--no-cache", *args],
                          capture_output=True, text=True, timeout=120)


def _python(script, *args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300,
                          cwd=str(cwd))


# DataParallel on a machine without a GPU wraps the model all the same: its state_dict keys
# start with `module.`, as DDP's do, and no process group is needed.
ELSE_BRANCH = """\
import torch
import torch.nn as nn

def save(model, path):
    if isinstance(model, nn.DataParallel):
        torch.save(model.module.state_dict(), path)
    else:
        torch.save(model.state_dict(), path)

save(nn.DataParallel(nn.Linear(2, 2)), "wrapped.pt")
hooks = {"save": save}  # a caller the analysis does not follow, with a plain model
hooks["save"](nn.Linear(2, 2), "plain.pt")
print(sorted(torch.load("plain.pt")))
"""


def test_gpu503_leaves_the_else_of_an_isinstance_test_alone(tmp_path):
    script = tmp_path / "save.py"
    script.write_text(ELSE_BRANCH)
    result = _advisor("--select", "GPU503", "--show-info", str(script))
    assert "GPU503" not in result.stdout, result.stdout
    _advisor("--select", "GPU503", "--fix", "--unsafe-fixes", str(script))
    assert script.read_text() == ELSE_BRANCH


def test_gpu503_else_branch_script_runs(tmp_path):
    """The script the case above leaves alone saves both models; `.module` in its `else` would
    end in AttributeError on the plain model."""
    pytest.importorskip("torch")
    script = tmp_path / "save.py"
    script.write_text(ELSE_BRANCH)
    run = _python(script, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['bias', 'weight']"
    broken = tmp_path / "broken.py"
    broken.write_text(ELSE_BRANCH.replace("torch.save(model.state_dict(), path)",
                                          "torch.save(model.module.state_dict(), path)"))
    run = _python(broken, cwd=tmp_path)
    assert run.returncode != 0 and "AttributeError" in run.stderr


# Trains one step, saves a checkpoint, and resumes from it when given one, into the wrapped model.
RESUME = """\
import sys
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.DataParallel(nn.Linear(2, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if len(sys.argv) > 1:
    checkpoint = torch.load(sys.argv[1])
    model.load_state_dict(checkpoint["state_dict"])
loss = model(torch.ones(4, 2)).sum()
loss.backward()
optimizer.step()
torch.save({"state_dict": model.state_dict()}, "ckpt.pt")
print("saved")
"""


def test_gpu503_fix_is_unsafe_when_the_script_resumes_into_the_wrapped_model(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(RESUME)
    result = _advisor("--select", "GPU503", "--show-info", str(script))
    assert "GPU503" in result.stdout
    _advisor("--select", "GPU503", "--show-info", "--fix", str(script))
    assert script.read_text() == RESUME, "`--fix` applied GPU503's fix, which breaks the resume"
    result = _advisor("--select", "GPU503", "--show-info", "--diff", "--unsafe-fixes", str(script))
    assert "model.module.state_dict()" in result.stdout


def test_gpu503_unsafe_fix_breaks_the_resume(tmp_path):
    """Why it is unsafe: the fixed script writes keys without `module.`, and its own resume into
    the wrapped model refuses them."""
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(RESUME)
    first = _python(script, cwd=tmp_path)
    again = _python(script, "ckpt.pt", cwd=tmp_path)
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    _advisor("--select", "GPU503", "--show-info", "--fix", "--unsafe-fixes", str(script))
    assert "model.module.state_dict()" in script.read_text()
    first = _python(script, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = _python(script, "ckpt.pt", cwd=tmp_path)
    assert again.returncode != 0 and 'Missing key(s) in state_dict: "module.weight"' in again.stderr


SAVE_ONLY = RESUME.replace("""if len(sys.argv) > 1:
    checkpoint = torch.load(sys.argv[1])
    model.load_state_dict(checkpoint["state_dict"])
""", "")


def test_gpu503_safe_fix_without_a_wrapped_resume(tmp_path):
    """Nothing loads the checkpoint into the wrapped model: the fix is safe, and its keys load
    into the plain model."""
    script = tmp_path / "train.py"
    script.write_text(SAVE_ONLY)
    _advisor("--select", "GPU503", "--fix", str(script))
    assert "model.module.state_dict()" in script.read_text()


def test_gpu503_fix_is_unsafe_when_an_importer_resumes(tmp_path):
    """The resume sits in another file of the project, which imports the saving helper."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "checkpoints.py").write_text(
        "import torch\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def save(model, path):\n"
        "    torch.save({'model': model.state_dict()}, path)\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from checkpoints import save\n"
        "model = DDP(Net())\n"
        "if resume:\n"
        "    model.load_state_dict(torch.load('last.pt')['model'])\n"
        "save(model, 'last.pt')\n"
    )
    result = _advisor("--select", "GPU503", "--show-info", "--format", "json", str(tmp_path / "checkpoints.py"))
    import json

    findings = json.loads(result.stdout)
    assert [f["code"] for f in findings] == ["GPU503"]
    fix = findings[0]["fix"]
    assert fix["applicability"] == "unsafe" and "train.py:6" in fix["message"], fix


# GPU303: the name called must still be torch's deprecated autocast where the call is.
SHADOWED_AUTOCAST = """\
import contextlib
import torch
from torch.cuda.amp import autocast

def autocast(enabled=True):  # the script's own no-op, for machines without CUDA
    return contextlib.nullcontext()

with autocast():
    print(torch.ones(2).sum().item())
"""

COMPAT_AUTOCAST = """\
import torch
try:
    from torch.amp import autocast
except ImportError:  # torch older than 2.3
    from torch.cuda.amp import autocast

with autocast("cpu", dtype=torch.bfloat16):
    print(torch.ones(2).sum().item())
"""


@pytest.mark.parametrize("source", [SHADOWED_AUTOCAST, COMPAT_AUTOCAST], ids=["own-def", "compat-import"])
def test_gpu303_leaves_a_rebound_autocast_alone(tmp_path, source):
    script = tmp_path / "amp.py"
    script.write_text(source)
    result = _advisor("--select", "GPU303", "--show-info", str(script))
    assert "GPU303" not in result.stdout, result.stdout
    _advisor("--select", "GPU303", "--fix", "--unsafe-fixes", str(script))
    assert script.read_text() == source


def test_gpu303_still_fixes_the_plain_import(tmp_path):
    """The same script without the shadowing def is reported and fixed."""
    script = tmp_path / "amp.py"
    source = SHADOWED_AUTOCAST.replace(
        "def autocast(enabled=True):  # the script's own no-op, for machines without CUDA\n"
        "    return contextlib.nullcontext()\n", "")
    script.write_text(source)
    assert "GPU303" in _advisor("--select", "GPU303", str(script)).stdout
    _advisor("--select", "GPU303", "--fix", str(script))
    assert 'with torch.amp.autocast("cuda"):' in script.read_text()


# Wrapped on one path only: the fix writes `getattr(model, "module", model)`.
SOMETIMES_WRAPPED = """\
import sys
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(2, 2)
if "--parallel" in sys.argv:
    model = nn.DataParallel(model)
if "--resume" in sys.argv:
    model.load_state_dict(torch.load("ckpt.pt"))
torch.save(model.state_dict(), "ckpt.pt")
print(sorted(torch.load("ckpt.pt")))
"""

SOMETIMES_WRAPPED_NO_RESUME = SOMETIMES_WRAPPED.replace("""if "--resume" in sys.argv:
    model.load_state_dict(torch.load("ckpt.pt"))
""", "")


def test_gpu503_getattr_fix_is_unsafe_before_a_resume_into_the_maybe_wrapped_model(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SOMETIMES_WRAPPED)
    result = _advisor("--select", "GPU503", "--show-info", str(script))
    assert "may be wrapped" in result.stdout, result.stdout
    _advisor("--select", "GPU503", "--show-info", "--fix", str(script))
    assert script.read_text() == SOMETIMES_WRAPPED
    _advisor("--select", "GPU503", "--show-info", "--fix", "--unsafe-fixes", str(script))
    assert 'getattr(model, "module", model).state_dict()' in script.read_text()


def test_gpu503_getattr_fix_is_safe_without_a_resume_and_runs_on_both_paths(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(SOMETIMES_WRAPPED_NO_RESUME)
    _advisor("--select", "GPU503", "--fix", str(script))
    assert 'getattr(model, "module", model).state_dict()' in script.read_text()
    for args in ((), ("--parallel",)):
        run = _python(script, *args, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "['bias', 'weight']"
