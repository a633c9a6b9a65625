cd /work/wt/foreign
date
nice -n 10 .venv/bin/python -m bench run lme_pooled --modes hybrid --work-dir /work/wt/foreign/bench/work --max-results 6 --data-root /work/shared/data --no-plots --config '{"query":{"relevanceFloor":0}}'
date
nice -n 10 .venv/bin/python -m bench run locomo --modes hybrid --work-dir /work/wt/foreign/bench/work --max-results 6 --data-root /work/shared/data --no-plots --config '{"query":{"relevanceFloor":0}}'
date
