"""``anima bench budget``: idle CPU, memory, start → first tick and the loop during a decode —
issue 34's budget for a robot's small computer, measured in one run (see :mod:`.report`)."""
