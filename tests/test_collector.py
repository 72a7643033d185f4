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


def test_releasing_free_memory_is_harmless():
    blocks = [bytearray(1 << 20) for _ in range(8)]
    del blocks
    release_free_memory()
    release_free_memory()  # again, with the function looked up once
