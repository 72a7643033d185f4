"""`--format sarif` (validated against the official SARIF 2.1.0 schema), `--format github`
(workflow commands and their escaping) and `--output-file`."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.findings import FileProblem, Finding, Position, Severity
from advisor.output.github import escape_data, escape_property, write_github
from advisor.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


def run(capsys, monkeypatch, *args, cwd=ROOT):
    monkeypatch.chdir(cwd)
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_vendored_schema_is_the_official_one():
    data = SCHEMA.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256
    assert json.loads(data)["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")


def test_sarif_validates_against_the_schema(capsys, monkeypatch, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nloss.backward()\nx.item(\n")
    status, out, err = run(capsys, monkeypatch, "check", "--format", "sarif", "--show-info",
                           "examples/train.py", "examples/family_pipeline.py", broken)
    assert status == 1, err
    log = json.loads(out)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    errors = sorted(validator(schema).iter_errors(log), key=str)
    assert not errors, "\n".join(e.message for e in errors[:5])

    run_ = log["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "torch-advisor"
    assert "informationUri" not in driver  # no hosted docs configured: no made-up URL
    assert [r["id"] for r in driver["rules"]] == [r.code for r in ALL_RULES]
    for rule in driver["rules"]:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"] and "helpUri" not in rule
        # No path inside torch-advisor's own repository: it does not exist where the log is read.
        assert "docsPath" not in rule["properties"] and "docs/rules" not in json.dumps(rule)
        assert "### Fix safety" in rule["help"]["markdown"] and "Fix safety:" in rule["help"]["text"]

    # With `docs-url` configured, rules and the tool carry absolute links, still schema-valid.
    from advisor.output.sarif import sarif_log

    linked = sarif_log([], [], "https://docs.example.org/torch-advisor/rules/{code}/")
    assert not list(validator(schema).iter_errors(linked))
    linked_driver = linked["runs"][0]["tool"]["driver"]
    assert linked_driver["informationUri"] == "https://docs.example.org/torch-advisor/rules"
    assert linked_driver["rules"][0]["helpUri"] == "https://docs.example.org/torch-advisor/rules/gpu101/"
    results = run_["results"]
    assert {r["level"] for r in results} <= {"error", "warning", "note"}
    item = next(r for r in results if r["ruleId"] == "GPU101")
    location = item["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "examples/train.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 130 and location["region"]["startColumn"] == 29
    assert {"endLine", "endColumn"} <= set(location["region"])
    assert driver["rules"][item["ruleIndex"]]["id"] == "GPU101"
    assert any("fixes" in r for r in results)
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "syntax error" in notes[0]["message"]["text"]


def test_sarif_for_a_notebook_names_the_cell(capsys, monkeypatch, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from tests.test_notebook import sample

    path = sample(tmp_path)
    _, out, _ = run(capsys, monkeypatch, "check", "--format", "sarif", path.name, cwd=tmp_path)
    log = json.loads(out)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    item = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "GPU101")
    assert item["properties"]["cell"] == 3 and item["message"]["text"].startswith("cell 3: ")
    assert item["properties"]["data"] == {"expression": "loss.item()"}
    assert item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.ipynb"


def test_github_escaping():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    finding = Finding(code="GPU101", name="item-in-training-loop", message="50% slower,\nreally: yes",
                      severity=Severity.WARNING, start=Position(3, 5), end=Position(3, 16), url="u",
                      hint="keep it", filename="dir,x/a:b.py")
    info = Finding(code="GPU305", name="n", message="m", severity=Severity.INFO, start=Position(1, 1),
                   end=Position(2, 1), url="u", filename="c.ipynb", cell=4)
    out = io.StringIO()
    write_github(out, [finding, info], [FileProblem("bad.py", "syntax error: x", 7, 2)])
    assert out.getvalue().splitlines() == [
        "::error file=bad.py,line=7,col=2,title=torch-advisor::syntax error: x",
        "::warning file=dir%2Cx/a%3Ab.py,line=3,col=5,endLine=3,endColumn=16,title=GPU101::"
        "50%25 slower,%0Areally: yes%0Ahint: keep it",
        "::notice file=c.ipynb,line=1,col=1,endLine=2,endColumn=1,title=GPU305::cell 4: m",
    ]


def test_github_format_end_to_end(capsys, monkeypatch):
    status, out, _ = run(capsys, monkeypatch, "check", "--format", "github", "examples/train.py")
    assert status == 1
    lines = out.splitlines()
    assert lines and all(line.startswith("::warning file=examples/train.py,line=") for line in lines)
    assert any(",col=29,endLine=130,endColumn=40,title=GPU101::" in line for line in lines)


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github"])
def test_output_file_takes_the_report(capsys, monkeypatch, tmp_path, fmt):
    target = tmp_path / f"report.{fmt}"
    status, out, _ = run(capsys, monkeypatch, "check", "--format", fmt, "--output-file", target, "examples/train.py")
    assert status == 1 and out == ""
    text = target.read_text(encoding="utf-8")
    assert "GPU101" in text
    if fmt in ("json", "sarif"):
        json.loads(text)


def test_unwritable_output_file_is_an_error(capsys, monkeypatch, tmp_path):
    status, _, err = run(capsys, monkeypatch, "check", "--format", "sarif", "--output-file",
                         tmp_path / "missing" / "x.sarif", "examples/train.py")
    assert status == 2 and "cannot write the report" in err


@pytest.mark.parametrize("color", ["never", "always"])
def test_line_numbers_are_never_read_as_emoji_codes(capsys, monkeypatch, tmp_path, color):
    # rich reads `:100:` as an emoji code: `train.py:100:5` must stay as it is, and so must
    # `:smile:` in a quoted source line.
    padding = "".join(f"x{i} = {i}\n" for i in range(92))
    source = (
        "import torch\n\nmodel = model.cuda()\n" + padding
        + "for x, y in loader:\n    loss = model(x.cuda())\n    loss.backward()\n"
        + "    opt.step()\n    print(loss.item())  # :smile:\n"
    )
    (tmp_path / "train.py").write_text(source)
    status, out, _ = run(capsys, monkeypatch, "check", "--no-cache", "--color", color, "train.py", cwd=tmp_path)
    assert status == 1
    assert "train.py:100:" in out and "\U0001f4af" not in out and ":smile:" in out
