"""Findings carry data: named fields and labelled related places, built by the rules and read by
every output (JSON, SARIF, text, the result cache) instead of the message text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from advisor.cache import decode, encode
from advisor.config import Config
from advisor.engine import check_source
from advisor.findings import Position, Related
from advisor.output.advice import restates, shown_hint
from advisor.rules import ALL_RULES, get_rule
from tests.rule_fixtures import check, sections
from tests.test_notebook import code, notebook, write_nb

ROOT = Path(__file__).resolve().parent.parent
JSON_SCHEMA = ROOT / "docs" / "json-output.schema.json"
SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

DDP = textwrap.dedent(
    """\
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    dist.init_process_group("nccl")
    train_sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32,
                        sampler=train_sampler)
    for epoch in range(10):
        for x, y in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
    """
)
EPOCH_LOOP_ROW = 9


def advisor(*args, cwd: Path = ROOT, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", *map(str, args)], capture_output=True, text=True,
                          cwd=str(cwd), env=env, timeout=300)


def validator(schema_path: Path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


# -- what the rules build ----------------------------------------------------------------------
ALL_SECTIONS = [(rule, s) for rule in ALL_RULES for s in sections(rule) if s.kind == "invalid"]


@pytest.mark.parametrize("rule, section", ALL_SECTIONS, ids=[f"{r.code}-{s.row}" for r, s in ALL_SECTIONS])
def test_fixture_findings_carry_plain_json_fields(rule, section):
    rows = len(section.source.splitlines()) + 1
    for finding in check(rule, section.source).findings:
        assert isinstance(finding.data, dict)
        assert json.loads(json.dumps(finding.data)) == finding.data, "fields must be plain JSON values"
        for related in finding.related:
            assert related.label and 1 <= related.start.row <= related.end.row <= rows
        # A row the message names ("the loop on line 7") is a related place's.
        named = {int(n) for n in re.findall(r"\bline (\d+)", finding.message)}
        assert named <= {r.start.row for r in finding.related}


def test_message_is_formatted_from_fields_and_related_rows():
    rule = get_rule("GPU501")
    report = rule.report(None, "`{name}` at line {line[epoch loop]}", data={"name": "s"}, related=[(None, "epoch loop")])
    assert report.message({"epoch loop": 12}) == "`s` at line 12"
    assert report.finding_hint() == rule.hint  # no hint of its own: the rule's
    own = rule.report(None, "m", data={"sampler": "tr"}, hint="call `{sampler}.set_epoch(epoch)`")
    assert own.finding_hint() == "call `tr.set_epoch(epoch)`"
    with pytest.raises(KeyError, match="GPU501 report's template uses {missing}"):
        rule.report(None, "{missing}").message({})


def test_related_place_and_fields_of_a_real_finding():
    finding = next(f for f in check_source(DDP, "ddp.py").findings if f.code == "GPU501")
    assert finding.related == (Related("epoch loop", Position(EPOCH_LOOP_ROW, 1), Position(13, 25)),)
    assert finding.message.startswith(f"DistributedSampler is reused by the epoch loop at line {EPOCH_LOOP_ROW} ")
    assert finding.data == {"sampler": "train_sampler", "epoch": "epoch"}


def test_gpu501_hint_names_the_variable_the_fix_names():
    finding = next(f for f in check_source(DDP, "ddp.py").findings if f.code == "GPU501")
    assert finding.hint == "call `train_sampler.set_epoch(epoch)` at the start of every epoch"
    assert finding.fix.message == "call `train_sampler.set_epoch(epoch)` at the start of each epoch"
    # A loader built on the sampler, looped as `for ep in ...`: the hint follows the fix.
    through_loader = DDP.replace("train_sampler = DistributedSampler(dataset)\n", "").replace(
        "sampler=train_sampler", "sampler=DistributedSampler(dataset)").replace("epoch", "ep")
    finding = next(f for f in check_source(through_loader, "ddp.py").findings if f.code == "GPU501")
    assert finding.fix.message == "call `loader.sampler.set_epoch(ep)` at the start of each epoch"
    assert finding.hint == "call `loader.sampler.set_epoch(ep)` at the start of every epoch"


def test_each_sampler_is_named_in_its_own_finding():
    two = DDP.replace("train_sampler = DistributedSampler(dataset)\n",
                      "train_sampler = DistributedSampler(dataset)\nextra_sampler = DistributedSampler(extra)\n")
    hints = sorted(f.hint for f in check_source(two, "ddp.py").findings if f.code == "GPU501")
    assert hints == ["call `extra_sampler.set_epoch(epoch)` at the start of every epoch",
                     "call `train_sampler.set_epoch(epoch)` at the start of every epoch"]


# -- the outputs read the fields ---------------------------------------------------------------
def test_json_output_has_data_and_related_and_matches_its_schema(tmp_path):
    (tmp_path / "ddp.py").write_text(DDP)
    (tmp_path / "broken.py").write_text("import torch\nloss.backward()\nx.item(\n")
    proc = advisor("check", "--no-cache", "--show-info", "--format", "json", tmp_path, ROOT / "tests" / "corpus",
                   ROOT / "examples")
    assert proc.returncode == 1, proc.stderr
    items = json.loads(proc.stdout)
    errors = sorted(validator(JSON_SCHEMA).iter_errors(items), key=str)
    assert not errors, "\n".join(e.message for e in errors[:5])
    # By its full name: tests/corpus holds *_ddp.py files too, and which comes first depends on
    # where the checkout lies (a clone under /tmp sorts before pytest's temporary folder).
    ddp = next(i for i in items if i["code"] == "GPU501" and i["filename"] == str(tmp_path / "ddp.py"))
    assert ddp["data"] == {"sampler": "train_sampler", "epoch": "epoch"}
    assert ddp["related"] == [{"label": "epoch loop", "cell": None, "location": {"row": EPOCH_LOOP_ROW, "column": 1},
                               "end_location": {"row": 13, "column": 25}}]
    problem = next(i for i in items if i["code"] is None)
    assert problem["data"] is None and problem["related"] == []
    assert all(isinstance(i["data"], dict) for i in items if i["code"] is not None)


def test_json_related_place_in_another_notebook_cell(tmp_path, capsys):
    from advisor.cli import main

    setup, loop = DDP.split("for epoch")
    path = write_nb(tmp_path / "ddp.ipynb", notebook(code(setup, 1), code("for epoch" + loop, 2)))
    main(["check", "--format", "json", str(path)])
    items = json.loads(capsys.readouterr().out)
    validator(JSON_SCHEMA).validate(items)
    item = next(i for i in items if i["code"] == "GPU501")
    assert item["cell"] == 1
    assert item["related"][0]["cell"] == 2 and item["related"][0]["location"] == {"row": 1, "column": 1}
    main(["check", str(path)])
    assert "  1 │ for epoch in range(10):  ← epoch loop (cell 2)" in capsys.readouterr().out


def test_sarif_has_related_locations_and_data(tmp_path):
    (tmp_path / "ddp.py").write_text(DDP)
    proc = advisor("check", "--no-cache", "--format", "sarif", "ddp.py", cwd=tmp_path)
    log = json.loads(proc.stdout)
    errors = sorted(validator(SARIF_SCHEMA).iter_errors(log), key=str)
    assert not errors, "\n".join(e.message for e in errors[:5])
    result = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "GPU501")
    assert result["relatedLocations"] == [{
        "id": 0,
        "physicalLocation": {"artifactLocation": {"uri": "ddp.py", "uriBaseId": "%SRCROOT%"},
                             "region": {"startLine": EPOCH_LOOP_ROW, "startColumn": 1, "endLine": 13, "endColumn": 25}},
        "message": {"text": "epoch loop"},
    }]
    assert result["properties"]["data"] == {"sampler": "train_sampler", "epoch": "epoch"}


def test_text_output_shows_the_related_line_and_each_advice_once(tmp_path):
    (tmp_path / "ddp.py").write_text(DDP)
    proc = advisor("check", "--no-cache", "ddp.py", cwd=tmp_path, env=dict(os.environ, COLUMNS="200"))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert f"  {EPOCH_LOOP_ROW} │ for epoch in range(10):  ← epoch loop" in out
    # GPU501: the fix line says what the hint says, so the hint is not printed.
    gpu501 = out.split("GPU501", 1)[1].split("\n\n", 1)[0]
    assert "fix: call `train_sampler.set_epoch(epoch)` at the start of each epoch" in gpu501
    assert "hint:" not in gpu501
    # GPU201: the hint says more than the fix (the non-blocking copy): both are printed.
    gpu201 = out.split("GPU201", 1)[1].split("\n\n", 1)[0]
    assert "hint: pass `pin_memory=True`, and copy with `.to(device, non_blocking=True)`" in gpu201
    assert "fix: add `pin_memory=True`" in gpu201
    # A wider related row widens the gutter of the finding's own line too.
    wide = tmp_path / "wide.py"
    wide.write_text(DDP.replace("for epoch", "\n" * 100 + "for epoch"))
    out = advisor("check", "--no-cache", "--select", "GPU501", "wide.py", cwd=tmp_path,
                  env=dict(os.environ, COLUMNS="200")).stdout
    assert "    6 │ train_sampler = DistributedSampler(dataset)\n" in out
    assert f"  {EPOCH_LOOP_ROW + 100} │ for epoch in range(10):  ← epoch loop\n" in out


def test_hint_restated_by_fix():
    assert restates("call `s.set_epoch(e)` at the start of every epoch", "call `s.set_epoch(e)` at the start of each epoch")
    assert restates("add `non_blocking=True`.", "Add `non_blocking=True`")
    assert not restates("add `non_blocking=True` to host-to-device copies", "add `non_blocking=True`")
    assert not restates("call `sampler.set_epoch(epoch)`", "call `loader.sampler.set_epoch(epoch)`")
    assert not restates("", "anything")
    finding = next(f for f in check_source(DDP, "ddp.py").findings if f.code == "GPU501")
    assert shown_hint(finding) is None
    assert shown_hint(finding.replace(fix=None)) == finding.hint


def test_cached_findings_keep_data_and_related(tmp_path):
    findings = check_source(DDP, "ddp.py", Config(show_info=True)).findings
    decoded, problem, _ = decode(encode(findings, None))
    assert decoded == findings and problem is None
    assert any(f.related for f in decoded) and all(isinstance(f.data, dict) for f in decoded)
    # End to end: a second run served from the cache prints the same fields.
    (tmp_path / "ddp.py").write_text(DDP)
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    first = advisor("check", "--format", "json", "ddp.py", cwd=tmp_path, env=env)
    assert list((tmp_path / "cache").rglob("*.json")), first.stderr
    second = advisor("check", "--format", "json", "ddp.py", cwd=tmp_path, env=env)
    assert first.stdout == second.stdout and '"related": [' in second.stdout


def test_cache_entry_of_the_old_layout_is_a_miss():
    findings = check_source(DDP, "ddp.py").findings
    body = json.loads(encode(findings, None))
    for entry in body["findings"]:
        del entry["data"], entry["related"]
    assert decode(json.dumps(body)) is None


# -- GPU201: the fix follows the call's layout --------------------------------------------------
def test_gpu201_fix_follows_a_multi_line_call(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(DDP)
    proc = advisor("check", "--no-cache", "--fix", "--select", "GPU201", "train.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("loader = DataLoader(dataset, batch_size=32,\n"
            "                    sampler=train_sampler,\n"
            "                    pin_memory=True)\n") in path.read_text()
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(DDP.replace("\n", "\r\n").encode())
    proc = advisor("check", "--no-cache", "--fix", "--select", "GPU201", "crlf.py", cwd=tmp_path)
    assert b"sampler=train_sampler,\r\n                    pin_memory=True)\r\n" in crlf.read_bytes()
