"""The GPU training sweep of issue 50 (docs/gpu-train.md): full-backbone contrastive training of the
untuned MiniLM with each head, evaluated on the dev sets, on a GPU machine without network.

Modules: :mod:`tensor_pack` (float16 tensors, compressed against a reference), :mod:`pack` (what the
GPU machine lacks: the untuned MiniLM, the data), :mod:`variants` (the runs and their time budget),
:mod:`run_one` (train and evaluate one run), :mod:`dev_eval` (the four dev sets and the decision rule),
:mod:`sweep` (the driver with its global deadline), :mod:`export` (the best checkpoints out, and back
into conba model folders here).
"""
