"""Confirmed when the discarded call's intended effect is missing in the bad program and
present in the fixed one: a prediction meant to be detached still carries its graph (kept
autograd nodes grow per iteration), or an input meant to be clamped into [0, 1] is not."""
from confirmlib import Chart, per_iteration_growth, series

MEASURE = "intended effect missing"


def _measure(run):
    nodes, highest = series(run, "kept_graph_nodes"), series(run, "input_max")
    return {
        "iterations": len(run["iterations"]),
        "kept_graph_nodes_last": nodes[-1] if nodes else None,
        "graph_nodes_per_iteration": per_iteration_growth(nodes) if nodes else None,
        "input_max": max(highest) if highest else None,
    }


def judge(bad, fixed, device):
    b, f = _measure(bad), _measure(fixed)
    measures = {"bad": b, "fixed": f}
    if b["input_max"] is not None:
        ok = f["input_max"] is not None and b["input_max"] > 1 and f["input_max"] <= 1
        return ok, measures, (f"largest input value after the clamp: bad {b['input_max']:.3g} (unchanged), "
                              f"fixed {f['input_max']:.3g}")
    ok = b["graph_nodes_per_iteration"] is not None and b["graph_nodes_per_iteration"] >= 1 \
        and f["kept_graph_nodes_last"] == 0
    return ok, measures, (f"bad: +{b['graph_nodes_per_iteration']:g} autograd nodes kept per iteration "
                          f"({b['kept_graph_nodes_last']:g} after {b['iterations']}) although the "
                          f"prediction was 'detached'; fixed: {f['kept_graph_nodes_last']:g} nodes")


def chart(bad, fixed, device):
    key, label = (("input_max", "largest input value after the clamp") if series(bad, "input_max")
                  else ("kept_graph_nodes", "autograd graph nodes kept alive"))
    return Chart(label, series(bad, key), series(fixed, key))
