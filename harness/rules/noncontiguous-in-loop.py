"""Confirmed when the bad program allocates more bytes per iteration than the fixed one: the
contiguous copy of the loop-invariant view is made (allocated and written) every iteration
instead of once. Wall time per iteration is reported alongside."""
from confirmlib import each, median, series

MEASURE = "bytes copied per iteration"
CHART = ("allocated_bytes", "tensor bytes allocated per iteration", "B")


def judge(bad, fixed, device):
    def measure(run):
        return {
            "allocated_bytes_per_iteration": median(series(run, "allocated_bytes")[:-1]),
            "microseconds_per_iteration": median(series(run, "ns")[:-1]) / 1e3,
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["allocated_bytes_per_iteration"] > f["allocated_bytes_per_iteration"]
    text = (f"bytes allocated per iteration: bad {b['allocated_bytes_per_iteration']:g}, fixed "
            f"{f['allocated_bytes_per_iteration']:g}; time per iteration {b['microseconds_per_iteration']:.0f} us "
            f"vs {f['microseconds_per_iteration']:.0f} us")
    return ok, measures, text
