"""The value model reads the literals a setting holds where it comes from elsewhere: command-line
defaults, tables and settings dicts, settings objects. `probe(expr)` marks the expression asked
about in each snippet."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from advisor.model.file_model import FileModel
from advisor.model.literals import literal_values


def probed(source: str):
    model = FileModel.build(cst.parse_module(textwrap.dedent(source)))
    (site,) = model.facts.calls_by_callee["probe"]
    return literal_values(model, site.node.args[0].value, site.ctx, site.order)


PARSER = """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--workers", "-j", type=int, default=8)
parser.add_argument("--precision", choices=["fp16", "bf16"], default="bf16")
parser.add_argument("--limit", type=int)
"""


def test_an_option_holds_its_default_and_says_so():
    found = probed(PARSER + "args = parser.parse_args()\nprobe(args.workers)\n")
    assert found.ints() == (8,)
    assert found.option == "--workers"


def test_parse_known_args_and_a_parent_parser():
    source = """
    import argparse
    base = argparse.ArgumentParser(add_help=False)
    base.add_argument("--num_workers", type=int, default=3)
    parser = argparse.ArgumentParser(parents=[base])
    args, rest = parser.parse_known_args()
    probe(args.num_workers)
    """
    assert probed(source).ints() == (3,)


def test_set_defaults_replaces_the_default_and_unknown_defaults_stay_unknown():
    assert probed(PARSER + "parser.set_defaults(workers=2)\nargs = parser.parse_args()\nprobe(args.workers)\n").ints() == (2,)
    assert probed(PARSER + "parser.set_defaults(**cfg)\nargs = parser.parse_args()\nprobe(args.workers)\n").ints() is None
    assert probed(PARSER + "args = parser.parse_args()\nprobe(args.limit)\n").ints() is None


def test_an_attribute_set_after_parsing_is_not_the_default():
    source = PARSER + "args = parser.parse_args()\nargs.workers = min(args.workers, 4)\nprobe(args.workers)\n"
    assert probed(source).ints() is None


def test_a_dtype_table_indexed_by_an_option():
    table = 'DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float}\n'
    by_option = probed(PARSER + table + "args = parser.parse_args()\nprobe(DTYPES[args.precision])\n")
    assert by_option.dtypes() == {"bfloat16"} and by_option.complete
    assert by_option.option == "--precision"
    by_anything = probed("import torch\n" + table + "probe(DTYPES[name])\n")
    assert by_anything.dtypes() == {"float16", "bfloat16", "float32"} and by_anything.complete


@pytest.mark.parametrize(
    "source, ints",
    [
        ('cfg = {"num_workers": 4}\nprobe(cfg["num_workers"])\n', (4,)),
        ('cfg = {"batch_size": 4}\nprobe(cfg.get("num_workers", 2))\n', (2,)),
        ('cfg = {"num_workers": 4}\ncfg.update(load())\nprobe(cfg["num_workers"])\n', None),
        ('cfg = dict(num_workers=4)\ncfg["num_workers"] = 6\nprobe(cfg["num_workers"])\n', (6,)),
        ('cfg = {"num_workers": 4}\nif fast:\n    cfg["num_workers"] = 8\nprobe(cfg["num_workers"])\n', (4, 8)),
        ("from types import SimpleNamespace\ncfg = SimpleNamespace(num_workers=5)\nprobe(cfg.num_workers)\n", (5,)),
        (
            "from dataclasses import dataclass\n@dataclass\nclass C:\n    lr: float = 0.1\n    num_workers: int = 7\n"
            "probe(C().num_workers)\n",
            (7,),
        ),
        ("from dataclasses import dataclass\n@dataclass\nclass C:\n    num_workers: int = 7\nprobe(C(2).num_workers)\n", (2,)),
    ],
)
def test_settings_dicts_and_objects(source, ints):
    assert probed(source).ints() == ints


# -- settings whose value the program does not hold ---------------------------------------------
@pytest.mark.parametrize("source, settings, covered", [
    # a dict loaded from a file, read by key, nested or not
    ("import yaml\ncfg = yaml.safe_load(open('a.yaml'))\nprobe(cfg['data']['num_workers'])\n", {"num_workers"}, True),
    # a nested settings object handed in from elsewhere
    ("def f(config):\n    probe(config.data.num_workers)\n", {"num_workers"}, True),
    # a key with a default written in the call: the default is one of the values
    ("def f(hp):\n    probe(hp.get('workers', 6))\n", {"workers"}, True),
    # a plain parse result whose parser is out of sight, and an object's own state: not settings
    ("def f(args):\n    probe(args.workers)\n", set(), False),
    ("class A:\n    def f(self):\n        probe(self.loader.num_workers)\n", set(), False),
    # a path that gives a computed value is not covered
    ("import yaml\ncfg = yaml.safe_load(open('a.yaml'))\nprobe(cfg['workers'] if cfg else compute())\n", {"workers"}, False),
])
def test_a_setting_read_from_elsewhere_is_named(source, settings, covered):
    found = probed(source)
    assert set(found.settings) == settings
    assert found.covered is covered
    assert found.ints() is None or found.ints() == (6,)


def test_a_setting_and_a_literal_on_two_paths():
    found = probed("import yaml\ncfg = yaml.safe_load(open('a.yaml'))\nprobe(0 if cfg['debug'] else cfg['num_workers'])\n")
    assert found.values == frozenset({("int", 0)})
    assert found.settings == frozenset({"num_workers"}) and found.covered and not found.complete


def test_an_attribute_set_in_main_is_read_through_the_worker_parameter():
    source = PARSER + """
parser.add_argument("--world-size", default=-1, type=int)
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main():
    args = parser.parse_args()
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    if args.multiprocessing_distributed:
        args.world_size = 8 * args.world_size
    main_worker(0, args)


def main_worker(gpu, args):
    probe(args.distributed)
"""
    found = probed(source)
    assert found.complete and {value for _, value in found.values} == {False}


def test_prefix_tests_of_settings_decide_branches_and_unknown_prefixes_decide_nothing():
    source = PARSER + """
parser.add_argument("--arch", default="resnet50")
args = parser.parse_args()
if args.arch.startswith("vgg") or args.arch.startswith(("alexnet", "lenet")):
    probe(1)
if args.arch.startswith(pick()):
    probe(2)
"""
    model = FileModel.build(cst.parse_module(textwrap.dedent(source)))
    first, second = sorted(model.facts.calls_by_callee["probe"], key=lambda s: s.order)
    assert model.guards.dead(first.ctx)
    assert not model.guards.dead(second.ctx)


def test_arguments_after_a_spread_are_not_taken_for_the_first_positions():
    source = """
def run(workers, epoch):
    probe(workers)


def main(rest):
    params = (4,)
    run(*params, 3)
    run(*rest, 3)
"""
    found = probed(source)
    assert not found.complete and 3 not in {value for _, value in found.values}


def test_a_spread_of_a_tuple_written_out_gives_its_items_by_position():
    source = """
def run(workers, epoch):
    probe(workers)


def main():
    params = (4,)
    run(*params, 3)
"""
    assert probed(source).ints() == (4,)


def test_an_environment_read_holds_its_default_as_a_run_setting():
    found = probed('import os\nPIN = str(os.getenv("PIN_MEMORY", True)).lower() == "true"\nprobe(PIN)\n')
    assert found.only(True) and found.option == "$PIN_MEMORY"
    assert probed('import os\nprobe(int(os.environ.get("NUM_WORKERS", "4")))\n').ints() == (4,)
    assert probed('from os import getenv\nprobe(getenv("EVAL_PIN", "0") == "1")\n').only(False)


def test_launcher_variables_and_unreadable_conversions_stay_unknown():
    # torchrun and SLURM set these for every process: their default is no run's value.
    assert not probed('import os\nprobe(int(os.environ.get("WORLD_SIZE", 1)))\n').complete
    assert not probed('import os\nprobe(os.getenv("SLURM_PROCID", "0"))\n').complete
    assert not probed('import os\nprobe(int(os.getenv("WORKERS", "auto")))\n').values
    assert not probed('import os\nprobe(os.getenv("WORKERS"))\n').complete


def test_an_environment_default_leaves_both_branches_of_a_test_open():
    # A launch may set the variable to anything: a branch on it is not dead code.
    source = """
    import os
    MODE = os.getenv("LOADER_MODE", "fast")
    pin = True
    if MODE == "debug":
        pin = False
    probe(pin)
    """
    assert probed(source).may_be(False)


def test_a_word_looked_for_in_a_string_option():
    # `if "concat" in options.suffix:`: a substring test of what the option holds; against a
    # number it stays unknown.
    source = """
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--suffix", default="", type=str)
    parser.add_argument("--depth", default=3, type=int)
    args = parser.parse_args()
    probe("concat" in args.suffix)
    """
    found = probed(source)
    assert found.complete and not found.may_be(True) and found.option == "--suffix"
    assert probed(source.replace('probe("concat" in args.suffix)', 'probe("concat" not in args.suffix)')).may_be(True)
    assert not probed(source.replace('probe("concat" in args.suffix)', "probe(2 in args.depth)")).complete


def test_a_helper_that_copies_named_settings_onto_another_config():
    # `setattr(target, attr_name, ...)` in a helper the file calls with written names sets those
    # names only; `cfg.__dict__["local_rank"] = 0` sets one key. The option keeps its default.
    source = """
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--accumulation", default=1, type=int)
    args = parser.parse_args()

    def update_attr(target, target_name, source, source_name):
        if hasattr(source, source_name):
            setattr(target, target_name, getattr(source, source_name))
        return target

    class Config:
        pass

    visual = update_attr(Config(), "num_hidden_layers", args, "visual_num_hidden_layers")
    cross = update_attr(Config(), "num_hidden_layers", args, "cross_num_hidden_layers")
    visual.__dict__["local_rank"] = 0
    probe(args.accumulation)
    """
    found = probed(source)
    assert found.complete and found.ints() == (1,)
    # A name the callers do not write out, or any key stored into `__dict__`: anything may be set.
    assert not probed(source.replace('"cross_num_hidden_layers")', '"cross_num_hidden_layers")\n    update_attr(args, key, args, key)')).complete
    assert not probed(source.replace('visual.__dict__["local_rank"] = 0', 'visual.__dict__[key] = 0')).complete
