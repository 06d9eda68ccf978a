"""Confirmed when the state the bad program carries into the next chunk holds an autograd graph
(graph nodes reachable from h) and its training fails in backward() on the previous chunk's
freed graph, while the fixed program's carried state holds no graph and it trains every chunk."""
from confirmlib import CUDA_ALLOCATED_CHART, each, series

MEASURE = "autograd graph carried between chunks"
CHART = ("kept_graph_nodes", "autograd nodes reachable from the carried state")
CUDA_CHART = CUDA_ALLOCATED_CHART


def judge(bad, fixed, device):
    measures = each(bad, fixed, lambda run: {
        "chunks": len(run["iterations"]),
        "carried_graph_nodes_max": max(series(run, "kept_graph_nodes"), default=0),
        "error": run["error"],
        "cuda_allocated_bytes_max": max(series(run, "cuda_allocated_bytes"), default=None)})
    b, f = measures["bad"], measures["fixed"]
    ok = (b["carried_graph_nodes_max"] > 0 and b["error"] is not None and f["error"] is None
          and f["carried_graph_nodes_max"] == 0)
    text = (f"bad carries {b['carried_graph_nodes_max']:g} graph nodes into the next chunk and stops after "
            f"{b['chunks']} chunks ({(b['error'] or 'no error').splitlines()[0][:90]}); fixed carries "
            f"{f['carried_graph_nodes_max']:g} and trains {f['chunks']} chunks")
    return ok, measures, text
