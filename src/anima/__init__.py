"""anima: a runtime that makes expressive robots come alive."""

__version__ = "0.1.0"
