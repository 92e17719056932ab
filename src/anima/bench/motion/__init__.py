"""The 100 Hz loop's benches: ``anima bench loop`` and ``anima bench tick``."""
