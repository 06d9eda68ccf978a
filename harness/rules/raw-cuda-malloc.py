"""Confirmed with CUDA when the bad program's training step takes longer than the fixed one's:
its staging buffer comes from cudaMalloc and goes back with cudaFree (which synchronizes the
device) every step, where the fixed program's tensor reuses a block of the caching allocator;
the allocator's peak also misses the raw buffer. Not measurable on a CPU: the bad program calls
the CUDA runtime and builds only against a CUDA LibTorch."""
from confirmlib import median, series

MEASURE = "time per training step"
CHART = ("step_ms", "time per training step", "ms")


def judge(bad, fixed, device):
    def measure(run):
        # The first steps warm up cuBLAS and the allocator in both programs.
        return {"iterations": len(run["iterations"]), "step_ms_median": median(series(run, "step_ms")[5:]),
                "allocator_peak_bytes": max(series(run, "cuda_peak_bytes"), default=0)}

    measures = {"bad": measure(bad), "fixed": measure(fixed)}
    b, f = measures["bad"], measures["fixed"]
    if not (bad["cuda"] and fixed["cuda"]):
        return None, measures, "needs cuda: cudaMalloc and cudaFree need a GPU"
    ok = b["step_ms_median"] > f["step_ms_median"]
    text = (f"median step {b['step_ms_median']:.3g} ms in bad, {f['step_ms_median']:.3g} ms in fixed "
            f"({b['step_ms_median'] / f['step_ms_median']:.2f}x); caching allocator peak "
            f"{b['allocator_peak_bytes']:g} B vs {f['allocator_peak_bytes']:g} B")
    return ok, measures, text
