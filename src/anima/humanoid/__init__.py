"""The Adam humanoid over gRPC: the adam_control proto, a simulated humanoid that serves it, and
a client that queries the robot before it commands it.

The gRPC parts need the ``grpc`` extra (``pip install 'anima[grpc]'``); the FSM does not.
"""
