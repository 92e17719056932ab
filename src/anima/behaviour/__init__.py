"""Nadine's rules on top of the motion engine: gestures, postures and gaze (the controller), idle
life's full blink, the body language of each phase of the conversation, the gestures annotated
speech plays, easing to rest on exit, and the vocabulary of animations the agent may name."""
