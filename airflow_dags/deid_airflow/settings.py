"""The DAGs' settings (`conf/airflow.yaml`), validated at parse time.

An invalid file raises while the DAG file is imported, so it shows as an
import error in the DagBag (and in the UI) instead of scheduling jobs with
a silent default.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

CONFIG_ENV = "DEID_AIRFLOW_CONFIG"
DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "conf" / "airflow.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Alerts(_Strict):
    email: list[str] = Field(default_factory=list)
    log_file: str | None = None


class DagCommon(_Strict):
    dag_id: str
    schedule: str | None
    start_date: date
    catchup: bool = False
    retries: int = Field(2, ge=0)
    retry_delay_minutes: float = Field(10, gt=0)
    execution_timeout_minutes: float = Field(360, gt=0)
    alerts: Alerts = Alerts()


class Nightly(DagCommon):
    landing: str
    policy: str | None = None
    method: str = "hybrid"
    #: the run report fails when a job of the night failed more than this share of its input
    max_failed_share: float = Field(0.01, ge=0, le=1)


class ModelRefresh(DagCommon):
    refresh_config: str


class AirflowSettings(_Strict):
    version: int = Field(1, ge=1, le=1)
    project_dir: Path
    python: str
    spark_bin_dir: str
    jars_dir: str
    spark_conn_id: str = "deid_spark"
    spark_conf: dict[str, str] = Field(default_factory=dict)
    tables: str
    qa_config: str
    deid_config: str
    key_file: str | None = None
    key_variable: str | None = None
    nightly: Nightly
    model_refresh: ModelRefresh

    @model_validator(mode="after")
    def _one_key_source(self) -> AirflowSettings:
        if self.key_file and self.key_variable:
            raise ValueError("set key_file or key_variable, not both")
        return self

    def path(self, value: str) -> str:
        """A setting's path made absolute against the project folder.

        Normalised, not resolved: a virtualenv's `bin/python` is a symlink to
        the base interpreter, and following it would lose the virtualenv.
        """
        p = Path(value)
        return os.path.normpath(p if p.is_absolute() else self.project_dir / p)


def load_settings(path: Path | None = None) -> AirflowSettings:
    p = path or Path(os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG)
    raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    s = AirflowSettings.model_validate(raw)
    project = Path(os.path.normpath(s.project_dir if s.project_dir.is_absolute()
                                    else p.absolute().parent / s.project_dir))
    return s.model_copy(update={"project_dir": project})
