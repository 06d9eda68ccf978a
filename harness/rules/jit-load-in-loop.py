"""Confirmed when the bad program allocates more tensor bytes per request than the fixed one
(median over the requests) and takes longer per request: every torch::jit::load() parses the
file and allocates the module's weights again."""
from confirmlib import each, median, series

MEASURE = "bytes allocated and time per request"
CHART = ("allocated_bytes", "tensor bytes allocated per request", "B")


def judge(bad, fixed, device):
    measures = each(bad, fixed, lambda run: {"iterations": len(run["iterations"]),
                                             "allocated_bytes_median": median(series(run, "allocated_bytes")),
                                             "request_ms_median": median(series(run, "request_ms"))})
    b, f = measures["bad"], measures["fixed"]
    ok = b["allocated_bytes_median"] > f["allocated_bytes_median"] and b["request_ms_median"] > f["request_ms_median"]
    text = (f"median per request: bad {b['allocated_bytes_median']:g} B allocated in "
            f"{b['request_ms_median']:.3g} ms, fixed {f['allocated_bytes_median']:g} B in "
            f"{f['request_ms_median']:.3g} ms")
    return ok, measures, text
