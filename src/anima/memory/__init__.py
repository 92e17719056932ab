"""What the robot remembers: people's names and what they told it, kept on disk, readable,
editable and erasable by its operator (docs/memory.md)."""
