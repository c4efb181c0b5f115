#!/usr/bin/env bash
# The bilstm-crf on one CUDA GPU and on the CPU, side by side (benchmarks/gpu_bilstm.py).
# Run from the repository root on a machine with a GPU; installs nothing. Results in $OUT.
#   OUT=/some/dir bash benchmarks/gpu_bilstm.sh ['{"pretrained_vectors": "glove"}']
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-bilstm-results}"
mkdir -p "$OUT"
CORPUS=../shared/corpora/physionet-dev
[ -f "$CORPUS/id.text" ] || [ ! -f shared/corpora/physionet-dev/id.text ] || CORPUS=shared/corpora/physionet-dev
if [ ! -f "$CORPUS/id.text" ]; then
    echo "gpu_bilstm: no corpus at $(cd .. && pwd)/shared/corpora/physionet-dev (put physionet-dev there, beside the repository)" >&2
    exit 2
fi
PY="${PYTHON:-python}"
if ! CUDA=$("$PY" -c "import torch; print(torch.cuda.is_available())" 2>&1); then
    echo "gpu_bilstm: torch cannot be imported by $PY: $CUDA" >&2
    exit 3
fi
if [ "$CUDA" != "True" ]; then
    "$PY" -c "import torch; print('gpu_bilstm: no CUDA here: torch', torch.__version__, 'CUDA build:', torch.version.cuda or 'none (CPU-only build)', '- devices:', torch.cuda.device_count())" >&2
    exit 3
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1 || true
OPTIONS="${1:-{\}}"
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" timeout 345 "$PY" benchmarks/gpu_bilstm.py \
    --corpus "$CORPUS" --out "$OUT" --options "$OPTIONS" --max-seconds 150 2>&1 | tee "$OUT/gpu_bilstm.log"
exit "${PIPESTATUS[0]}"
