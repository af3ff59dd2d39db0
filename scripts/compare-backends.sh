#!/usr/bin/env bash
# Hears every committed fixture recording in two settings, each in processes of
# its own, and prints the decisions that differ (issue #36, item 19;
# docs/results.md, "Which CPU and backend"). By default the settings are
# CTranslate2's MKL backend off and on (CT2_USE_MKL=0/1); give two other
# environment assignments to compare those, e.g. the same one twice to see
# whether decisions repeat from one process to the next:
#
#   scripts/compare-backends.sh                       # MKL off against on
#   scripts/compare-backends.sh CT2_USE_MKL=0 CT2_USE_MKL=0
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
F=tests/audio_fixtures/piper-joe
settings=("${1:-CT2_USE_MKL=0}" "${2:-CT2_USE_MKL=1}")
for n in 0 1; do
  out=$tmp/run-$n.jsonl; : > $out
  run=(env "${settings[$n]}" .venv/bin/referee hear)
  "${run[@]}" --game race65 $F/cmd*.wav $F/talk*.wav $F/word*.wav >> $out 2>/dev/null
  "${run[@]}" --game shut-the-box $F/stb*.wav >> $out 2>/dev/null
  "${run[@]}" --game turn7 $F/t7*.wav --players Ann Bob Cy >> $out 2>/dev/null
  "${run[@]}" --game phase10-twist $F/p10*.wav --players Ann Bob Cy >> $out 2>/dev/null
done
.venv/bin/python - "$tmp" "${settings[@]}" <<'PY'
import json, sys
a=[json.loads(l) for l in open(sys.argv[1] + '/run-0.jsonl')]
b=[json.loads(l) for l in open(sys.argv[1] + '/run-1.jsonl')]
assert len(a)==len(b), (len(a),len(b))
def decision(r):  # (who "my" means follows the turn, which an earlier move may have passed)
    return r['text'], {k: v for k, v in r['intent'].items() if k != 'player'}, r['score']
diff=[(x,y) for x,y in zip(a,b) if decision(x) != decision(y)]
print(f"{len(a)} recordings; {len(diff)} decisions differ between {sys.argv[2]} and {sys.argv[3]}")
for x,y in diff: print(x['file'], '|', x['text'], x['intent']['kind'], x['score'], '||', y['text'], y['intent']['kind'], y['score'])
PY
