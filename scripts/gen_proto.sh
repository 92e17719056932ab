#!/usr/bin/env bash
# Regenerate the committed Python stubs of the adam_control proto (anima.humanoid).
#
# Needs grpcio-tools (in the dev extra). The generated code checks the protobuf runtime at import
# and refuses one older than the generator's, so after regenerating with a newer grpcio-tools
# raise the grpcio/protobuf floors of the grpc extra in pyproject.toml (the script prints them).
#
# The proto is compiled from src/ so the generated gRPC module imports its messages as
# anima.humanoid.adam_control_pb2 (the default bare import would break inside the package).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
OUT=src/anima/humanoid

"$PY" -m grpc_tools.protoc \
  -I src \
  --python_out=src \
  --pyi_out=src \
  --grpc_python_out=src \
  anima/humanoid/adam_control.proto

echo "generated $OUT/adam_control_pb2.py, .pyi and adam_control_pb2_grpc.py with $("$PY" -m grpc_tools.protoc --version)"
# the floors the generated code itself checks at import
protobuf_min=$(sed -n 's/^# Protobuf Python Version: //p' "$OUT/adam_control_pb2.py")
grpcio_min=$(sed -n "s/^GRPC_GENERATED_VERSION = '\(.*\)'/\1/p" "$OUT/adam_control_pb2_grpc.py")
echo "pin in pyproject.toml at least: grpcio>=$grpcio_min, protobuf>=$protobuf_min"
