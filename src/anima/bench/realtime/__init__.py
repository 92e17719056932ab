"""``anima bench realtime`` (issue 33): a realtime model as anima's brain and voice, timed."""
