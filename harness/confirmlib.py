"""What a confirmation rule (harness/rules/<check>.py) may use, and what it must define.

A rule file is named after its check without the `torch-` prefix and corpus/<check>/ holds
its programs; scripts/confirm loads every file in harness/rules/, so adding a check touches
no shared code. A rule file defines:

  MEASURE   a few words for what is compared ("kept autograd graph").
  judge(bad, fixed, device) -> (ok, measures, summary)
            ok is True (confirmed), False (not confirmed) or None when the device cannot show
            the effect (reported as "not measurable here", never as passed; the summary says
            why); measures is {"bad": {...}, "fixed": {...}}, the numbers behind the verdict
            (each(bad, fixed, measure) builds it).
  CHART     (sample key, axis label[, unit]): the per-iteration quantity drawn bad vs fixed,
            or a function chart(bad, fixed, device) -> Chart for a quantity derived otherwise.
  CUDA_CHART  optional, the same for --device cuda when the GPU shows the effect better.

A run (bad, fixed) is the probe's report: {"cuda": bool, "error": str|None, "exit_code": int,
"iterations": [{"iteration": 0, <key>: <value>, ...}, ...]} (keys: corpus/probe/torchtidy_probe.h).
"""
import collections
import statistics

# unit "B" draws bytes with binary prefixes; anything else is a plain count.
Chart = collections.namedtuple("Chart", "label bad fixed unit", defaults=("",))


def series(run, key):
    """The values of one probe key over the iterations that recorded it."""
    return [sample[key] for sample in run["iterations"] if key in sample]


def per_iteration_growth(values):
    """Average change per iteration from the first to the last value."""
    return (values[-1] - values[0]) / (len(values) - 1) if len(values) > 1 else 0.0


def median(values):
    return statistics.median(values) if values else 0


def each(bad, fixed, measure):
    """{"bad": measure(bad), "fixed": measure(fixed)}: the measures of a pair."""
    return {"bad": measure(bad), "fixed": measure(fixed)}


def series_chart(spec, bad, fixed):
    """The Chart of a (key, label[, unit]) spec: that key's values per iteration."""
    key, label, *unit = spec
    return Chart(label, series(bad, key), series(fixed, key), *unit)


def on_cuda(*runs):
    """Whether every run put tensors on the GPU (the CUDA caching allocator has samples)."""
    return all(run.get("cuda") and series(run, "cuda_allocated_bytes") for run in runs)


def cuda_growth(run):
    """Growth of the CUDA caching allocator's allocated bytes per iteration (None off the GPU):
    what torch.cuda.memory_allocated() shows climbing when a program keeps tensors."""
    values = series(run, "cuda_allocated_bytes")
    return per_iteration_growth(values) if run.get("cuda") and values else None


# The GPU chart of the kept-graph checks: allocated bytes per iteration.
CUDA_ALLOCATED_CHART = ("cuda_allocated_bytes", "CUDA bytes allocated after each iteration", "B")


# Measured on every pair when the probe saw CUDA: the caching allocator, copies and syncs.
GPU_KEYS = ("cuda_allocated_bytes", "cuda_reserved_bytes", "cuda_peak_bytes", "host_to_device_copies",
            "host_to_device_bytes", "device_to_host_copies", "device_to_host_bytes", "syncs")


def gpu_measures(run):
    """Per-iteration GPU numbers of one run, or None when it did not use CUDA."""
    if not run.get("cuda") or not series(run, "cuda_allocated_bytes"):
        return None
    allocated, reserved = series(run, "cuda_allocated_bytes"), series(run, "cuda_reserved_bytes")
    return {
        "allocated_bytes_last": allocated[-1],
        "allocated_bytes_per_iteration": per_iteration_growth(allocated),
        "reserved_bytes_last": reserved[-1],
        "reserved_bytes_per_iteration": per_iteration_growth(reserved),
        "peak_bytes_max": max(series(run, "cuda_peak_bytes"), default=0),
        # The fragmentation signal of the memory guides: cached but unused by tensors.
        "reserved_over_allocated": reserved[-1] / allocated[-1] if allocated[-1] else None,
        "host_to_device_copies_per_iteration": median(series(run, "host_to_device_copies")),
        "host_to_device_bytes_per_iteration": median(series(run, "host_to_device_bytes")),
        "device_to_host_copies_per_iteration": median(series(run, "device_to_host_copies")),
        "device_to_host_bytes_per_iteration": median(series(run, "device_to_host_bytes")),
        "syncs_per_iteration": median(series(run, "syncs")),
    }


def _median_or_none(values):
    return median(values) if values else None


def output_measures(run):
    """What probe::output() saw over a run: how many outputs (one per batch or request)
    required grad, the graph behind them and the tensor bytes each held."""
    return {
        "batches": len(series(run, "requires_grad")),
        "outputs_requiring_grad": sum(series(run, "requires_grad")),
        "output_graph_nodes": median(series(run, "output_graph_nodes")),
        "held_bytes_per_batch": median(series(run, "held_bytes")),
        "peak_bytes_per_batch": median(series(run, "peak_bytes")),
        # The same on the GPU alone (None off the GPU).
        "cuda_held_bytes_per_batch": _median_or_none(series(run, "cuda_held_bytes")),
        "cuda_peak_bytes_per_batch": _median_or_none(series(run, "cuda_batch_peak_bytes")),
    }


def graphs_recorded_for_nothing(b, f):
    """Judges two output_measures: every bad output requires grad, no fixed one does, and a
    bad output holds more tensor bytes (on the GPU: more CUDA allocator bytes)."""
    held = ("cuda_held_bytes_per_batch" if b["cuda_held_bytes_per_batch"] is not None
            and f["cuda_held_bytes_per_batch"] is not None else "held_bytes_per_batch")
    return (b["batches"] > 0 and b["outputs_requiring_grad"] == b["batches"] and f["batches"] > 0
            and f["outputs_requiring_grad"] == 0 and b[held] > f[held])


def held_text(m, per="batch"):
    """How many bytes a batch's output holds, on the GPU by the CUDA allocator."""
    text = f"{m['held_bytes_per_batch']:g} B held per {per}"
    if m["cuda_held_bytes_per_batch"] is not None:
        text += (f" (CUDA allocator: {m['cuda_held_bytes_per_batch']:g} B held, "
                 f"peak +{m['cuda_peak_bytes_per_batch']:g} B)")
    return text
