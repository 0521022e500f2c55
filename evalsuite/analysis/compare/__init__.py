"""`evalsuite compare` (docs/compare.md): comparison.py aligns the runs and assembles the
comparison (with ../run_stats.py and ../paired.py, which the gate and the report share),
sweep.py orders runs by one setting (--sweep KEY), tables.py prints it and holds the command."""
