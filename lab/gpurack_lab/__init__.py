"""The lab rack: systemd containers reachable over SSH that replay real hardware captures."""
