"""The 37-operator benchmark suite (SUITE.md) and the benchmark scripts for irscope's own tools."""
