"""A real PostgreSQL 15 and a real Redis for the tests, from Debian's binaries
(postgresql-15, redis-server), each in a temporary directory on a free
127.0.0.1 port, stopped and removed by stop()."""
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what, ready, seconds=30):
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start within {seconds} s")
        time.sleep(0.1)


def _answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Postgres:
    """initdb + pg_ctl. PostgreSQL refuses to run as root, so as root it runs as
    the postgres user the Debian package made."""

    def __init__(self, user="voting", password="voting", db="voting"):
        missing = [b for b in ("initdb", "pg_ctl", "psql") if not os.access(f"{PG_BIN}/{b}", os.X_OK)]
        if missing:
            raise RuntimeError(f"{PG_BIN}/{missing[0]} is missing: apt-get install postgresql-15 (./justw tools installs it)")
        self.user, self.password, self.db = user, password, db
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="voting-pg-")
        self.data = os.path.join(self.dir, "data")
        self._as = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        pwfile = os.path.join(self.dir, "pw")
        with open(pwfile, "w") as f:
            f.write(password)
        if self._as:
            os.chown(pwfile, pw.pw_uid, pw.pw_gid)
        self._run(f"{PG_BIN}/initdb", "-D", self.data, "-U", user, "--pwfile", pwfile, "-A", "scram-sha-256", "-E", "UTF8")
        self._run(
            f"{PG_BIN}/pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-t", "60", "start",
            "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off -c max_connections=200",
        )
        self._run(f"{PG_BIN}/createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", user, db, env={"PGPASSWORD": password})

    def _run(self, *argv, env=None):
        full = dict(os.environ, **(env or {}))
        res = subprocess.run([*self._as, *argv], capture_output=True, text=True, env=full, cwd=self.dir)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({res.returncode}): {res.stderr.strip() or res.stdout.strip()}")
        return res.stdout

    def psql(self, sql):
        """The rows of sql, one per line, columns separated by |."""
        return self._run(f"{PG_BIN}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "-d", self.db,
                         "-At", "-c", sql, env={"PGPASSWORD": self.password}).strip()

    @property
    def addr(self):
        return f"127.0.0.1:{self.port}"

    def stop(self):
        try:
            self._run(f"{PG_BIN}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


class Redis:
    """redis-server on a free port, no persistence."""

    def __init__(self):
        if not os.access(REDIS_SERVER, os.X_OK):
            raise RuntimeError(f"{REDIS_SERVER} is missing: apt-get install redis-server (./justw tools installs it)")
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="voting-redis-")
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--logfile", os.path.join(self.dir, "log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _wait(f"redis-server on port {self.port}", lambda: _answers(self.port) or self.proc.poll() is not None)
        if self.proc.poll() is not None:
            raise RuntimeError(f"redis-server exited with {self.proc.returncode}; see {self.dir}/log")

    @property
    def addr(self):
        return f"127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
