"""The lossless check: did a serving change (speculation, a kernel, a KV dtype) change greedy outputs?

One way down: command (the `diff` and `lossless` commands) -> rescore (the one part that calls a
server), html -> runs (two runs) -> classify (one item) -> tokens (the token model); speed (the candidate's
speed-up on the same requests, beside the verdict) reads the two runs' records. Nothing here
but command and rescore reaches above the analyses. docs/lossless.md explains the method.
"""
