"""The sandbox: the one process that runs a submission's code, and the judge's handle on it.

The judge (:mod:`rocketlab.grading.worker`) never imports a submission. It starts :class:`Sandbox`, sends
it the submission's source text, and plugs :class:`RemoteFunction` / :class:`RemoteClass` proxies into
the real cluster in place of the learner's functions; every call crosses a pipe as plain data
(:mod:`rocketlab.grading.sandbox_codec`), so the submission changes a score only through what its
functions return. The sandbox process:

* runs in new PID, mount and network namespaces (``unshare``; a user namespace too when not root; the
  network one has its own loopback only, so no grader, no other submission's sandbox and no other host
  can be reached): the judge kills
  the namespace's first process and the kernel kills every process in it, including one that called
  ``setsid`` or double-forked; ``/proc`` shows only the sandbox's own processes;
* mounts an empty ``tmpfs`` over ``/tmp`` and over every path it must not read (the submissions
  directory, hidden tests, the results path) and, as root, over directories that hide the interpreter
  (``/root``), re-exposing only the interpreter (an interpreter or kit that lives under ``/tmp``, a venv
  made there, is carried through the new ``tmpfs`` as a detached mount: ``open_tree`` + ``move_mount``);
* sets ``RLIMIT_AS``, ``CPU``, ``NPROC``, ``FSIZE``, ``NOFILE`` and ``CORE``, then (as root) drops to
  ``nobody`` with ``no_new_privs``;
* has an empty working directory and a scrubbed environment; its output (descriptors 1 and 2) goes to a
  pipe the judge drains and caps.

Where ``unshare`` cannot create namespaces (or ``ROCKETLAB_SANDBOX=plain`` says not to) the sandbox is a new session with the same limits, killed by
process group and by a scan of ``/proc`` for its session; what still holds then is said in
``docs/grading-trust.md``. rocketlab's own addition.
"""

from __future__ import annotations

import ctypes
import json
import linecache
import logging
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from rocketlab.grading.sandbox_codec import CodecError, data_to_frame, decode, encode, frame_to_data

MAX_LINE = 32 * 1024 * 1024  # one message on the channel
MAX_TEXT = 2_000  # exception text kept
OUTPUT_KEEP = 2_000  # printed characters kept per test
NOBODY = 65534
GiB = 1024**3


def limits_for(lab: str) -> dict[str, int]:
    """Resource limits of a lab's sandbox: a JVM for lab 07 (Spark) needs far more address space,
    threads and descriptors than plain Python."""
    if lab == "lab07":
        return {"as": 12 * GiB, "cpu": 1800, "nproc": 1024, "fsize": 256 * 1024**2, "nofile": 4096}
    return {"as": 2 * GiB, "cpu": 600, "nproc": 64, "fsize": 16 * 1024**2, "nofile": 256}


class SandboxError(Exception):
    """The submission's code raised (``text`` in the learner's terms), or the sandbox broke its protocol."""

    def __init__(self, text: str, protocol: bool = False) -> None:
        super().__init__(text)
        self.text, self.protocol = text, protocol


# ---------------------------------------------------------------------------------------- judge side
@cache
def namespaces_available() -> bool:
    """Whether ``unshare`` can make PID and mount namespaces here (checked once per process)."""
    if os.environ.get("ROCKETLAB_SANDBOX") == "plain" or shutil.which("unshare") is None:
        return False
    try:
        run = subprocess.run([*_unshare_prefix(), "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0


def _unshare_prefix() -> list[str]:
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", *user, "--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--net"]


def _pdeathsig() -> None:
    """In the child before exec: die with the judge."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def kit_root() -> Path:
    import rocketlab

    return Path(rocketlab.__file__).resolve().parent.parent


class Sandbox:
    """The judge's end: start the sandbox, load a submission, call its functions, stop it whole."""

    def __init__(self, lab: str, *, hide: list[str] | None = None, limits: dict[str, int] | None = None) -> None:
        self.lab = lab
        self.isolated = namespaces_available()
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        out_r, out_w = os.pipe()
        self.output_fd = out_r
        home = "/tmp/work"
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home, "TMPDIR": home,
               "PYTHONPATH": str(kit_root()), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
               "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
        for key in ("JAVA_HOME",):
            if os.environ.get(key):
                env[key] = os.environ[key]
        argv = [sys.executable, "-m", "rocketlab.grading.sandbox", str(to_child_r), str(from_child_w)]
        if self.isolated:
            argv = [*_unshare_prefix(), *argv]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, env=env,
                                     pass_fds=(to_child_r, from_child_w), cwd="/",
                                     start_new_session=not self.isolated, preexec_fn=_pdeathsig)
        for fd in (to_child_r, from_child_w, out_w):
            os.close(fd)
        os.set_blocking(self.output_fd, False)
        self.output_open = True
        self.buffer = b""
        self.kept, self.total = bytearray(), 0
        self.poller = select.poll()
        self.poller.register(self.from_child, select.POLLIN)
        self.poller.register(self.output_fd, select.POLLIN)
        self.callbacks: dict[int, Callable[..., Any]] = {}
        self.broken: str | None = None
        config = {"hide": sorted(set(hide or [])), "limits": limits or limits_for(lab), "isolated": self.isolated,
                  "expose": sorted({str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve()),
                                    str(Path(sys.executable).resolve().parent), str(kit_root()),
                                    *_java_dirs()}),
                  "lab": lab}
        self._send(config)

    # ------------------------------------------------------------------ channel
    def _send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.to_child, data):]
        except (BrokenPipeError, OSError):
            raise self._gone() from None

    def _gone(self) -> SandboxError:
        code = self.proc.poll()
        if code is None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        if code is not None and code < 0:
            how = f"was killed by signal {signal.Signals(-code).name}"
        else:
            how = f"exited (exit code {code})"
        hint = " (a resource limit? the sandbox allows " + _limits_text(limits_for(self.lab)) + ")"
        self.broken = f"the process running your code {how}: does your code call os._exit or crash the interpreter?{hint}"
        return SandboxError(self.broken, protocol=True)

    def _drain_output(self) -> None:
        while True:
            try:
                chunk = os.read(self.output_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                if self.output_open:
                    self.output_open = False
                    self.poller.unregister(self.output_fd)
                return
            room = OUTPUT_KEEP * 4 - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.total += len(chunk)

    def take_output(self) -> tuple[str, int]:
        """What the sandbox printed since the last call (kept text, total bytes), then reset."""
        self._drain_output()
        text = self.kept.decode(errors="replace")[:OUTPUT_KEEP]
        total = self.total
        self.kept, self.total = bytearray(), 0
        return text, total

    def _receive(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            ready = self.poller.poll(1000)
            for fd, _ in ready:
                if fd == self.output_fd:
                    self._drain_output()
            if not any(fd == self.from_child for fd, _ in ready):
                if self.proc.poll() is not None and not ready:
                    raise self._gone()
                continue
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise self._gone()
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE and b"\n" not in self.buffer:
                self.broken = "your code sent more than 32 MiB in one answer"
                raise SandboxError(self.broken, protocol=True)
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            raise SandboxError(f"garbage on the grader's channel: {line[:80]!r}", protocol=True) from None
        if type(message) is not dict:
            raise SandboxError(f"garbage on the grader's channel: {line[:80]!r}", protocol=True)
        return message

    def request(self, message: dict[str, Any]) -> Any:
        """Send one request; answer callbacks until its reply; the reply's value, decoded."""
        if self.broken:
            raise SandboxError(self.broken, protocol=True)
        try:
            return self._request(message)
        except SandboxError as e:
            if e.protocol:  # a channel out of step is never trusted again: the judge starts a fresh sandbox
                self.broken = self.broken or e.text
            raise

    def _request(self, message: dict[str, Any]) -> Any:
        self._send(message)
        while True:
            reply = self._receive()
            if reply.get("op") == "callback":
                self._answer_callback(reply)
                continue
            if "raise" in reply:
                self._raise(reply["raise"])
            if "value" not in reply:
                raise SandboxError(f"garbage on the grader's channel: {str(reply)[:80]}", protocol=True)
            try:
                return decode(reply["value"], frame_of=self._frame_of)
            except CodecError as e:
                raise SandboxError(f"your function returned something the grader cannot read: {e}") from None

    def _answer_callback(self, message: dict[str, Any]) -> None:
        fn = self.callbacks.get(message.get("fn")) if isinstance(message.get("fn"), int) else None
        if fn is None:
            raise SandboxError("garbage on the grader's channel: a call-back to an unknown function", protocol=True)
        try:
            args = decode(message.get("args"))
            if type(args) is not list:
                raise CodecError("call-back arguments are not a list")
            value = fn(*args)
            reply: dict[str, Any] = {"value": encode(value, callables=self._register)}
        except CodecError as e:
            raise SandboxError(f"garbage on the grader's channel: {e}", protocol=True) from None
        except Exception as e:  # noqa: BLE001 - the kit's function raised for the learner's argument
            reply = {"raise": {"text": f"{type(e).__name__}: {str(e)[:MAX_TEXT]}"}}
        self._send(reply)

    def _raise(self, info: Any) -> None:
        if type(info) is not dict:
            raise SandboxError("garbage on the grader's channel: a malformed error", protocol=True)
        text = str(info.get("text", ""))[:MAX_TEXT + 400]
        if info.get("not_implemented") is True:
            raise NotImplementedError(text)
        kit = info.get("kit_class")
        if isinstance(kit, str):
            from rocketlab.grading.sandbox_codec import _kit_type

            try:
                cls = _kit_type(kit)
            except (CodecError, ImportError):
                cls = None
            if cls is not None and issubclass(cls, Exception) and not issubclass(cls, AssertionError):
                try:
                    err = cls(str(info.get("message", ""))[:MAX_TEXT])
                except Exception:  # noqa: BLE001 - a kit exception with another constructor
                    err = None
                if err is not None:
                    raise err
        raise SandboxError(text)

    def _register(self, fn: Callable[..., Any]) -> int:
        handle = len(self.callbacks) + 1
        self.callbacks[handle] = fn
        return handle

    def _frame_of(self, data: Any) -> Any:
        from rocketlab.grading.suites.lab07 import spark

        return data_to_frame(spark(), data)

    def _encode_args(self, args: tuple[Any, ...]) -> Any:
        try:
            return encode(list(args), callables=self._register, frames=frame_to_data)
        except CodecError as e:
            raise SandboxError(f"the grader could not pass an argument: {e}") from None

    # ------------------------------------------------------------------ operations
    def load(self, source: str, filename: str) -> dict[str, str]:
        """Import the submission; its top-level names and kinds (``function``/``class``/other)."""
        return self.request({"op": "load", "source": source, "filename": filename})

    def call(self, attribute: str, args: tuple[Any, ...]) -> Any:
        self.callbacks.clear()
        return self.request({"op": "call", "attr": attribute, "args": self._encode_args(args)})

    def new(self, attribute: str, args: tuple[Any, ...]) -> int:
        self.callbacks.clear()
        handle = self.request({"op": "new", "attr": attribute, "args": self._encode_args(args)})
        if type(handle) is not int:
            raise SandboxError("garbage on the grader's channel: a malformed instance handle", protocol=True)
        return handle

    def method(self, handle: int, name: str, args: tuple[Any, ...]) -> Any:
        self.callbacks.clear()
        return self.request({"op": "method", "handle": handle, "name": name, "args": self._encode_args(args)})

    def stop(self) -> None:
        """Kill the sandbox and everything it started (the namespace, or the session)."""
        sid = None
        try:
            sid = os.getsid(self.proc.pid) if not self.isolated else None
        except ProcessLookupError:
            pass
        try:
            if self.isolated:
                self.proc.kill()  # unshare --kill-child: the namespace's first process dies, and with it all
            else:
                os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if sid is not None:
            _kill_session(sid)
        self.proc.wait()
        for fd in (self.to_child, self.from_child, self.output_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def _java_dirs() -> list[str]:
    java = os.environ.get("JAVA_HOME") or (str(Path(shutil.which("java") or "").resolve().parent.parent)
                                           if shutil.which("java") else "")
    return [str(Path(java).resolve())] if java else []


def _kill_session(sid: int) -> None:
    """Without namespaces: SIGKILL every process still in session ``sid`` (a child that left the process
    group but not the session). One that called setsid itself is out of reach then (see the docs)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) == sid:
                os.kill(int(entry.name), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue


def _limits_text(limits: dict[str, int]) -> str:
    return (f"{limits['as'] / GiB:g} GiB of address space, {limits['cpu']} s of CPU, {limits['nproc']} processes, "
            f"{limits['fsize'] // 1024**2} MiB per file, {limits['nofile']} open files")


class RemoteFunction:
    """The learner's function, seen from the judge: each call crosses to the sandbox as data."""

    def __init__(self, sandbox: Sandbox, attribute: str) -> None:
        self._sandbox, self._attribute = sandbox, attribute
        self.__name__ = attribute

    def __call__(self, *args: Any) -> Any:
        return self._sandbox.call(self._attribute, args)

    def __repr__(self) -> str:
        return f"<your {self._attribute}>"


class RemoteInstance:
    """An object of the learner's class living in the sandbox; its methods are called across."""

    def __init__(self, sandbox: Sandbox, handle: int, cls_name: str) -> None:
        self._sandbox, self._handle, self._cls_name = sandbox, handle, cls_name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args: self._sandbox.method(self._handle, name, args)


class RemoteClass:
    """The learner's class, seen from the judge: calling it makes an instance in the sandbox."""

    def __init__(self, sandbox: Sandbox, attribute: str) -> None:
        self._sandbox, self._attribute = sandbox, attribute
        self.__name__ = attribute

    def __call__(self, *args: Any) -> RemoteInstance:
        return RemoteInstance(self._sandbox, self._sandbox.new(self._attribute, args), self._attribute)


# ---------------------------------------------------------------------------------------- sandbox side
def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    r = _libc().mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                      data.encode() if data else None)
    if r != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


MS_BIND, MS_REC, MS_RDONLY, MS_REMOUNT = 4096, 16384, 1, 32


def _confine(config: dict[str, Any]) -> str:
    """Mounts, limits, and (as root) the switch to ``nobody``; returns the working directory."""
    work = "/tmp/work"
    if config.get("isolated"):
        _loopback_up()
        carried = _detach_under_tmp(config.get("expose", []))
        _mount("none", "/tmp", "tmpfs", 0, "size=512m,mode=1777")
        _attach(carried)
        as_root_outside = os.geteuid() == 0 and _outer_uid() == 0
        if as_root_outside:
            _expose(config.get("expose", []))
        needed = [Path(e) for e in config.get("expose", [])]
        for path in config.get("hide", []):
            p = Path(path)
            if p.is_dir() and not any(n == p or p in n.parents for n in needed):
                _mount("none", str(p), "tmpfs", 0, "size=1m,mode=000")
            elif p.is_file():  # a file, or a directory holding the kit: its files were listed one by one
                _mount("/dev/null", str(p), None, MS_BIND, None)
    os.makedirs(work, exist_ok=True)
    limits = config["limits"]
    for name, rlimit in (("as", resource.RLIMIT_AS), ("cpu", resource.RLIMIT_CPU),
                         ("fsize", resource.RLIMIT_FSIZE), ("nofile", resource.RLIMIT_NOFILE)):
        _setrlimit(rlimit, limits[name])
    _setrlimit(resource.RLIMIT_CORE, 0)
    if os.geteuid() == 0 and _outer_uid() == 0 and (config.get("isolated") or _open_to_others(config.get("expose", []))):
        os.chown(work, NOBODY, NOBODY)
        _setrlimit(resource.RLIMIT_NPROC, limits["nproc"])
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    else:  # NPROC counts every process of the real user: leave room for those already running
        running = sum(1 for e in Path("/proc").iterdir() if e.name.isdigit())
        _setrlimit(resource.RLIMIT_NPROC, limits["nproc"] + running)
    if sys.platform.startswith("linux"):
        _libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    os.chdir(work)
    return work


OPEN_TREE_CLONE, AT_RECURSIVE, AT_FDCWD, MOVE_MOUNT_F_EMPTY_PATH = 1, 0x8000, -100, 0x4
SYS_OPEN_TREE, SYS_MOVE_MOUNT = 428, 429  # the same number on every architecture (added in Linux 5.2)


def _detach_under_tmp(paths: list[str]) -> list[tuple[int, str]]:
    """Detached copies of the mounts at ``paths`` that lie under ``/tmp`` (a kit or a venv there: the
    interpreter must stay reachable once an empty tmpfs covers ``/tmp``); :func:`_attach` puts them back."""
    under = sorted({str(Path(p)) for p in paths if Path(p).is_relative_to("/tmp") and Path(p) != Path("/tmp")})
    outermost = [p for p in under if not any(p != q and Path(p).is_relative_to(q) for q in under)]
    libc, carried = _libc(), []
    for path in outermost:
        fd = libc.syscall(SYS_OPEN_TREE, AT_FDCWD, path.encode(), OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"open_tree {path}: {os.strerror(err)}")
        carried.append((fd, path))
    return carried


def _attach(carried: list[tuple[int, str]]) -> None:
    libc = _libc()
    for fd, path in carried:
        os.makedirs(path, mode=0o755, exist_ok=True)
        if libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, path.encode(), MOVE_MOUNT_F_EMPTY_PATH) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"move_mount {path}: {os.strerror(err)}")
        os.close(fd)


def _setrlimit(which: int, value: int) -> None:
    """Lower a limit to ``value`` (never above the hard limit already set; some systems refuse some)."""
    soft, hard = resource.getrlimit(which)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        try:  # macOS refuses some hard limits: lower the soft one only
            resource.setrlimit(which, (min(value, soft) if soft != resource.RLIM_INFINITY else value, hard))
        except (ValueError, OSError):
            pass


def _open_to_others(paths: list[str]) -> bool:
    """Whether a user other than the owner can enter every directory on the way to ``paths``."""
    for path in paths:
        p = Path(path)
        for a in [*reversed(p.parents), p]:
            try:
                if not os.stat(a).st_mode & 0o001:
                    return False
            except OSError:
                return False
    return True


def _loopback_up() -> None:
    """The network namespace's own loopback up (Spark's driver and executors talk on 127.0.0.1); it has
    no other interface, so nothing outside the sandbox can be reached."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", 0x1 | 0x8 | 0x40))  # SIOCSIFFLAGS: UP|LOOPBACK|RUNNING


def _outer_uid() -> int:
    """The uid this process has outside a user namespace (0 when there is none and we are root)."""
    try:
        first = Path("/proc/self/uid_map").read_text().split()
        inside, outside = int(first[0]), int(first[1])
        return os.geteuid() - inside + outside
    except (OSError, ValueError, IndexError):
        return os.geteuid()


def _expose(paths: list[str]) -> None:
    """Make ``paths`` reachable by ``nobody``: an ancestor it cannot enter (``/root``, mode 700) is
    covered with an empty tmpfs holding only binds of what lies under it on the way to ``paths``."""
    for path in paths:
        p = Path(path)
        closed = next((a for a in reversed(p.parents) if a != Path("/") and not os.stat(a).st_mode & 0o001), None)
        if closed is None or closed == p:
            continue
        child = closed / p.relative_to(closed).parts[0]
        keep = Path("/tmp") / (".keep" + str(abs(hash(str(child)))))
        if os.path.ismount(closed):
            covered = Path(str(closed)) / child.name
            if covered.exists():
                continue
        keep.mkdir(parents=True, exist_ok=True)
        _mount(str(child), str(keep), None, MS_BIND | MS_REC, None)
        if not os.path.ismount(closed) or not (closed / child.name).exists():
            _mount("none", str(closed), "tmpfs", 0, "size=1m,mode=755")
        (closed / child.name).mkdir(exist_ok=True)
        _mount(str(keep), str(closed / child.name), None, MS_BIND | MS_REC, None)
        _libc().umount2(str(keep).encode(), 2)  # MNT_DETACH


class _Passthrough:
    """sys.stdout/sys.stderr of the sandbox: unbuffered writes to ``fd`` (the judge drains and caps them)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, s: Any) -> int:
        s = s if isinstance(s, str) else str(s)
        data = s.encode(errors="replace")
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            pass
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _learner_text(exc: BaseException, filename: str) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in tb if f.filename == filename]
    where = f" at line {mine[-1].lineno} of your file ({mine[-1].line})" if mine else ""
    last = tb[-1] if tb else None
    inside = f" in {Path(last.filename).name}:{last.lineno} ({last.name})" if last and not mine else ""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a __str__ that raises
        message = "(its message could not be shown)"
    if len(message) > MAX_TEXT:
        message = message[:MAX_TEXT] + f"... ({len(message):,} characters, cut)"
    return f"{type(exc).__name__}: {message}{where}{inside}"


def _describe(value: Any) -> dict[str, Any]:
    """What the judge needs to know of a top-level name: its kind and parameters (to name a wrong
    signature), as data."""
    import inspect

    kind = "class" if isinstance(value, type) else "function" if callable(value) else "other"
    params = None
    if kind != "other":
        try:
            params = [[p.name, int(p.kind), p.default is not p.empty]
                      for p in inspect.signature(value).parameters.values()]
        except (TypeError, ValueError):
            params = None
    return {"kind": kind, "params": params}


def main(argv: list[str]) -> int:
    read_fd, write_fd = int(argv[0]), int(argv[1])
    reader = os.fdopen(read_fd, "rb")
    write, dumps = os.write, json.dumps

    def send(message: dict[str, Any]) -> None:
        data = (dumps(message) + "\n").encode()
        while data:
            data = data[write(write_fd, data):]

    def readline() -> dict[str, Any]:
        line = b""
        while not line.endswith(b"\n"):
            chunk = reader.readline()
            if not chunk:
                raise SystemExit(0)
            line += chunk
        return json.loads(line)

    config = readline()
    _confine(config)
    sys.stdout = _Passthrough(1)  # type: ignore[assignment]
    sys.stderr = _Passthrough(2)  # type: ignore[assignment]
    # the kit's own log (a store's recovery warnings, when a submission drives kit classes) is not the
    # learner's output: without a handler Python would print it on stderr, captured as "your code printed"
    logging.getLogger("rocketlab").addHandler(logging.NullHandler())
    module_globals: dict[str, Any] = {}
    filename = "submission.py"
    handles: dict[int, Any] = {}
    spark_holder: list[Any] = []

    def spark() -> Any:
        if not spark_holder:
            from rocketlab.analysis.session import get_spark

            spark_holder.append(get_spark(master="local[2]", app_name="rocketlab-sandbox",
                                          **{"spark.ui.enabled": "false"}))
        return spark_holder[0]

    def remote_callable(handle: int) -> Callable[..., Any]:
        def call_back(*args: Any) -> Any:
            send({"op": "callback", "fn": handle, "args": encode(list(args))})
            reply = readline()
            if "raise" in reply:
                raise RuntimeError(str(reply["raise"].get("text", "")))
            return decode(reply.get("value"))
        return call_back

    def args_of(message: dict[str, Any]) -> list[Any]:
        args = decode(message["args"], callable_of=remote_callable, frame_of=lambda d: data_to_frame(spark(), d))
        return list(args)

    while True:
        message = readline()
        op = message.get("op")
        try:
            if op == "load":
                filename = str(message["filename"])
                source = str(message["source"])
                linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
                code = compile(source, filename, "exec")
                module_globals = {"__name__": "submission", "__file__": filename, "__builtins__": __builtins__}
                sys.modules["submission"] = type(sys)("submission")
                exec(code, module_globals)  # noqa: S102 - this process exists to run it
                vars(sys.modules["submission"]).update(module_globals)
                value: Any = {k: _describe(v) for k, v in module_globals.items() if not k.startswith("__")}
            elif op == "call":
                value = module_globals[message["attr"]](*args_of(message))
            elif op == "new":
                obj = module_globals[message["attr"]](*args_of(message))
                value = len(handles) + 1
                handles[value] = obj
            elif op == "method":
                value = getattr(handles[message["handle"]], message["name"])(*args_of(message))
            else:
                raise SystemExit(f"unknown op {op}")
            out = encode(value, frames=frame_to_data)
            sys.stdout.flush()
            send({"value": out})
        except SystemExit as e:
            if op is None or op not in ("load", "call", "new", "method"):
                raise
            send({"raise": {"text": f"your code called sys.exit({e.code!r})"}})
        except BaseException as e:  # noqa: BLE001 - the learner's code raised: the text crosses, capped
            info: dict[str, Any] = {"text": _learner_text(e, filename),
                                    "not_implemented": isinstance(e, NotImplementedError)}
            mod = type(e).__module__
            if mod.startswith("rocketlab.") and not mod.startswith("rocketlab.grading"):
                info["kit_class"] = f"{mod}:{type(e).__qualname__}"
                info["message"] = str(e)[:MAX_TEXT]
            if isinstance(e, CodecError):
                info["text"] = f"your function's answer cannot cross to the grader: {str(e)[:MAX_TEXT]}"
            send({"raise": info})


if __name__ == "__main__":
    time.sleep(0)
    sys.exit(main(sys.argv[1:]))
