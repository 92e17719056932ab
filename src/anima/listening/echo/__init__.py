"""Full duplex: the robot's own voice taken out of its microphone (``listen.echo``).

::

    canceller.py  EchoCanceller, the protocol; WebRTC's AEC3, none; the residual-echo guard
    source.py     EchoCancelledSource: a source with both in front of it
"""
