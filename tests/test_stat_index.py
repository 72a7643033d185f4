"""The stat index: a clean, unchanged file is answered without being read; any change is seen."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import advisor.stat_index as stat_index
from advisor.cache_folder import open_folder
from advisor.cli import main
from advisor.stat_index import StatIndex
from tests.cache_helpers import body, reseal
from tests.snippets import HOT

# Clean, and of the same size as HOT: the edit between them keeps the size.
CLEAN = HOT.replace("loss.item()", "loss.iter()")
CLEAN_SAME_SIZE_HOT = HOT
assert len(CLEAN) == len(HOT)


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_margin(monkeypatch):
    """Files written by the test count as old enough to trust (the margin is what stops it)."""
    monkeypatch.setattr(stat_index, "RACY_MARGIN_NS", -60_000_000_000)


@pytest.fixture
def reads(monkeypatch):
    """The names of the files the runner reads (in this process)."""
    import advisor.runner as runner

    seen = []
    real = runner._read

    def read(job):
        seen.append(os.path.basename(job.display))
        return real(job)

    monkeypatch.setattr(runner, "_read", read)
    return seen


def index_files(cache_dir: Path):
    folder = cache_dir / f"index-v{stat_index.FORMAT}"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


# -- through the command line ------------------------------------------------------------------
def test_a_clean_unchanged_file_is_not_read_again(tmp_path, capsys, cache_dir, no_margin, reads):
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "hot.py").write_text(HOT)
    first = run(capsys, "check", "--format", "concise", tmp_path)
    assert sorted(set(reads)) == ["clean.py", "hot.py"]
    reads.clear()
    assert run(capsys, "check", "--format", "concise", tmp_path) == first
    # The file with findings is read (its text shows the findings), the clean one is not.
    assert reads == ["hot.py"]


def test_a_result_that_depends_on_another_file_is_never_answered_from_the_index(
        tmp_path, capsys, cache_dir, no_margin, reads):
    """A clean script whose findings depend on a module it imports: served from the result
    cache on the second run, it must not be recorded as clean in the stat index, or an edit of
    the module would go unseen on the third."""
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = p\n")
    (tmp_path / "loaders.py").write_text(
        "from torch.utils.data import DataLoader\n"
        "def make(ds):\n"
        "    return DataLoader(ds, batch_size=8, num_workers=2, persistent_workers=True, pin_memory=False)\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "from loaders import make\n"
        "def train(model, ds, opt):\n"
        "    for x, y in make(ds):\n"
        "        loss = model(x.cuda()).mean()\n"
        "        opt.zero_grad()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
    )
    run(capsys, "check", "--format", "concise", tmp_path)
    run(capsys, "check", "--format", "concise", tmp_path)  # train.py: a cache hit
    loaders = tmp_path / "loaders.py"
    loaders.write_text(loaders.read_text().replace("pin_memory=False", "pin_memory=True"))
    reads.clear()
    code, out, _ = run(capsys, "check", "--format", "concise", tmp_path)
    assert "train.py" in reads
    assert "train.py:5:" in out and "GPU203" in out, out


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(tmp_path, capsys, cache_dir, no_margin, reads):
    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    assert run(capsys, "check", "--format", "concise", path)[0] == 0
    before = path.stat()
    path.write_text(CLEAN_SAME_SIZE_HOT)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -r` or a tool could
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    reads.clear()
    code, out, _ = run(capsys, "check", "--format", "concise", path)
    assert set(reads) == {"train.py"}  # the ctime moved: read again
    assert code == 1 and "GPU101" in out


def test_a_replaced_file_is_read_again(tmp_path, capsys, cache_dir, no_margin, reads):
    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    run(capsys, "check", path)
    other = tmp_path / "next.tmp"
    other.write_text(CLEAN_SAME_SIZE_HOT)
    os.replace(other, path)  # how editors save: a new inode under the old name
    reads.clear()
    assert run(capsys, "check", "--format", "concise", path)[0] == 1
    assert set(reads) == {"train.py"}


def test_recent_files_are_not_indexed(tmp_path, capsys, cache_dir, reads):
    """Without the test's override, a file written a moment ago is too recent to trust."""
    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    run(capsys, "check", path)
    reads.clear()
    run(capsys, "check", path)
    assert reads == ["train.py"]


def test_a_file_older_than_the_margin_is_indexed(tmp_path, capsys, cache_dir, reads, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    # ctime cannot be set back, so the run's clock moves forward instead.
    later = time.time_ns() + 2 * stat_index.RACY_MARGIN_NS
    monkeypatch.setattr(stat_index, "time", SimpleNamespace(time_ns=lambda: later))
    run(capsys, "check", path)
    reads.clear()
    run(capsys, "check", path)
    assert reads == []


def test_a_config_change_reads_again(tmp_path, capsys, cache_dir, no_margin, reads):
    path = tmp_path / "train.py"
    path.write_text(CLEAN_SAME_SIZE_HOT)
    assert run(capsys, "check", "--format", "concise", "--ignore", "GPU101", path)[0] == 0
    reads.clear()
    code, out, _ = run(capsys, "check", "--format", "concise", path)
    assert set(reads) == {"train.py"}
    assert code == 1 and "GPU101" in out


def test_a_different_tool_starts_afresh(tmp_path, capsys, cache_dir, no_margin, reads, monkeypatch):
    import advisor.cache as cache_module

    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    run(capsys, "check", path)
    monkeypatch.setattr(cache_module, "_FINGERPRINT", "another version")
    reads.clear()
    run(capsys, "check", path)
    assert set(reads) == {"train.py"}


def test_no_cache_writes_no_index(tmp_path, capsys, cache_dir, no_margin):
    (tmp_path / "train.py").write_text(CLEAN)
    run(capsys, "check", "--no-cache", tmp_path)
    assert index_files(cache_dir) == []
    run(capsys, "check", tmp_path)
    assert len(index_files(cache_dir)) == 1


def test_a_corrupt_index_is_ignored_and_rewritten(tmp_path, capsys, cache_dir, no_margin, reads):
    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    run(capsys, "check", path)
    (index,) = index_files(cache_dir)
    for junk in (b"", b"{", b"[]", b'{"format": 1}', b"\xff\xfe", b'{"format": 1, "tool": 3, "entries": []}'):
        index.write_bytes(junk)
        reads.clear()
        assert run(capsys, "check", "--format", "concise", path)[0] == 0
        assert set(reads) == {"train.py"}
        assert body(index)["format"] == stat_index.FORMAT


def test_the_same_file_named_twice_is_checked_once(tmp_path, capsys, cache_dir):
    path = tmp_path / "train.py"
    path.write_text(HOT)
    once = run(capsys, "check", "--format", "concise", path)
    twice = run(capsys, "check", "--format", "concise", path, tmp_path, str(path))
    assert twice == once


# -- the index itself --------------------------------------------------------------------------
DIGEST = "d" * stat_index.DIGEST_CHARS  # the content digest the tests' entries record


def make(tmp_path, tool="tool-1", scope=None, folder=None):
    """An index whose working folder is tmp_path, where the tests' files are."""
    cache = open_folder(str(tmp_path / "cache"))
    return StatIndex(cache, folder or str(tmp_path / "cache" / "index"), tool,
                     scope=str(tmp_path) if scope is None else scope)


def test_entries_survive_a_save_and_a_load(tmp_path, no_margin):
    path = tmp_path / "a.py"
    path.write_text(CLEAN)
    st = path.stat()
    index = make(tmp_path)
    index.record("a.py", st, "config-A", clean=True, content=DIGEST)
    assert index.save()
    again = make(tmp_path)
    assert again.is_clean("a.py", st, "config-A")
    assert not again.is_clean("a.py", st, "config-B")
    assert not again.is_clean("b.py", st, "config-A")
    assert not make(tmp_path, tool="tool-2").is_clean("a.py", st, "config-A")
    assert not make(tmp_path, scope="/elsewhere").is_clean("a.py", st, "config-A")
    assert not again.save()  # nothing changed: nothing written


def test_only_clean_results_are_kept(tmp_path, no_margin):
    path = tmp_path / "a.py"
    path.write_text(CLEAN)
    st = path.stat()
    index = make(tmp_path)
    index.record("a.py", st, "c", clean=True, content=DIGEST)
    index.save()
    index = make(tmp_path)
    index.record("a.py", st, "c", clean=False, content=DIGEST)  # the same bytes gave findings under c now?
    index.save()
    assert not make(tmp_path).is_clean("a.py", st, "c")


def test_concurrent_runs_merge(tmp_path, no_margin):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(CLEAN)
    one, two = make(tmp_path), make(tmp_path)
    one.record("a.py", (tmp_path / "a.py").stat(), "c1", clean=True, content=DIGEST)
    two.record("b.py", (tmp_path / "b.py").stat(), "c2", clean=True, content=DIGEST)
    one.save()
    two.save()
    merged = make(tmp_path)
    assert merged.is_clean("a.py", (tmp_path / "a.py").stat(), "c1")
    assert merged.is_clean("b.py", (tmp_path / "b.py").stat(), "c2")


def test_entries_and_index_files_are_bounded(tmp_path, no_margin, monkeypatch):
    monkeypatch.setattr(stat_index, "MAX_ENTRIES", 3)
    monkeypatch.setattr(stat_index, "MAX_INDEX_FILES", 2)
    path = tmp_path / "a.py"
    path.write_text(CLEAN)
    st = path.stat()
    index = make(tmp_path)
    for i in range(5):
        index.record(f"f{i}.py", st, "c", clean=True, content=DIGEST)
    index.save()
    assert len(body(Path(index.path))["entries"]) == 3
    for scope in ("/p1", "/p2", "/p3"):
        other = make(tmp_path, scope=scope)
        other.record("x.py", st, "c", clean=True, content=DIGEST)
        other.save()
    assert len(list((tmp_path / "cache" / "index").glob("*.json"))) == 2


def test_an_unwritable_folder_costs_only_time(tmp_path, no_margin):
    blocker = tmp_path / "file"
    blocker.write_text("")
    path = tmp_path / "a.py"
    path.write_text(CLEAN)
    index = make(tmp_path, tool="t", scope="/p", folder=str(blocker / "index"))
    index.record("a.py", path.stat(), "c", clean=True, content=DIGEST)
    assert index.save() is False


def test_entries_of_deleted_or_changed_files_are_swept(tmp_path, no_margin, monkeypatch):
    monkeypatch.setattr(stat_index, "SWEEP", 2)
    names = ["a.py", "b.py", "c.py", "d.py"]
    for name in names:
        (tmp_path / name).write_text(CLEAN)
    first = make(tmp_path)
    for name in names:
        first.record(name, (tmp_path / name).stat(), "c", clean=True, content=DIGEST)
    first.save()
    (tmp_path / "a.py").unlink()
    (tmp_path / "b.py").write_text(HOT)
    # A run that sees only d.py and changes its entry: the save sweeps the two oldest others.
    second = make(tmp_path)
    (tmp_path / "d.py").write_text(CLEAN + "\n")
    second.record("d.py", (tmp_path / "d.py").stat(), "c", clean=True, content=DIGEST)
    second.save()
    assert sorted(body(Path(second.path))["entries"]) == ["c.py", "d.py"]


def test_results_from_worker_processes_are_indexed(tmp_path, capsys, cache_dir, no_margin, reads):
    for i in range(10):  # enough for the process pool
        (tmp_path / f"clean_{i}.py").write_text(CLEAN)
    first = run(capsys, "check", "--jobs", "2", "--format", "concise", tmp_path)
    reads.clear()
    assert run(capsys, "check", "--jobs", "2", "--format", "concise", tmp_path) == first
    assert reads == []


def test_a_link_repointed_between_discovery_and_read_is_not_indexed_wrongly(tmp_path, capsys, cache_dir, no_margin,
                                                                              monkeypatch):
    """The index records the stat of the file actually read, not the one discovery saw."""
    import advisor.cli as cli

    hot, clean, link = tmp_path / "hot.txt", tmp_path / "clean.txt", tmp_path / "link.py"
    hot.write_text(HOT)
    clean.write_text(CLEAN)
    link.symlink_to(hot)
    real_discover = cli.discover_root

    def discover_then_repoint(*args, **kwargs):
        for found in real_discover(*args, **kwargs):
            link.unlink()
            link.symlink_to(clean)  # discovery saw hot.txt; the read will get clean.txt
            yield found

    monkeypatch.setattr(cli, "discover_root", discover_then_repoint)
    assert run(capsys, "check", "--format", "concise", link)[0] == 0  # it read clean.txt
    monkeypatch.setattr(cli, "discover_root", real_discover)
    link.unlink()
    link.symlink_to(hot)
    code, out, _ = run(capsys, "check", "--format", "concise", link)
    assert code == 1 and "GPU101" in out


def test_an_index_naming_a_missing_configuration_is_survived(tmp_path, capsys, cache_dir, no_margin):
    path = tmp_path / "train.py"
    path.write_text(CLEAN)
    run(capsys, "check", path)
    (index,) = index_files(cache_dir)
    value = body(index)
    value["entries"] = {name: " ".join(entry.split(" ")[:5] + ["7", entry.split(" ")[-1]])
                        for name, entry in value["entries"].items()}
    reseal(cache_dir, index, b"index", value)
    (tmp_path / "other.py").write_text(CLEAN)  # something to record, so the index is saved
    assert run(capsys, "check", "--format", "concise", tmp_path)[0] == 0
    assert body(index)["format"] == stat_index.FORMAT


def test_hard_links_are_checked_under_each_name(tmp_path, capsys, cache_dir):
    first = tmp_path / "a.py"
    first.write_text(HOT)
    os.link(first, tmp_path / "b.py")
    code, out, _ = run(capsys, "check", "--format", "concise", tmp_path)
    assert code == 1
    assert "a.py:7:" in out and "b.py:7:" in out
    # A symbolic link is the same file under another name: checked once.
    (tmp_path / "c.py").symlink_to(first)
    assert run(capsys, "check", "--format", "concise", first, tmp_path / "c.py")[1].count("GPU101") == 1
