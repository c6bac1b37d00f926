"""The native edge of tokenwalk: may use numpy, gguf, pyopencl and scipy.

Never imported by the core (tokenwalk minus native/ and cli/); tests check the boundary.

The OpenCL engine is split as llama.cpp splits ggml from llama:

- ``cl/`` (the "ggml" side, knows no model): ``device.py`` (choosing a device, context,
  queue, buffers), ``programs.py`` (kernel source ``cl/kernels/*.cl``, its variants and
  their cache), ``packing.py`` (GGUF blocks to the kernels' layouts), ``ops.py`` (kernel
  launches, enqueueing, the bandwidth probe).
- the model's side (imports no pyopencl): ``model_file.py`` (the GGUF mapped),
  ``hparams.py`` (the core's ``tokenwalk.gguf.hparams`` and the kernels' checks),
  ``architectures.py`` (``general.architecture`` -> its hyper-parameters, weights and
  graph: the one table), ``model.py`` (open and check a model),
  ``weights.py`` (layer weights on the device), ``kv_cache.py``, ``graph_llama.py`` and
  ``graph_gemma3.py`` (decode and prefill as launch lists, one module per family),
  ``engine.py`` (a loaded model: prefill, decode, generate).
- on top: ``generate.py`` (tokenizer, chat prompt, sampling, streaming) and ``measure.py``
  (a request measured end to end); ``reference.py`` is the numpy yardstick.

The timing fit (numpy, scipy) is an edge package of its own, beside the model it trains:
``tokenwalk/timing/fit/``.
"""
