"""Memory housekeeping: the collector's pause nests, and returning free memory is always safe."""

import gc

from advisor.collector import collector_paused, release_free_memory


def test_pauses_nest_and_restore_the_collector():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_a_pause_ends_on_an_exception():
    try:
        with collector_paused():
            raise ValueError
    except ValueError:
        pass
    assert gc.isenabled()


def _in_generation(obj, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


def test_a_kept_phase_leaves_its_survivors_to_full_collections_only():
    with collector_paused(keep=True):
        with collector_paused(keep=True):
            kept = [[] for _ in range(10)]
        assert _in_generation(kept, 0)  # the outer pause still holds: nothing moved yet
    assert gc.isenabled()
    assert _in_generation(kept, 2) and not _in_generation(kept, 0)
    assert gc.get_freeze_count() == 0


def test_a_kept_phase_under_a_paused_collector_moves_nothing():
    gc.disable()
    try:
        with collector_paused(keep=True):
            kept = [[] for _ in range(10)]
        assert not gc.isenabled()
        assert _in_generation(kept, 0)
    finally:
        gc.enable()


def test_releasing_free_memory_is_harmless():
    blocks = [bytearray(1 << 20) for _ in range(8)]
    del blocks
    release_free_memory()
    release_free_memory()  # again, with the function looked up once


def _freeze_count_after(argv, monkeypatch, tmp_path):
    from advisor.cli import main

    script = tmp_path / "train.py"
    script.write_text("import torch\nx = torch.zeros(3)\n", encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["advisor", "check", "-q", "--no-cache", str(script)])
    gc.unfreeze()
    try:
        main(argv)
        return gc.get_freeze_count()
    finally:
        gc.unfreeze()


def test_the_programs_own_run_leaves_what_it_kept_to_the_exit(monkeypatch, tmp_path):
    # `advisor ...` (no argv given): the final collection would only traverse the kept models.
    assert _freeze_count_after(None, monkeypatch, tmp_path) > 0
    # A caller's run (argv given) leaves the caller's collector as it was.
    assert _freeze_count_after(["check", "-q", "--no-cache", str(tmp_path / "train.py")], monkeypatch, tmp_path) == 0
