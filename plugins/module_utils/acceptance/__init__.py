# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The seed's acceptance test (DESIGN.md, "Acceptance"): its settings from the inventory
(`settings`), the training job's log (`trainer_log`) and the seven rows with their verdicts
(`rows`), results of the one result model.

Pure and stdlib only: the `acceptance_rows` filter runs them in playbooks/accept.yml, and
`gpurack accept` reads the same rows back. Where the figures come from (the cluster, Kueue,
the pods' logs) is the acceptance role's concern.
"""
