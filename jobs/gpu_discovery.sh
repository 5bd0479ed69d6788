#!/usr/bin/env bash
# Spark GPU discovery script (spark.executor.resource.gpu.discoveryScript): prints the
# executor's GPUs as Spark's ResourceInformation JSON, e.g. {"name":"gpu","addresses":["0","1"]}.
# Ship it with the job (spark-submit --files jobs/gpu_discovery.sh) and name it by its file name;
# docs/operations.md has the full spark-submit line. No GPU (or no nvidia-smi): an empty list;
# Spark then refuses to start an executor that was promised a GPU: a misconfigured node fails loudly.
set -euo pipefail
addresses=""
if command -v nvidia-smi >/dev/null 2>&1; then
  addresses=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | tr -d ' ' | grep -E '^[0-9]+$' \
              | sed 's/.*/"&"/' | paste -sd, - || true)
fi
printf '{"name":"gpu","addresses":[%s]}\n' "$addresses"
