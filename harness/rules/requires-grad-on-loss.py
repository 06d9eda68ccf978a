"""Confirmed when the model's parameters get no gradient at all in the bad program (backward()
stops at the loss that was made a leaf) and a nonzero one at every step of the fixed program."""
from confirmlib import each, series

MEASURE = "gradient reaching the model"
CHART = ("grad_norm", "gradient norm of the model's parameters after backward()")


def judge(bad, fixed, device):
    def measure(run):
        norms, loss = series(run, "grad_norm"), series(run, "loss")
        return {
            "steps": len(norms),
            "grad_norm_max": max(norms) if norms else None,
            "grad_norm_min": min(norms) if norms else None,
            "loss_first": loss[0] if loss else None,
            "loss_last": loss[-1] if loss else None,
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["steps"] > 0 and b["grad_norm_max"] == 0 and f["steps"] > 0 and f["grad_norm_min"] > 0
    text = (f"gradient norm of the parameters over {b['steps']} steps: bad at most {b['grad_norm_max']:.3g} "
            f"(loss {b['loss_first']:.3g} -> {b['loss_last']:.3g}), fixed at least {f['grad_norm_min']:.3g} "
            f"(loss {f['loss_first']:.3g} -> {f['loss_last']:.3g})")
    return ok, measures, text
