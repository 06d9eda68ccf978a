"""Confirmed when the bad program's kept tensors reach at least one more autograd node per
iteration and the fixed program's none."""
from confirmlib import each, per_iteration_growth, series

MEASURE = "kept autograd graph"
CHART = ("kept_graph_nodes", "autograd graph nodes kept alive")
CUDA_CHART = ("live_bytes", "tensor bytes alive, CPU + GPU", "B")


def judge(bad, fixed, device):
    def measure(run):
        nodes, live = series(run, "kept_graph_nodes"), series(run, "live_bytes")
        return {
            "iterations": len(run["iterations"]),
            "kept_graph_nodes_last": nodes[-1] if nodes else None,
            "graph_nodes_per_iteration": per_iteration_growth(nodes),
            "live_bytes_per_iteration": per_iteration_growth(live),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["graph_nodes_per_iteration"] >= 1 and f["kept_graph_nodes_last"] == 0
    text = (f"bad: +{b['graph_nodes_per_iteration']:g} autograd nodes and +{b['live_bytes_per_iteration']:g} B "
            f"live tensor memory per iteration ({b['kept_graph_nodes_last']:g} nodes kept after "
            f"{b['iterations']}); fixed: {f['kept_graph_nodes_last']:g} nodes, "
            f"+{f['live_bytes_per_iteration']:g} B per iteration")
    return ok, measures, text
