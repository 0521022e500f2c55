"""Prompts of a given size in the server's own tokens, fresh text every time.

A request of depth D and prompt size P should make the server process D + P prompt tokens
(usage.prompt_tokens, chat template included). The text comes from the workload's corpus
(text.py), read on from a cursor that never goes back, and every prompt starts with its own
numbered line (with the profile's own random mark), so no two prompts of a profile, nor of two
profiles of the same server, share a prefix a cache could serve (prefix caches
match from the first token: vLLM by blocks of 16, llama-server by the longest common prefix).

Sizes come from the server:
- with `/tokenize` (llama-server, vLLM): the text is cut at exactly the wanted number of the
  server's tokens (`/detokenize` of the first N ids; where there is no /detokenize, the cut is
  searched on characters), and the chat template's own tokens are found once, from the usage
  of a first request less the tokens of its text;
- without it: two first requests (a short and a longer text) give tokens per character and the
  template's tokens from their usage, and texts are cut by characters. The figures reported are
  always the server's usage, whatever the sizing.
"""
from __future__ import annotations

from dataclasses import dataclass

from .text import Corpus

SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Prompt:
    content: str           # the whole user message (or completions prompt)
    context: str           # its first part, the depth (what --prefix-cache loads first)
    target_tokens: int     # depth + pp, what usage.prompt_tokens should say


class Counter:
    """The server's token counts of a text: /tokenize, or a per-character rate from usage."""

    def __init__(self, endpoint, model: str):
        self.endpoint, self.model = endpoint, model
        self.exact: bool | None = None          # None: not asked yet
        self.chars_per_token = 4.0              # replaced by the calibration (never used for a figure)
        self.template_tokens = 0                # the chat template's (or BOS) tokens around a message
        self.has_detokenize = True

    async def ids(self, text: str) -> list[int] | None:
        if self.exact is False:
            return None
        ids = await self.endpoint.tokenize(text, self.model)
        if self.exact is None:
            self.exact = ids is not None
        return ids

    async def count(self, text: str) -> int:
        ids = await self.ids(text)
        if ids is not None:
            return len(ids)
        return max(0, round(len(text) / self.chars_per_token))

    async def cut(self, text: str, n: int) -> str:
        """The first n tokens of `text` (all of it when it has fewer)."""
        if n <= 0:
            return ""
        ids = await self.ids(text)
        if ids is None:
            return text[: max(1, round(n * self.chars_per_token))]
        if len(ids) <= n:
            return text
        if self.has_detokenize:
            out = await self.endpoint.detokenize(ids[:n], self.model)
            if out is not None and text.startswith(out[: max(1, len(out) - 8)]):
                return out
            self.has_detokenize = False   # or it does not give the text back as it was
        lo, hi = 0, len(text)                 # the longest prefix with at most n tokens
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if await self.count(text[:mid]) <= n:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    async def calibrate(self, measure) -> None:
        """`measure(text) -> usage prompt tokens` (a 1-token request); sets the template's tokens
        and, without /tokenize, the characters per token."""
        short = "Count these words, please."
        ids = await self.ids(short)
        first = await measure(short)
        if first is None:
            return
        if ids is not None:
            self.template_tokens = max(0, first - len(ids))
            return
        longer = (short + " ") * 40
        second = await measure(longer)
        if second is None or second <= first:
            return
        self.chars_per_token = (len(longer) - len(short)) / (second - first)
        self.template_tokens = max(0, round(first - len(short) / self.chars_per_token))


class PromptMaker:
    """The prompts of one workload, each from text no earlier prompt of the profile used."""

    def __init__(self, corpus: Corpus, counter: Counter, seed: int = 0, fresh: bool = True):
        import secrets

        self.corpus, self.counter, self.fresh = corpus, counter, fresh
        # this profile's own mark in every first line: the same --seed gives the same text, and a
        # second profile of the same server (a benchmark round, spec off then on) must not find
        # the first one's prompts in the server's cache (llama-server keeps each slot's last one)
        self.mark = secrets.token_hex(3) if fresh else "0"
        self.number = 0
        self.cursor = seed * 7919 % max(1, len(corpus.passages))
        self.task_cursor = seed * 104729 % max(1, len(corpus.tasks))

    def _stream(self, chars: int) -> str:
        """Passages from the cursor on, at least `chars` characters; the cursor moves past them."""
        passages = self.corpus.passages
        start, parts, size = self.cursor, [], 0
        n = start
        while size < chars:
            text = passages[n % len(passages)]
            parts.append(text)
            size += len(text) + len(SEPARATOR)
            n += 1
            if n - start > 100_000:   # a corpus of empty passages: nothing more to add
                break
        if self.fresh:
            self.cursor = n % len(passages)
        return SEPARATOR.join(parts)

    async def _text_of(self, tokens: int, header: str) -> str:
        """`header` and the corpus's text after it, cut at `tokens` tokens."""
        if tokens <= 0:
            return ""
        chars = int(tokens * max(self.counter.chars_per_token, 1.0) * 1.5) + 256
        while True:
            text = header + self._stream(chars)
            have = await self.counter.count(text)
            if have >= tokens or chars > 64 * (tokens + 100) * 8:
                return await self.counter.cut(text, tokens)
            chars *= 2

    async def passage_text(self, tokens: int) -> str:
        """The corpus's next text, `tokens` of the server's tokens (a synthetic session's turns)."""
        return await self._text_of(tokens, "")

    async def next(self, depth: int, pp: int) -> Prompt:
        self.number += 1
        number = self.number if self.fresh else 1
        task = self.corpus.tasks[self.task_cursor % len(self.corpus.tasks)]
        if self.fresh:
            self.task_cursor += 1
        template = self.counter.template_tokens
        header = f"Document {number} ({self.mark}).\n"
        context = await self._text_of(depth, header) if depth else ""
        task_tokens = await self.counter.count(SEPARATOR + task)
        body = pp - template - task_tokens
        if body <= 0:   # a prompt too short for the whole task: its first tokens
            tail = await self.counter.cut(("" if context else header) + task, max(1, pp - template))
        else:
            tail = (await self._text_of(body, "" if context else header)) + SEPARATOR + task
            if context:
                tail = SEPARATOR + tail
        return Prompt(content=context + tail, context=context, target_tokens=depth + pp)
