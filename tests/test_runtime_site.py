"""`--measure`'s probe parameters come from what the rule found (the finding's fields), never from
its message; a finding with no loader of its own borrows a literal batch size from its file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from advisor.config import Config
from advisor.engine import check_source
from advisor.runtime.site import parse, site_params

ROOT = Path(__file__).resolve().parent.parent
SHOW_ALL = Config(show_info=True)

ACCUMULATION = textwrap.dedent(
    """\
    import torch
    from torch.utils.data import DataLoader
    loader = DataLoader(ds, batch_size=16)
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % 8 == 0:
            optimizer.step()
            optimizer.zero_grad()
    """
)


def findings(text: str, code: str):
    return [f for f in check_source(text, "train.py", SHOW_ALL).findings if f.code == code]


def test_accumulation_steps_come_from_the_fields_not_the_message():
    [finding] = findings(ACCUMULATION, "GPU406")
    assert finding.data == {"steps": "8", "accum_steps": 8}
    assert site_params(finding)["accum_steps"] == 8
    # Reworded, the message no longer says "over `8` micro-batches": the parameter stays.
    assert site_params(finding.replace(message="reworded"))["accum_steps"] == 8
    # A count held by a name is not a literal: the probe's default applies.
    [named] = findings(ACCUMULATION.replace("% 8 ==", "% accum ==").replace("import torch\n", "import torch\naccum = 8\n"),
                       "GPU406")
    assert named.data["steps"] == "accum" and named.data["accum_steps"] is None
    assert "accum_steps" not in site_params(named)


def test_autocast_dtype_comes_from_the_fields():
    text = ("import torch\nfor x, y in loader:\n    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()\n")
    [finding] = findings(text, "GPU301")
    assert finding.data == {"dtype": "float16"}
    assert site_params(finding.replace(message="bfloat16"))["dtype"] == "float16"
    [unresolved] = findings(text.replace("torch.float16", "pick_dtype()"), "GPU301")
    assert unresolved.data == {"dtype": None} and "dtype" not in site_params(unresolved)


def test_loader_options_come_from_the_rule_and_stay_plain_json():
    text = textwrap.dedent(
        """\
        from torch.utils.data import DataLoader, DistributedSampler
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, 64, True, sampler, num_workers=-0, drop_last=...,
                            prefetch_factor=2 ** 3, timeout=1j, pin_memory=b"yes", persistent_workers=None)
        """
    )
    [finding] = findings(text, "GPU205")
    options = finding.data["loader_options"]
    # positional batch_size and shuffle are read by position; `...`, bytes and expressions are left out
    assert options == {"sampler": True, "batch_size": 64, "shuffle": True, "num_workers": 0,
                       "persistent_workers": None}
    assert json.loads(json.dumps(options)) == options
    # no tree at all: the fields alone give the probe its arguments
    assert site_params(finding) == {"kwargs": options, "batch_size": 64}


def test_gpu201_batch_size_is_its_own_loaders():
    text = ("import torch\nfrom torch.utils.data import DataLoader\nsmall = DataLoader(a, batch_size=4)\n"
            "big = DataLoader(b, batch_size=256)\nfor x, y in big:\n    x = x.cuda()\n")
    found = {f.start.row: f for f in findings(text, "GPU201")}
    assert site_params(found[3], tree=parse(text))["batch_size"] == 4
    assert site_params(found[4], tree=parse(text))["batch_size"] == 256


def test_finding_without_loader_options_borrows_the_files_batch_size():
    [finding] = findings(ACCUMULATION, "GPU406")
    assert "loader_options" not in finding.data
    assert site_params(finding, tree=parse(ACCUMULATION))["batch_size"] == 16
    assert "batch_size" not in site_params(finding)


def test_measure_runs_the_probe_with_the_sites_count(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "train.py").write_text(ACCUMULATION)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               CUDA_VISIBLE_DEVICES="", ADVISOR_PROBE_TIMEOUT="600")  # a busy machine must not time the probe out
    proc = subprocess.run([sys.executable, "-m", "advisor", "check", "--measure", "--no-cache", "--select", "GPU406",
                           "--format", "json", "train.py"], capture_output=True, text=True, cwd=str(tmp_path),
                          env=env, timeout=900)
    assert proc.returncode == 1, proc.stderr
    [item] = json.loads(proc.stdout)
    assert item["data"]["accum_steps"] == 8
    assert item["measurement"]["params"]["accum_steps"] == 8
    assert item["measurement"]["verdict"] == "confirmed"
