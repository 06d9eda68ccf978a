"""Confirmed when the bad program's Adam never gets past one step of state (its moment
estimates start over every iteration) while the fixed program's count follows the iterations."""
from confirmlib import series

MEASURE = "optimizer state kept"
CHART = ("adam_steps", "steps Adam's moment estimates have seen")


def judge(bad, fixed, device):
    measures = {}
    for name, run in (("bad", bad), ("fixed", fixed)):
        steps, loss = series(run, "adam_steps"), series(run, "loss")
        measures[name] = {
            "iterations": len(run["iterations"]),
            "adam_steps_max": max(steps) if steps else None,
            "loss_first": loss[0] if loss else None,
            "loss_last": loss[-1] if loss else None,
        }
    b, f = measures["bad"], measures["fixed"]
    ok = b["adam_steps_max"] == 1 and f["adam_steps_max"] == f["iterations"] > 1
    text = (f"Adam state after {b['iterations']} steps: bad {b['adam_steps_max']:g} step, fixed "
            f"{f['adam_steps_max']:g}; batch loss {b['loss_first']:.3g} -> {b['loss_last']:.3g} in bad, "
            f"{f['loss_first']:.3g} -> {f['loss_last']:.3g} in fixed")
    return ok, measures, text
