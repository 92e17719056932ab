"""Recorded sessions: the dashboard's messages in a JSON Lines file, and plots of them."""
