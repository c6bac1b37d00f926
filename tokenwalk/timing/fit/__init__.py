"""Fitting the timing model (`tokenwalk.timing.model`) on the published llama-bench runs:
an edge package beside the model it trains (numpy and scipy; `tokenwalk.EDGE_PACKAGES`), so
nothing in the core imports it and the browser's wheel leaves it out.

- `solve`: the coefficients of one structure fitted on a set of runs (the solver, the
  structures compared, the vectorised prediction);
- `folds`: leave-one-family-out and leave-one-machine-out cross-validation, the choice of
  structure, the bootstrap of the parameters, the summaries `tokenwalk validate` prints;
- `inputs`: the hash of what the committed fit was computed from (the runs and this code);
- `refit`: the whole fit `tokenwalk fit` runs, written to timing_fit.json or compared with it.

A machine timed on its own measurements (the article's laptop) is not fitted here: the pure
core solves its coefficients from them when it is timed (`tokenwalk.timing.calibration`).
"""
