"""``anima bench speech`` and ``anima bench gestures``: TTS and annotated speech's timing."""
