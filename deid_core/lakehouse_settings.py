"""Loading and validating `conf/lakehouse.yaml`: how the Delta tables are laid out and kept.

Kept apart from `conf/deid.yaml` because nothing in it changes how a
document is de-identified (that file is shipped to every executor and
hashed into the run): these are the operational choices of a database-scale
deployment. How long text pieces may be and how much text one task gets
(`work`), the properties and partitioning a table is created with
(`tables`), and the weekly compaction and VACUUM (`maintenance`).

Validated up front, with the one rule that matters most checked here and
not left to an operator's memory: VACUUM's retention must cover both the
time travel an audit needs and the longest a nightly stream may fall behind,
or a VACUUM would delete files a stream still has to read (it would fail)
or an auditor still has to see.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from deid_core.config import PROJECT_ROOT, ConfigError, _Strict, chosen_file, load_yaml_model

DEFAULT_LAKEHOUSE_CONFIG = PROJECT_ROOT / "conf" / "lakehouse.yaml"
LAKEHOUSE_CONFIG_ENV = "DEID_LAKEHOUSE_CONFIG"

#: Delta's own floor for VACUUM (spark.databricks.delta.retentionDurationCheck): 7 days
MIN_VACUUM_HOURS = 168
_INTERVAL = re.compile(r"^interval\s+(\d+)\s+(hours?|days?|weeks?)$", re.IGNORECASE)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def interval_hours(value: str) -> int:
    """Hours of a Delta interval property value (``"interval 30 days"``); ValueError otherwise."""
    m = _INTERVAL.match(value.strip())
    if not m:
        raise ValueError(f"not a Delta interval in hours, days or weeks: {value!r}")
    n, unit = int(m.group(1)), m.group(2).lower()
    return n * {"h": 1, "d": 24, "w": 168}[unit[0]]


class WorkConfig(_Strict):
    #: a longer text is de-identified in pieces of at most this many characters
    piece_chars: int = Field(20_000, ge=1_000)
    #: characters of text per de-identification task
    partition_chars: int = Field(4_000_000, ge=10_000)

    @model_validator(mode="after")
    def _pieces_fit(self) -> WorkConfig:
        if self.partition_chars < self.piece_chars:
            raise ValueError("work.partition_chars must be at least work.piece_chars")
        return self


class TablesConfig(_Strict):
    #: Delta table properties set at creation and re-applied by the maintenance job
    properties: dict[str, str] = Field(default_factory=dict)
    bronze_partition_by_month: bool = True

    @model_validator(mode="after")
    def _delta_properties(self) -> TablesConfig:
        for key, value in self.properties.items():
            if not key.startswith("delta."):
                raise ValueError(f"tables.properties: {key!r} is not a Delta table property (delta.*)")
            if key.endswith("RetentionDuration"):
                interval_hours(value)
        return self


class MaintenanceConfig(_Strict):
    weekday: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] = "sunday"
    optimize: bool = True
    vacuum_retention_hours: int = Field(720, ge=MIN_VACUUM_HOURS)
    audit_time_travel_days: int = Field(30, ge=0)
    max_stream_lag_hours: int = Field(72, ge=1)

    @property
    def weekday_number(self) -> int:
        """Monday 0 ... Sunday 6, as `datetime.weekday()`."""
        return _WEEKDAYS.index(self.weekday)


class LakehouseSettings(_Strict):
    version: Literal[1]
    work: WorkConfig = WorkConfig()
    tables: TablesConfig = TablesConfig()
    maintenance: MaintenanceConfig = MaintenanceConfig()

    @model_validator(mode="after")
    def _retention_covers_audit_and_streams(self) -> LakehouseSettings:
        m = self.maintenance
        need = max(m.audit_time_travel_days * 24, m.max_stream_lag_hours, MIN_VACUUM_HOURS)
        if m.vacuum_retention_hours < need:
            raise ValueError(
                f"maintenance.vacuum_retention_hours ({m.vacuum_retention_hours}) must cover the audit's time "
                f"travel ({m.audit_time_travel_days} days), the longest stream lag ({m.max_stream_lag_hours} h) "
                f"and Delta's 7-day floor: at least {need}")
        deleted = self.tables.properties.get("delta.deletedFileRetentionDuration")
        if deleted is not None and interval_hours(deleted) < m.audit_time_travel_days * 24:
            raise ValueError("tables.properties delta.deletedFileRetentionDuration is shorter than "
                             "maintenance.audit_time_travel_days")
        log = self.tables.properties.get("delta.logRetentionDuration")
        if log is not None and interval_hours(log) < m.audit_time_travel_days * 24:
            raise ValueError("tables.properties delta.logRetentionDuration is shorter than "
                             "maintenance.audit_time_travel_days (time travel needs the log)")
        return self


def lakehouse_config_path(explicit: Path | None = None) -> Path:
    return chosen_file(explicit, LAKEHOUSE_CONFIG_ENV, DEFAULT_LAKEHOUSE_CONFIG)


def load_lakehouse_settings(path: Path | None = None) -> LakehouseSettings:
    """The validated settings; raises ConfigError naming the file and the reason."""
    return load_yaml_model(lakehouse_config_path(path), LakehouseSettings, "lakehouse config")


__all__ = ["ConfigError", "LakehouseSettings", "MIN_VACUUM_HOURS", "interval_hours", "load_lakehouse_settings"]
