"""The end of a turn: when the silence after speech ends the request (``listen.turn``).

::

    detector.py  TurnDetector, the protocol; SilenceTurn (turn: silence); turn_for
    cues.py      CuesTurn: the words and the voice's pitch (turn: cues, the default)
    prosody.py   the pitch tracker and the level of a frame
    text.py      what the words so far say of the end (complete, or "and", "the", "um"…)
"""
