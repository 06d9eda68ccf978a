"""Confirmed when the bad program's accumulator reaches at least one more autograd node per
iteration and the fixed program's none (the measure of loss-stored-in-container)."""
import importlib.util
import pathlib

_spec = importlib.util.spec_from_file_location(
    "loss_stored_in_container_rule", pathlib.Path(__file__).with_name("loss-stored-in-container.py"))
_stored = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_stored)

MEASURE = "graph kept by the accumulator"
CHART = ("kept_graph_nodes", "autograd graph nodes kept by the accumulator")
CUDA_CHART = _stored.CUDA_CHART
judge = _stored.judge
