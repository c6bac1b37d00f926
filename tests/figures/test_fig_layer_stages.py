"""Figure 13, layer-stages: eight kernels of one pre-norm layer, 32 layers of the 7B."""


from figures import layer_stages
from tests.support.schematics_svg import NS, check_phone_legible, rendered_once, words

fig = rendered_once(layer_stages)


def test_fig13_eight_stages_of_the_7b(fig):
    n, _, root = fig
    assert n["layers"] == 32
    groups = root.findall(".//svg:g[@class='stage']", NS)
    assert [int(g.get("data-stage")) for g in groups] == list(range(1, 9))
    # four read weights (Q/K/V, W_O, W_1, W_2), four only compute; 2 and 4 read the KV cache in decode
    assert [g.get("data-reads-weights") for g in groups].count("true") == 4
    assert [int(g.get("data-stage")) for g in groups if g.get("data-reads-weights") == "true"] == [1, 5, 7, 8]
    assert [int(g.get("data-stage")) for g in groups if g.get("data-reads-kv") == "true"] == [2, 4]
    text = words(root)
    assert "run 32 times" in text and "FlashAttention" in text and "LayerNorm" in text


def test_fig13_alt_and_phone(fig):
    n, _, root = fig
    alt = layer_stages.alt(n)
    assert "dense 7B" in alt and "32 layers" in alt and "stages 2 to 4" in alt and "WQ" in alt
    check_phone_legible(root)
