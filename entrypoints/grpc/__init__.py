"""Entry points: the gRPC face of memlane, all in this package.

memlane.proto   the MemoryService API; `scripts/gen_grpc.sh` regenerates `_generated/` from it
messages.py     result values <-> proto messages, both ways
servicer.py     MemoryService calls -> the memory manager; the error table; one log line per call
server.py       start-up: listener, TLS, bearer-token auth, health and reflection
client.py       MemlaneClient, returning the same values the manager returns
"""
