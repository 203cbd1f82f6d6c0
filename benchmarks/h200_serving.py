"""Start the model server launcher (workloads/serving) as the lab's pods do, time its start, then
load it with the load tool (workloads/loadgen); print and write one JSON document of figures.

    python benchmarks/h200_serving.py --model-dir DIR --work DIR --out FILE
        [--starts cold,warm] [--loads 1,8] [--requests 2000] [--seconds 60] [-- RUNTIME ARGS...]

Each start runs `python -m gpurack_serving RUNTIME ARGS...` with GPURACK_MODEL_URI=DIR and the
cache under --work (a cold start empties it first; a warm start finds the model there) and times,
from the process's start: the launcher's model-cache line (the model in the cache), `/health`
answering 200, and the first good `/v1/embeddings` answer. Like a new pod, each start writes no
Python bytecode (PYTHONDONTWRITEBYTECODE=1: the serving image carries none, so a start reads none
unless the packages were compiled beforehand) and has empty Triton and vLLM caches. The loads
run against the last start's server, one after the other, and the server is stopped at the end.
Used by benchmarks/h200_serving.sh; standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent
SERVED_NAME = "minilm"
SENTENCES = ["the GPU rack is ready", "a second sentence"]
POLL_S = 0.05
MAX_BAD_ANSWERS = 10  # after /health answers: a server that answers badly is not starting


def _post_embeddings(port: int, timeout: float) -> tuple[bool, str]:
    body = json.dumps({"model": SERVED_NAME, "input": SENTENCES}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/embeddings", body, {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            data = json.load(answer)["data"]
    except (OSError, ValueError, KeyError) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    ok = len(data) == len(SENTENCES) and all(len(d.get("embedding") or []) > 0 for d in data)
    return ok, f"{len(data)} embeddings of {len(data[0].get('embedding') or []) if data else 0} values"


def _health(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except (OSError, ValueError):
        return False


class Server:
    """One launcher process (it becomes vLLM) and what its stdout said, copied to a log."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self.cache_line: dict[str, Any] | None = None
        self.cache_line_at: float | None = None
        self._log = log.open("ab")
        self.started = time.time()
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=self._log, start_new_session=True
        )
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[bytes] | None) -> None:
        assert stream is not None
        for raw in stream:
            now = time.time()
            self._log.write(raw)
            self._log.flush()
            if self.cache_line is None and raw.startswith(b'{"gpurack":"model-cache"'):
                try:
                    self.cache_line = json.loads(raw)
                    self.cache_line_at = now
                except ValueError:
                    pass

    def tail(self, lines: int = 40) -> list[str]:
        text = self.log.read_text(errors="replace").splitlines()
        return text[-lines:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._reader.join(timeout=5)
        self._log.close()


def start(
    kind: str, args: argparse.Namespace, env: dict[str, str], limit_s: float
) -> tuple[Server, dict[str, Any]]:
    """Start the launcher and time it until the first good answer (or failure, or `limit_s`)."""
    work = Path(args.work)
    cache = work / "cache"
    if kind == "cold":
        shutil.rmtree(cache, ignore_errors=True)
    scratch = work / f"scratch-{kind}-{int(time.time())}"
    scratch.mkdir(parents=True)
    run_env = {
        **env,
        "GPURACK_MODEL_URI": str(Path(args.model_dir).resolve()),
        "GPURACK_MODEL_CACHE": str(cache),
        "GPURACK_MODEL_CACHE_LIMIT": str(args.cache_limit),
        "GPURACK_SERVED_NAME": SERVED_NAME,
        "GPURACK_PORT": str(args.port),
        "PYTHONDONTWRITEBYTECODE": "1",
        "TRITON_CACHE_DIR": str(scratch / "triton"),
        "VLLM_CACHE_ROOT": str(scratch / "vllm"),
    }
    argv = [sys.executable, "-m", "gpurack_serving", *args.runtime_args]
    server = Server(argv, run_env, work / f"server-{args.label}-{kind}.log")
    figures: dict[str, Any] = {"start": kind, "argv": argv[1:]}
    health_at = answer_at = None
    detail = ""
    bad_answers = 0
    deadline = server.started + limit_s
    while time.time() < deadline and server.proc.poll() is None and bad_answers < MAX_BAD_ANSWERS:
        if health_at is None:
            if _health(args.port):
                health_at = time.time()
                continue
        else:
            ok, detail = _post_embeddings(args.port, timeout=60)
            if ok:
                answer_at = time.time()
                break
            bad_answers += 1
        time.sleep(POLL_S)
    line = server.cache_line or {}
    figures.update(
        {
            "ok": answer_at is not None,
            "cache_hit": line.get("hit"),
            "download_s": line.get("download_s"),
            "model_bytes": line.get("bytes"),
            "to_model_cached_s": _since(server.started, server.cache_line_at),
            "to_health_s": _since(server.started, health_at),
            "to_first_answer_s": _since(server.started, answer_at),
            "first_answer": detail,
        }
    )
    if answer_at is None:
        figures["exit_code"] = server.proc.poll()
        figures["log_tail"] = server.tail()
    else:
        figures["gpu_memory_used_mib"] = _gpu_memory_used()
    return server, figures


def _since(t0: float, t: float | None) -> float | None:
    return None if t is None else round(t - t0, 3)


def _gpu_memory_used() -> int | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout  # fmt: skip
        return int(out.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def load(concurrency: int, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    argv = [
        sys.executable, "-m", "gpurack_loadgen", "--url", f"http://127.0.0.1:{args.port}",
        "--model", SERVED_NAME, "--concurrency", str(concurrency),
        "--requests", str(args.requests), "--seconds", str(args.seconds),
    ]  # fmt: skip
    started = time.time()
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=args.seconds + 120, check=False
    )
    figures: dict[str, Any] = {
        "command": " ".join(argv[1:]),
        "rc": done.returncode,
        "wall_s": round(time.time() - started, 3),
    }
    try:
        figures.update(json.loads(done.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        figures["stderr_tail"] = done.stderr.splitlines()[-20:]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--label", default="run")
    parser.add_argument("--starts", default="cold,warm")
    parser.add_argument("--loads", default="1,8")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--cache-limit", type=int, default=1 << 30)
    parser.add_argument("--start-limit", type=float, default=240.0)
    parser.add_argument("runtime_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.runtime_args[:1] == ["--"]:
        args.runtime_args = args.runtime_args[1:]
    Path(args.work).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    path = [str(REPO / "workloads/serving"), str(REPO / "workloads/loadgen")]
    env["PYTHONPATH"] = os.pathsep.join([*path, *filter(None, [env.get("PYTHONPATH")])])
    result: dict[str, Any] = {
        "label": args.label,
        "runtime_args": args.runtime_args,
        "starts": [],
        "loads": [],
    }
    server = None
    try:
        for kind in args.starts.split(","):
            if server is not None:
                server.stop()
            server, figures = start(kind, args, env, args.start_limit)
            result["starts"].append(figures)
            print(json.dumps(figures), flush=True)
            if not figures["ok"]:
                return 1
        for concurrency in (int(c) for c in args.loads.split(",") if c):
            figures = load(concurrency, args, env)
            result["loads"].append(figures)
            print(json.dumps(figures), flush=True)
    finally:
        if server is not None:
            server.stop()
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
