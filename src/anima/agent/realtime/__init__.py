"""The realtime brain: anima as the body of a speech-to-speech model speaking the OpenAI
Realtime GA protocol (OpenAI, Azure, a local speech-to-speech server; docs/realtime.md).

``agent.planner.type: openai_realtime`` makes :func:`build_realtime_agent` the runtime's agent
instead of the conversation: the microphone streamed to the model, its voice played through
the speech service, its tool calls run as validated plans, exact barge-in. ::

    protocol.py    the wire: events sent and read, their limits
    tools.py       the action registry as tools; a call as a plan of one step
    connection.py  the socket's reader and writer threads, reconnect with backoff
    session.py     what each server event does: responses, the voice, tool calls, barge-in
    duplex.py      the person's turns by the duplex rules: stop words, held voice, backchannels
    agent.py       RealtimeAgent (the Part), the microphone
    assembly.py    build_realtime_agent: from the config (the key, the source)

``websockets`` (the ``realtime`` extra) is imported when the agent is prepared.
"""

from anima.agent.realtime.agent import RealtimeAgent
from anima.agent.realtime.assembly import build_realtime_agent

__all__ = ["RealtimeAgent", "build_realtime_agent"]
