"""Confirmed when the bad program allocates more tensors and more bytes per iteration than
the fixed one (the probe counts every CPU tensor allocation), the loop being otherwise the
same. On a GPU the caching allocator makes each allocation cheaper but not free; the count
is what the fix removes."""
from confirmlib import each, median, series

MEASURE = "tensor allocations per iteration"
CHART = ("allocations", "tensor allocations per iteration")


def judge(bad, fixed, device):
    def measure(run):
        return {
            "allocations_per_iteration": median(series(run, "allocations")[:-1]),
            "allocated_bytes_per_iteration": median(series(run, "allocated_bytes")[:-1]),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = (b["allocations_per_iteration"] > f["allocations_per_iteration"]
          and b["allocated_bytes_per_iteration"] > f["allocated_bytes_per_iteration"])
    text = (f"tensor allocations per iteration: bad {b['allocations_per_iteration']:g} "
            f"({b['allocated_bytes_per_iteration']:g} B), fixed {f['allocations_per_iteration']:g} "
            f"({f['allocated_bytes_per_iteration']:g} B)")
    return ok, measures, text
