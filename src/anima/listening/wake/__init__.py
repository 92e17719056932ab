"""Waking the listener: a wake phrase spotted in the audio, or a trigger from outside it.

::

    spotter.py        Spotter, the protocol (listen.wake), and WakeHit
    asr_spotter.py    AsrSpotter: the phrase read by Whisper at each onset (wake: asr)
    keyphrase.py      KeyphraseSpotter: pocketsphinx's keyphrase search (wake: keyphrase)
    trigger.py        WakeTrigger: a key, a button, MQTT
"""
