"""Confirmed when the bad program's copying is quadratic and the fixed program's linear: the
bytes the bad program allocates beyond the fixed one's, iteration by iteration (the growing
torch::cat: the programs are otherwise the same), add up over all 2N iterations to close to 4x
those of the first N (each iteration copies everything gathered so far), and the fixed
program's bytes to close to 2x. Taking the excess keeps the per-iteration work that both do out
of the ratio: on the GPU the caching allocator rounds every small tensor up to 512 B, which
would otherwise swamp a short cat. The last iteration is left out of both: it also holds the
work after the loop (the fixed program's single torch::cat). The wall time of N and 2N
iterations is reported alongside."""
from confirmlib import each, series

MEASURE = "bytes copied per iteration"
CHART = ("allocated_bytes", "tensor bytes allocated per iteration", "B")


def doubling(values):
    """Total over all values divided by the total over the first half: ~4 quadratic, ~2 linear."""
    half = sum(values[:len(values) // 2])
    return sum(values) / half if half else 0.0


def judge(bad, fixed, device):
    def measure(run):
        loop_bytes = series(run, "allocated_bytes")[:-1]
        loop_ns = series(run, "ns")[:-1]
        return {
            "iterations": len(loop_bytes),
            "bytes_first_half": sum(loop_bytes[:len(loop_bytes) // 2]),
            "bytes_all": sum(loop_bytes),
            "bytes_2n_over_n": doubling(loop_bytes),
            "seconds_all": sum(loop_ns) / 1e9,
            "time_2n_over_n": doubling(loop_ns),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    excess = [x - y for x, y in zip(series(bad, "allocated_bytes")[:-1], series(fixed, "allocated_bytes")[:-1])]
    b["excess_2n_over_n"] = doubling(excess)
    ok = b["excess_2n_over_n"] > 3.5 and f["bytes_2n_over_n"] < 2.5
    text = (f"bytes allocated over 2N vs N iterations (N={b['iterations'] // 2}): bad {b['bytes_2n_over_n']:.2f}x "
            f"({b['bytes_all']:.3g} B in all; beyond fixed's {b['excess_2n_over_n']:.2f}x), "
            f"fixed {f['bytes_2n_over_n']:.2f}x ({f['bytes_all']:.3g} B); "
            f"time 2N vs N: bad {b['time_2n_over_n']:.2f}x ({b['seconds_all']:.3f} s), "
            f"fixed {f['time_2n_over_n']:.2f}x ({f['seconds_all']:.3f} s)")
    return ok, measures, text
