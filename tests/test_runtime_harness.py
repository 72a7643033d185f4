"""The CUDA probes' timing harness on a fake backend: warm-up excluded, synchronisation around
every wall-clock sample, CUDA events for device time, median and IQR, refusal to time under
CUDA_LAUNCH_BLOCKING. Runs on any machine; the real GPU figures come from scripts/gpu-check."""

from __future__ import annotations

import types

import pytest

pytest.importorskip("torch", reason="the measure extra (torch) is not installed")

from advisor.runtime import probes_cuda  # noqa: E402
from advisor.runtime.result import median_iqr, outcome, skipped  # noqa: E402


class FakeClock:
    def __init__(self):
        self.now = 0.0  # seconds
        self.syncs = 0

    def perf_counter(self):
        return self.now


class FakeCuda:
    """Just enough of torch.cuda for the harness: a device whose work takes the fake clock's time."""

    def __init__(self, clock: FakeClock, available: bool = True):
        self.clock = clock
        self.available = available
        clock_ref = clock

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = clock_ref.now

            def synchronize(self):
                clock_ref.syncs += 1

            def elapsed_time(self, end):
                return (end.at - self.at) * 1e3

        self.Event = Event

    def synchronize(self):
        self.clock.syncs += 1

    def is_available(self):
        return self.available

    def set_sync_debug_mode(self, mode):
        self.mode = mode


@pytest.fixture
def fake(monkeypatch):
    clock = FakeClock()
    cuda = FakeCuda(clock)
    monkeypatch.setattr(probes_cuda, "torch", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(probes_cuda, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    return clock, cuda


def _work(clock: FakeClock, durations_ms):
    durations = iter(durations_ms)

    def fn():
        clock.now += next(durations) / 1e3

    return fn


def test_wall_clock_excludes_warm_up_and_synchronises_each_sample(fake):
    clock, _ = fake
    # Three slow warm-up runs (first launches, allocator), then five timed ones.
    stats = probes_cuda._wall_ms(_work(clock, [100, 100, 100, 1, 2, 3, 4, 5]), reps=5, warmup=3)
    assert stats["median"] == pytest.approx(3.0)
    assert stats["iqr"] == pytest.approx(2.0)
    assert stats["n"] == 5
    assert clock.syncs >= 1 + 2 * 5  # after warm-up, then before and after every sample


def test_events_time_device_work(fake):
    clock, _ = fake
    stats = probes_cuda._event_ms(_work(clock, [50, 50, 50, 10, 10, 12]), reps=3, warmup=3)
    assert stats["median"] == pytest.approx(10.0)
    assert stats["n"] == 3


def test_timing_refused_under_launch_blocking_or_without_a_device(fake, monkeypatch):
    _, cuda = fake
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    with pytest.raises(probes_cuda.TimingRefused):
        probes_cuda.check_timing_conditions()
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "0")
    cuda.available = False
    with pytest.raises(probes_cuda.TimingRefused):
        probes_cuda.check_timing_conditions()
    cuda.available = True
    probes_cuda.check_timing_conditions()
    assert cuda.mode == 0  # sync-debug mode off while timing


def test_guarded_probe_reports_refusal_as_skipped(fake, monkeypatch):
    _, cuda = fake
    cuda.available = False
    result = probes_cuda.probe_sync({"variant": "item", "iterations": 1, "kernels": 1, "reps": 1, "numel": 1})
    assert result["verdict"] == "skipped: no CUDA device"


def test_outcome_ratio_rounding_and_skips():
    result = outcome(True, 3.0, 1.5, "ms/step", saving_per_step=1.5)
    assert result["verdict"] == "confirmed" and result["ratio"] == 2.0
    assert outcome(False, 1.0, 0.0, "x")["ratio"] is None
    assert outcome(True, 1 / 3, 1.0, "x")["baseline"] == 0.3333
    assert skipped("no CUDA device")["verdict"] == "skipped: no CUDA device"
    assert median_iqr([4.0]) == {"median": 4.0, "iqr": 0.0, "n": 1}
