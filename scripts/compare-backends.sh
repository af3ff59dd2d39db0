#!/usr/bin/env bash
# Hears every committed fixture recording with CTranslate2's MKL backend off
# and on (CT2_USE_MKL=0/1) and prints the decisions that differ (issue #36,
# item 19; docs/results.md, "Which CPU and backend").
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
F=tests/audio_fixtures/piper-joe
for mkl in 0 1; do
  out=$tmp/backend-$mkl.jsonl; : > $out
  CT2_USE_MKL=$mkl .venv/bin/referee hear --game race65 $F/cmd*.wav $F/talk*.wav $F/word*.wav >> $out 2>/dev/null
  CT2_USE_MKL=$mkl .venv/bin/referee hear --game shut-the-box $F/stb*.wav >> $out 2>/dev/null
  CT2_USE_MKL=$mkl .venv/bin/referee hear --game turn7 $F/t7*.wav --players Ann Bob Cy >> $out 2>/dev/null
  CT2_USE_MKL=$mkl .venv/bin/referee hear --game phase10-twist $F/p10*.wav --players Ann Bob Cy >> $out 2>/dev/null
done
.venv/bin/python - "$tmp" <<'PY'
import json, sys
a=[json.loads(l) for l in open(sys.argv[1] + '/backend-0.jsonl')]
b=[json.loads(l) for l in open(sys.argv[1] + '/backend-1.jsonl')]
assert len(a)==len(b), (len(a),len(b))
def decision(r):  # (who "my" means follows the turn, which an earlier move may have passed)
    return r['text'], {k: v for k, v in r['intent'].items() if k != 'player'}, r['score']
diff=[(x,y) for x,y in zip(a,b) if decision(x) != decision(y)]
print(len(a), "recordings;", len(diff), "decisions differ")
for x,y in diff: print(x['file'], '|', x['text'], x['intent']['kind'], x['score'], '||', y['text'], y['intent']['kind'], y['score'])
PY
