"""End-to-end tests against real inference engines (a package, so its conftest does not shadow tests/conftest.py)."""
