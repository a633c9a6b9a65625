#!/bin/sh
# Fresh processes, alternated (the order flips each round): the modules a CLI search imports
# before its work (memlane.entrypoints.cli, .api, .container), under two interpreters, e.g. this
# checkout's venv and one that runs another commit. One line per process: "<a|b> <ms>".
#   sh bench/import_side_by_side.sh .venv/bin/python /path/to/base/python 12
A=$1; B=$2; ROUNDS=${3:-10}
CODE='import time; t=time.perf_counter(); import memlane.entrypoints.cli, memlane.entrypoints.api, memlane.entrypoints.container; print(round((time.perf_counter()-t)*1000,1))'
for i in $(seq 1 "$ROUNDS"); do
  if [ $((i % 2)) -eq 1 ]; then order="a b"; else order="b a"; fi
  for who in $order; do
    if [ "$who" = a ]; then py=$A; else py=$B; fi
    echo "$who $("$py" -c "$CODE")"
  done
done
