"""Multi-file projects (tests/corpus/projects/<name>/): a training script split across modules.
Every file's `# expect:` marks must match exactly, whether the project is checked as a whole or
one file at a time (as pre-commit and flake8 hand files over), and whatever the order."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.config import Config
from advisor.engine import check_file
from advisor.project.view import forget_views
from tests.expectations import actual_findings, expected_findings

ROOT = Path(__file__).resolve().parent / "corpus" / "projects"
PROJECTS = sorted(p for p in ROOT.iterdir() if p.is_dir())
SHOW_ALL = Config(show_info=True)


def _findings(path: Path):
    result = check_file(path, SHOW_ALL)
    assert result.problem is None
    return actual_findings(result.findings)


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_project_findings_match_marks(project):
    forget_views()
    for path in sorted(project.rglob("*.py")):
        expected = expected_findings(path.read_text())
        assert sorted(_findings(path) ^ expected) == [], path.name


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_each_file_alone_gives_the_same_findings(project):
    files = sorted(project.rglob("*.py"))
    together = {}
    forget_views()
    for path in reversed(files):
        together[path] = _findings(path)
    for path in files:
        forget_views()
        assert _findings(path) == together[path], path.name


def test_a_config_setting_stored_in_an_unrelated_file_gives_the_same_answer_cached_or_fresh(tmp_path):
    """Config-node defaults are read across the project, and a second store of a setting makes it
    unknown. A cached result must not differ from a fresh one when a file outside the checked
    file's dependencies starts storing the setting: the store is looked for only in the files
    the cache re-checks against."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    project = tmp_path / "config_defaults"
    shutil.copytree(ROOT / "config_defaults", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))

    def findings(*extra):
        run = subprocess.run(
            [sys.executable, "-m", "advisor", "check", "--format", "json", "-j", "1", *extra, str(project)],
            capture_output=True, text=True, env=env,
        )
        return sorted((os.path.basename(f["filename"]), f["location"]["row"], f["code"]) for f in json.loads(run.stdout))

    first = findings()
    assert ("loader.py", 14, "GPU204") in first
    (project / "tools" / "sweep.py").write_text(
        '"""A sweep that lowers the worker count; it imports nothing of the project."""\n\n\n'
        "def lower(cfg):\n    cfg.DATA_LOADER.NUM_WORKERS = 0\n    return cfg\n"
    )
    assert findings() == findings("--no-cache") == first


def test_editing_a_neighbour_rechecks_a_cached_file(tmp_path):
    """data.py's GPU201 stands on train.py moving its batches to the GPU: once train.py stops
    doing so, the cached result for the unchanged data.py must not be served."""
    import os
    import shutil
    import subprocess
    import sys

    project = tmp_path / "split_train"
    shutil.copytree(ROOT / "split_train", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))

    def codes():
        run = subprocess.run(
            [sys.executable, "-m", "advisor", "check", "--format", "json", "-j", "1", str(project)],
            capture_output=True, text=True, env=env,
        )
        import json

        return {(os.path.basename(f["filename"]), f["code"]) for f in json.loads(run.stdout)}

    assert ("data.py", "GPU201") in codes()
    assert ("data.py", "GPU201") in codes()  # served from the cache
    train = project / "train.py"
    train.write_text(train.read_text().replace(".cuda(non_blocking=True)", ""))
    assert ("data.py", "GPU201") not in codes()


def test_a_new_script_that_imports_a_module_rechecks_its_cached_result(tmp_path):
    """losses.py names no device of its own: its GPU106 stands on the training script that moves
    the inputs. A script added after the module was checked changes that, though none of the
    files the cached result depended on changed; removing it changes it back."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    project = tmp_path / "device_of_inputs"
    shutil.copytree(ROOT / "device_of_inputs", project)
    script = (project / "train.py").read_text()
    (project / "train.py").unlink()
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))

    def codes():
        run = subprocess.run(
            [sys.executable, "-m", "advisor", "check", "--format", "json", "-j", "1", str(project / "contrast")],
            capture_output=True, text=True, env=env,
        )
        return {(os.path.basename(f["filename"]), f["code"]) for f in json.loads(run.stdout)}

    assert ("losses.py", "GPU106") not in codes()
    assert ("losses.py", "GPU106") not in codes()  # served from the cache
    (project / "train.py").write_text(script)
    assert ("losses.py", "GPU106") in codes()
    (project / "train.py").rename(project / "old_train.txt")
    assert ("losses.py", "GPU106") not in codes()


def test_a_config_that_starts_naming_an_unbuilt_class_rechecks_a_cached_file(tmp_path):
    """In a project that loads classes by dotted name, a class no file names is reported at info
    (model/unbuilt_classes.py). Once a config file names it, the cached result for the unchanged
    module must not be served: the project's config files are among its dependencies."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    project = tmp_path / "unbuilt_classes"
    shutil.copytree(ROOT / "unbuilt_classes", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))

    def findings():
        run = subprocess.run(
            [sys.executable, "-m", "advisor", "check", "--format", "json", "-j", "1", str(project)],
            capture_output=True, text=True, env=env,
        )
        return {(os.path.basename(f["filename"]), f["location"]["row"], f["code"]) for f in json.loads(run.stdout)}

    assert ("losses.py", 27, "GPU103") not in findings()
    assert ("losses.py", 27, "GPU103") not in findings()  # served from the cache
    config = project / "cog.yaml"
    config.write_text(config.read_text().replace("ConfiguredLoss", "OldEdgeLoss"))
    assert ("losses.py", 27, "GPU103") in findings()


def test_a_launch_script_that_stops_passing_an_option_rechecks_a_cached_file(tmp_path):
    """An option the `train.sh` beside the script passes is not left at its default
    (model/cli_options.py). Once the launcher stops passing it, the cached result for the
    unchanged script must not be served: the shell scripts beside it are among its dependencies."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    project = tmp_path / "launch_scripts"
    shutil.copytree(ROOT / "launch_scripts", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))

    def findings():
        run = subprocess.run(
            [sys.executable, "-m", "advisor", "check", "--format", "json", "-j", "1", str(project)],
            capture_output=True, text=True, env=env,
        )
        return {(os.path.basename(f["filename"]), f["code"]) for f in json.loads(run.stdout)}

    assert ("train.py", "GPU202") not in findings()
    assert ("train.py", "GPU202") not in findings()  # served from the cache
    launcher = project / "run" / "train.sh"
    launcher.write_text(launcher.read_text().replace("  --dataloader_num_workers=4 \\\n", ""))
    assert ("train.py", "GPU202") in findings()


def test_a_notebook_that_calls_a_module_function_runs_it(tmp_path):
    """A top-level function no Python file names is unbuilt code (info), unless a notebook of the
    project calls it (model/unbuilt_classes.py): notebooks are read for the names they use."""
    import json
    import shutil

    project = tmp_path / "unbuilt_classes"
    shutil.copytree(ROOT / "unbuilt_classes", project)
    losses = project / "losses.py"
    refit = lambda: {f for f in _findings(losses) if f[1] == "GPU101" and 83 <= f[0] <= 93}  # noqa: E731
    forget_views()
    assert refit() and all(info for _, _, info in refit())
    (project / "examples").mkdir()
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["import losses\n", "losses.refit_head(model, loader)\n"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "examples" / "refit.ipynb").write_text(json.dumps(notebook))
    forget_views()
    assert refit() and not any(info for _, _, info in refit())


def _json_findings(project, env):
    import json
    import os
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "advisor", "check", "--format", "json", "--show-info", "-j", "1", str(project)],
        capture_output=True, text=True, env=env,
    )
    return sorted((os.path.basename(f["filename"]), f["location"]["row"], f["code"], f["severity"])
                  for f in json.loads(run.stdout))


def test_a_config_that_starts_setting_a_key_read_with_a_false_default_rechecks_a_cached_file(tmp_path):
    """`render_kwargs.get("render_depth", False)` is off while nothing sets the key to a true
    value; a config file edited to set it must turn it on, also for the unchanged, cached file
    (config files are dependencies of a file that reads a key so; a config file added later is
    not seen by cached results, as for every config-file question: runs write JSON and YAML)."""
    import os

    project = tmp_path / "render_keys"
    (project / "configs").mkdir(parents=True)
    (project / "setup.cfg").write_text("[metadata]\nname = render-keys\n")
    (project / "train.py").write_text(
        "import torch\n\n\n"
        "def render(model, rays, **render_kwargs):\n"
        "    rgb, weights, z = model(rays)\n"
        '    if render_kwargs.get("render_depth", False):\n'
        '        print("depth", (weights * z).sum(-1).mean().item())\n'
        "    return rgb\n\n\n"
        "def train(model, loader, optimizer, settings):\n"
        "    for rays, target in loader:\n"
        "        rays, target = rays.cuda(), target.cuda()\n"
        "        loss = (render(model, rays, **settings) - target).pow(2).mean()\n"
        "        optimizer.zero_grad()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
    )
    (project / "configs" / "render.yaml").write_text("render_depth: false\n")
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert ("train.py", 7, "GPU101", "info") in first
    assert _json_findings(project, env) == first  # served from the cache
    (project / "configs" / "render.yaml").write_text("render_depth: true\n")
    again = _json_findings(project, env)
    assert ("train.py", 7, "GPU101", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_readme_that_starts_passing_an_option_rechecks_a_cached_file(tmp_path):
    """What a guarded option does is information while the documented commands never pass it
    (model/launched_options.py); a README that starts passing it turns it back to a warning,
    also for the unchanged, cached script."""
    import os
    import shutil

    project = tmp_path / "launched_options"
    shutil.copytree(ROOT / "launched_options", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert ("train.py", 34, "GPU101", "info") in first
    readme = project / "README.md"
    readme.write_text(readme.read_text().replace("--warmup=0", "--warmup 100"))
    again = _json_findings(project, env)
    assert ("train.py", 34, "GPU101", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def _edit_rechecks(tmp_path, name, edited, old, new, finding, before="info"):
    """Copies the project ``name``, checks it twice (the second from the cache) and expects
    ``finding`` (file name, row, code) at ``before`` (info, or None: not reported at all);
    replaces ``old`` with ``new`` in ``edited`` and expects it at warning, from the cache as
    from a fresh one."""
    import os
    import shutil

    project = tmp_path / name
    shutil.copytree(ROOT / name, project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    if before is None:
        assert not any(f[:3] == tuple(finding) for f in first)
    else:
        assert (*finding, before) in first
    assert _json_findings(project, env) == first  # served from the cache
    path = project / edited
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    again = _json_findings(project, env)
    assert (*finding, "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_config_that_turns_on_a_flag_read_as_a_settings_attribute_rechecks_a_cached_file(tmp_path):
    """`check_nan=cfg.optim.check_nan` of a config loaded from YAML is off while every config
    file sets the key to a false value; turning it on in the YAML file must turn the loss
    module's NaN test back to a warning, also for the unchanged, cached module."""
    _edit_rechecks(tmp_path, "config_attribute_flags", "configs/default.yaml", "check_nan: False", "check_nan: True",
                   ("base.py", 14, "GPU104"))


def test_a_config_that_starts_naming_a_class_picked_by_name_rechecks_a_cached_file(tmp_path):
    """`globals()[cfg.loss_name](cfg)` builds only the classes some text names: a loss no config
    names is information (model/registered_classes.py); a config edited to name it must turn
    its findings back to warnings, also for the unchanged, cached module."""
    _edit_rechecks(tmp_path, "picked_by_name", "configs/pretrain.json", '"NCELoss"', '"HardNegLoss"',
                   ("loss.py", 27, "GPU106"))


def test_a_config_that_turns_on_a_flag_read_from_a_settings_dict_rechecks_a_cached_file(tmp_path):
    """`use_checkpoint = cfg['MODEL']['BACKBONE']['FOCAL']['USE_CHECKPOINT']` is off while every
    config file sets the key to a false value (model/default_flags.py); a config edited to turn
    it on must turn the checkpointed block's finding back to a warning, also for the unchanged,
    cached module."""
    import os
    import shutil

    project = tmp_path / "config_dict_flags"
    shutil.copytree(ROOT / "config_dict_flags", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert ("focal.py", 13, "GPU405", "info") in first
    assert _json_findings(project, env) == first  # served from the cache
    config = project / "configs" / "focal_large.yaml"
    config.write_text(config.read_text().replace("USE_CHECKPOINT: false", "USE_CHECKPOINT: true"))
    again = _json_findings(project, env)
    assert ("focal.py", 13, "GPU405", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_config_that_turns_on_a_flag_a_builder_reads_rechecks_the_cached_block(tmp_path):
    """The flag of `MlpBlock` is read from the settings dict in another module, the builder
    (`recompute=cfg['MODEL']['MLP']['RECOMPUTE']`): the block's module depends on the config
    files too."""
    import os
    import shutil

    project = tmp_path / "config_dict_flags"
    shutil.copytree(ROOT / "config_dict_flags", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    assert ("mlp.py", 13, "GPU405", "info") in _json_findings(project, env)
    config = project / "configs" / "focal_base.yaml"
    config.write_text(config.read_text().replace("RECOMPUTE: False", "RECOMPUTE: True"))
    again = _json_findings(project, env)
    assert ("mlp.py", 13, "GPU405", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_shell_variable_a_launch_script_sets_once_is_the_value_it_passes(tmp_path):
    """`--num_workers ${WORKERS}` in a script that sets `WORKERS=0` passes 0: the loader still
    has no workers (a value the script does not set stays unknown, and the finding is trusted
    away)."""
    import os

    project = tmp_path / "shell_values"
    (project / "scripts").mkdir(parents=True)
    (project / "setup.cfg").write_text("[metadata]\nname = shell-values\n")
    (project / "train.py").write_text(
        "import argparse\n\n"
        "import torch\n"
        "from torch.utils.data import DataLoader\n"
        "from torchvision.datasets import ImageFolder\n\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--num_workers', type=int, default=0)\n"
        "parser.add_argument('--lr', type=float, default=0.1)\n"
        "args = parser.parse_args()\n"
        "model = torch.nn.Linear(8, 2).cuda()\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)\n"
        "loader = DataLoader(ImageFolder('data'), batch_size=8, shuffle=True, num_workers=args.num_workers, pin_memory=True)\n"
        "for x, y in loader:\n"
        "    loss = model(x.cuda(non_blocking=True)).sum()\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    )
    script = project / "scripts" / "run.sh"
    script.write_text("#!/bin/sh\nWORKERS=0\npython train.py --lr 0.1 --num_workers ${WORKERS}\n")
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    assert ("train.py", 13, "GPU202", "warning") in _json_findings(project, env)
    script.write_text("#!/bin/sh\npython train.py --lr 0.1 --num_workers ${WORKERS}\n")
    assert not [f for f in _json_findings(project, env) if f[2] == "GPU202"]


def test_a_one_epoch_default_counts_only_where_the_launch_scripts_can_be_read(tmp_path):
    """`range(args.epochs)` with `--epochs` defaulting to 1 runs once when the project's launch
    texts are read and none passes more (no GPU501); with more scripts than the tool reads, one
    of them may ask for more epochs, and the sampler's repeated order is reported."""
    import os

    project = tmp_path / "one_epoch"
    (project / "scripts").mkdir(parents=True)
    (project / "setup.cfg").write_text("[metadata]\nname = one-epoch\n")
    (project / "train.py").write_text(
        "import argparse\n\n"
        "import torch\n"
        "import torch.distributed as dist\n"
        "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--epochs', type=int, default=1)\n"
        "args = parser.parse_args()\n"
        "dist.init_process_group('nccl')\n"
        "sampler = DistributedSampler(dataset)\n"
        "loader = DataLoader(dataset, batch_size=8, sampler=sampler)\n"
        "for epoch in range(args.epochs):\n"
        "    for batch in loader:\n"
        "        loss = model(**batch).loss\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
    )
    (project / "scripts" / "run.sh").write_text("#!/bin/sh\npython train.py\n")
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    assert not [f for f in _json_findings(project, env) if f[2] == "GPU501"]
    for n in range(140):
        (project / "scripts" / f"sweep_{n}.sh").write_text("#!/bin/sh\necho step\n")
    assert ("train.py", 11, "GPU501", "warning") in _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "c2")})


def test_a_config_json_that_turns_on_a_remote_code_flag_rechecks_the_model(tmp_path):
    """`with_cp=config.with_cp` in a model the library builds from its config (`config_class =
    TinyNetConfig`, whose `__init__` defaults it to False) is off while `config.json` says
    false; a `config.json` edited to true turns the checkpointed block back to a warning, also
    for the unchanged, cached module."""
    import os
    import shutil

    project = tmp_path / "hf_remote_code"
    shutil.copytree(ROOT / "hf_remote_code", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    assert ("modeling_tinynet.py", 18, "GPU405", "info") in _json_findings(project, env)
    config = project / "config.json"
    config.write_text(config.read_text().replace('"with_cp": false', '"with_cp": true'))
    again = _json_findings(project, env)
    assert ("modeling_tinynet.py", 18, "GPU405", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def _unreached_findings(project, env):
    import json
    import os
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "advisor", "check", "--format", "json", "-j", "1", str(project)],
        capture_output=True, text=True, env=env,
    )
    return {(os.path.relpath(f["filename"], str(project)), f["location"]["row"], f["code"]) for f in json.loads(run.stdout)}


def test_a_module_that_starts_running_the_dead_copy_rechecks_a_cached_file(tmp_path):
    """libs/det is imported only by libs/init_det.py, which nothing imports: its loss runs in no
    run (project/reachability.py). A `__main__` block added to that module of the copy does not
    make it one of the project's runs (nothing outside the copy names it); once a module the
    project runs imports it, the cached result for the unchanged loss module must not be served."""
    import os
    import shutil

    project = tmp_path / "unreached_modules"
    shutil.copytree(ROOT / "unreached_modules", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    dead = ("libs/det/losses.py".replace("/", os.sep), 16, "GPU101")
    assert dead not in _unreached_findings(project, env)
    assert dead not in _unreached_findings(project, env)  # served from the cache
    entry = project / "libs" / "init_det.py"
    entry.write_text(entry.read_text() + '\n\nif __name__ == "__main__":\n    build_loss("GradientHarmonizedLoss")\n')
    assert dead not in _unreached_findings(project, env)
    user = project / "libs" / "seg" / "model.py"
    user.write_text(user.read_text().replace("from .losses import BalancedLoss\n",
                                             "from .losses import BalancedLoss\nfrom libs.init_det import build_loss\n"))
    assert dead in _unreached_findings(project, env)
    assert _unreached_findings(project, env) == _unreached_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_readme_that_stops_running_a_module_rechecks_a_cached_file(tmp_path):
    """libs/cls/run.py is imported by nothing in a vendored copy; the README runs it with
    `python -m`, so the loss it imports runs. Once the README stops naming it, the cached
    result for the unchanged loss module must not be served."""
    import os
    import shutil

    project = tmp_path / "unreached_modules"
    shutil.copytree(ROOT / "unreached_modules", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    live = ("libs/cls/losses.py".replace("/", os.sep), 11, "GPU101")
    assert live in _unreached_findings(project, env)
    assert live in _unreached_findings(project, env)  # served from the cache
    readme = project / "README.md"
    readme.write_text(readme.read_text().replace("`python -m libs.cls.run`", "the notebook"))
    assert live not in _unreached_findings(project, env)


def test_a_config_that_starts_naming_a_registered_class_rechecks_a_cached_file(tmp_path):
    """VoVNet is registered and no config names it: the registry never builds it
    (model/registered_classes.py). Once the shipped config picks it, the cached result for the
    unchanged backbone module must not be served."""
    import os
    import shutil

    project = tmp_path / "registered_classes"
    shutil.copytree(ROOT / "registered_classes", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    unbuilt = ("lib/backbones.py".replace("/", os.sep), 37, "GPU101")
    assert unbuilt not in _unreached_findings(project, env)
    assert unbuilt not in _unreached_findings(project, env)  # served from the cache
    config = project / "run_configs" / "segmentor.py"
    config.write_text(config.read_text().replace('type="ResNet"', 'type="VoVNet"'))
    assert unbuilt in _unreached_findings(project, env)


def test_a_wrapper_script_run_on_one_process_rechecks_a_cached_file(tmp_path):
    """`if not args.distributed:` runs in no documented run while the README starts the wrapper
    script with 8 processes (model/launch_modes.py); a README edited to start it with one must
    turn the guarded read back to a warning, also for the unchanged, cached engine module."""
    _edit_rechecks(tmp_path, "distributed_launches", "README.md", "NUM_GPU=8", "NUM_GPU=1",
                   ("engine.py", 20, "GPU101"))


def test_a_passed_config_file_that_starts_accumulating_rechecks_a_cached_file(tmp_path):
    """`(step + 1) % cfg.gradient_accumulation_steps` is no accumulation while the config file
    every command passes the script sets the count to 1 (model/passed_configs.py); the config
    edited to 4 must bring GPU406 back for the unchanged, cached script."""
    import os
    import shutil

    project = tmp_path / "json_config_runs"
    shutil.copytree(ROOT / "json_config_runs", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert not any(f[0] == "pretrain.py" and f[2] == "GPU406" for f in first)
    assert _json_findings(project, env) == first
    config = project / "configs" / "pretrain.json"
    config.write_text(config.read_text().replace('"gradient_accumulation_steps": 1', '"gradient_accumulation_steps": 4'))
    again = _json_findings(project, env)
    assert ("pretrain.py", 14, "GPU406", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_command_that_starts_passing_a_checkpointing_option_rechecks_a_cached_file(tmp_path):
    """The decoder's switch is set from `cfg.decoder_checkpointing`, which nothing turns on, so
    its checkpoint call is information; a README command that starts passing that option must
    turn it back to a warning, also for the unchanged, cached module."""
    _edit_rechecks(tmp_path, "checkpoint_switches", "README.md", "--grad-ckpt --size 384",
                   "--grad-ckpt --decoder_checkpointing --size 384", ("blocks.py", 35, "GPU405"))


def test_a_python_config_module_that_turns_a_checkpointing_option_on_rechecks_a_cached_file(tmp_path):
    """The neck's switch is left off by the only Python config module (`configs/neck.py`), so
    its checkpoint call is information; turning it on there must turn it back to a warning,
    also for the unchanged, cached module."""
    _edit_rechecks(tmp_path, "checkpoint_switches", "configs/neck.py", "neck_cp=False", "neck_cp=True",
                   ("blocks.py", 49, "GPU405"))


def test_a_trainer_moved_off_the_gpu_rechecks_a_cached_lightning_data_module(tmp_path):
    """A data module's training loader is reported because a file that runs the Lightning
    Trainer puts the run on a GPU (model/lightning_loaders.py); that file imports nothing of the
    data module, so the cached result of the unchanged module must still be checked against it."""
    import os
    import shutil

    project = tmp_path / "lightning_data_hooks"
    shutil.copytree(ROOT / "lightning_data_hooks", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert ("modules.py", 19, "GPU201", "warning") in first
    assert _json_findings(project, env) == first  # served from the cache
    path = project / "main.py"
    text = path.read_text()
    for old, new in (('parser.add_argument("--gpus", default="0,")', 'parser.add_argument("--seed", default=0)'),
                     ('Trainer(accelerator="gpu", devices=opt.gpus, max_epochs=100)', 'Trainer(max_epochs=100)')):
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)
    again = _json_findings(project, env)
    assert not any(f[0] == "modules.py" for f in again)
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_launch_script_that_starts_training_a_copied_package_rechecks_its_cached_model(tmp_path):
    """The copied model's forward is not taken as trained while no run of the project reaches
    the copy's own training script (project/reachability.py); a shell script that starts
    running that script makes the model's per-step syncs findings again, also for the
    unchanged, cached model module."""
    import os
    import shutil

    project = tmp_path / "copied_captioner"
    shutil.copytree(ROOT / "copied_captioner", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert not any(f[0] == "llava_like.py" for f in first)
    assert _json_findings(project, env) == first  # served from the cache
    (project / "scripts" / "train.sh").write_text("deepspeed vlm/train/train.py\n")
    again = _json_findings(project, env)
    assert ("llava_like.py", 19, "GPU104", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_training_command_documented_in_the_docs_folder_starts_a_package_script(tmp_path):
    """`docs/TRAINING.md` documents how the project is run, as a README does: a package script
    that only it names is one of the project's runs (project/layout.py, `launch_texts`)."""
    import os
    import shutil

    project = tmp_path / "copied_captioner"
    shutil.copytree(ROOT / "copied_captioner", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    assert not any(f[0] == "llava_like.py" for f in _json_findings(project, env))
    (project / "docs").mkdir()
    (project / "docs" / "TRAINING.md").write_text("Train with\n\n    python vlm/train/train.py\n")
    again = _json_findings(project, env)
    assert ("llava_like.py", 19, "GPU104", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_asking_for_flash_attention_rechecks_a_cached_model_copy(tmp_path):
    """The FlashAttention arm of a copied Hugging Face model runs only where some text of the
    project asks for it; a training script that starts asking must turn the arm's host read
    back to a warning, also for the unchanged, cached model file."""
    _edit_rechecks(tmp_path, "flash_branches_off", "train.py", 'from_pretrained("some/llama")',
                   'from_pretrained("some/llama", attn_implementation="flash_attention_2")',
                   ("modeling_llama.py", 16, "GPU101"))


def test_a_launch_option_naming_flash_attention_rechecks_a_cached_model_copy(tmp_path):
    """The same, where the project's shell script starts passing the option."""
    import os
    import shutil

    project = tmp_path / "flash_launch"
    shutil.copytree(ROOT / "flash_branches_off", project)
    script = project / "train.sh"
    script.write_text("python train.py\n")
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    finding = ("modeling_llama.py", 16, "GPU101")
    assert (*finding, "info") in _json_findings(project, env)
    script.write_text("python train.py --attn_implementation flash_attention_2\n")
    again = _json_findings(project, env)
    assert (*finding, "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_config_file_that_turns_on_a_loaded_setting_rechecks_a_cached_file(tmp_path):
    """`if cfg.use_adapted_weight:` of a config loaded with `OmegaConf.load` is off while every
    config file gives the key a false value; turning it on in one must bring the host read
    under it back to a warning, from the cache as from a fresh run."""
    _edit_rechecks(tmp_path, "loaded_config_flags", "configs/stage1.yaml", "use_adapted_weight: False",
                   "use_adapted_weight: True", ("train.py", 14, "GPU104"))


def test_a_newer_torch_pin_rechecks_a_cached_deprecated_amp_call(tmp_path):
    """The old AMP entry points warn only from torch 2.4: while the requirements pin 1.13 the
    message says so and no rewrite is offered; pinning a newer torch must change the cached
    file's findings."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    project = tmp_path / "pinned_old_torch"
    shutil.copytree(ROOT / "pinned_old_torch", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))

    def messages(environment):
        run = subprocess.run([sys.executable, "-m", "advisor", "check", "--format", "json", "-j", "1", str(project)],
                             capture_output=True, text=True, env=environment)
        return sorted((f["location"]["row"], f["message"], f["fix"] is not None)
                      for f in json.loads(run.stdout) if f["code"] == "GPU303")

    first = messages(env)
    assert first and all("pins torch 1.13" in m and not fixed for _, m, fixed in first)
    assert messages(env) == first  # served from the cache
    requirements = project / "requirements.txt"
    requirements.write_text(requirements.read_text().replace("torch==1.13.1", "torch==2.5.1"))
    again = messages(env)
    assert again and all("pins torch" not in m for _, m, _ in again)
    assert again == messages({**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_naming_a_licensed_copys_training_script_rechecks_its_cached_helpers(tmp_path):
    """A licensed copy of another project kept as loose files runs only what the project
    imports from it; once the README names the copy's training script, its per-step helper
    must be reported again, also for the unchanged, cached helper."""
    import os
    import shutil

    project = tmp_path / "licensed_copy_scripts"
    shutil.copytree(ROOT / "licensed_copy_scripts", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert not any(f[0] == "utils.py" for f in first)
    assert _json_findings(project, env) == first  # served from the cache
    readme = project / "README.md"
    readme.write_text(readme.read_text() + "    python metric/dino/main_dino.py\n")
    again = _json_findings(project, env)
    assert ("utils.py", 10, "GPU101", "warning") in again
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_sampling_script_that_starts_training_rechecks_a_cached_captioner(tmp_path):
    """A package nothing trains (a captioner imported only by a sampling script) runs only where
    that script calls it; once the script trains, the captioner's forward is a training path
    again, also for the unchanged, cached model file."""
    import os
    import shutil

    project = tmp_path / "captioner_namespace"
    shutil.copytree(ROOT / "captioner_namespace", project)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert not any(f[0] == "arch.py" for f in first)
    assert _json_findings(project, env) == first  # served from the cache
    sample = project / "sample.py"
    sample.write_text(sample.read_text().replace(
        "    return [captioner(p, i) for p, i in zip(prompts, images)]\n",
        "    outputs = [captioner(p, i) for p, i in zip(prompts, images)]\n"
        "    outputs[0].sum().backward()\n    return outputs\n"))
    again = _json_findings(project, env)
    assert any(f[0] == "arch.py" for f in again)
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_config_that_starts_building_lightnings_trainer_rechecks_a_cached_module(tmp_path):
    """`trainer = hydra.utils.instantiate(config.trainer)`: a LightningModule's `training_step`
    runs every step only where a config file names Lightning's Trainer as the class to build; a
    config edited to name it must report the step's host sync, also for the unchanged, cached
    module."""
    _edit_rechecks(tmp_path, "lightning_hydra_custom", "configs/config.yaml", "_target_: loop.LoopTrainer",
                   "_target_: lightning.Trainer", ("model.py", 12, "GPU101"), before=None)


def test_a_script_that_starts_calling_a_method_rechecks_its_cached_class(tmp_path):
    """A method no file near its class names is called nowhere (model/uncalled_methods.py): its
    findings are information; a script edited to call it must turn them back to warnings, also
    for the unchanged, cached module."""
    _edit_rechecks(tmp_path, "uncalled_methods", "sample.py", "# frames = vae.export_frames(latents)",
                   "frames = vae.export_frames(latents)", ("vae.py", 29, "GPU303"))


def test_a_file_that_starts_training_rechecks_a_cached_model_of_an_inference_project(tmp_path):
    """In a project none of whose files trains, a forward the call graph cannot follow is not run
    by a training loop out of sight (`ProjectView.trains_nowhere`); a file edited to train (one
    that imports nothing of the model's package) must report the forward's host syncs again,
    also for the unchanged, cached module."""
    _edit_rechecks(tmp_path, "inference_demo", "tools/convert.py", "    return renamed\n",
                   "    torch.zeros(1, requires_grad=True).sum().backward()\n", ("detector.py", 37, "GPU101"),
                   before=None)


def test_a_file_that_stops_training_rechecks_a_cached_model(tmp_path):
    """The other way round: where one file trains, the forward the call graph cannot follow is
    taken as trained; edited so that no file trains any longer, the cached model must drop
    those findings, as a fresh check does (the training files are the result's dependencies)."""
    import os
    import shutil

    project = tmp_path / "inference_demo"
    shutil.copytree(ROOT / "inference_demo", project)
    convert = project / "tools" / "convert.py"
    plain = convert.read_text()
    convert.write_text(plain.replace("    return renamed\n", "    torch.zeros(1, requires_grad=True).sum().backward()\n"))
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = _json_findings(project, env)
    assert ("detector.py", 37, "GPU101", "warning") in first
    assert _json_findings(project, env) == first  # served from the cache
    convert.write_text(plain)
    again = _json_findings(project, env)
    assert not any(f[0] == "detector.py" for f in again)
    assert again == _json_findings(project, {**env, "ADVISOR_CACHE_DIR": str(tmp_path / "fresh")})


def test_a_config_that_starts_naming_a_lightning_module_rechecks_its_cached_training_step(tmp_path):
    """A LightningModule's `training_step` runs only if some `Trainer.fit` of the project may
    train it: a module built from a config (`instantiate`) is one a config file names, so a
    second model version the project only predicts with trains nowhere; a config edited to name
    it must report its step's host sync, also for the unchanged, cached module."""
    _edit_rechecks(tmp_path, "lightning_versions", "configs/train.yaml", "models.folder_v1.FolderV1",
                   "models.folder_v2.FolderV2", ("folder_v2.py", 15, "GPU101"), before=None)


def test_a_signature_that_starts_taking_a_stale_call_rechecks_the_cached_script(tmp_path):
    """A script whose entry path calls a project function with arguments it cannot take stops
    before it trains (model/broken_calls.py): its findings are information; a default given to
    the parameter it leaves out must turn them back to warnings, also for the unchanged, cached
    script."""
    _edit_rechecks(tmp_path, "stale_scripts", "utils.py", "batch_size, chunk_size):", "batch_size, chunk_size=100):",
                   ("train_latent.py", 19, "GPU101"))


def test_a_file_that_starts_training_in_an_inference_folder_rechecks_its_cached_model(tmp_path):
    """A top-level folder that trains nothing and that nothing outside imports (a chat demo
    beside the fine-tuning scripts) runs its model's forward only where its own code calls it
    (`ProjectView.folder_trains_nowhere`); a file of that folder edited to train must report the
    forward's host sync again, also for the unchanged, cached model module."""
    _edit_rechecks(tmp_path, "inference_subfolder", "demo/cli.py",
                   "    model = VisionChat.from_pretrained(checkpoint).cuda().eval()\n",
                   "    model = VisionChat.from_pretrained(checkpoint).cuda().eval()\n"
                   "    model(torch.load(prompt_path)[0][0].cuda()).logits.sum().backward()\n",
                   ("model.py", 17, "GPU104"), before=None)
