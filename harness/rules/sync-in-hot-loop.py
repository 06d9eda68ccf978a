"""Confirmed with CUDA when the bad program synchronizes the host with the GPU more often per
iteration than the fixed one (CUDA sync debug mode counts each synchronization). Not
measurable on a CPU: there is no device queue to wait for; the CPU run counts the
synchronizing ops (item(), nonzero(), masked_select()) each iteration makes."""
from confirmlib import median, series

MEASURE = "host<->device synchronizations"
CHART = ("sync_ops", "synchronizing ops (item, nonzero, masked_select)")
CUDA_CHART = ("syncs", "host-device synchronizations")


def judge(bad, fixed, device):
    measures = {}
    for name, run in (("bad", bad), ("fixed", fixed)):
        ops = series(run, "sync_ops")
        measures[name] = {
            "iterations": len(ops),
            "sync_ops_per_iteration": sum(ops) / len(ops) if ops else 0,
            "syncs_per_iteration": median(series(run, "syncs")),
        }
    b, f = measures["bad"], measures["fixed"]
    if not (bad["cuda"] and fixed["cuda"]):
        text = (f"synchronizing ops per iteration: bad {b['sync_ops_per_iteration']:g}, fixed "
                f"{f['sync_ops_per_iteration']:g}; on a CPU nothing waits for a device, so the stall needs cuda")
        return None, measures, text
    ok = b["syncs_per_iteration"] > f["syncs_per_iteration"]
    text = (f"host-device synchronizations per iteration: bad {b['syncs_per_iteration']:g}, "
            f"fixed {f['syncs_per_iteration']:g}")
    return ok, measures, text
