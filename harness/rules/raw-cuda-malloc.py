"""Confirmed with CUDA when the bad program's training steps take longer than the fixed one's
(wall time per step after the warm-up, to the end of the queued GPU work: a per-step
synchronization also stops the host from queueing ahead):
its staging buffer comes from cudaMalloc and goes back with cudaFree (which synchronizes the
device) every step, where the fixed program's tensor reuses a block of the caching allocator;
the allocator misses the raw buffer: its peak per step is lower in the bad program than in the
fixed one, whose buffer it serves (reserved and allocated bytes are reported beside it: what
torch.cuda.memory_reserved() would tell a user, short of the raw buffer). Not measurable on a
CPU: the bad program calls the CUDA runtime and builds only against a CUDA LibTorch."""
from confirmlib import median, series

MEASURE = "time per training step"
CHART = ("step_ms", "host time per training step", "ms")
CUDA_CHART = ("cuda_peak_bytes", "CUDA caching allocator peak per step", "B")


def judge(bad, fixed, device):
    def measure(run):
        # The first steps warm up cuBLAS and the allocator in both programs.
        return {"iterations": len(run["iterations"]), "step_ms": max(series(run, "ms_per_step"), default=0),
                "allocator_peak_bytes": max(series(run, "cuda_peak_bytes"), default=0),
                "reserved_bytes_median": median(series(run, "cuda_reserved_bytes")[5:]),
                "allocated_bytes_median": median(series(run, "cuda_allocated_bytes")[5:])}

    measures = {"bad": measure(bad), "fixed": measure(fixed)}
    b, f = measures["bad"], measures["fixed"]
    if not (bad["cuda"] and fixed["cuda"]):
        return None, measures, "needs cuda: cudaMalloc and cudaFree need a GPU"
    if not (b["step_ms"] > 0 and f["step_ms"] > 0):
        return False, measures, "a program did not record ms_per_step (its loop did not run to the end)"
    ok = b["step_ms"] > f["step_ms"] and b["allocator_peak_bytes"] < f["allocator_peak_bytes"]
    text = (f"step {b['step_ms']:.3g} ms in bad, {f['step_ms']:.3g} ms in fixed "
            f"({b['step_ms'] / f['step_ms']:.2f}x); caching allocator peak "
            f"{b['allocator_peak_bytes']:g} B vs {f['allocator_peak_bytes']:g} B; reserved "
            f"{b['reserved_bytes_median']:g} B for {b['allocated_bytes_median']:g} B allocated in bad, "
            f"{f['reserved_bytes_median']:g} B for {f['allocated_bytes_median']:g} B in fixed")
    return ok, measures, text
