"""Typed, frozen configuration, loaded from YAML and the environment at the edge.

Every section is a keyword-only frozen dataclass validated in ``__post_init__``. Loading::

    cfg = load_config("anima.yaml")          # file values over defaults
    ANIMA_MOTION__RATE_HZ=50 anima serve     # environment over file: ANIMA_<SECTION>__<KEY>

Environment values are parsed as YAML scalars (``50``, ``true``, ``[2, 5]``). Unknown keys and
wrong types are errors that name the key (``motion.rate_hz``) and where it came from.
"""

from anima.config.loading import from_dict, load_config
from anima.config.sections import (
    ENV_PREFIX,
    PLANNER_TYPES,
    AgentConfig,
    AnimaConfig,
    AnimationConfig,
    BehaviourConfig,
    BlinkConfig,
    BodyConfig,
    BreathingConfig,
    DriverConfig,
    HumanoidConfig,
    MotionConfig,
    MqttConfig,
    ServeConfig,
    SpeechConfig,
    WebConfig,
)
from anima.listening.config import ListenConfig

__all__ = [
    "ENV_PREFIX",
    "PLANNER_TYPES",
    "AgentConfig",
    "AnimaConfig",
    "AnimationConfig",
    "BehaviourConfig",
    "BlinkConfig",
    "BodyConfig",
    "BreathingConfig",
    "DriverConfig",
    "HumanoidConfig",
    "ListenConfig",
    "MotionConfig",
    "MqttConfig",
    "ServeConfig",
    "SpeechConfig",
    "WebConfig",
    "from_dict",
    "load_config",
]
