#!/usr/bin/env bash
# Regenerate the gRPC Python code (messages, stubs, typing stubs) from entrypoints/grpc/memlane.proto.
# Needs the dev extras (grpcio-tools, mypy-protobuf); the output is committed, so run this only after
# editing the .proto, then commit both.
# Only _generated/ is rewritten; the hand-written modules beside the .proto (messages.py,
# servicer.py, server.py, client.py) are not touched.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
BIN="$(dirname "$PY")"
OUT=entrypoints/grpc/_generated
PKG=memlane.entrypoints.grpc._generated

rm -f "$OUT"/memlane_pb2*.py "$OUT"/memlane_pb2*.pyi
# protoc-gen-mypy / protoc-gen-mypy_grpc are found on PATH, next to the interpreter.
PATH="$BIN:$PATH" "$PY" -m grpc_tools.protoc \
  --proto_path=entrypoints/grpc \
  --python_out="$OUT" --grpc_python_out="$OUT" \
  --mypy_out="$OUT" --mypy_grpc_out="$OUT" \
  entrypoints/grpc/memlane.proto
# protoc writes top-level imports (`import memlane_pb2`); the package needs absolute ones.
sed -i -E "s/^import memlane_pb2( as |$)/from $PKG import memlane_pb2\1/" \
  "$OUT/memlane_pb2_grpc.py" "$OUT/memlane_pb2_grpc.pyi"
echo "generated: $(ls "$OUT"/memlane_pb2* | tr '\n' ' ')"
