"""Confirmed when the member the bad program caches holds an autograd graph after every step
and the fixed program's cache holds none. On the GPU the CUDA allocator's allocated bytes are
reported beside them (the member holds one tensor either way; the graph behind it is nodes)."""
from confirmlib import CUDA_ALLOCATED_CHART, cuda_growth, each, on_cuda, series

MEASURE = "autograd graph held by a member"
CHART = ("kept_graph_nodes", "autograd graph nodes the cached member holds")
CUDA_CHART = CUDA_ALLOCATED_CHART


def judge(bad, fixed, device):
    def measure(run):
        nodes = series(run, "kept_graph_nodes")
        return {
            "iterations": len(run["iterations"]),
            "held_graph_nodes_min": min(nodes) if nodes else None,
            "held_graph_nodes_last": nodes[-1] if nodes else None,
            "cuda_allocated_bytes_per_iteration": cuda_growth(run),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = (b["held_graph_nodes_min"] or 0) >= 1 and f["held_graph_nodes_last"] == 0
    text = (f"bad: the cached member holds {b['held_graph_nodes_min']:g}-{b['held_graph_nodes_last']:g} "
            f"autograd nodes after each of {b['iterations']} steps; fixed: {f['held_graph_nodes_last']:g}")
    if on_cuda(bad, fixed):
        text += (f"; CUDA allocated +{b['cuda_allocated_bytes_per_iteration']:g} B per step in bad, "
                 f"+{f['cuda_allocated_bytes_per_iteration']:g} B in fixed")
    return ok, measures, text
