"""Figure 24, lifecycle: Ollama's five states; load 55 s cold (measured); keep_alive 5 min by default."""


from figures import lifecycle
from tests.support.context import default_context
from tests.support.schematics_svg import NS, check_alt_and_phone, check_labels, render, rendered_once, words
from tokenwalk.data_refs import resolve

fig = rendered_once(lifecycle)


def test_fig24_numbers_come_from_the_data_files(fig):
    n, _, _ = fig
    assert n["cold_load_s"] == resolve({"from": "measurements/laptop.json", "key": "cold_load_s"}) == 55
    from article import _data

    assert n["keep_alive_min"] == _data.values("cited/article.json")["ollama_keep_alive_default_min"] == 5
    assert n["model"] == "qwen3.6-35b-a3b" and round(n["weights_bytes"] / 1e9, 1) == 21.7


def test_fig24_five_states_and_labels(fig):
    _, _, root = fig
    assert [g.get("data-state") for g in root.findall(".//svg:g[@class='state']", NS)] == \
        ["pull", "load", "serve", "idle", "unload"]
    check_labels(root, ("55 s cold", "keep_alive", "5 min default", "loads again:", "every 3 min", "always loaded",
                        "every 10 min", "waits 55 s first", "21.7 GB"))


def test_fig24_follows_the_measurement(tmp_path):
    n = dict(lifecycle.inputs(default_context()), cold_load_s=40, keep_alive_min=30)
    _, _, root = render(lifecycle, tmp_path, n)
    text = words(root)
    assert "40 s cold" in text and "30 min default" in text
    # with keep_alive 30 min both rhythms find the model loaded
    assert "waits" not in text


def test_fig24_alt_and_phone(fig):
    n, _, root = fig
    check_alt_and_phone(lifecycle, n, root,
                        ("Qwen3.6 35B-A3B", "laptop", "55 s cold", "5 minutes by default", "pull", "unload"))
