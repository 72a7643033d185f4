"""The language server checks each file in its project, reading the open documents' buffers
instead of the disk, and re-publishes the diagnostics of open files that depend on an edited
one. Push (VS Code 1.65) and pull (Neovim 0.11) clients, as in test_lsp_server.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the `lsp` extra is not installed")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from tests.lsp_helpers import TIMEOUT, make_client, server_command, server_env, until  # noqa: E402

pytestmark = [pytest.mark.asyncio(loop_scope="module")]

PROFILES = {"push": "visual-studio-code@v1.65.2", "pull": "neovim@v0.11.0"}


@pytest_lsp.fixture(
    scope="module",
    params=list(PROFILES),
    config=ClientServerConfig(server_command=server_command(), client_factory=make_client, server_env=server_env()),
)
async def client(request, lsp_client: LanguageClient):
    await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(PROFILES[request.param]),
                initialization_options={"debounceMs": 20},
            )
        ),
        TIMEOUT,
    )
    lsp_client.mode = request.param
    lsp_client.versions = {}
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


# -- helpers ---------------------------------------------------------------------------------------
def project(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def open_doc(client, path: Path, text: str = None) -> str:
    """Opens ``path`` with ``text`` in the buffer (by default what the disk holds)."""
    uri = path.as_uri()
    client.versions[uri] = 1
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text(encoding="utf-8") if text is None else text)))
    return uri


def edit(client, uri: str, text: str) -> None:
    """A whole-text change, not saved."""
    client.versions[uri] += 1
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=client.versions[uri]),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def close(client, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


async def codes_when(client, uri: str, condition, what: str) -> list:
    """The codes of ``uri``'s diagnostics once ``condition(codes)`` holds: the latest publish
    (push), or a pull repeated until it does."""
    if client.mode == "push":
        def latest():
            for params in reversed(client.published):
                if params.uri == uri:
                    found = sorted(d.code for d in params.diagnostics if d.code)
                    return (found,) if condition(found) else None  # a tuple: an empty list is an answer
            return None

        return (await until(latest, what=what))[0]

    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        report = await asyncio.wait_for(client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))), TIMEOUT)
        found = sorted(d.code for d in getattr(report, "items", None) or [] if d.code)
        if condition(found):
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {found}")
        await asyncio.sleep(0.05)


# -- a helper becomes hot because of a loop in another file -------------------------------------------
UTILS = '''\
import torch


def accuracy(logits, target):
    return (logits.argmax(dim=1) == target).float().mean().item()
'''

TRAIN = '''\
import torch
from torch.utils.data import DataLoader

from utils import accuracy

model = torch.nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(samples, batch_size=8, pin_memory=True, num_workers=2, persistent_workers=True)

for epoch in range(3):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print(accuracy(out, y))
'''
# The same call, moved into the step loop: `accuracy` now runs on every step.
TRAIN_HOT = TRAIN.replace("\n    print(accuracy(out, y))", "\n        print(accuracy(out, y))")


async def test_editing_one_file_republishes_the_file_that_depends_on_it(client, tmp_path):
    root = project(tmp_path, {"utils.py": UTILS, "train.py": TRAIN})
    utils = open_doc(client, root / "utils.py")
    train = open_doc(client, root / "train.py")
    assert "GPU101" not in await codes_when(client, utils, lambda c: True, "utils.py's diagnostics")
    await codes_when(client, train, lambda c: True, "train.py's diagnostics")

    edit(client, train, TRAIN_HOT)  # in the buffer only: the disk keeps the cold loop
    await codes_when(client, utils, lambda c: "GPU101" in c, "GPU101 in utils.py once train.py calls it per step")

    edit(client, train, TRAIN)
    await codes_when(client, utils, lambda c: "GPU101" not in c, "GPU101 gone once the call leaves the loop")
    for uri in (utils, train):
        close(client, uri)


# -- an unsaved buffer stands in for the file on disk --------------------------------------------------
DATA = '''\
from torch.utils.data import DataLoader


def build_loaders(train_set, val_set):
    train_loader = DataLoader(train_set, batch_size=32, num_workers=4, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=32, num_workers=4, pin_memory=True)
    return train_loader, val_loader
'''

TRAIN_DATA = '''\
import torch

from data import build_loaders


def main(train_set, val_set):
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader, val_loader = build_loaders(train_set, val_set)
    for x, y in train_loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
'''
# The batches stay on the host: pinning them buys nothing.
TRAIN_DATA_CPU = TRAIN_DATA.replace("x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)", "pass")


async def test_an_unsaved_buffer_is_read_instead_of_the_disk(client, tmp_path):
    root = project(tmp_path, {"data.py": DATA, "train.py": TRAIN_DATA})
    data = open_doc(client, root / "data.py")
    # train.py, read from disk, moves the batches to the GPU.
    await codes_when(client, data, lambda c: "GPU201" in c, "GPU201 in data.py")

    train = open_doc(client, root / "train.py", TRAIN_DATA_CPU)  # a buffer with unsaved changes
    await codes_when(client, data, lambda c: "GPU201" not in c, "GPU201 gone: the open buffer keeps batches on the host")
    assert (root / "train.py").read_text(encoding="utf-8") == TRAIN_DATA

    close(client, train)  # the unsaved changes are dropped: the disk counts again
    await codes_when(client, data, lambda c: "GPU201" in c, "GPU201 back once the buffer is closed")
    close(client, data)


# -- answers memoised in an unchanged file do not outlive the neighbour they read --------------------------
MODELS = '''\
import torch


def build_model():
    return torch.nn.Linear(4, 2)
'''

TRAIN_MODELS = '''\
import torch

from models import build_model

model = build_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in zip(torch.randn(10, 8, 4), torch.randint(0, 2, (10, 8))):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print("loss", loss.item())
'''


async def test_a_neighbour_edited_to_use_the_gpu_makes_a_sync_a_warning(client, tmp_path):
    """With no sign of a GPU in train.py or its neighbours, a per-step `.item()` costs next to
    nothing (an info, hidden by default). Once models.py moves the model to CUDA it is a
    warning: train.py's own text did not change, so its model is reused, and what it had
    worked out about the project around it must not be."""
    root = project(tmp_path, {"models.py": MODELS, "train.py": TRAIN_MODELS})
    train = open_doc(client, root / "train.py")
    models = open_doc(client, root / "models.py")
    assert "GPU101" not in await codes_when(client, train, lambda c: True, "train.py's diagnostics")

    edit(client, models, MODELS.replace("torch.nn.Linear(4, 2)", "torch.nn.Linear(4, 2).cuda()"))
    await codes_when(client, train, lambda c: "GPU101" in c, "GPU101 in train.py once models.py uses CUDA")
    for uri in (train, models):
        close(client, uri)


async def test_a_neighbour_changed_on_disk_is_read_again(client, tmp_path):
    """A file that is not open changes on disk (git, another editor): the file watcher's event
    makes the views read it again."""
    root = project(tmp_path, {"models.py": MODELS, "train.py": TRAIN_MODELS})
    train = open_doc(client, root / "train.py")
    assert "GPU101" not in await codes_when(client, train, lambda c: True, "train.py's diagnostics")

    path = root / "models.py"
    path.write_text(MODELS.replace("torch.nn.Linear(4, 2)", "torch.nn.Linear(4, 2).cuda()"), encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]))
    await codes_when(client, train, lambda c: "GPU101" in c, "GPU101 in train.py once models.py on disk uses CUDA")
    close(client, train)
