"""The CI quality gate (`evalsuite gate`, docs/gate.md): decide.py judges two runs (or a diff
alone) and holds the command, settings.py reads and checks its thresholds, checks.py holds each
check and the result, power.py says whether the gate could detect the drop it is asked about,
junit.py writes the JUnit report."""
