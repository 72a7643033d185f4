"""The language server's pure parts: positions in each encoding, document edits, the noqa
edit, settings; and `advisor lsp` without pygls."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("lsprotocol", reason="the `lsp` extra is not installed")

from lsprotocol import types  # noqa: E402

from advisor.findings import Position  # noqa: E402
from advisor.lsp import convert  # noqa: E402
from advisor.lsp.actions import noqa_code_at, noqa_edit  # noqa: E402
from advisor.lsp.documents import Documents  # noqa: E402
from advisor.lsp.settings import Settings, parse_settings  # noqa: E402

LINE = 'x = "é😀" + loss.item()'  # é: 2 bytes, 1 utf-16 unit; 😀: 4 bytes, 2 utf-16 units


@pytest.mark.parametrize("encoding, expected", [("utf-8", 15), ("utf-16", 12), ("utf-32", 11)])
def test_columns_in_each_encoding(encoding, expected):
    points = LINE.index("loss")
    assert convert.to_units(LINE, points, encoding) == expected
    assert convert.from_units(LINE, expected, encoding) == points
    assert convert.lsp_position([LINE], Position(1, points + 1), encoding) == types.Position(0, expected)


def test_position_inside_a_character_snaps_after_it():
    assert convert.from_units(LINE, 7, "utf-16") == 7  # between the two halves of 😀 -> after it
    assert convert.from_units(LINE, 100, "utf-8") == len(LINE)


def test_incremental_changes_use_protocol_lines_not_splitlines():
    docs = Documents()
    text = "a = 1\x0cb = 2\nc = '😀'\nd = 3\n"  # a form feed is not a line break for the protocol
    doc = docs.open("file:///t.py", text, 1)
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(1, 9), end=types.Position(1, 9)), text="!"
    )
    doc.apply([change], 2, "utf-16")
    assert doc.text == "a = 1\x0cb = 2\nc = '😀'!\nd = 3\n" and doc.version == 2
    assert doc.lines[1] == "c = '😀'!"


def test_minimal_edit_spans_only_the_difference():
    old = "a\r\nbb\r\ncc\r\n"
    new = "a\r\nbXb\r\ncc\r\n"
    edit = convert.minimal_edit(old, new)
    assert (edit.start, edit.end, edit.content) == (Position(2, 2), Position(2, 2), "X")
    assert convert.minimal_edit(old, old) is None


@pytest.mark.parametrize(
    "line, expected",
    [
        ("x.item()", "x.item()  # noqa: GPU101"),
        ("x.item()  # keep", "x.item()  # keep  # noqa: GPU101"),
        ("x.item()  # noqa: GPU102", "x.item()  # noqa: GPU102, GPU101"),
        ("x.item()  # noqa:GPU102 GPU103  # why", "x.item()  # noqa:GPU102, GPU103, GPU101  # why"),
    ],
)
def test_noqa_edit_adds_or_merges(line, expected):
    edit = noqa_edit(line, 3, "GPU101")
    assert edit.start.row == edit.end.row == 3
    assert line[: edit.start.column - 1] + edit.content + line[edit.end.column - 1:] == expected


@pytest.mark.parametrize("line", ["x.item()  # noqa", "x.item()  # noqa: GPU1", "y = x + \\"])
def test_noqa_edit_not_offered(line):
    assert noqa_edit(line, 1, "GPU101") is None


def test_noqa_code_under_cursor():
    line = "x  # noqa: GPU101, GPU201"
    assert noqa_code_at(line, line.index("GPU201") + 3)[0] == "GPU201"
    assert noqa_code_at(line, 0) is None


def test_settings_keep_good_values_and_report_bad_ones():
    settings, errors = parse_settings({"advisor": {"run": "onSave", "select": ["gpu1"], "debounceMs": -4}})
    assert settings == Settings(run="onSave", select=("GPU1",))
    assert len(errors) == 1 and "debounceMs" in errors[0]


def test_lsp_without_pygls_says_how_to_install(monkeypatch, capsys):
    from advisor import cli

    # every pygls module, also those an earlier in-process test imported
    for name in [m for m in sys.modules if m == "pygls" or m.startswith("pygls.")] + ["pygls"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "advisor.lsp.server", raising=False)
    assert cli.main(["lsp"]) == 2
    assert "pip install 'torch-advisor[lsp]'" in capsys.readouterr().err


def _job(uri: str, text: str, version: int):
    from advisor.config import Config
    from advisor.lsp.analysis import Job

    return Job(uri=uri, text=text, version=version, key=(version,), filename="train.py", path=None,
               config=Config(), excluded=False, encoding=convert.UTF16, href=lambda code: None,
               wanted=lambda: True)


def test_edits_reuse_parsed_statements_and_only_a_few_files_keep_them():
    from advisor.lsp.analysis import KEEP_PARSED_FILES, Analyzer

    analyzer = Analyzer()
    text = ("import torch\n\ndef train(model, loader, opt):\n    for x in loader:\n        loss = model(x.cuda())\n"
            "        loss.backward()\n        opt.step()\n        print(loss.item())\n\ndef other():\n    pass\n")
    first = analyzer._run(_job("file:///a.py", text, 1), None)
    kept = dict(analyzer._chunks["file:///a.py"]._chunks)
    edited = text.replace("pass", "return 1")
    second = analyzer._run(_job("file:///a.py", edited, 2), None)
    now = analyzer._chunks["file:///a.py"]._chunks
    assert [c is kept.get(t) for t, c in now.items()] == [True, True, False]
    assert first.diagnostics and [d.range for d in second.diagnostics] == [d.range for d in first.diagnostics]
    for n in range(KEEP_PARSED_FILES + 3):
        analyzer._run(_job(f"file:///f{n}.py", text, 1), None)
    assert len(analyzer._chunks) == KEEP_PARSED_FILES
    assert "file:///a.py" not in analyzer._chunks
    analyzer.forget(f"file:///f{KEEP_PARSED_FILES + 2}.py")
    assert len(analyzer._chunks) == KEEP_PARSED_FILES - 1
    analyzer.shutdown()


def test_related_information_only_for_clients_that_take_it():
    from advisor.engine import check_source

    text = ("import torch.distributed as dist\nfrom torch.utils.data import DistributedSampler\n"
            "sampler = DistributedSampler(ds)\nfor epoch in range(3):\n    for x in loader:\n"
            "        model(x.cuda()).sum().backward()\n        opt.step()\n")
    finding = next(f for f in check_source(text, "t.py").findings if f.code == "GPU501")
    lines = convert.lines_of(text)
    without = convert.diagnostic(finding, lines, convert.UTF16, 1, None)
    assert without.related_information is None
    within = convert.diagnostic(finding, lines, convert.UTF16, 1, None, lambda related: ("file:///t.py", lines))
    assert [(r.message, r.location.range.start) for r in within.related_information] == [
        ("epoch loop", types.Position(3, 0))]
    # A related place the client has no document for (a cell that is gone) is left out.
    assert convert.diagnostic(finding, lines, convert.UTF16, 1, None, lambda related: None).related_information is None


def test_server_asks_the_client_whether_it_takes_related_information():
    from advisor.lsp.server import AdvisorServer

    class Client(AdvisorServer):
        client_capabilities = None  # what `initialize` would have stored

    server = Client.__new__(Client)
    for publish, pull, expected in ((True, None, True), (None, True, True), (False, None, False), (None, None, False)):
        server.client_capabilities = types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=publish),
            diagnostic=types.DiagnosticClientCapabilities(related_information=pull)))
        assert server.related_information is expected


def test_models_left_by_keystrokes_wait_for_a_pause_up_to_a_bound(monkeypatch):
    """A held analysis does not start by freeing what the one before left (that collection
    would delay its diagnostics); past MOST_RETIRED_MODELS it does, so memory stays bounded."""
    from advisor.lsp import analysis as analysis_module
    from advisor.lsp.analysis import Analyzer

    monkeypatch.setattr(analysis_module, "MOST_RETIRED_MODELS", 3)
    analyzer = Analyzer()
    text = "import torch\n\ndef train(model, loader):\n    for x in loader:\n        print(model(x.cuda()).item())\n"
    try:
        for version in range(1, 4):
            analyzer._run(_job("file:///a.py", text + "\n" * version, version), None, hold=True)
        assert len(analyzer._retired) == 3
        analyzer._run(_job("file:///a.py", text, 4), None, hold=True)
        assert len(analyzer._retired) == 1  # the three freed first, then its own kept
        analyzer.release()
        assert not analyzer._retired
    finally:
        analyzer.release()
        analyzer.shutdown()


def test_diagnostics_are_written_as_the_protocol_library_writes_them():
    import enum
    import json

    from lsprotocol import types
    from pygls.protocol import default_converter

    from advisor.lsp.analysis import Analyzer

    class Kind(enum.Enum):
        CUDA = "cuda"

    converter = default_converter()
    span = types.Range(start=types.Position(line=1, character=2), end=types.Position(line=3, character=4))
    made = [
        types.Diagnostic(range=span, message="bare"),
        types.Diagnostic(range=span, message="full", severity=types.DiagnosticSeverity.Warning, code="GPU101",
                         code_description=types.CodeDescription(href="https://example.org/r"), source="advisor",
                         tags=[types.DiagnosticTag.Unnecessary],
                         related_information=[types.DiagnosticRelatedInformation(
                             location=types.Location(uri="file:///a.py", range=span), message="there")],
                         data={"version": 3, "fields": {"pair": (1, 2), "none": None, "kind": Kind.CUDA}}),
    ]
    analyzer = Analyzer()
    try:
        text = ("import torch\n\ndef train(model, loader, opt):\n    for x in loader:\n        loss = model(x.cuda())\n"
                "        opt.zero_grad(set_to_none=False)\n        print(loss.item())\n")
        made += analyzer._run(_job("file:///a.py", text, 1), None).diagnostics
    finally:
        analyzer.shutdown()
    assert len(made) > 2
    for diag in made:
        fast = json.dumps(convert.diagnostic_json(diag), sort_keys=True, default=converter.unstructure)
        assert fast == json.dumps(converter.unstructure(diag), sort_keys=True)
