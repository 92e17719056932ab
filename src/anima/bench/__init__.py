"""Benchmarks behind ``anima bench``: they print figures; no unit test asserts timings."""
