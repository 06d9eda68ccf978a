"""Confirmed when AddressSanitizer (the pair is built with it, on every device) reports reads of
freed memory in the bad program and none in the fixed one. The effect is on the host: the bad
read is of the freed host buffer, whichever device the model runs on."""
from confirmlib import each, series

MEASURE = "freed memory read (AddressSanitizer)"
CHART = ("asan_reports", "AddressSanitizer reports of bad reads")


def judge(bad, fixed, device):
    def measure(run):
        reports = series(run, "asan_reports")
        return {
            "iterations": len(run["iterations"]),
            "asan_reports": sum(reports),
            "heap_use_after_free": run["log"].count("heap-use-after-free"),
            "sanitized": bool(reports),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    if not (b["sanitized"] and f["sanitized"]):
        return None, measures, "not built with AddressSanitizer (see harness/CMakeLists.txt): nothing counts the bad reads"
    ok = b["asan_reports"] > 0 and b["heap_use_after_free"] > 0 and f["asan_reports"] == 0
    text = (f"bad: {b['asan_reports']:g} AddressSanitizer reports (heap-use-after-free) over "
            f"{b['iterations']} steps; fixed: {f['asan_reports']:g}")
    return ok, measures, text
