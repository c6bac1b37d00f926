"""Buffers on the CPU device in huge-page host memory of our own (tokenwalk/native/cl/device.py,
huge_page_memory): a decode step streams the weights through the TLB, and in 2 MiB pages it
walks the page tables 512 times less often than in PoCL's 4 KiB ones. What must hold: the
memory starts on a 2 MiB boundary and comes zeroed, the buffers read back what was uploaded
(a tuple of strided parts too, as the weights are uploaded), only buffers from
HOST_PAGES_MIN_BYTES on take it, and the engine's logits are the same bits either way."""

import pathlib

import numpy as np
import pytest

from tokenwalk.native.cl.device import HOST_PAGES_MIN_BYTES, HUGE_PAGE_BYTES, huge_page_memory

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_huge_page_memory_is_aligned_zeroed_and_writable():
    for n in (1, HUGE_PAGE_BYTES - 3, HUGE_PAGE_BYTES, 3 * HUGE_PAGE_BYTES + 5):
        mem = huge_page_memory(n)
        assert mem.dtype == np.uint8 and mem.size == n
        assert mem.ctypes.data % HUGE_PAGE_BYTES == 0
        assert not mem.any()
        mem[-1] = 7
        assert mem[-1] == 7


@pytest.fixture(scope="module")
def cpu_device():
    from tokenwalk.native.cl.device import Device

    dev = Device(None)
    if not dev.is_cpu:
        pytest.skip("huge-page buffers are for CPU devices")
    return dev


def test_large_buffers_use_our_memory_and_read_back_what_was_uploaded(cpu_device, monkeypatch):
    cl = cpu_device.cl
    rng = np.random.default_rng(0)
    big = rng.standard_normal(HOST_PAGES_MIN_BYTES // 4 + 17).astype(np.float32)
    small = big[:1000].copy()
    # the weights' way: strided parts, one after the other
    rows = rng.integers(0, 255, (1200, 2048), dtype=np.uint8)  # 2.4 MB
    parts = (rows[:, :1024], rows[:, 1024:])
    for monkeyed in (False, True):
        if monkeyed:
            monkeypatch.setenv("TOKENWALK_NO_HUGE_PAGES", "1")
        for host, expected_own in ((big, not monkeyed), (small, False), (parts, not monkeyed)):
            buf = cpu_device.upload(host)
            flags = buf.get_info(cl.mem_info.FLAGS)
            assert bool(flags & cl.mem_flags.USE_HOST_PTR) == expected_own
            want = np.concatenate([p.reshape(-1) for p in host]) if isinstance(host, tuple) else host
            got = cpu_device.read(np.empty_like(want), buf)
            assert np.array_equal(got, want)
        zeros = cpu_device.zeros(HOST_PAGES_MIN_BYTES // 4)
        assert bool(zeros.get_info(cl.mem_info.FLAGS) & cl.mem_flags.USE_HOST_PTR) == (not monkeyed)
        assert not cpu_device.read(np.ones(HOST_PAGES_MIN_BYTES // 4, np.float32), zeros).any()


@pytest.mark.slow
def test_the_logits_are_the_same_bits_in_either_memory(monkeypatch):
    if not SMOLLM2.exists():
        pytest.skip(f"{SMOLLM2.name} not fetched")
    from tokenwalk.native.engine import Engine

    def run():
        engine = Engine(SMOLLM2, ctx_tokens=256)
        if not engine.dev.is_cpu:
            pytest.skip("huge-page buffers are for CPU devices")
        out = [engine.prefill(list(range(20, 60)))]
        token = int(np.argmax(out[0]))
        for i in range(4):
            out.append(engine.decode(token, 40 + i).copy())
            token = int(np.argmax(out[-1]))
        return np.array(out)

    ours = run()
    monkeypatch.setenv("TOKENWALK_NO_HUGE_PAGES", "1")
    assert np.array_equal(run(), ours)
