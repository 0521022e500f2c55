"""Sampled runs (`evalsuite run --samples N`, docs/sampling.md): estimators.py holds avg@N,
pass@k, maj@N and the paired rates (pure functions over records), compare.py runs `compare` and
`gate` on sampled runs, report.py builds `evalsuite report`'s page for them."""
