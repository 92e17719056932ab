"""The drivers' benches: the serial servo board on a pty and Pollen's Reachy Mini daemon."""
