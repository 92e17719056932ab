"""eSpeak NG through libespeak-ng (ctypes): the engine and the library's ABI."""
