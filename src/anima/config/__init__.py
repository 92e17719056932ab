"""Typed, frozen configuration, loaded from YAML and the environment at the edge.

Every section is a keyword-only frozen dataclass validated in ``__post_init__``. Loading::

    cfg = load_config("anima.yaml")          # file values over defaults
    ANIMA_MOTION__RATE_HZ=50 anima serve     # environment over file: ANIMA_<SECTION>__<KEY>

Environment values are read as the key's type wants: text for a string key (``::`` stays
``::``), YAML for the rest (``50``, ``1e3``, ``true``, ``[2, 5]``). Unknown keys, wrong types and
out-of-bounds values are one-line errors naming the key, where it came from (``anima.yaml:12``,
``environment ANIMA_WEB__HOST``) and a short excerpt of the value.
"""

from anima.config.body_language import BodyLanguageConfig
from anima.config.bounds import ENV_PREFIX
from anima.config.drivers import (
    DriverConfig,
    ReachyMiniDriverConfig,
    SerialDriverConfig,
    SimDriverConfig,
)
from anima.config.listening import ListenConfig
from anima.config.loading import from_dict, load_config, with_changes
from anima.config.mcp import McpConfig
from anima.config.planner import (
    DifyPlannerConfig,
    OpenAIPlannerConfig,
    PlannerConfig,
    RulesPlannerConfig,
)
from anima.config.sections import (
    PLANNER_TYPES,
    AgentConfig,
    AnimaConfig,
    AnimationConfig,
    BehaviourConfig,
    BlinkConfig,
    BodyConfig,
    BreathingConfig,
    HumanoidConfig,
    MotionConfig,
    MqttConfig,
    ServeConfig,
    WebConfig,
)
from anima.config.speech import SpeechConfig
from anima.config.vision import AttentionConfig, VisionConfig

__all__ = [
    "ENV_PREFIX",
    "PLANNER_TYPES",
    "AgentConfig",
    "AnimaConfig",
    "AnimationConfig",
    "AttentionConfig",
    "BehaviourConfig",
    "BlinkConfig",
    "BodyConfig",
    "BodyLanguageConfig",
    "BreathingConfig",
    "DifyPlannerConfig",
    "DriverConfig",
    "HumanoidConfig",
    "ListenConfig",
    "McpConfig",
    "MotionConfig",
    "MqttConfig",
    "OpenAIPlannerConfig",
    "PlannerConfig",
    "ReachyMiniDriverConfig",
    "RulesPlannerConfig",
    "SerialDriverConfig",
    "ServeConfig",
    "SimDriverConfig",
    "SpeechConfig",
    "VisionConfig",
    "WebConfig",
    "from_dict",
    "load_config",
    "with_changes",
]
