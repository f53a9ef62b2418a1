"""perf/torch_compare.py's span arithmetic against intervals worked by hand: the union of one rank's
all_reduce events, the mapping of profiler times onto the shared clock, and the time in flight once
every rank has called."""
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "perf"))
import torch_compare as tc  # noqa: E402


def event(name, start_us, end_us):
    return types.SimpleNamespace(name=name, time_range=types.SimpleNamespace(start=start_us, end=end_us))


def profile(*events):
    return types.SimpleNamespace(events=lambda: list(events))


def close(a, b):
    return abs(a - b) < 1e-9


def main():
    # One rank: [0, 10] and [5, 20] overlap (20 us), [30, 40] stands apart (10 us); other events ignored.
    p = profile(event("x:all_reduce", 5, 20), event("other", 0, 100), event("x:all_reduce", 0, 10),
                event("x:all_reduce", 30, 40))
    assert close(tc.in_flight_ms(p, "x:all_reduce"), 0.030), tc.in_flight_ms(p, "x:all_reduce")

    # The "sync" event began at 1000 us of the profiler's clock, at monotonic 50 s.
    p = profile(event("x:all_reduce", 4000, 5000), event("sync", 1000, 1001), event("x:all_reduce", 2000, 3000))
    spans = tc.event_spans(p, "x:all_reduce", 50.0)
    assert len(spans) == 2 and all(close(a, b) for s, t in zip(spans, [(50.001, 50.002), (50.003, 50.004)])
                                   for a, b in zip(s, t)), spans

    # Two ranks, two calls apart: call 0 from the last call (5) to the last end (12), call 1 from 25 to 30.
    assert close(tc.all_in_ms([[(0, 10), (20, 30)], [(5, 12), (25, 28)]]), 12000)
    # Calls that overlap count once: [2, 11] and [9, 20] make [2, 20].
    assert close(tc.all_in_ms([[(0, 10), (8, 20)], [(2, 11), (9, 15)]]), 18000)
    # A call one rank has not finished by the end of the profile (fewer spans) is left out.
    assert close(tc.all_in_ms([[(0, 1), (2, 3)], [(0, 2)]]), 2000)
    print("torch_compare_spans_test: ok")


if __name__ == "__main__":
    main()
