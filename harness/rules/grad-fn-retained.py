"""Confirmed when the nodes the bad program keeps reach at least one more autograd node per
iteration and the fixed program keeps none."""
from confirmlib import each, per_iteration_growth, series

MEASURE = "autograd nodes kept through grad_fn()"
CHART = ("kept_graph_nodes", "autograd graph nodes kept alive")


def judge(bad, fixed, device):
    def measure(run):
        nodes = series(run, "kept_graph_nodes")
        return {
            "iterations": len(run["iterations"]),
            "kept_graph_nodes_last": nodes[-1] if nodes else None,
            "graph_nodes_per_iteration": per_iteration_growth(nodes),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["graph_nodes_per_iteration"] >= 1 and f["kept_graph_nodes_last"] == 0
    text = (f"bad: +{b['graph_nodes_per_iteration']:g} autograd nodes kept per iteration "
            f"({b['kept_graph_nodes_last']:g} after {b['iterations']}); fixed: "
            f"{f['kept_graph_nodes_last']:g} nodes")
    return ok, measures, text
