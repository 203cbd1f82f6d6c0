"""`gpurack platform render`: the platform's Kubernetes objects from inventory, as YAML files."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpurack import platform, project
from gpurack.commands import Subparsers
from gpurack.errors import ExitCode
from gpurack.render.platform import platform_summary


def register(subparsers: Subparsers) -> None:
    """Add `gpurack platform` and its verbs to the CLI."""
    parser = subparsers.add_parser("platform", help="the platform's Kubernetes objects, built from inventory")
    verbs = parser.add_subparsers(title="verbs", metavar="VERB", required=True)
    render = verbs.add_parser(
        "render",
        help="write the platform's objects as YAML, without a cluster (for GitOps and review)",
        description="Write the objects playbooks/platform.yml applies, one YAML file per section "
        "(tenancy.yaml, kueue.yaml, inference.yaml, gpu_operator.yaml, observability.yaml). "
        "Pools count their GPUs from each pool's gpurack_expect "
        "(no facts are gathered); an overcommitted GPU quota is refused (exit 64).",
    )
    render.add_argument("-i", "--inventory", required=True, help="inventory file or folder")
    render.add_argument("--output", "-o", type=Path, required=True, help="folder to write (must be empty)")
    render.add_argument("--force", action="store_true", help="write into a non-empty folder")
    render.add_argument(
        "--hosts",
        default=platform.DEFAULT_HOSTS,
        metavar="PATTERN",
        help=f"the GPU hosts, as gpurack_hosts (default: {platform.DEFAULT_HOSTS})",
    )
    render.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    render.set_defaults(handler=handle_render)


def handle_render(args: argparse.Namespace) -> int:
    """Run `gpurack platform render`."""
    site = platform.load_site(project.resolve_inventory(args.inventory), args.hosts)
    rendered = platform.render(site, args.output, force=args.force)
    platform_summary(rendered.files, [c.to_dict() for c in rendered.capacity])
    return ExitCode.OK
