"""The words commands are written in, below the commands that read them once.

- :mod:`~anima.language.markup`: speech markup, gestures timed to the words of a text
  (``Hello ^start(wave) there``), read into a :class:`~anima.language.markup.Script`;
- :mod:`~anima.language.names`: animation names as people write them (any case, friendly
  aliases, "did you mean").

Pure text, no I/O: :class:`~anima.commands.Speak`, the wire's parsers, the speech service, the
animation library and the agent all use them, so they sit under each of those floors.
"""
