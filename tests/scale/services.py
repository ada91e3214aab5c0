"""Real services on free loopback ports for the scale-out tests and bench/scale.py.

`RedisServer` runs ``redis-server`` (no persistence, loopback only),
`Nginx` runs ``nginx`` with the configuration of docs/deploy.md (round
robin, no stickiness) in front of the given upstream ports, and `Worker`
runs ``wiremcp run TARGET --http``. Each waits until its port accepts a
connection (Redis: until it answers PING), and each one's output goes to a
file that a failed wait prints. Nothing here is mocked; `SERVICES_MISSING`
names the binaries that are not installed (.ci/system-packages installs
them).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
REDIS = shutil.which("redis-server")
SERVICES_MISSING = [name for name, path in (("redis-server", REDIS), ("nginx", NGINX)) if path is None]

#: The nginx configuration of docs/deploy.md ("nginx"), with the upstreams and paths filled in.
NGINX_CONF = """\
worker_processes 1;
error_log {dir}/error.log warn;
pid {dir}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    upstream wiremcp {{
        # round robin (nginx's default), no ip_hash / hash / sticky: any worker serves any request
{servers}
        keepalive 64;
    }}

    server {{
        listen 127.0.0.1:{port};
        # request heads: wiremcp mirrors tool arguments into Mcp-Param-* headers
        large_client_header_buffers 8 64k;
        client_header_timeout 15s;
        client_body_timeout 30s;
        client_max_body_size 16m;

        location /mcp {{
            proxy_pass http://wiremcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            # the client's address, for the per-client caps (the workers trust nginx: --trusted-proxy)
            proxy_set_header X-Forwarded-For $remote_addr;
            # SSE: pass every event on as it comes, never buffer a stream
            proxy_buffering off;
            proxy_cache off;
            # a subscriptions/listen or legacy GET stream stays open: nginx's 60 s would cut it
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            # a worker that is down: the next one (only before anything was sent to it)
            proxy_next_upstream error timeout;
        }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], log: Path, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{what} did not start listening on {port}; its log:\n{log.read_text(errors='replace')}")
            time.sleep(0.02)


class _Process:
    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.clean()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.clean()

    def clean(self) -> None:
        """Remove the files this service wrote (its directory, or its log)."""
        directory = getattr(self, "dir", None)
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            self.log_path.unlink(missing_ok=True)


def stop_deployment(nginx: Nginx | None, workers: list[Worker], redis: RedisServer) -> None:
    """Stop a deployment from the front: nginx, then each worker, then Redis (killed: it keeps nothing)."""
    if nginx is not None:
        nginx.stop()
    for worker in workers:
        worker.stop()
    redis.kill()


class RedisServer(_Process):
    """``redis-server`` on a free loopback port, no persistence."""

    def __init__(self, port: int | None = None) -> None:
        assert REDIS is not None, "redis-server is not installed (.ci/system-packages)"
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="wiremcp-redis-"))
        self.log_path = self.dir / "redis.log"
        self.proc = subprocess.Popen(
            [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir), "--logfile", str(self.log_path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while self.command("PING") != "+PONG":
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"redis-server did not answer PING on {self.port}")
            time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self, *args: str) -> str:
        """One command in RESP, the first line of the answer ('' when Redis cannot be reached)."""
        wire = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                sock.sendall(wire.encode())
                data = b""
                while b"\r\n" not in data:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    data += chunk
        except OSError:
            return ""
        return data.split(b"\r\n", 1)[0].decode()

    def commands_processed(self) -> int:
        """Redis's own count of commands served (INFO stats ``total_commands_processed``)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
            data = b""
            while b"total_commands_processed" not in data or not data.endswith(b"\r\n"):
                data += sock.recv(65536)
        return int(re.search(rb"total_commands_processed:(\d+)", data).group(1))  # type: ignore[union-attr]

    def restart(self) -> None:
        """Stop it and start a fresh one on the same port (Redis lost, then back)."""
        self.kill()
        self.__init__(self.port)  # type: ignore[misc]


class Nginx(_Process):
    """nginx with docs/deploy.md's configuration, round robin over ``upstreams`` (ports on 127.0.0.1)."""

    def __init__(self, upstreams: list[int]) -> None:
        assert NGINX is not None, "nginx is not installed (.ci/system-packages)"
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="wiremcp-nginx-"))
        self.log_path = self.dir / "error.log"
        servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=0;" for p in upstreams)
        conf = self.dir / "nginx.conf"
        conf.write_text(NGINX_CONF.format(dir=self.dir, servers=servers, port=self.port))
        self.log_path.touch()
        self.proc = subprocess.Popen(
            [NGINX, "-p", str(self.dir), "-c", str(conf), "-g", "daemon off;"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.dir / "stderr.log", "wb"),
        )
        _wait_port(self.port, self.proc, self.log_path, "nginx")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


class Worker(_Process):
    """``wiremcp run TARGET --http`` on a free port (or ``--workers N`` of them), with ``env`` added.

    ``wrapper`` goes before the command (bench/scale.py runs workers under
    ``valgrind --tool=callgrind``), ``start_timeout`` bounds the wait for the port.
    """

    def __init__(self, target: str, env: dict[str, str], *args: str, port: int | None = None,
                 wrapper: tuple[str, ...] = (), start_timeout: float = 15.0) -> None:
        self.port = port or free_port()
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-worker-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [*wrapper, sys.executable, "-m", "wiremcp", "run", target, "--http", "--port", str(self.port),
             *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT,
            env={**os.environ, **env},
        )
        _wait_port(self.port, self.proc, self.log_path, "wiremcp", start_timeout)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


class Script(_Process):
    """``python SCRIPT PORT ARGS...`` (a server script of tests/scale/) on a free port, with ``env`` added."""

    def __init__(self, script: str, env: dict[str, str], *args: str) -> None:
        self.port = free_port()
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-script-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, script, str(self.port), *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT,
            env={**os.environ, **env},
        )
        _wait_port(self.port, self.proc, self.log_path, script)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"
