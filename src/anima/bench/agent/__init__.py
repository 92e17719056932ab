"""``anima bench agent``: the voice agent's latencies (listening, planning, interrupt)."""
