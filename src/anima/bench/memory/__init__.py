"""``anima bench memory``: recall across restarts, forgetting, and the cost of recall."""
