"""Time from a `didChange` to fresh diagnostics in `advisor lsp`, on generated training scripts
of about 300, 1,500 and 5,000 lines. A benchmark, not a test: run it by hand.

    .venv/bin/python benchmarks/lsp_latency.py [--rounds 20] [--mode push|pull] [--edits comment,statement,typing]

Each round makes one incremental change, as an editor sends it, and waits for the diagnostics
of that version. Two kinds of edit are measured: `comment` inserts a comment line (the server
moves the previous findings to their new lines, then verifies them in the background), and
`statement` inserts `_probe = 0` at the start of a line in a function body, in another function
each round with no pause (the part of the file the edit reaches is analysed again, lsp/chunk_edits.py,
or the whole file when that part is most of it), and `typing` inserts
it in the same function each round, as while typing there. The diagnostics are awaited with the push profile with `debounceMs: 0` (the configured debounce
adds its delay on top), or a pull request right after the change. The server runs as a real
subprocess on stdio. Prints p50 and p95 per size, and the engine's own time on the same text.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from lsprotocol import types
from pygls.lsp.client import LanguageClient

HEADER = """\
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


"""

BLOCK = """\
def train_{n}(model, dataset, epochs=3, lr=1e-3):
    \"\"\"Training loop number {n}.\"\"\"
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model = model.cuda()
    history = []
    for epoch in range(epochs):
        model.train()
        running = 0.0
        for step, (inputs, targets) in enumerate(loader):
            inputs = inputs.cuda()
            targets = targets.cuda()
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = F.cross_entropy(outputs, targets)
            loss.backward()
            optimizer.step()
            running += loss.item()
            if step % 100 == 0:
                print(f"epoch {{epoch}} step {{step}} loss {{running / (step + 1):.4f}}")
        history.append(running)
    return history


def evaluate_{n}(model, dataset):
    loader = DataLoader(dataset, batch_size=64)
    model.eval()
    correct = 0
    with torch.no_grad():
        for inputs, targets in loader:
            outputs = model(inputs.cuda())
            correct += (outputs.argmax(1) == targets.cuda()).sum()
    return correct / len(dataset)


"""


def script(lines: int) -> str:
    parts = [HEADER]
    n = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(BLOCK.format(n=n))
        n += 1
    return "".join(parts)


def percentile(values, q):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def body_line(lines, start: int) -> int:
    """The first line at or after ``start`` (wrapping) that is a plain statement of a function
    body, at the body's indentation."""
    for step in range(len(lines)):
        index = (start + step) % len(lines)
        line = lines[index]
        if line.startswith("    ") and line[4:5].isidentifier() and not line.startswith("     "):
            return index
    raise ValueError("no function body in the script")


def change_at(text_lines, version: int, edit: str):
    """The change of round ``version``: (line, inserted text)."""
    line = (version * 37) % len(text_lines)
    if edit == "comment":
        return line, "# edit\n"
    line = body_line(text_lines, 37 if edit == "typing" else line)
    return line, "    _probe = 0\n"


async def measure(text: str, rounds: int, mode: str, folder: Path, edit: str = "comment"):
    client = LanguageClient("advisor-bench", "1")
    published: dict = {}
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams):
        # Only the latest: keeping every version's diagnostics grows the client's heap, and its
        # collections then land in the timed rounds.
        published.clear()
        published[params.version] = params
        arrived.set()

    await client.start_io(sys.executable, "-m", "advisor", "lsp", "--log-level", "warning")
    capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities() if mode == "pull" else None,
        )
    )
    await client.initialize_async(types.InitializeParams(capabilities=capabilities,
                                                         initialization_options={"debounceMs": 0}))
    client.initialized(types.InitializedParams())
    path = folder / "train.py"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    ident = types.TextDocumentIdentifier(uri=uri)

    async def fresh(version: int):
        if mode == "pull":
            report = await asyncio.wait_for(
                client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident)), 60)
            return report.items
        while version not in published:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 60)
        return published[version].diagnostics

    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    await fresh(1)  # warm-up: imports, first parse
    timings = []
    current = text.split("\n")
    for version in range(2, rounds + 2):
        line, inserted = change_at(current, version, edit)
        current.insert(line, inserted[:-1])
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line, 0), end=types.Position(line, 0)), text=inserted)
        start = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[change]))
        diagnostics = await fresh(version)
        timings.append(time.perf_counter() - start)
        assert diagnostics, "no diagnostics"
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return timings


def engine_time(text: str, rounds: int):
    from advisor.engine import check_source

    timings = []
    for _ in range(rounds):
        start = time.perf_counter()
        check_source(text, "train.py")
        timings.append(time.perf_counter() - start)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--mode", choices=("push", "pull"), default="push")
    parser.add_argument("--sizes", default="300,1500,5000")
    parser.add_argument("--edits", default="comment,statement", help="comment, statement, typing, or a list of them")
    args = parser.parse_args()
    print(f"mode {args.mode}, debounce 0 ms; times in ms")
    print(f"{'edit':>9} {'lines':>6} {'rounds':>6} {'p50':>8} {'p95':>8} {'engine p50':>11}")
    with TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            text = script(size)
            rounds = args.rounds if size <= 1500 else max(5, args.rounds // 3)
            engine = engine_time(text, max(3, rounds // 3))
            # What the engine runs above left in this process is collected now: otherwise the
            # client's own collections of it land in the timed rounds (a full one takes about
            # 100 ms here), which measures this process rather than the server.
            gc.collect()
            gc.freeze()
            for edit in args.edits.split(","):
                timings = asyncio.run(measure(text, rounds, args.mode, Path(folder), edit))
                print(f"{edit:>9} {text.count(chr(10)):>6} {rounds:>6} {1000 * statistics.median(timings):>8.0f} "
                      f"{1000 * percentile(timings, 95):>8.0f} {1000 * statistics.median(engine):>11.0f}",
                      flush=True)


if __name__ == "__main__":
    main()
