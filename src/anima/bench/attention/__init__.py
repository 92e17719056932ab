"""The social-attention benches: faces, voice direction, tracking and the attention loop."""
