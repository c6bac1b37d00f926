"""The memory budget: what a machine's memory holds once a model is loaded.

Four parts, to scale in figure 22: the system and the user's applications (a measurement
per machine, in its spec: `system_and_apps_bytes`), the weights (the file's bytes), the KV cache reserved
for the whole num_ctx at load time, used or not, as llama.cpp allocates it (sliding-window
layers: their window plus a micro-batch, see kv_cache.kv_reservation_bytes), and what is left free. On the laptop's
64 GB with Qwen3.6 Q4_K_M and an f16 cache: 32 GB + 21.7 GB + 336 MB at num_ctx 16,384,
about 10 GB free; 5.4 GB of cache at 262,144, about 5 GB free.

Units: bytes (GB = 1e9 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.physics.kv_cache import kv_reservation_bytes

GB = 1e9


def system_bytes(machine) -> float:
    """Bytes the system and apps hold on `machine` before a model loads: its spec's
    measured `system_and_apps_bytes`; a machine without one (a server GPU with its own
    memory) is taken as empty."""
    return float(machine.system_and_apps_bytes or 0.0)


@dataclass(frozen=True)
class MemoryBudget:
    """A machine's memory split into system, weights, KV cache and free (bytes)."""

    total_bytes: float
    system_bytes: float
    weights_bytes: float
    kv_cache_bytes: float

    @property
    def used_bytes(self) -> float:
        return self.system_bytes + self.weights_bytes + self.kv_cache_bytes

    @property
    def free_bytes(self) -> float:
        """What is left; negative when the parts do not fit."""
        return self.total_bytes - self.used_bytes

    @property
    def fits(self) -> bool:
        return self.free_bytes >= 0

    def parts(self) -> list[tuple[str, float]]:
        """(name, bytes) in drawing order: system, weights, kv_cache, free (free >= 0)."""
        return [("system", self.system_bytes), ("weights", self.weights_bytes),
                ("kv_cache", self.kv_cache_bytes), ("free", max(self.free_bytes, 0.0))]

    def to_dict(self) -> dict:
        return {"total_bytes": self.total_bytes, "system_bytes": self.system_bytes,
                "weights_bytes": self.weights_bytes, "kv_cache_bytes": self.kv_cache_bytes,
                "free_bytes": self.free_bytes, "fits": self.fits}


def memory_budget(model, machine, num_ctx: int, kv_type: str = "f16", system: float | None = None) -> MemoryBudget:
    """The budget of `machine` with `model` loaded and a cache reserved for `num_ctx` tokens.

    `system` overrides the measured system-and-apps bytes.
    """
    return MemoryBudget(
        total_bytes=machine.memory_gb * GB,
        system_bytes=system_bytes(machine) if system is None else float(system),
        weights_bytes=float(model.size_bytes),
        kv_cache_bytes=kv_reservation_bytes(model, num_ctx, kv_type),
    )
