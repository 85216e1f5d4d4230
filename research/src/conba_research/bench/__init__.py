"""The developer benchmarks behind ``conba bench NAME`` (all but ``speed``, which ships with conba): the GPU
run, the IVF and index-scale measurements, the 100M plan, the results table, the serve load test."""
