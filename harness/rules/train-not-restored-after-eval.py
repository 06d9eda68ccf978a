"""Confirmed when fewer of the bad program's training steps run with dropout on than the fixed
program's: a step has dropout on when a second forward of its batch gives a different output.
The bad program's model stays in evaluation mode after the first validation."""
from confirmlib import each, series

MEASURE = "training steps with dropout on"
CHART = ("dropout_active", "dropout on in the training step (1) or off (0)")


def judge(bad, fixed, device):
    def measure(run):
        active = series(run, "dropout_active")
        return {"steps": len(active), "steps_with_dropout": sum(active)}

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["steps_with_dropout"] < f["steps_with_dropout"] == f["steps"] > 0
    text = (f"training steps with dropout on: bad {b['steps_with_dropout']:g} of {b['steps']}, "
            f"fixed {f['steps_with_dropout']:g} of {f['steps']}")
    return ok, measures, text
