"""The native edge of tokenwalk: may use numpy, gguf, pyopencl and scipy.

Never imported by the core (tokenwalk/*.py); tests check the boundary.
"""
