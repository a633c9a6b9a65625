cd /work/wt/foreign
while kill -0 29301 2>/dev/null; do sleep 5; done
P=".venv/bin/python"
R="--modes hybrid --work-dir /work/wt/foreign/bench/work --max-results 6 --data-root /work/shared/data --no-plots"
date; nice -n 10 $P -m bench run locomo $R
date; nice -n 10 $P -m bench run lme_pooled $R
date; nice -n 10 $P -m bench.foreign run scifact:locomo lme_pooled:locomo xquad_zh:locomo locomo:xquad_zh scifact:xquad_zh locomo:lme_pooled scifact:lme_pooled --work-dir /work/wt/foreign/bench/work --data-root /work/shared/data
date
