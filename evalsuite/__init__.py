"""evalsuite: does your LLM endpoint still give the right answers?"""
__version__ = "0.1.0"

# The Python API (evalsuite/api.py, docs/api.md), imported on first use: `import evalsuite`
# and `evalsuite --help` stay instant.
_API = ("open_run", "compare", "gate", "diff", "discordant", "RunData")


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'evalsuite' has no attribute {name!r}")
