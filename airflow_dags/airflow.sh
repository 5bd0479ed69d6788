#!/usr/bin/env bash
# Run Airflow (its own virtualenv, .venv-airflow) against this project's DAGs.
#   airflow_dags/airflow.sh dags list
#   airflow_dags/airflow.sh dags test deid_nightly 2026-11-26
# Defaults, each overridable from the environment: AIRFLOW_HOME=build/airflow
# (SQLite metadata database, created on first use), the DAGs folder, no
# example DAGs, and the Spark connection deid_spark in local mode.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
export AIRFLOW_HOME="${AIRFLOW_HOME:-$repo/build/airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="${AIRFLOW__CORE__DAGS_FOLDER:-$here}"
export AIRFLOW__CORE__LOAD_EXAMPLES="${AIRFLOW__CORE__LOAD_EXAMPLES:-False}"
export AIRFLOW__CORE__UNIT_TEST_MODE="${AIRFLOW__CORE__UNIT_TEST_MODE:-False}"
local_spark='{"conn_type": "spark", "host": "local[*]"}'
export AIRFLOW_CONN_DEID_SPARK="${AIRFLOW_CONN_DEID_SPARK:-$local_spark}"
airflow="${DEID_AIRFLOW_VENV:-$repo/.venv-airflow}/bin/airflow"
[ -x "$airflow" ] || { echo "Airflow is not installed: run 'make airflow-setup'" >&2; exit 1; }
mkdir -p "$AIRFLOW_HOME"
if [ ! -f "$AIRFLOW_HOME/airflow.db" ] && [ "${1:-}" != "db" ]; then
  "$airflow" db migrate >/dev/null
fi
exec "$airflow" "$@"
