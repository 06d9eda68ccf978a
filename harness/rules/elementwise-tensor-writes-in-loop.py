"""Confirmed when an iteration of the bad program, which writes its batch tensor one element
at a time (one indexing op and one fill per element), takes at least 3x as long as the fixed
program's, which writes the same values through an accessor. A timing: the programs are
otherwise identical and the gap is far above the noise (the medians over all iterations are
compared). The effect is on the host on every device: both programs assemble the batch in a host
tensor (an accessor reads only host memory) and move it to the model's device whole."""
from confirmlib import each, median, series

MEASURE = "time per iteration"
CHART = ("ns", "wall time per iteration (ns)")


def judge(bad, fixed, device):
    def measure(run):
        return {"microseconds_per_iteration": median(series(run, "ns")[:-1]) / 1e3}

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ratio = b["microseconds_per_iteration"] / f["microseconds_per_iteration"] if f["microseconds_per_iteration"] else 0
    ok = ratio >= 3
    text = (f"time per iteration: bad {b['microseconds_per_iteration']:.0f} us, fixed "
            f"{f['microseconds_per_iteration']:.0f} us ({ratio:.1f}x)")
    return ok, measures, text
