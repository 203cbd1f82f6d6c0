# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The GPU's measured checks: their specs here, their measuring functions in gpurack.gpubench."""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    WARN_FLOOR,
    CheckSpec,
    measured,
    register,
)

BF16_MATMUL = measured(
    "gpu.bf16_matmul",
    "BF16 matrix throughput",
    "standard",
    "bf16 8192^3 matrix product rate per GPU, TFLOPS",
    share_of="the model's dense BF16 peak",
    remediation="check clocks, power cap and cooling; replace the GPU if it stays low",
    model_field="bf16_dense_tflops",
    ratios=(0.75, WARN_FLOOR),
    threshold_source="the datasheet dense bf16 rate is a boost-clock peak; ten 8192^3 products on "
    "random data right after a short warm-up run at boost clocks before the power controller "
    "clamps them (H200s here: 767-799 of 989 TFLOP/s, 78-81 %; after 0.5 s of load they settle "
    "near 660, 67 %, which the burn-in tier judges): pass >= 75 %, warn >= 60 %, fail below",
    module=__name__,
)

COUNTERS_DELTA = register(
    CheckSpec(
        "counters.delta",
        "No error counters rising under load",
        "standard",
        "change of ECC, PCIe replay and row-remap counters, new Xid events and RDMA port counters "
        "across the load run",
        "no increase",
        "measurement: counters before and after the standard-tier run",
        "the component whose counter rose is faulty or badly seated: reseat, then replace",
    ),
    __name__,
)

BURN_IN_THROUGHPUT = measured(
    "gpu.burn_in_throughput",
    "BF16 throughput under sustained load",
    "burn-in",
    "median bf16 8192^3 product rate per GPU over the burn-in windows, every GPU loaded at once, TFLOPS",
    share_of="the model's dense BF16 peak",
    remediation="check clocks, power cap and cooling (gpu.burn_in_throttle); replace the GPU if it stays low",
    model_field="bf16_dense_tflops",
    ratios=(0.60, 0.50),
    threshold_source="sustained bf16 under the power cap, with device copies between products, runs "
    "below the short-burst rate (2 H200s at 700 W: 655-665 of 989 TFLOP/s, 66-67 %, over 30 s, "
    "clocks ~1440 MHz, reason sw_power_cap): pass >= 60 %, warn >= 50 %, fail below",
    module=__name__,
)

BURN_IN_STABILITY = measured(
    "gpu.burn_in_stability",
    "Steady throughput under sustained load",
    "burn-in",
    "slowest over median per-window bf16 rate of each GPU during the burn-in",
    share_of="the median window (min/median ratio)",
    remediation="a rate that sags over the run points at cooling or power delivery: check fans, inlet "
    "temperature and PSUs, then rerun; replace the GPU if one GPU alone sags",
    model_field=None,
    ratios=(0.90, 0.80),
    threshold_source="min/median of per-window bf16 rates over the burn-in: a steady GPU at its power "
    "cap varies by a few percent; a window 10 % below the median means clocks fell (thermal or "
    "power brake), 20 % below is a fault: pass >= 0.90, warn >= 0.80, fail below",
    limit_source="measurement: per-window rates of the burn-in run",
    module=__name__,
)

BURN_IN_CONSISTENCY = register(
    CheckSpec(
        "gpu.burn_in_consistency",
        "Repeatable results under sustained load",
        "burn-in",
        "batches of the burn-in whose product differs from the first product",
        "none (fail)",
        "measurement: every product compared with the first (a correct GPU is deterministic here)",
        "the same product gave different results: drain the node, run NVIDIA's field diagnostics "
        "(dcgmi diag -r 3) and replace the GPU if they fail",
    ),
    __name__,
)

BURN_IN_THROTTLE = register(
    CheckSpec(
        "gpu.burn_in_throttle",
        "No hardware clock slowdown under load",
        "burn-in",
        "clock event reasons and temperature of each GPU, sampled with nvidia-smi during the burn-in",
        "no hw_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown (fail) or sw_thermal_slowdown "
        "(warn); sw_power_cap is normal under full load",
        "vendor doc: NVIDIA nvidia-smi manual (Clocks Event Reasons)",
        "check cooling (fans, inlet temperature, airflow) and the power supply; a power brake points "
        "at the PSUs or the BMC power cap",
    ),
    __name__,
)
