set -e
cd /work/wt/foreign
date
nice -n 10 .venv/bin/python -m bench.foreign collect scifact:locomo lme_pooled:locomo xquad_zh:locomo locomo:xquad_zh scifact:xquad_zh locomo:lme_pooled scifact:lme_pooled --limit 300 --work-dir /work/wt/foreign/bench/work --legs-dir /work/wt/foreign/bench/work --data-root /work/shared/data
date
nice -n 10 .venv/bin/python -m bench.foreign collect lme_pooled locomo xquad_zh --limit 100000 --work-dir /work/wt/foreign/bench/work --legs-dir /work/wt/foreign/bench/work --data-root /work/shared/data
date
