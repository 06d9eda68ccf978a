"""Confirmed when every output the bad program's worker thread computes requires grad (the
guard of the thread that started it does not apply there), no fixed one does, and a bad request
holds more tensor bytes (on the GPU: more bytes of the CUDA caching allocator)."""
from confirmlib import each, graphs_recorded_for_nothing, held_text, output_measures

MEASURE = "graphs recorded on the worker thread"
CHART = ("held_bytes", "tensor bytes held while the request's output is alive", "B")
CUDA_CHART = ("cuda_held_bytes", "CUDA allocator bytes held while the request's output is alive", "B")


def judge(bad, fixed, device):
    measures = each(bad, fixed, output_measures)
    b, f = measures["bad"], measures["fixed"]
    ok = graphs_recorded_for_nothing(b, f)
    text = (f"bad: {b['outputs_requiring_grad']:g}/{b['batches']} outputs computed on the worker require grad, "
            f"{b['output_graph_nodes']:g} graph nodes and {held_text(b, 'request')}; "
            f"fixed: {f['outputs_requiring_grad']:g}/{f['batches']}, {f['output_graph_nodes']:g} nodes, "
            f"{held_text(f, 'request')}")
    return ok, measures, text
