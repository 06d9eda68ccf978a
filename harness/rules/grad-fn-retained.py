"""Confirmed when the nodes the bad program keeps reach at least one more autograd node per
iteration and the fixed program keeps none. On the GPU the CUDA allocator's allocated bytes per
iteration are reported beside them: a kept grad_fn() after backward() holds nodes, not the
activations they saved, so they barely move."""
from confirmlib import CUDA_ALLOCATED_CHART, cuda_growth, each, on_cuda, per_iteration_growth, series

MEASURE = "autograd nodes kept through grad_fn()"
CHART = ("kept_graph_nodes", "autograd graph nodes kept alive")
CUDA_CHART = CUDA_ALLOCATED_CHART


def judge(bad, fixed, device):
    def measure(run):
        nodes = series(run, "kept_graph_nodes")
        return {
            "iterations": len(run["iterations"]),
            "kept_graph_nodes_last": nodes[-1] if nodes else None,
            "graph_nodes_per_iteration": per_iteration_growth(nodes),
            "cuda_allocated_bytes_per_iteration": cuda_growth(run),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["graph_nodes_per_iteration"] >= 1 and f["kept_graph_nodes_last"] == 0
    text = (f"bad: +{b['graph_nodes_per_iteration']:g} autograd nodes kept per iteration "
            f"({b['kept_graph_nodes_last']:g} after {b['iterations']}); fixed: "
            f"{f['kept_graph_nodes_last']:g} nodes")
    if on_cuda(bad, fixed):
        text += (f"; CUDA allocated +{b['cuda_allocated_bytes_per_iteration']:g} B per iteration in bad, "
                 f"+{f['cuda_allocated_bytes_per_iteration']:g} B in fixed")
    return ok, measures, text
