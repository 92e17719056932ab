"""Benchmarks behind ``anima bench``: they print figures; no unit test asserts timings.

One sub-package per family, each family's runner named after it (``wake/wake.py``), what the
benchmarks share at the top::

    motion/        loop, tick                 the 100 Hz loop and the fused tick
    drivers/       serial, reachy             a pty servo board; Pollen's Reachy Mini daemon
    serve/         serve, hostile             ``anima serve`` as a subprocess, calm and attacked
    speech/        speech, gestures           TTS timing, lips, sway; gestures timed to words
    doors/         mqtt, grpc, mcp, web       the front doors' latencies and floods
    agent/         agent, interrupt, listen   the voice agent's stages
    asr/ wake/ turn/                          recognizers, the wake phrase, end of turn
    conversation/  people speaking to the real agent: voices, rooms, judge, figures
    duplex/        full duplex in a simulated room, and the loop while talking
    measure.py, scene.py, timed_driver.py     percentiles and memory; the all-layers scene;
                                              a driver that times each frame
"""
