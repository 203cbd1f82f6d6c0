# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""How a pool shares its GPUs, and the extended resources a node of it advertises (pure, stdlib only).

A pool (`gpurack_pool`) says `sharing: full-gpu | mig | time-slicing`; time-slicing pools
add `time_slicing: {replicas: N}` and MIG pools `mig: {profiles: {"1g.18gb": 7}}` (per
GPU). The same settings make the GPU Operator's device-plugin and MIG configs
(platform/gpu_operator.py) and the lab's stand-in advertiser, so a quota on
`nvidia.com/mig-1g.18gb` means the same thing in the lab and on a real site.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

GPU_RESOURCE = "nvidia.com/gpu"
# The device plugin's name for time-sliced replicas when renameByDefault is on.
SHARED_SUFFIX = ".shared"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
MIG_STRATEGIES = ("none", "single", "mixed")
SHARING_KEYS = ("time_slicing", "mig")
TIME_SLICING_KEYS = ("replicas", "rename_by_default")
MIG_KEYS = ("profiles",)
# A GPU has 7 compute slices (A100, H100, H200, B200): a profile "<n>g.<m>gb" takes n.
MIG_SLICES = 7
# "+me" (media extension) profiles are left out: their resource names are not valid names.
_MIG_PROFILE = re.compile(r"^([1-7])g\.([1-9][0-9]*)gb$")
_SHARING_FOR = {"time_slicing": "time-slicing", "mig": "mig"}


class SharingError(ValueError):
    """A pool's sharing settings are missing or invalid; the message names the pool and key."""


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _time_slicing_errors(raw: object) -> list[str]:
    if not isinstance(raw, Mapping):
        return [f"pool.time_slicing must be a mapping {{replicas: N}}, got {type(raw).__name__}"]
    errors = [
        f"pool.time_slicing: unknown key {k!r}; known keys: {', '.join(TIME_SLICING_KEYS)}"
        for k in raw
        if k not in TIME_SLICING_KEYS
    ]
    replicas = raw.get("replicas")
    if not _is_count(replicas) or replicas < 2:  # type: ignore[operator]
        errors.append(f"pool.time_slicing.replicas must be an integer of at least 2, got {replicas!r}")
    if not isinstance(raw.get("rename_by_default", False), bool):
        errors.append("pool.time_slicing.rename_by_default must be true or false")
    return errors


def _mig_errors(raw: object) -> list[str]:
    if not isinstance(raw, Mapping):
        return [f'pool.mig must be a mapping {{profiles: {{"1g.18gb": 7}}}}, got {type(raw).__name__}']
    errors = [
        f"pool.mig: unknown key {k!r}; known keys: {', '.join(MIG_KEYS)}" for k in raw if k not in MIG_KEYS
    ]
    profiles = raw.get("profiles")
    if not isinstance(profiles, Mapping) or not profiles:
        return [*errors, 'pool.mig.profiles must map MIG profiles to a count per GPU, e.g. {"1g.18gb": 7}']
    slices = 0
    for profile, count in profiles.items():
        match = _MIG_PROFILE.match(str(profile))
        if match is None:
            errors.append(
                f"pool.mig.profiles: {profile!r} is not a MIG profile such as '1g.18gb' or '3g.71gb'"
            )
        if not _is_count(count):
            errors.append(
                f"pool.mig.profiles[{profile!r}] must be a positive integer (per GPU), got {count!r}"
            )
        elif match is not None:
            slices += int(match.group(1)) * count
    if slices > MIG_SLICES:
        errors.append(f"pool.mig.profiles take {slices} compute slices per GPU; a GPU has {MIG_SLICES}")
    return errors


def sharing_errors(pool: Mapping[Any, Any]) -> list[str]:
    """Every problem with a pool's `time_slicing` and `mig` keys; [] when valid or absent.

    Each is allowed only with its sharing mode. Their absence is not an error here: only
    what needs the numbers (the GPU Operator's values, the lab advertiser) asks for them.
    """
    errors: list[str] = []
    for key, check in (("time_slicing", _time_slicing_errors), ("mig", _mig_errors)):
        if key not in pool or pool[key] is None:
            continue
        if pool.get("sharing") != _SHARING_FOR[key]:
            errors.append(
                f"pool.{key} is only for sharing: {_SHARING_FOR[key]}; this pool's is {pool.get('sharing')!r}"
            )
        errors.extend(check(pool[key]))
    return errors


def settings_errors(pool: Mapping[str, Any]) -> list[str]:
    """sharing_errors plus the settings a sharing mode needs to say what a node advertises."""
    errors = sharing_errors(pool)
    sharing = pool.get("sharing")
    if sharing == "time-slicing" and not pool.get("time_slicing"):
        errors.append("sharing: time-slicing needs pool.time_slicing.replicas (how many pods share a GPU)")
    if sharing == "mig" and not pool.get("mig"):
        errors.append('sharing: mig needs pool.mig.profiles (per GPU, e.g. {"1g.18gb": 7})')
    return errors


def _checked(pool: Mapping[str, Any]) -> str:
    """The pool's name; raises SharingError when its sharing settings are unusable."""
    name = pool.get("name", "?")
    if errors := settings_errors(pool):
        raise SharingError(f"pool {name}: " + "; ".join(errors))
    return str(name)


def time_slicing(pool: Mapping[str, Any]) -> tuple[int, bool]:
    """(replicas, rename_by_default) of a time-slicing pool.

    Raises:
        SharingError: the pool is not time-slicing or its settings are missing or invalid.
    """
    name = _checked(pool)
    if pool.get("sharing") != "time-slicing":
        raise SharingError(f"pool {name} does not share GPUs by time-slicing")
    settings = pool["time_slicing"]
    return int(settings["replicas"]), bool(settings.get("rename_by_default", False))


def mig_profiles(pool: Mapping[str, Any]) -> dict[str, int]:
    """The MIG profiles of a MIG pool, profile to count per GPU, sorted by profile.

    Raises:
        SharingError: the pool is not a MIG pool or its profiles are missing or invalid.
    """
    name = _checked(pool)
    if pool.get("sharing") != "mig":
        raise SharingError(f"pool {name} does not partition GPUs with MIG")
    return {str(p): int(c) for p, c in sorted(pool["mig"]["profiles"].items())}


def pool_gpu_resources(pool: Mapping[str, Any], gpus: int, mig_strategy: str = "mixed") -> dict[str, int]:
    """The extended resources a node of `pool` with `gpus` GPUs advertises, as the device plugin does.

    full-gpu: `nvidia.com/gpu: gpus`; time-slicing: `nvidia.com/gpu` (or `.shared` with
    rename_by_default) `gpus x replicas`; MIG with the mixed strategy:
    `nvidia.com/mig-<profile>: gpus x count` per profile, with the single strategy (one
    profile only) `nvidia.com/gpu: gpus x count`. No GPUs: nothing.

    Raises:
        SharingError: the sharing settings are missing or invalid, the strategy is unknown,
            or single is asked of a pool with several profiles.
    """
    name = _checked(pool)
    if gpus <= 0:
        return {}
    sharing = pool.get("sharing")
    if sharing == "time-slicing":
        replicas, rename = time_slicing(pool)
        return {GPU_RESOURCE + (SHARED_SUFFIX if rename else ""): gpus * replicas}
    if sharing != "mig":
        return {GPU_RESOURCE: gpus}
    profiles = mig_profiles(pool)
    if mig_strategy == "mixed":
        return {f"{MIG_RESOURCE_PREFIX}{p}": gpus * c for p, c in profiles.items()}
    if mig_strategy == "single" and len(profiles) == 1:
        return {GPU_RESOURCE: gpus * next(iter(profiles.values()))}
    if mig_strategy == "single":
        raise SharingError(
            f"pool {name}: the single MIG strategy needs one profile; it has {', '.join(profiles)}"
        )
    raise SharingError(f"MIG strategy must be single or mixed for pool {name}, got {mig_strategy!r}")
