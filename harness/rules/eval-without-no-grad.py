"""Confirmed when every bad eval output requires grad, no fixed one does, and a bad batch
holds more tensor bytes."""
from confirmlib import each, median, series

MEASURE = "graph + memory per eval batch"
CHART = ("held_bytes", "tensor bytes held while the batch's output is alive", "B")


def judge(bad, fixed, device):
    def measure(run):
        return {
            "batches": len(series(run, "requires_grad")),
            "outputs_requiring_grad": sum(series(run, "requires_grad")),
            "output_graph_nodes": median(series(run, "output_graph_nodes")),
            "held_bytes_per_batch": median(series(run, "held_bytes")),
            "peak_bytes_per_batch": median(series(run, "peak_bytes")),
        }

    measures = each(bad, fixed, measure)
    b, f = measures["bad"], measures["fixed"]
    ok = (b["batches"] > 0 and b["outputs_requiring_grad"] == b["batches"] and f["batches"] > 0
          and f["outputs_requiring_grad"] == 0 and b["held_bytes_per_batch"] > f["held_bytes_per_batch"])
    text = (f"bad: {b['outputs_requiring_grad']:g}/{b['batches']} outputs require grad, "
            f"{b['output_graph_nodes']:g} graph nodes and {b['held_bytes_per_batch']:g} B held per batch; "
            f"fixed: {f['outputs_requiring_grad']:g}/{f['batches']}, {f['output_graph_nodes']:g} nodes, "
            f"{f['held_bytes_per_batch']:g} B")
    return ok, measures, text
