"""The C interface of eSpeak NG (``speak_lib.h``, API revision 12) that anima uses via ctypes.

Layouts are for the LP64 ABI (64-bit Linux), checked against the header of Debian's
``libespeak-ng-dev`` 1.51 with ``offsetof``/``sizeof``::

    espeak_EVENT (40 bytes)                 espeak_VOICE (40 bytes)
      0  int   type                           0  const char *name
      4  uint  unique_identifier              8  const char *languages
      8  int   text_position                 16  const char *identifier
     12  int   length                        24  uchar gender, age, variant, xx1
     16  int   audio_position (ms)           28  int   score
     20  int   sample (from the synth start) 32  void *spare
     24  void *user_data
     32  union id (8 bytes): int number | const char *name | char string[8]

``id.string`` holds a phoneme name as UTF-8, NUL-terminated unless it needs all 8 bytes. The
synth callback is ``int cb(short *wav, int numsamples, espeak_EVENT *events)``: ``events`` ends
with an event of type ``EVENT_LIST_TERMINATED``; returning 1 aborts the synthesis.
"""

from __future__ import annotations

import ctypes

# espeak_AUDIO_OUTPUT
AUDIO_OUTPUT_SYNCHRONOUS = 2

# espeak_Initialize options
INITIALIZE_PHONEME_EVENTS = 0x0001
INITIALIZE_PHONEME_IPA = 0x0002
INITIALIZE_DONT_EXIT = 0x8000  # return an error instead of calling exit() on missing data

# espeak_EVENT_TYPE
EVENT_LIST_TERMINATED = 0
EVENT_WORD = 1
EVENT_SENTENCE = 2
EVENT_END = 5
EVENT_PHONEME = 7

# espeak_Synth: position type and flags
POS_CHARACTER = 1
CHARS_UTF8 = 1
ENDPAUSE = 0x1000  # add a sentence pause after the text

# espeak_PARAMETER
RATE = 1  # words per minute, 80–450
PITCH = 3  # base pitch, 0–100 (50 normal)

# espeak_ERROR
EE_OK = 0
EE_NOT_FOUND = 2


class EventId(ctypes.Union):
    _fields_ = (
        ("number", ctypes.c_int),
        ("name", ctypes.c_char_p),
        ("string", ctypes.c_char * 8),
    )


class Event(ctypes.Structure):
    _fields_ = (
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", EventId),
    )


class Voice(ctypes.Structure):
    _fields_ = (
        ("name", ctypes.c_char_p),
        # when listing: (priority byte, NUL-terminated name)*, then a 0 byte; as a selector: a name
        ("languages", ctypes.c_void_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    )


# wav is declared as a plain address so the callback can copy it with ctypes.string_at
SYNTH_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(Event)
)


def bind(lib: ctypes.CDLL) -> None:
    """Declare the prototypes of the functions anima calls (ctypes would guess them wrong)."""
    c_int, c_uint, c_void_p = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p
    lib.espeak_Initialize.argtypes = (c_int, c_int, ctypes.c_char_p, c_int)
    lib.espeak_Initialize.restype = c_int
    lib.espeak_SetSynthCallback.argtypes = (SYNTH_CALLBACK,)
    lib.espeak_SetSynthCallback.restype = None
    lib.espeak_Synth.argtypes = (
        c_void_p, ctypes.c_size_t, c_uint, c_int, c_uint, c_uint, c_void_p, c_void_p
    )  # fmt: skip
    lib.espeak_Synth.restype = c_int
    lib.espeak_SetVoiceByProperties.argtypes = (ctypes.POINTER(Voice),)
    lib.espeak_SetVoiceByProperties.restype = c_int
    lib.espeak_SetParameter.argtypes = (c_int, c_int, c_int)
    lib.espeak_SetParameter.restype = c_int
    lib.espeak_ListVoices.argtypes = (ctypes.POINTER(Voice),)
    lib.espeak_ListVoices.restype = ctypes.POINTER(ctypes.POINTER(Voice))
    lib.espeak_Terminate.argtypes = ()
    lib.espeak_Terminate.restype = c_int


def languages(lib: ctypes.CDLL) -> frozenset[str]:
    """Every language tag (lower case, e.g. ``en-us``, ``de``) some installed voice speaks."""
    found: set[str] = set()
    voices = lib.espeak_ListVoices(None)
    i = 0
    while voices[i]:
        address = voices[i].contents.languages
        while address and ctypes.string_at(address, 1) != b"\0":  # the priority byte
            name = ctypes.string_at(address + 1)
            found.add(name.decode("ascii", "replace").lower())
            address += len(name) + 2
        i += 1
    return frozenset(found)
