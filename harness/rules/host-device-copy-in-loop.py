"""Confirmed with CUDA when the bad program makes more host-to-device copies and copies more
bytes per iteration than the fixed one. Not measurable on a CPU: a to(device) to the CPU is a
no-op, there is nothing to copy."""
from confirmlib import each, median, series

MEASURE = "host<->device copies"
CHART = ("to_calls", "to() calls")
CUDA_CHART = ("host_to_device_copies", "host-to-device copies")


def judge(bad, fixed, device):
    def measure(run):
        return {
            "to_calls_per_iteration": median(series(run, "to_calls")),
            "host_to_device_copies_per_iteration": median(series(run, "host_to_device_copies")),
            "host_to_device_bytes_per_iteration": median(series(run, "host_to_device_bytes")),
            "syncs_per_iteration": median(series(run, "syncs")),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    if not (bad["cuda"] and fixed["cuda"]):
        text = (f"to() calls per iteration: bad {b['to_calls_per_iteration']:g}, fixed "
                f"{f['to_calls_per_iteration']:g}; on a CPU every to(device) is a no-op, so no copy can be measured")
        return None, measures, text
    ok = (b["host_to_device_copies_per_iteration"] > f["host_to_device_copies_per_iteration"]
          and b["host_to_device_bytes_per_iteration"] > f["host_to_device_bytes_per_iteration"])
    text = (f"host->device copies per iteration: bad {b['host_to_device_copies_per_iteration']:g} "
            f"({b['host_to_device_bytes_per_iteration']:g} B), fixed {f['host_to_device_copies_per_iteration']:g} "
            f"({f['host_to_device_bytes_per_iteration']:g} B); syncs {b['syncs_per_iteration']:g} vs {f['syncs_per_iteration']:g}")
    return ok, measures, text
