"""``anima serve`` as a user runs it: its start, and its loop under attack."""
