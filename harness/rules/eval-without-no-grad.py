"""Confirmed when every bad eval output requires grad, no fixed one does, and a bad batch
holds more tensor bytes: on the GPU, more bytes of the CUDA caching allocator (the activations
autograd saves for a backward() that never comes); the peak per batch is reported beside it."""
from confirmlib import each, graphs_recorded_for_nothing, held_text, output_measures

MEASURE = "graph + memory per eval batch"
CHART = ("held_bytes", "tensor bytes held while the batch's output is alive", "B")
CUDA_CHART = ("cuda_held_bytes", "CUDA allocator bytes held while the batch's output is alive", "B")


def judge(bad, fixed, device):
    measures = each(bad, fixed, output_measures)
    b, f = measures["bad"], measures["fixed"]
    ok = graphs_recorded_for_nothing(b, f)
    text = (f"bad: {b['outputs_requiring_grad']:g}/{b['batches']} outputs require grad, "
            f"{b['output_graph_nodes']:g} graph nodes and {held_text(b)}; "
            f"fixed: {f['outputs_requiring_grad']:g}/{f['batches']}, {f['output_graph_nodes']:g} nodes, "
            f"{held_text(f)}")
    return ok, measures, text
