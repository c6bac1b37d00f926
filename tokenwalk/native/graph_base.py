"""What every architecture's graph (graph_llama.py, graph_gemma3.py) shares: the prefill
launch lists kept per chunk length, and the buffer for every position's logits.

A graph subclass sets ``device``, ``config``, ``pad_tokens``, ``all_logits = None`` and
``_prefill = {}`` in its constructor and builds a chunk's launches in ``_prefill_launches``.
"""

from __future__ import annotations


class GraphBase:
    """Shared parts of the forward-pass graphs (see the module docstring)."""

    def all_logits_buffer(self):
        """The (pad_tokens, vocab) float32 buffer for every position's logits, made on first use."""
        if self.all_logits is None:
            self.all_logits = self.device.empty(self.pad_tokens * self.config.vocab_size * 4)
        return self.all_logits

    def prefill_launches(self, ntok: int, logits_all: bool = False, head: bool = True) -> list:
        """The launches of one prefill chunk of ``ntok`` tokens (arguments set once; the list is
        kept and reused for every later chunk of the same length: positions come from ``state``).
        ``head``: end with the last token's logits (a prompt's last chunk; earlier chunks skip the
        head, on Gemma 3 a 178 MB product)."""
        key = (int(ntok), bool(logits_all), bool(head or logits_all))
        if key not in self._prefill:
            if len(self._prefill) >= 4:  # a prompt's chunks: full ones without the head, the last with it
                self._prefill.clear()
            self._prefill[key] = self._prefill_launches(*key)
        return self._prefill[key]

    def _prefill_launches(self, ntok: int, logits_all: bool, head: bool) -> list:
        raise NotImplementedError
