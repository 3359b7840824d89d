"""A private PostgreSQL cluster under a data directory, for development and tests.

Used when no PASSK_DATABASE_URL is given. It listens on 127.0.0.1 only, with a
random password kept in a 0600 file, so even a local development database has
no default credentials.
"""

from __future__ import annotations

import glob
import logging
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

from service.core.settings import Settings, get_settings

log = logging.getLogger(__name__)

DB_NAME = "passk"
DB_USER = "passk"


class EmbeddedPostgresError(RuntimeError):
    pass


def find_bindir() -> Path:
    """Locate initdb/pg_ctl: $PASSK_PG_BIN, then Debian's versioned dirs, then PATH."""
    candidates: list[str] = []
    if pg_bin := get_settings().pg_bin:
        candidates.append(pg_bin)
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    if which := shutil.which("initdb"):
        candidates.append(str(Path(which).parent))
    for candidate in candidates:
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    raise EmbeddedPostgresError(
        "no PostgreSQL server binaries found (initdb, pg_ctl); install the 'postgresql' "
        "package or set PASSK_PG_BIN, or point PASSK_DATABASE_URL at a server"
    )


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class EmbeddedPostgres:
    """A cluster in `root/pgdata`; start() is idempotent and returns a database URL."""

    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / "pgdata"

    @property
    def _password_file(self) -> Path:
        return self.root / "pg-password"

    @property
    def _port_file(self) -> Path:
        return self.root / "pg-port"

    def _run_as(self) -> list[str]:
        # The server refuses to run as root; drop to the 'postgres' system user.
        if os.geteuid() != 0:
            return []
        try:
            pwd.getpwnam("postgres")
        except KeyError as exc:
            raise EmbeddedPostgresError("running as root needs a 'postgres' system user") from exc
        return ["runuser", "-u", "postgres", "--"]

    def _chown(self, path: Path) -> None:
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def url(self) -> str:
        password = self._password_file.read_text().strip()
        port = int(self._port_file.read_text())
        return f"postgresql+psycopg://{DB_USER}:{password}@127.0.0.1:{port}/{DB_NAME}"

    def start(self) -> str:
        bindir = find_bindir()
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb(bindir)
        if not self._is_running(bindir):
            self._start(bindir)
        return self.url()

    def _initdb(self, bindir: Path) -> None:
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)
        self.data_dir.mkdir(mode=0o700)
        self._chown(self.data_dir)
        password = secrets.token_urlsafe(24)
        self._password_file.write_text(password)
        os.chmod(self._password_file, 0o600)
        pwfile = self.root / "pg-initdb-password"
        pwfile.write_text(password)
        self._chown(pwfile)
        try:
            self._check(
                [str(bindir / "initdb"), "-D", str(self.data_dir), "-U", DB_USER, "--pwfile", str(pwfile),
                 "--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"],
            )
        finally:
            pwfile.unlink(missing_ok=True)
        # Throughput over durability: this cluster is for development and tests.
        with open(self.data_dir / "postgresql.conf", "a") as conf:
            conf.write("\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\n")
        self._port_file.write_text(str(_free_port()))

    def _is_running(self, bindir: Path) -> bool:
        result = subprocess.run(
            [*self._run_as(), str(bindir / "pg_ctl"), "-D", str(self.data_dir), "status"],
            capture_output=True,
        )
        return result.returncode == 0

    def _start(self, bindir: Path) -> None:
        port = int(self._port_file.read_text())
        log = self.root / "postgres.log"
        if not log.exists():
            log.touch()
        self._chown(log)
        options = f"-p {port} -k {self.data_dir} -c listen_addresses=127.0.0.1"
        self._check([str(bindir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(log), "-o", options, "-w", "start"])
        self._ensure_database(bindir, port)

    def _ensure_database(self, bindir: Path, port: int) -> None:
        env = {**os.environ, "PGPASSWORD": self._password_file.read_text().strip()}
        retrying = Retrying(
            retry=retry_if_result(lambda probe: probe.returncode != 0), stop=stop_after_delay(30), wait=wait_fixed(0.2)
        )
        try:
            probe = retrying(
                subprocess.run,
                [str(bindir / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", DB_USER, "-d", "postgres",
                 "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'"],
                capture_output=True, text=True, env=env,
            )
        except RetryError as exc:
            stderr = exc.last_attempt.result().stderr.strip()
            raise EmbeddedPostgresError(f"postgres did not accept connections: {stderr}") from None
        if probe.stdout.strip() != "1":
            subprocess.run(
                [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", DB_USER, DB_NAME],
                check=True, env=env,
            )

    def stop(self) -> None:
        bindir = find_bindir()
        if self.data_dir.exists() and self._is_running(bindir):
            self._check([str(bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])

    def _check(self, command: list[str]) -> None:
        result = subprocess.run([*self._run_as(), *command], capture_output=True, text=True)
        if result.returncode != 0:
            raise EmbeddedPostgresError(f"{Path(command[0]).name} failed: {result.stderr.strip() or result.stdout.strip()}")


def resolve_database_url(settings: Settings) -> str:
    """The configured database; only in development, without one, an embedded cluster under the data dir."""
    if settings.database_url:
        return settings.database_url
    if settings.env != "development":
        raise RuntimeError(f"PASSK_DATABASE_URL must be set outside development (PASSK_ENV={settings.env})")
    root = Path(settings.data_dir).resolve()
    url = EmbeddedPostgres(root).start()
    log.warning("using the embedded development PostgreSQL under %s", root / "pgdata")
    return url
