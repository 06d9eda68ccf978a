"""Confirmed when the member the bad program caches holds an autograd graph after every step
and the fixed program's cache holds none."""
from confirmlib import each, series

MEASURE = "autograd graph held by a member"
CHART = ("kept_graph_nodes", "autograd graph nodes the cached member holds")


def judge(bad, fixed, device):
    def measure(run):
        nodes = series(run, "kept_graph_nodes")
        return {
            "iterations": len(run["iterations"]),
            "held_graph_nodes_min": min(nodes) if nodes else None,
            "held_graph_nodes_last": nodes[-1] if nodes else None,
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = (b["held_graph_nodes_min"] or 0) >= 1 and f["held_graph_nodes_last"] == 0
    text = (f"bad: the cached member holds {b['held_graph_nodes_min']:g}-{b['held_graph_nodes_last']:g} "
            f"autograd nodes after each of {b['iterations']} steps; fixed: {f['held_graph_nodes_last']:g}")
    return ok, measures, text
