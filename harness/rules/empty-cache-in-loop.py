"""Confirmed with CUDA when the bad program's training steps take longer than the fixed one's
(wall time per step after the warm-up, to the end of the queued GPU work: a per-step
synchronization also stops the host from queueing ahead): it
empties the caching allocator every step, so each step gets its activations, gradients and
workspaces from cudaMalloc again (and cudaFree synchronizes the device); its reserved memory at
the start of a step falls back to what tensors hold: the bad program's reserved-but-unallocated
bytes (the allocator's cache) at a step's start must be fewer than the fixed one's. Not measurable
on a CPU: the programs call c10_cuda and build only against a CUDA LibTorch."""
from confirmlib import median, series

MEASURE = "time per training step"
CHART = ("step_ms", "host time per training step", "ms")
CUDA_CHART = ("cuda_reserved_bytes", "CUDA memory reserved at the start of a step", "B")


def judge(bad, fixed, device):
    def measure(run):
        # The first steps warm up cuBLAS and the allocator in both programs.
        reserved = series(run, "cuda_reserved_bytes")[5:]
        allocated = series(run, "cuda_allocated_bytes")[5:]
        return {"iterations": len(run["iterations"]), "step_ms": max(series(run, "ms_per_step"), default=0),
                "reserved_bytes_median": median(reserved), "allocated_bytes_median": median(allocated),
                "cached_bytes_median": median([r - a for r, a in zip(reserved, allocated)])}

    measures = {"bad": measure(bad), "fixed": measure(fixed)}
    b, f = measures["bad"], measures["fixed"]
    if not (bad["cuda"] and fixed["cuda"]):
        return None, measures, "needs cuda: without a GPU there is no caching allocator to empty"
    if not (b["step_ms"] > 0 and f["step_ms"] > 0):
        return False, measures, "a program did not record ms_per_step (its loop did not run to the end)"
    ok = b["step_ms"] > f["step_ms"] and b["cached_bytes_median"] < f["cached_bytes_median"]
    text = (f"step {b['step_ms']:.3g} ms in bad, {f['step_ms']:.3g} ms in fixed "
            f"({b['step_ms'] / f['step_ms']:.2f}x); at a step's start CUDA reserved "
            f"{b['reserved_bytes_median']:g} B for {b['allocated_bytes_median']:g} B allocated in bad "
            f"({b['cached_bytes_median']:g} B cached), {f['reserved_bytes_median']:g} B for "
            f"{f['allocated_bytes_median']:g} B in fixed ({f['cached_bytes_median']:g} B cached)")
    return ok, measures, text
