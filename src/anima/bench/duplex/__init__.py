"""``anima bench duplex``: full duplex in a simulated room, its sets and the loop while talking."""
