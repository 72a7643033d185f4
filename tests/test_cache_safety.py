"""The cache must not lose data or be a way in (issue 16, section 4).

Each test runs `advisor check` as a user would, in a subprocess, with ADVISOR_CACHE_DIR set to a
temporary folder, and a cache folder, index or entry as a careless user, a shared CI runner or
another user could leave it.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import advisor.cache as cache_module
import advisor.stat_index as stat_index
from advisor.cache_files import own_name
from advisor.cache_folder import MARKER, MARKER_NAME, open_folder
from tests.cache_helpers import body, reseal
from tests.snippets import HOT

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "examples" / "train.py"  # 9 findings
FINDINGS = 9
CLEAN = HOT.replace("loss.item()", "loss.iter()")  # no finding, and the same size as HOT
ENTRIES = f"v{cache_module.FORMAT}"
INDEX = f"index-v{stat_index.FORMAT}"
# Files written this long ago are old enough for the stat index to record.
AGE_S = stat_index.RACY_MARGIN_NS / 1e9 + 0.5

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="making files of another user needs root")
posix_only = pytest.mark.skipif(os.name == "nt", reason="owners, modes, FIFOs and links as POSIX has them")
pytestmark = posix_only


def advisor(cache: Path, *paths, cwd: Path, env=None, umask=None, args=("--format", "concise")):
    """(exit code, stdout, stderr) of `advisor check` with the cache folder ``cache``. The
    timeout only ends a hung run; no run here comes near it."""
    full_env = dict(os.environ)
    full_env.pop("ADVISOR_STAT_INDEX", None)
    full_env.update(env or {}, ADVISOR_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-m", "advisor", "check", *args, *map(str, paths)], cwd=str(cwd),
                          env=full_env, capture_output=True, text=True, timeout=300,
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def findings(out: str) -> int:
    return len(out.splitlines())


def snapshot(folder: Path):
    """Every file and link under ``folder``: its path, and its bytes or where it links."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(folder))] = ("link", os.readlink(path))
        elif path.is_file():
            found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def entry_files(cache: Path):
    folder = cache / ENTRIES
    return sorted(p for p in folder.iterdir() if own_name(p.name, 64)) if folder.is_dir() else []


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(TRAIN, folder / "train.py")
    return folder


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def one_warning(err: str, *words: str) -> None:
    assert len(err.splitlines()) == 1, err
    assert err.startswith("advisor: warning: ") and all(w in err for w in words), err


# -- data loss ---------------------------------------------------------------------------------
def test_a_folder_that_holds_other_files_is_neither_taken_over_nor_pruned(tmp_path, project):
    data = tmp_path / "datasets"
    for sub in ("v1", ENTRIES):
        (data / sub).mkdir(parents=True)
        for i in range(21):
            (data / sub / f"shard-{i:03}.bin").write_bytes(bytes([i]) * 4096)
        (data / sub / ("ab" * 32 + ".json")).write_text("{}")  # even a name the tool would give
    before = snapshot(data)
    tiny = {"ADVISOR_CACHE_MAX_BYTES": "1", "ADVISOR_CACHE_MAX_ENTRIES": "1"}
    for _ in range(2):
        code, out, err = advisor(data, "train.py", cwd=project, env=tiny)
        assert code == 1 and findings(out) == FINDINGS
        one_warning(err, str(data), "not taken over", "running without the cache")
    assert snapshot(data) == before  # nothing deleted, nothing added


def test_an_empty_folder_is_taken_as_the_cache(tmp_path, project):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert advisor(empty, "train.py", cwd=project)[2] == ""
    assert (empty / MARKER_NAME).read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    assert len(entry_files(empty)) == 1


def test_a_concurrent_first_runs_temporary_file_does_not_keep_the_folder_from_the_cache(tmp_path, project):
    fresh = tmp_path / "fresh"
    fresh.mkdir(mode=0o700)
    (fresh / ".tmp-0123456789abcdef.json").write_bytes(MARKER)  # another first run, about to rename its tag
    code, out, err = advisor(fresh, "train.py", cwd=project)
    assert code == 1 and err == ""
    assert (fresh / MARKER_NAME).is_file() and len(entry_files(fresh)) == 1


def test_pruning_deletes_only_what_the_tool_wrote(tmp_path, project, cache):
    for i in range(6):
        (project / f"extra_{i}.py").write_text(HOT + f"# {i}\n")
    assert advisor(cache, "train.py", cwd=project)[0] == 1
    entries = cache / ENTRIES
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    (entries / "notes.txt").write_text("mine")
    (entries / "sub").mkdir()
    (entries / "sub" / ("ef" * 32 + ".json")).write_text("{}")
    (entries / ("cd" * 32 + ".json")).symlink_to(outside / "precious.txt")  # named as an entry, but a link
    code, out, err = advisor(cache, ".", cwd=project, env={"ADVISOR_CACHE_MAX_ENTRIES": "2"})
    assert code == 1 and err == ""
    after = snapshot(entries)
    assert after["notes.txt"] == b"mine"
    assert after[f"sub/{'ef' * 32}.json"] == b"{}"
    assert after["cd" * 32 + ".json"] == ("link", str(outside / "precious.txt"))
    assert (outside / "precious.txt").read_text() == "keep me"
    assert 1 <= len([p for p in entry_files(cache) if not p.is_symlink()]) <= 2  # its own entries were pruned


@needs_root
def test_pruning_leaves_an_entry_named_file_of_another_user(tmp_path, project, cache):
    for i in range(4):
        (project / f"extra_{i}.py").write_text(HOT + f"# {i}\n")
    advisor(cache, ".", cwd=project)
    theirs = cache / ENTRIES / ("12" * 32 + ".json")
    theirs.write_text("not the tool's")
    os.chown(theirs, 4242, 4242)
    (project / "new.py").write_text(HOT + "# new\n")  # a miss: the run prunes after it
    advisor(cache, ".", cwd=project, env={"ADVISOR_CACHE_MAX_ENTRIES": "2"})
    assert theirs.read_text() == "not the tool's"
    assert len(entry_files(cache)) <= 3  # theirs, and at most two of the tool's


def test_a_linked_entries_folder_is_neither_followed_nor_pruned(tmp_path, project, cache):
    assert advisor(cache, "train.py", cwd=project)[0] == 1
    shutil.rmtree(cache / ENTRIES)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for i in range(21):
        (elsewhere / f"{i:064x}.json").write_text("{}")
        (elsewhere / f"photo-{i}.jpg").write_bytes(b"\xff\xd8" * 100)
    (cache / ENTRIES).symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    code, out, err = advisor(cache, "train.py", cwd=project,
                             env={"ADVISOR_CACHE_MAX_BYTES": "1", "ADVISOR_CACHE_MAX_ENTRIES": "1"})
    assert code == 1 and findings(out) == FINDINGS
    one_warning(err, str(cache / ENTRIES), "is a link")
    assert snapshot(elsewhere) == before


# -- stale answers -----------------------------------------------------------------------------
@pytest.fixture
def memory_backed(tmp_path):
    """A folder on tmpfs where there is one: its pages are never written back, so a second
    write through a shared mapping never moves the file's times (elsewhere it does not until
    the kernel writes the page back, about 30 s later)."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        with tempfile.TemporaryDirectory(dir="/dev/shm") as folder:
            yield Path(folder)
    else:
        yield tmp_path


def test_a_write_through_a_shared_mapping_is_seen_with_the_stat_index_off(memory_backed, cache):
    path = memory_backed / "train.py"
    path.write_text(CLEAN)
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as mapped:
        mapped[0:1] = mapped[0:1]  # the first write through the mapping moves the file's times
        time.sleep(AGE_S)  # older than the stat index's margin: the next run records the file
        assert advisor(cache, "train.py", cwd=memory_backed)[0] == 0
        before = os.stat(path)
        mapped[:] = HOT.encode()  # the same page again: no time moves
        after = os.stat(path)
        if (before.st_mtime_ns, before.st_ctime_ns) != (after.st_mtime_ns, after.st_ctime_ns):
            pytest.skip("this file system moved the file's times: nothing for the index to miss")
        # The documented limit (README, stat_index): the index trusts the unchanged stat data...
        assert advisor(cache, "train.py", cwd=memory_backed)[0] == 0
        # ... and ADVISOR_STAT_INDEX=off reads every file,
        code, out, _ = advisor(cache, "train.py", cwd=memory_backed, env={"ADVISOR_STAT_INDEX": "off"})
        assert code == 1 and "GPU101" in out
        # which also refreshes the index: the next ordinary run is right too.
        code, out, _ = advisor(cache, "train.py", cwd=memory_backed)
        assert code == 1 and "GPU101" in out


# -- planted entries ---------------------------------------------------------------------------
def plant_clean_result(cache: Path) -> None:
    """Turns the one entry in ``cache`` into a clean result, sealed as the tool would seal it."""
    (entry,) = entry_files(cache)
    reseal(cache, entry, b"entry", dict(body(entry), findings=[]))


def test_a_cache_folder_others_can_write_is_not_used(project, cache):
    advisor(cache, "train.py", cwd=project)
    plant_clean_result(cache)
    os.chmod(cache, 0o777)  # a shared folder, or one made under umask 000 before this fix
    code, out, err = advisor(cache, "train.py", cwd=project)
    assert code == 1 and findings(out) == FINDINGS
    one_warning(err, str(cache), "writable by others", "running without the cache")
    # The folder's mode is all that refused the planted entry: the same folder made private serves it.
    os.chmod(cache, 0o700)
    assert advisor(cache, "train.py", cwd=project)[:2] == (0, "")


def test_an_entries_folder_others_can_write_is_not_used(project, cache):
    advisor(cache, "train.py", cwd=project)
    plant_clean_result(cache)
    os.chmod(cache / ENTRIES, 0o777)
    code, out, err = advisor(cache, "train.py", cwd=project)
    assert code == 1 and findings(out) == FINDINGS
    one_warning(err, str(cache / ENTRIES), "writable by others")


@needs_root
def test_a_cache_folder_of_another_user_is_not_used(project, cache):
    advisor(cache, "train.py", cwd=project)
    plant_clean_result(cache)
    os.chown(cache, 4242, 4242)
    code, out, err = advisor(cache, "train.py", cwd=project)
    assert code == 1 and findings(out) == FINDINGS
    one_warning(err, str(cache), "owned by another user", "running without the cache")


@needs_root
def test_an_entry_of_another_user_is_not_used(project, cache):
    advisor(cache, "train.py", cwd=project)
    plant_clean_result(cache)
    (entry,) = entry_files(cache)
    os.chown(entry, 4242, 4242)
    code, out, err = advisor(cache, "train.py", cwd=project)
    assert code == 1 and findings(out) == FINDINGS
    one_warning(err, str(entry), "owned by another user")
    assert entry.stat().st_uid == os.geteuid()  # rewritten by the tool
    assert advisor(cache, "train.py", cwd=project)[2] == ""


def test_a_new_cache_folder_is_private_even_under_umask_000(tmp_path, project):
    cache = tmp_path / "made" / "here"
    assert advisor(cache, "train.py", cwd=project, umask=0)[0] == 1
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    for path in cache.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    assert advisor(cache, "train.py", cwd=project, umask=0)[2] == ""


def test_an_entry_without_the_folders_seal_is_a_miss(project, cache):
    """Planted with another key (whoever cannot read this folder's), unsealed, or moved from
    another file's entry: a miss each time."""
    clean = project / "clean.py"
    clean.write_text(CLEAN)
    advisor(cache, "train.py", "clean.py", cwd=project)
    entries = {len(body(p)["findings"]): p for p in entry_files(cache)}
    hot_entry, clean_entry = entries[FINDINGS], entries[0]
    emptied = json.dumps(dict(body(hot_entry), findings=[])).encode()
    other_key = open_folder(str(project.parent / "attackers-own-cache"))
    for planted in (other_key.seal(b"entry", hot_entry.name, emptied),
                    emptied,
                    clean_entry.read_bytes()):  # a clean entry of this folder's, under the hot file's name
        hot_entry.write_bytes(planted)
        code, out, err = advisor(cache, "train.py", cwd=project)
        assert code == 1 and findings(out) == FINDINGS and err == ""


def test_a_planted_stat_index_entry_vouches_for_nothing(tmp_path, cache):
    """An index entry naming the hot file's stat, with a clean file's content digest: what an
    attacker who can write the cache folder, but not read its key, could plant."""
    project = tmp_path / "project"
    project.mkdir()
    path = project / "train.py"
    path.write_text(CLEAN)
    time.sleep(AGE_S)
    assert advisor(cache, "train.py", cwd=project)[0] == 0  # recorded as clean
    (index,) = (cache / INDEX).iterdir()
    recorded = body(index)
    path.write_text(HOT)  # the file now has a finding
    st = path.stat()
    signature = "%x %x %x %x %x" % (st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
    old = recorded["entries"]["train.py"].split(" ")
    forged = dict(recorded, entries={"train.py": " ".join([signature] + old[5:])})
    other_key = open_folder(str(tmp_path / "attackers-own-cache"))
    for planted in (other_key.seal(b"index", index.name, json.dumps(forged).encode()), json.dumps(forged).encode()):
        index.write_bytes(planted)
        code, out, err = advisor(cache, "train.py", cwd=project)
        assert code == 1 and "GPU101" in out and err == ""
    # Sealed with this folder's key, the same entry would be trusted: the seal is what refuses it.
    reseal(cache, index, b"index", forged)
    assert advisor(cache, "train.py", cwd=project)[0] == 0


# -- hostile cache contents --------------------------------------------------------------------
def cache_files_of(cache: Path, project: Path):
    """The tool's files a run reads: the entry of train.py, the index, the remembered
    fingerprint, the key and the marker."""
    index = stat_index.StatIndex(open_folder(str(cache)), str(cache / INDEX), "any",
                                 scope=os.path.realpath(project)).path
    return {
        "entry": entry_files(cache)[0],
        "index": Path(index),
        "fingerprint": cache / f"fingerprint-v{cache_module.FORMAT}.json",
        "key": cache / "mac-key",
        "marker": cache / MARKER_NAME,
    }


@pytest.mark.parametrize("what", ["entry", "index", "fingerprint", "key", "marker"])
@pytest.mark.parametrize("hostile", ["fifo", "link to /dev/zero", "link to a folder"])
def test_hostile_things_in_place_of_cache_files_are_misses(project, cache, what, hostile):
    assert advisor(cache, "train.py", cwd=project)[0] == 1
    target = cache_files_of(cache, project)[what]
    target.parent.mkdir(exist_ok=True)
    if target.exists() or target.is_symlink():
        target.unlink()
    if hostile == "fifo":
        os.mkfifo(target)
    elif hostile == "link to /dev/zero":
        target.symlink_to("/dev/zero")
    else:
        target.symlink_to(project, target_is_directory=True)
    for _ in range(2):
        code, out, err = advisor(cache, "train.py", cwd=project)
        assert code == 1 and findings(out) == FINDINGS
        if what == "marker":  # the folder is no longer marked as the tool's: not used, and said so
            one_warning(err, "not taken over")
        else:
            assert err == ""
    assert (project / "train.py").read_bytes() == TRAIN.read_bytes()


@pytest.mark.parametrize("what", ["entry", "index", "fingerprint"])
def test_deeply_nested_json_in_a_sealed_file_is_a_miss(project, cache, what):
    assert advisor(cache, "train.py", cwd=project)[0] == 1
    target = cache_files_of(cache, project)[what]
    target.parent.mkdir(exist_ok=True)
    kind = {"entry": b"entry", "index": b"index", "fingerprint": b"fingerprint"}[what]
    reseal(cache, target, kind, None, raw=b"[" * 200_000 + b"]" * 200_000)
    code, out, err = advisor(cache, "train.py", cwd=project)
    assert code == 1 and findings(out) == FINDINGS and err == ""


def test_an_oversized_entry_is_not_read_whole(project, cache):
    assert advisor(cache, "train.py", cwd=project)[0] == 1
    (entry,) = entry_files(cache)
    with open(entry, "r+b") as handle:
        handle.truncate(cache_module.MAX_ENTRY_BYTES + 1)  # sparse: no disk is used
    code, out, err = advisor(cache, "train.py", cwd=project)
    assert code == 1 and findings(out) == FINDINGS and err == ""


# -- --measure results -------------------------------------------------------------------------
CORRUPT_MEASUREMENTS = [
    {"verdict": "confirmed", "baseline": "fast"},  # a ValueError in the report's formatting
    {"verdict": "confirmed", "baseline": [1]},  # a TypeError there
    {"verdict": "confirmed", "ratio": 10 ** 400},  # beyond a float
    {"verdict": "confirmed", "baseline": True},
    {"verdict": "confirmed", "unit": 3},
    {"verdict": "confirmed", "detail": {"a": 1}},
    {"verdict": "confirmed", "extra": []},
    {"verdict": ["confirmed"]},
    {"verdict": "error: from the cache"},  # only verdicts are ever stored
    {"baseline": 1.0},
    [],
    "confirmed",
    None,
]


@pytest.mark.parametrize("value", CORRUPT_MEASUREMENTS, ids=repr)
def test_a_corrupt_cached_measurement_is_a_miss(cache, value):
    from advisor.runtime.results import MeasureCache

    store = MeasureCache(cache)
    key = "ab" * 32
    good = {"verdict": "confirmed", "baseline": 2.0, "fixed": 1.0, "unit": "ms/step", "ratio": 2.0,
            "saving_per_step": 1.0, "detail": ""}
    store.put(key, good)
    assert store.get(key) == good
    path = cache / "measure" / f"{key}.json"
    reseal(cache, path, b"measure", value)
    assert store.get(key) is None
    store.put(key, value)  # nor is such a value ever stored
    assert store.get(key) is None


@pytest.mark.parametrize("hostile", ["unsealed", "fifo", "link to /dev/zero", "deep"])
def test_a_hostile_cached_measurement_is_a_miss(cache, hostile):
    from advisor.runtime.results import MeasureCache

    store = MeasureCache(cache)
    key = "cd" * 32
    store.put(key, {"verdict": "not confirmed", "baseline": 1.0, "fixed": 1.0, "unit": "ms", "detail": ""})
    path = cache / "measure" / f"{key}.json"
    path.unlink()
    if hostile == "unsealed":
        path.write_text(json.dumps({"verdict": "confirmed", "baseline": 9.0, "unit": "ms", "detail": ""}))
    elif hostile == "fifo":
        os.mkfifo(path)
    elif hostile == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    else:
        reseal(cache, path, b"measure", None, raw=b"[" * 200_000 + b"]" * 200_000)
    assert store.get(key) is None


def test_check_measure_measures_again_over_a_corrupt_cached_result(project, cache):
    pytest.importorskip("torch")
    args = ("--measure", "--select", "GPU503")
    code, out, err = advisor(cache, "train.py", cwd=project, args=args, env={"COLUMNS": "200"})
    assert code == 1 and "measured: confirmed" in out
    (stored,) = (cache / "measure").glob("*.json")
    reseal(cache, stored, b"measure", dict(body(stored), baseline="fast", ratio=[1]))
    code, out, err = advisor(cache, "train.py", cwd=project, args=args, env={"COLUMNS": "200"})
    assert code == 1 and "measured: confirmed" in out and err == ""
    assert isinstance(body(stored)["baseline"], (int, float))  # measured and stored afresh
