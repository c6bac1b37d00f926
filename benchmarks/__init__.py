"""Benchmarks: `make bench` (build.py) and `make bench-engine` (the OpenCL engine)."""
