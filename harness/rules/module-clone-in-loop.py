"""Confirmed when the bad program allocates more tensor bytes per training step than the fixed
one (median over the steps): its clone() deep-copies every parameter of the network each step,
where the fixed program clones every kTargetUpdate steps."""
from confirmlib import each, median, series

MEASURE = "tensor bytes allocated per step"
CHART = ("allocated_bytes", "tensor bytes allocated per step", "B")


def judge(bad, fixed, device):
    measures = each(bad, fixed, lambda run: {"iterations": len(run["iterations"]),
                                             "allocated_bytes_median": median(series(run, "allocated_bytes")),
                                             "allocations_median": median(series(run, "allocations"))})
    b, f = measures["bad"], measures["fixed"]
    ok = b["allocated_bytes_median"] > f["allocated_bytes_median"]
    text = (f"median bytes allocated per step: bad {b['allocated_bytes_median']:g} B "
            f"({b['allocations_median']:g} allocations), fixed {f['allocated_bytes_median']:g} B "
            f"({f['allocations_median']:g}): clone() allocates a fresh copy of the network every step")
    return ok, measures, text
