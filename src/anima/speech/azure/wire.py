"""What anima sends to Azure Speech: the credentials, the SSML, and the offset unit.

Key and region come from ``AZURE_SERVICE_KEY`` / ``AZURE_SERVICE_REGION``, in the environment or
a ``.env`` file (the environment wins; a tiny reader here, no dotenv dependency). One SSML
document per utterance, as Nadine's AzureTTS sends it::

    <speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis"
           xmlns:mstts="https://www.w3.org/2001/mstts" xml:lang="en-US">
      <voice name="en-US-JennyMultilingualV2Neural">
        <mstts:viseme type="redlips_front"/>
        <mstts:express-as style="whisper" styledegree="1">
          <prosody rate="-10%">Hello</prosody>
        </mstts:express-as>
      </voice>
    </speak>

(on one line, without the indentation). Azure reports audio offsets in 100-ns ticks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from anima.errors import SpeechError

KEY_VAR = "AZURE_SERVICE_KEY"
REGION_VAR = "AZURE_SERVICE_REGION"
DEFAULT_VOICE = "en-US-JennyMultilingualV2Neural"
TICKS_PER_SECOND = 10_000_000  # Azure audio offsets are in 100-ns ticks
_ESCAPES = {'"': "&quot;", "'": "&apos;"}  # escape() already does & < >


@dataclass(frozen=True)
class AzureCredentials:
    key: str = field(repr=False)  # a secret: never in logs or reprs
    region: str  # e.g. "westeurope"


def read_env_file(path: str | Path) -> dict[str, str]:
    """Read ``NAME=value`` lines (``export``, quotes and ``#`` comments allowed); {} if absent."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    values: dict[str, str] = {}
    for raw in lines:
        line = raw.strip().removeprefix("export ").strip()
        name, sep, value = line.partition("=")
        if line.startswith("#") or not sep:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].rstrip()
        values[name.strip()] = value
    return values


def load_credentials(environ: Mapping[str, str], env_file: str | Path | None) -> AzureCredentials:
    """Key and region from ``environ``, else ``env_file``; a SpeechError names what is missing."""
    from_file = read_env_file(env_file) if env_file is not None else {}
    key = environ.get(KEY_VAR) or from_file.get(KEY_VAR)
    region = environ.get(REGION_VAR) or from_file.get(REGION_VAR)
    if not key or not region:
        missing = [n for n, v in ((KEY_VAR, key), (REGION_VAR, region)) if not v]
        where = f" or in {Path(env_file).resolve()}" if env_file is not None else ""
        raise SpeechError(
            f"azure: set {KEY_VAR} and {REGION_VAR} in the environment{where} "
            f"(missing: {', '.join(missing)})"
        )
    return AzureCredentials(key=key, region=region)


def build_ssml(
    text: str,
    *,
    locale: str,
    voice: str,
    rate: str = "-10%",
    style: str = "whisper",
    style_degree: float = 1.0,
    viseme_type: str = "redlips_front",
) -> str:
    """The SSML document for one utterance; text and attribute values are XML-escaped."""

    def attr(value: str) -> str:
        return escape(value, _ESCAPES)

    return (
        '<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" '
        f'xmlns:mstts="https://www.w3.org/2001/mstts" xml:lang="{attr(locale)}">'
        f'<voice name="{attr(voice)}"><mstts:viseme type="{attr(viseme_type)}"/>'
        f'<mstts:express-as style="{attr(style)}" styledegree="{style_degree:g}">'
        f'<prosody rate="{attr(rate)}">{escape(text, _ESCAPES)}</prosody>'
        "</mstts:express-as></voice></speak>"
    )


def ticks_to_samples(ticks: int, sample_rate: int) -> int:
    """An Azure audio offset (100-ns ticks) as a sample index, rounded to nearest."""
    return (ticks * sample_rate + TICKS_PER_SECOND // 2) // TICKS_PER_SECOND
