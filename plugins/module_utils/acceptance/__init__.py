# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The seed's acceptance test (DESIGN.md, "Acceptance"): its settings from the inventory
(`settings`), the training job's log (`trainer_log`), the seven rows with their verdicts
(`table`), results of the one result model, and what the run comes to (`summary`: outcome,
useful units, cost). Its inference half (`gpurack accept --inference`): its settings
(`inference_settings`), what it saw (`inference_observe`), its eight rows and summary
(`inference_table`) and the load tool's Job (`load`); both halves' rows are made of `rowkit`.

Pure and stdlib only: the `acceptance_rows` and `acceptance_summary` filters run them in
playbooks/accept.yml, and `gpurack accept` reads both back from the role's report. Where the
figures come from (the cluster, Kueue, the pods' logs) is the acceptance role's concern.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.inference_observe import (
    InferenceObserved,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.inference_settings import (
    read as read_inference_settings,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.inference_table import (
    rows as inference_rows,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.inference_table import (
    summary as inference_summary,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.job import JobSpec
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.job import objects as job_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.load import LoadSpec, load_job
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.observe import (
    GPU_RESOURCES,
    Observed,
    api_time,
    assigned_pool,
    observed,
    true_condition,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.settings import (
    VARIABLE,
    SettingsError,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.settings import (
    read as read_settings,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.summary import accepted_units
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.summary import (
    summary as run_summary,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.table import line as row_line
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.table import rows

__all__ = [
    "GPU_RESOURCES",
    "VARIABLE",
    "InferenceObserved",
    "JobSpec",
    "LoadSpec",
    "Observed",
    "SettingsError",
    "accepted_units",
    "api_time",
    "assigned_pool",
    "inference_rows",
    "inference_summary",
    "job_objects",
    "load_job",
    "observed",
    "read_inference_settings",
    "read_settings",
    "row_line",
    "rows",
    "run_summary",
    "true_condition",
]
