"""`advisor check --jobs N` and the result cache: same output whatever the route to it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import advisor.cache as cache_module
from advisor.cli import main
from tests.cache_helpers import body, reseal
from tests.snippets import HOT

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def entries(cache_dir: Path):
    folder = cache_dir / f"v{cache_module.FORMAT}"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@pytest.fixture
def corpus_copy(tmp_path):
    target = tmp_path / "corpus"
    # Without the project whose file imports a module its folder lacks: a result that depends
    # on a path that does not exist is never stored (tests/test_broken_imports.py), and these
    # tests count on every file being served from the cache. Without notebooks too: only
    # Python files' results are stored, so a notebook is checked on every run.
    shutil.copytree(CORPUS, target, ignore=shutil.ignore_patterns("vendored_copies", "*.ipynb"))
    return target


def test_jobs_give_the_same_output_as_one_job(capsys, corpus_copy):
    for fmt in ("json", "concise", "text"):
        one = run(capsys, "check", "--no-cache", "--jobs", "1", "--format", fmt, corpus_copy)
        two = run(capsys, "check", "--no-cache", "--jobs", "2", "--format", fmt, corpus_copy)
        four = run(capsys, "check", "--no-cache", "--jobs", "4", "--format", fmt, corpus_copy)
        assert one[0] == 1 and one[1]
        assert one == two == four


def test_jobs_in_a_subprocess_match_in_process(corpus_copy, cache_dir):
    command = [sys.executable, "-m", "advisor", "check", "--no-cache", "--format", "json", str(corpus_copy)]
    single = subprocess.run(command + ["--jobs", "1"], capture_output=True, text=True)
    pooled = subprocess.run(command + ["--jobs", "2"], capture_output=True, text=True)
    assert single.returncode == pooled.returncode == 1
    assert single.stdout == pooled.stdout and json.loads(single.stdout)
    assert not entries(cache_dir)  # --no-cache writes nothing either


def test_second_run_is_served_from_the_cache_with_identical_json(capsys, corpus_copy, cache_dir, monkeypatch):
    first = run(capsys, "check", "--format", "json", "--show-info", corpus_copy)
    stored = entries(cache_dir)
    assert len(stored) == len(list(corpus_copy.rglob("*.py")))

    import advisor.engine as engine

    def no_analysis(*args, **kwargs):
        raise AssertionError("a cached file was analysed again")

    monkeypatch.setattr(engine, "check_source", no_analysis)
    for jobs in ("1", "2"):
        again = run(capsys, "check", "--format", "json", "--show-info", "--jobs", jobs, corpus_copy)
        assert again == first
    # Text output shows source lines: those come from the file, not the cache.
    monkeypatch.undo()
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(cache_dir))
    text_fresh = run(capsys, "check", "--no-cache", corpus_copy)
    text_cached = run(capsys, "check", corpus_copy)
    assert text_fresh == text_cached


def test_a_run_served_from_the_cache_never_loads_the_engine(corpus_copy, cache_dir):
    """Start-up dominates a warm run: libcst and the rules must stay unimported."""
    # typing and dataclasses too: together they were a sixth of a warm run.
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from advisor.cli import main\n"
        "code = main(['check', '--format', 'concise', sys.argv[1]])\n"
        "heavy = ('libcst', 'advisor.engine', 'advisor.rules', 'rich', 'typing', 'dataclasses')\n"
        "print('loaded:', sorted(m for m in heavy if m in sys.modules and m not in before))\n"
        "sys.exit(code)\n"
    )
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(cache_dir))
    cold = subprocess.run([sys.executable, "-c", probe, str(corpus_copy)], capture_output=True, text=True, env=env)
    warm = subprocess.run([sys.executable, "-c", probe, str(corpus_copy)], capture_output=True, text=True, env=env)
    assert cold.returncode == warm.returncode == 1
    assert "'advisor.engine', 'advisor.rules'" in cold.stdout and "'libcst'" in cold.stdout
    assert "loaded: []" in warm.stdout
    assert warm.stdout.split("loaded:")[0] == cold.stdout.split("loaded:")[0]


def test_cached_findings_keep_their_fixes(tmp_path, capsys, cache_dir):
    path = tmp_path / "train.py"
    shutil.copy(ROOT / "examples" / "train.py", path)
    fresh = run(capsys, "check", "--format", "json", "--show-info", "--no-cache", path)
    run(capsys, "check", "--format", "json", "--show-info", path)
    cached = run(capsys, "check", "--format", "json", "--show-info", path)
    assert cached == fresh
    assert any(f.get("fix") for f in json.loads(fresh[1]))


def test_a_content_change_invalidates(tmp_path, capsys, cache_dir):
    path = tmp_path / "train.py"
    path.write_text(HOT)
    code, out, _ = run(capsys, "check", "--format", "concise", path)
    assert code == 1 and "GPU101" in out
    path.write_text(HOT.replace("total += loss.item()", "total += 1"))
    code, out, _ = run(capsys, "check", "--format", "concise", path)
    assert code == 0 and out == ""
    assert len(entries(cache_dir)) == 2


def test_a_config_change_invalidates(tmp_path, capsys, cache_dir):
    path = tmp_path / "train.py"
    path.write_text(HOT)
    assert "GPU101" in run(capsys, "check", "--format", "concise", path)[1]
    assert run(capsys, "check", "--format", "concise", "--ignore", "GPU101", path)[1] == ""
    (tmp_path / "pyproject.toml").write_text('[tool.advisor]\nignore = ["GPU1"]\n')
    assert run(capsys, "check", "--format", "concise", path)[1] == ""
    (tmp_path / "pyproject.toml").write_text('[tool.advisor]\nper-file-ignores = {"other.py" = ["GPU1"]}\n')
    assert "GPU101" in run(capsys, "check", "--format", "concise", path)[1]
    (tmp_path / "pyproject.toml").write_text('[tool.advisor]\nper-file-ignores = {"train.py" = ["GPU1"]}\n')
    assert run(capsys, "check", "--format", "concise", path)[1] == ""
    assert run(capsys, "check", "--format", "concise", "--torch-version", "2.1", path)[1] == ""
    assert len(entries(cache_dir)) == 6


def test_a_rule_set_change_invalidates(tmp_path, capsys, cache_dir, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(HOT)
    first = run(capsys, "check", "--format", "json", path)
    assert len(entries(cache_dir)) == 1
    new_rule = tmp_path / "new_family.py"
    new_rule.write_text("class GPU999: ...\n")
    real = cache_module._package_files
    monkeypatch.setattr(cache_module, "_FINGERPRINT", None)
    monkeypatch.setattr(cache_module, "_package_files", lambda: real() + [("rules/new_family.py", str(new_rule))])
    assert run(capsys, "check", "--format", "json", path) == first
    assert len(entries(cache_dir)) == 2


def test_a_corrupt_entry_is_ignored_and_rewritten(tmp_path, capsys, cache_dir):
    path = tmp_path / "train.py"
    path.write_text(HOT)
    first = run(capsys, "check", "--format", "json", path)
    (entry,) = entries(cache_dir)
    for junk in (b"", b"{not json", b'{"format": 1, "findings": [{"code": 3}], "problem": null}',
                 b'{"format": 1, "findings": [], "problem": {"nope": 1}}', b"\xff\xfe\x00garbage", b"[]"):
        entry.write_bytes(junk)
        assert run(capsys, "check", "--format", "json", path) == first
        assert body(entry)["format"] == cache_module.FORMAT


def test_no_cache_neither_reads_nor_writes(tmp_path, capsys, cache_dir):
    path = tmp_path / "train.py"
    path.write_text(HOT)
    run(capsys, "check", "--no-cache", path)
    assert not entries(cache_dir)
    run(capsys, "check", path)
    (entry,) = entries(cache_dir)
    # A poisoned entry (sealed with the folder's key): served without --no-cache, bypassed with it.
    emptied = dict(body(entry), findings=[])
    reseal(cache_dir, entry, b"entry", emptied)
    assert run(capsys, "check", "--format", "concise", path)[0] == 0
    code, out, _ = run(capsys, "check", "--format", "concise", "--no-cache", path)
    assert code == 1 and "GPU101" in out


def test_an_unwritable_cache_costs_only_time(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(blocker))
    path = tmp_path / "train.py"
    path.write_text(HOT)
    code, out, _ = run(capsys, "check", "--format", "concise", path)
    assert code == 1 and "GPU101" in out


def test_cache_location(monkeypatch, tmp_path):
    monkeypatch.delenv("ADVISOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_module.cache_dir() == tmp_path / "xdg" / "torch-advisor"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_module.cache_dir() == tmp_path / "home" / ".cache" / "torch-advisor"
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache_module.cache_dir() == tmp_path / "explicit"


def test_the_cache_is_pruned_oldest_first(tmp_path, capsys, cache_dir, monkeypatch):
    monkeypatch.setenv("ADVISOR_CACHE_MAX_ENTRIES", "10")
    for i in range(14):
        (tmp_path / f"f{i:02}.py").write_text(HOT + f"# {i}\n")
    run(capsys, "check", "--jobs", "1", tmp_path)
    assert 1 <= len(entries(cache_dir)) <= 10


def test_concurrent_runs_share_one_cache(corpus_copy, cache_dir):
    command = [sys.executable, "-m", "advisor", "check", "--format", "json", "--jobs", "2", str(corpus_copy)]
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [1, 1]
    assert outs[0][0] == outs[1][0] and json.loads(outs[0][0])
    assert outs[0][1] == outs[1][1] == b""
    stored = entries(cache_dir)
    assert len(stored) == len(list(corpus_copy.rglob("*.py")))
    assert not list((cache_dir / f"v{cache_module.FORMAT}").glob(".tmp-*"))
    warm = subprocess.run(command, capture_output=True, env=env)
    assert warm.stdout == outs[0][0]


def test_fix_with_jobs_writes_the_same_files_as_one_job(tmp_path, capsys, cache_dir):
    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    shutil.copytree(CORPUS, serial)
    shutil.copytree(CORPUS, pooled)
    # Fill the cache first: --fix must not take a cached result for a file it rewrites.
    run(capsys, "check", serial)
    run(capsys, "check", pooled)
    diff_one = run(capsys, "check", "--diff", "--unsafe-fixes", "--jobs", "1", serial)
    diff_two = run(capsys, "check", "--diff", "--unsafe-fixes", "--jobs", "2", pooled)
    assert diff_one[1].replace(str(serial), "X") == diff_two[1].replace(str(pooled), "X")
    assert "+++" in diff_one[1]
    one = run(capsys, "check", "--fix", "--unsafe-fixes", "--jobs", "1", "--format", "concise", serial)
    two = run(capsys, "check", "--fix", "--unsafe-fixes", "--jobs", "2", "--format", "concise", pooled)
    assert one[0] == two[0]
    assert one[1].replace(str(serial), "X") == two[1].replace(str(pooled), "X")
    changed = 0
    for original in sorted(CORPUS.glob("*.py")):
        a, b = (serial / original.name).read_text(), (pooled / original.name).read_text()
        assert a == b
        changed += a != original.read_text()
    assert changed
    # After the fix the cache describes the fixed files, not the originals.
    assert run(capsys, "check", "--format", "concise", "--jobs", "2", pooled) == \
        run(capsys, "check", "--format", "concise", "--jobs", "2", "--no-cache", pooled)


def test_progress_bar_absent_when_piped(corpus_copy):
    for fmt in ("text", "json"):
        done = subprocess.run([sys.executable, "-m", "advisor", "check", "--no-cache", "--format", fmt,
                               str(corpus_copy), str(ROOT / "examples")], capture_output=True, text=True)
        assert done.returncode == 1
        assert "checking" not in done.stderr and "\x1b" not in done.stderr
        assert "\x1b" not in done.stdout


def test_jobs_option_is_validated(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--jobs", "many", "."])
    with pytest.raises(SystemExit):
        main(["check", "--jobs", "-1", "."])


def test_the_tool_fingerprint_is_remembered_until_a_module_changes(tmp_path, cache_dir, monkeypatch):
    module = tmp_path / "rule.py"
    module.write_text("class GPU998: ...\n")
    monkeypatch.setattr(cache_module, "_package_files", lambda: [("rules/rule.py", str(module))])
    monkeypatch.setattr(cache_module, "RACY_MARGIN_NS", -60_000_000_000)  # the test's file counts as old
    first = cache_module._remembered_fingerprint()
    real_sources = cache_module._package_sources

    def no_reading():
        raise AssertionError("the sources were hashed again")

    monkeypatch.setattr(cache_module, "_package_sources", no_reading)
    assert cache_module._remembered_fingerprint() == first
    monkeypatch.setattr(cache_module, "_package_sources", real_sources)
    module.write_text("class GPU997: ...\n")  # same size, new ctime
    second = cache_module._remembered_fingerprint()
    assert second != first
    (cache_dir / f"fingerprint-v{cache_module.FORMAT}.json").write_text("{broken")
    assert cache_module._remembered_fingerprint() == second


def test_a_module_changed_moments_ago_is_hashed_every_time(tmp_path, cache_dir, monkeypatch):
    module = tmp_path / "rule.py"
    module.write_text("class GPU998: ...\n")
    monkeypatch.setattr(cache_module, "_package_files", lambda: [("rules/rule.py", str(module))])
    cache_module._remembered_fingerprint()
    assert not (cache_dir / f"fingerprint-v{cache_module.FORMAT}.json").exists()


def test_a_first_run_that_claims_the_folder_between_the_two_reads_leaves_it_usable(tmp_path, monkeypatch):
    """Two first runs start at once: one finds the folder made but no marker, lists it, and by
    then the other has written its marker and key. The folder is the tool's: no warning."""
    from advisor import cache_folder

    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    real_listdir = os.listdir

    def other_run_meanwhile(path):
        if Path(path) == root and not (root / cache_folder.MARKER_NAME).exists():
            cache_folder.write_atomically(str(root / cache_folder.MARKER_NAME), cache_folder.MARKER)
            (root / cache_folder.KEY_NAME).write_bytes(b"k" * 32)
        return real_listdir(path)

    monkeypatch.setattr(cache_folder.os, "listdir", other_run_meanwhile)
    assert cache_folder._claim(str(root)) is None
