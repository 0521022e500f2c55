"""The end-of-run check that a greedy run decoded greedily, for the engines whose neutral
settings this package does not know."""
from __future__ import annotations

import sys
from typing import Any, Mapping

from ..store.tokens import not_top1_count, not_top1_in_columns


class GreedyCheck:
    """Counts, over a run's records, the emitted tokens that were not the server's own top-1
    (records with logprobs only), and says so at the end of a greedy run."""

    def __init__(self) -> None:
        self.tokens = self.not_top1 = self.items = 0

    def add(self, record: Mapping[str, Any], tokens: Any = None) -> None:
        """`tokens`: the record's token stream as the client collected it (store.TokenColumns),
        or None to read an inline `record["logprobs"]` list."""
        if tokens is not None and hasattr(tokens, "to_arrow"):
            n_tokens, n = len(tokens), not_top1_in_columns(tokens.to_arrow()) if len(tokens) else 0
        else:

            entries = tokens if tokens is not None else record.get("logprobs")
            n_tokens, n = len(entries or ()), not_top1_count(entries) if entries else 0
        self.tokens += n_tokens
        self.not_top1 += n
        self.items += n > 0

    def warning(self) -> str | None:
        if not self.not_top1:
            return None
        return (f"warning: {self.not_top1} of {self.tokens} generated tokens (in {self.items} items) were not the "
                f"server's own top-1 choice: this run did not decode greedily, and `evalsuite diff` will mark those "
                f"items not_greedy. Set the engine's neutral sampler settings, e.g. --extra-body "
                f"'{{\"repeat_penalty\": 1.0}}' (llama-cpp-python) or '{{\"repetition_penalty\": 1.0}}' (vLLM, SGLang).")

    def warn(self, stream: Any = None) -> None:
        text = self.warning()
        if text:
            print(text, file=stream or sys.stderr)

