"""Recorded sessions: the dashboard's messages written to a JSON Lines file (its format:
:mod:`anima.wire.session`), and plots of them."""
