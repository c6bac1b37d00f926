"""The article's number namespace `n`: every number the chapters print, computed by tokenwalk.

`article_numbers()` returns a flat dict, name -> value (numbers raw, in the units their
names say; the chapters format them with the build's filters, which are
tokenwalk.format's functions: `{{ n.qwen_size_gb | fixed(1) }}`). The names are grouped by
what they describe, one module per group, named after the prefix of the names it owns:

    request    request_*, token_count_*, chat_template_*   (the request and its tokens)
    models     qwen_*, d7_*, gpt3_*, dense27_*, llama70_*, the machines' specs, gguf_*
    measured   the laptop's measurements under their own names, mtp_*, prefix_cache_*
    engine     engine_*                                    (the machine that built the page)
    cited      cited facts, sc_* (the scenario sizes), laptop_bus_*, gpt3_training_*
    toy        toy_*, attn_*, mask_*, sampling_*, quant_*, bpw_*
    h100       the H100 example: d7_* steps, balance_*, tile_*, batch_*, chunk_*, kv_*
    laptop     the request on the laptop: the walk, env_*, budget_*, spec_*, shares
    settings   settings_rows
    fit        fit_unseen_*: the timing model's error on chip families it was not fitted on
    quantities q_*: each quantity printed in more than one place, as its one string (in a span
               that names it), with its provenance: measured, computed or modelled

Which model and machine each group uses is decided once, in article.scenario; sizes come
from the presets, times from roofline, kv_cache, timing and walk, toy numbers from
article.toys, measurements from tokenwalk/data/measurements/ (laptop.json, the author's
laptop; engine.json, the machine that built the page, absent: `n.engine` is None), cited
facts from article/data/cited/. These modules only pick, combine (a ratio, a difference)
and name.

Conventions: `_gb`, `_mb`, `_kb` are SI (1e9, 1e6, 1e3 bytes); `_bytes` are bytes;
`_s`, `_ms` seconds and milliseconds; `_tok_s` tokens per second; `_b` billions;
`_share` a fraction in [0, 1].

Pure Python (standard library), except the token count, which reads the SmolLM2 GGUF file
named in content/request/request.json once per process (about a second).
"""

from __future__ import annotations

from pathlib import Path

from article import _data
from article.numbers import cited, engine, fit, h100, laptop, measured, models, quantities, request, settings, toy
from article.references import references


def article_numbers(request_dir: str | Path | None = None, scenario=None) -> dict:
    """The namespace `n` of the article (see the module docstring), for `scenario`
    (default: article.scenario.load_scenario(request_dir))."""
    from article.scenario import load_scenario

    sc = scenario if scenario is not None else load_scenario(request_dir)
    c = _data.values("cited/article.json")
    meas = _data.values("measurements/laptop.json", root=None)
    n: dict = {}
    request.group(n, sc)
    models.group(n, sc)
    measured.group(n, meas)
    engine.group(n)
    engine.other_models(n)
    cited.group(n, c, sc.sizes)
    toy.group(n, sc, c)
    h100.group(n, sc)
    laptop.group(n, sc, c, meas)
    engine.beside_the_laptop(n)
    settings.group(n)
    fit.group(n)
    quantities.group(n)
    n["ref"] = references()
    return n
