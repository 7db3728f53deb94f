"""The package version (read by the build, written into every saved file)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
