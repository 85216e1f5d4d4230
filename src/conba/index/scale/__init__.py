"""Indexes past one process: shards (``shards``, their folder layout ``shard_layout``) and encoding on a Ray
cluster while one process stays the single writer (``ray_encode``). See docs/SCALE.md."""
