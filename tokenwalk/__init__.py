"""tokenwalk: every number of *Transformers and local inference*.

The modules at this level are the **core**: pure Python, standard library only, so that
they run unchanged at build time, in pytest and in the reader's browser under Pyodide.
`tokenwalk.native` is the **native edge** (numpy, gguf, pyopencl); nothing in the core
imports from it.
"""

__version__ = "0.1.0"
