"""Whisper tiny.en on CTranslate2: the open-vocabulary recognizer and the wake spotter's reader.

::

    asr.py       WhisperAsr, the Recognizer (listen.asr: whisper)
    model.py     the bundled model, the optional imports, one decode's result (Decoded)
    features.py  the log-mel features and the encoded silence that fills the 30 s window
    text.py      the prompt's vocabulary, echoes dropped, other readings
    thread.py    DecodeThread: partial decodes off the listener's thread
    reader.py    WhisperReader: how likely a stretch of audio is the wake phrase (wake: asr)
"""
