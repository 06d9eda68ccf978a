"""Confirmed when the gradients step() sees are all zero in the bad program and not in the
fixed one (probe::grads right before step())."""
from confirmlib import series

MEASURE = "gradient norm seen by step()"
CHART = ("grad_norm", "gradient norm at step()")


def judge(bad, fixed, device):
    measures = {}
    for name, run in (("bad", bad), ("fixed", fixed)):
        norms = series(run, "grad_norm")
        measures[name] = {"steps": len(norms), "grad_norm_max": max(norms) if norms else None,
                          "grad_norm_min": min(norms) if norms else None}
    b, f = measures["bad"], measures["fixed"]
    ok = (b["steps"] > 0 and b["grad_norm_max"] == 0 and f["steps"] > 0 and f["grad_norm_min"] > 0)
    text = (f"gradient norm at step(): bad {b['grad_norm_min']:g}..{b['grad_norm_max']:g} over {b['steps']} "
            f"steps (every update is zero); fixed {f['grad_norm_min']:.3g}..{f['grad_norm_max']:.3g}")
    return ok, measures, text
