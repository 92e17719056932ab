"""Social attention: people tracked from faces and voices, and where the robot looks.

docs/attention.md.
"""
