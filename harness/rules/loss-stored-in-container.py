"""Confirmed when the bad program's kept tensors reach at least one more autograd node per
iteration and the fixed program's none. On the GPU the CUDA caching allocator's allocated bytes
must also grow at least as fast in the bad program as in the fixed one: after backward() a kept
loss holds its graph's nodes but no longer the activations they saved, so the allocator shows
the kept tensors themselves (and everything a graph that never ran backward() saved)."""
from confirmlib import CUDA_ALLOCATED_CHART, cuda_growth, each, on_cuda, per_iteration_growth, series

MEASURE = "kept autograd graph"
CHART = ("kept_graph_nodes", "autograd graph nodes kept alive")
CUDA_CHART = CUDA_ALLOCATED_CHART


def judge(bad, fixed, device):
    def measure(run):
        nodes, live = series(run, "kept_graph_nodes"), series(run, "live_bytes")
        return {
            "iterations": len(run["iterations"]),
            "kept_graph_nodes_last": nodes[-1] if nodes else None,
            "graph_nodes_per_iteration": per_iteration_growth(nodes),
            "live_bytes_per_iteration": per_iteration_growth(live),
            "cuda_allocated_bytes_per_iteration": cuda_growth(run),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = b["graph_nodes_per_iteration"] >= 1 and f["kept_graph_nodes_last"] == 0
    cuda = on_cuda(bad, fixed)
    if cuda:
        ok = ok and b["cuda_allocated_bytes_per_iteration"] >= f["cuda_allocated_bytes_per_iteration"]
    text = (f"bad: +{b['graph_nodes_per_iteration']:g} autograd nodes and +{b['live_bytes_per_iteration']:g} B "
            f"live tensor memory per iteration ({b['kept_graph_nodes_last']:g} nodes kept after "
            f"{b['iterations']}); fixed: {f['kept_graph_nodes_last']:g} nodes, "
            f"+{f['live_bytes_per_iteration']:g} B per iteration")
    if cuda:
        text += (f"; CUDA allocated +{b['cuda_allocated_bytes_per_iteration']:g} B per iteration in bad, "
                 f"+{f['cuda_allocated_bytes_per_iteration']:g} B in fixed")
    return ok, measures, text
