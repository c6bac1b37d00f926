"""The engine's "ggml" side: OpenCL plumbing that knows no model.

One concern per module, as ggml's backend is split from llama.cpp's model code:

- ``device.py``: finding a device that can compile (PoCL first), the context and queue,
  buffers (allocate, upload, read, write).
- ``programs.py``: the kernel source (``kernels/*.cl``, one file per concern, joined in a
  stated order), its compile-time variants and their cache.
- ``packing.py``: GGUF weight blocks repacked into the kernels' device layouts (still
  quantized, bit for bit).
- ``ops.py``: kernel launches (matrix-vector, matrix-matrix, any named kernel), queued as a
  list and enqueued without waiting; the read-bandwidth probe. (The one-off products the
  kernel tests run live with the tests, in ``tests/support/engine_kernels.py``.)

The model's side (``tokenwalk.native.weights``, ``kv_cache``, ``graph_llama``) composes these
operations and never imports pyopencl. Sizes are bytes, times seconds.
"""
