"""Confirmed when the gradient norm after backward() grows (last / first iteration) at least
twice as much in the bad program as in the fixed one."""
from confirmlib import each, series

MEASURE = "gradient accumulation"
CHART = ("grad_norm", "gradient norm after backward()")


def judge(bad, fixed, device):
    def measure(run):
        norms = series(run, "grad_norm")
        return {
            "grad_norm_first": norms[0] if norms else None,
            "grad_norm_last": norms[-1] if norms else None,
            "growth": norms[-1] / norms[0] if norms and norms[0] else None,
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["growth"] is not None and f["growth"] is not None and b["growth"] >= 2 * f["growth"]
    text = (f"gradient norm after backward() grows {b['grad_norm_first']:.3g} -> "
            f"{b['grad_norm_last']:.3g} ({b['growth']:.1f}x) in bad, "
            f"{f['grad_norm_first']:.3g} -> {f['grad_norm_last']:.3g} ({f['growth']:.1f}x) in fixed")
    return ok, measures, text
