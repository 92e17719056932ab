"""``anima bench asr``: the speech recognizers and the phrases they are given."""
