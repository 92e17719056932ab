"""``anima bench conversation``: the voice pipeline end to end, its people, judge and figures."""
