"""evalsuite: does your LLM endpoint still give the right answers?"""
__version__ = "0.1.0"
