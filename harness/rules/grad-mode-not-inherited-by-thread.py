"""Confirmed when every output the bad program's worker thread computes requires grad (the
guard of the thread that started it does not apply there), no fixed one does, and a bad request
holds more tensor bytes."""
from confirmlib import each, graphs_recorded_for_nothing, output_measures

MEASURE = "graphs recorded on the worker thread"
CHART = ("held_bytes", "tensor bytes held while the request's output is alive", "B")


def judge(bad, fixed, device):
    measures = each(bad, fixed, output_measures)
    b, f = measures["bad"], measures["fixed"]
    ok = graphs_recorded_for_nothing(b, f)
    text = (f"bad: {b['outputs_requiring_grad']:g}/{b['batches']} outputs computed on the worker require grad, "
            f"{b['output_graph_nodes']:g} graph nodes and {b['held_bytes_per_batch']:g} B held per request; "
            f"fixed: {f['outputs_requiring_grad']:g}/{f['batches']}, {f['output_graph_nodes']:g} nodes, "
            f"{f['held_bytes_per_batch']:g} B")
    return ok, measures, text
