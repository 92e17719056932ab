"""Piper, the neural TTS engine (the ``speech`` extra): the engine, its voice with per-symbol
alignments, and the phoneme marks made of them."""
