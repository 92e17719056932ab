"""Azure Speech (the ``azure`` extra): the engine, its SSML and credentials, and the small SDK
seam tests replace."""
