"""`gpurack lab up|status|ssh|load-image|down`: the lab rack on this machine (docs/lab.md)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from gpurack import render
from gpurack.errors import ExitCode, UsageError

from gpurack_lab import images, lab_kubernetes, nodes, profiles, rack, ssh, view
from gpurack_lab.fabric_plan import SWITCH_FAULT_KINDS
from gpurack_lab.faults import FAULT_KINDS
from gpurack_lab.state import load


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `gpurack lab` and its verbs to the CLI."""
    parser = subparsers.add_parser("lab", help="SSH-reachable containers that replay real GPU servers")
    verbs = parser.add_subparsers(title="verbs", metavar="VERB", required=True)
    _register_up(verbs)
    verbs.add_parser("status", help="the lab's hosts, addresses, profiles and faults").set_defaults(
        handler=handle_status
    )
    _register_ssh_and_images(verbs)
    down = verbs.add_parser("down", help="remove containers, network, loop devices, keys and inventory")
    down.add_argument("--purge", action="store_true", help="also remove the node image")
    down.set_defaults(handler=handle_down)


def _register_up(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    up = verbs.add_parser("up", help="start 1 control plane and N workers (idempotent)")
    up.add_argument("--workers", type=int, default=1, metavar="N", help="number of workers (default 1)")
    up.add_argument(
        "--light",
        type=int,
        default=0,
        metavar="N",
        help="a light lab instead: N sshd-only hosts (lab-l1..; no systemd, no control plane, no "
        "Kubernetes) replaying the profiles, for facts, capture, preflight and validate at fleet size",
    )
    up.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="NAME",
        help=f"hardware profile per worker, in order: {', '.join(profiles.BUILTIN_PROFILES)} or a capture "
        "folder; the last repeats (default h200x1)",
    )
    up.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="SPEC",
        help=f"KIND@HOST, KIND one of {', '.join(FAULT_KINDS)} (e.g. gpu-missing@lab-w2)",
    )
    up.add_argument(
        "--kubernetes",
        action="store_true",
        help="also install the offline Kubernetes build on the nodes ('make lab-k8s' makes it), "
        "so that 'gpurack run site' ends with a cluster",
    )
    up.add_argument(
        "--switches",
        type=int,
        metavar="N",
        help="also serve N fake top-of-rack switches on loopback whose LLDP tables follow the lab's "
        "cabling plan (odd ones Arista EOS, even ones Cisco NX-OS; 0 removes them; a running lab's "
        "switches restart)",
    )
    up.add_argument(
        "--switch-fault",
        action="append",
        default=[],
        metavar="SPEC",
        help=f"KIND@HOST:NIC, KIND one of {', '.join(SWITCH_FAULT_KINDS)} (e.g. miscabled@lab-w1:mlx5_1)",
    )
    up.set_defaults(handler=handle_up)


def _register_ssh_and_images(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ssh = verbs.add_parser("ssh", help="open a shell on a lab host, or run CMD there")
    ssh.add_argument("host")
    ssh.add_argument("command", nargs="*", metavar="CMD", help="command to run (after --)")
    ssh.set_defaults(handler=handle_ssh)

    image = verbs.add_parser(
        "load-image",
        help="import an OCI image archive (e.g. the acceptance trainer's) into the nodes' containerd",
    )
    image.add_argument(
        "archive", type=Path, help="the archive (lab/images/build-trainer-image.sh prints its path)"
    )
    image.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="NAME",
        help="only this node (repeatable; default every worker)",
    )
    image.set_defaults(handler=handle_load_image)


def handle_up(args: argparse.Namespace) -> int:
    """`gpurack lab up`."""
    total = 7 + 3 * ((args.light or args.workers) + 1)
    with render.progress("lab up", total) as step:
        result = rack.up(
            args.workers,
            args.profile,
            args.fault,
            step,
            kubernetes=args.kubernetes,
            switch_count=args.switches,
            switch_fault_specs=args.switch_fault,
            light=args.light,
        )
    view.up_summary(result, rack.status(result.state), str(rack.hosts_file(result.state.light).parent))
    return int(ExitCode.OK)


def handle_status(args: argparse.Namespace) -> int:
    """`gpurack lab status`: exit 0 when every host runs (and, with Kubernetes, every node is Ready),
    1 otherwise, 0 with a note when there is no lab."""
    state = load(rack.state_file())
    if state is None:
        print("no lab (start one with 'gpurack lab up')")
        return int(ExitCode.OK)
    rows = rack.status(state)
    view.status_table(rows)
    healthy = all(r.state == "running" for r in rows)
    if state.kubernetes:
        node_rows = nodes.read(lab_kubernetes.kubeconfig())
        view.nodes_table(node_rows)
        healthy = healthy and not isinstance(node_rows, str) and all(n.ready for n in node_rows)
    return int(ExitCode.OK if healthy else ExitCode.FAILED)


def handle_ssh(args: argparse.Namespace) -> int:
    """`gpurack lab ssh HOST [-- CMD]`: the remote command's exit code."""
    state = load(rack.state_file())
    if state is None:
        raise UsageError("no lab is up (start one with 'gpurack lab up')")
    host = state.host(args.host)
    if host is None:
        raise UsageError(f"no lab host {args.host!r} (hosts: {', '.join(h.name for h in state.hosts)})")
    command = [c for i, c in enumerate(args.command) if not (i == 0 and c == "--")]
    return subprocess.run(ssh.ssh_argv(host, state.key, command), check=False).returncode


def handle_load_image(args: argparse.Namespace) -> int:
    """`gpurack lab load-image ARCHIVE [--host NAME]...`."""
    state = load(rack.state_file())
    if state is None:
        raise UsageError("no lab is up (start one with 'gpurack lab up')")
    if not args.archive.is_file():
        raise UsageError(f"no image archive at {args.archive}")
    with render.progress("load image", len(args.host) or len(state.workers)) as step:
        loaded = images.load(state, args.archive, args.host, step)
    for item in loaded:
        print(f"{item.host}: {item.ref} {'imported' if item.imported else 'already there'}")
    return int(ExitCode.OK)


def handle_down(args: argparse.Namespace) -> int:
    """`gpurack lab down [--purge]`."""
    view.down_summary(rack.teardown(purge=args.purge))
    return int(ExitCode.OK)
