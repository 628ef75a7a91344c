"""The sandbox seen from the judge: start the process that runs a submission's code, call it, stop it whole.

The judge (:mod:`rocketlab.grading.worker`) never imports a submission. It starts :class:`Sandbox`, sends
it the submission's source text, and plugs :class:`RemoteFunction` / :class:`RemoteClass` proxies into
the real cluster in place of the learner's functions; every call crosses a pipe as plain data
(:mod:`rocketlab.grading.sandbox_codec`), so the submission changes a score only through what its
functions return. The sandbox process (:mod:`rocketlab.grading.sandbox_child`, confined by
:mod:`rocketlab.grading.sandbox_confine`):

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
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import rocketlab
from rocketlab.errors import RocketlabError
from rocketlab.grading import sandbox_messages as M
from rocketlab.grading.registry import LABS
from rocketlab.grading.sandbox_codec import (
    MAX_TEXT,
    SCALARS,
    CodecError,
    CollectedFrame,
    data_to_frame,
    decode,
    encode,
    frame_to_data,
    kit_type,
)
from rocketlab.grading.sandbox_confine import WORK
from rocketlab.grading.sandbox_cpu import CpuPair
from rocketlab.grading.sandbox_json import dumps, loads
from rocketlab.grading.sandbox_memo import CallMemo, Step

MAX_LINE = 32 * 1024 * 1024  # one message on the channel
PIPE_READ = 65536  # bytes read at a time
DRAIN = -2  # Sandbox.expected while a drain is in flight
OUTPUT_KEEP = 2_000  # printed characters kept per test
GiB = 1024**3
PYTHON_LIMITS = {"as": 2 * GiB, "cpu": 600, "nproc": 64, "fsize": 16 * 1024**2, "nofile": 256}
JVM_LIMITS = {"as": 12 * GiB, "cpu": 1800, "nproc": 1024, "fsize": 256 * 1024**2, "nofile": 4096}


CHILD_BOOT = """import sys, types
lean = sys.argv[2] == "lean"
if lean:
    grading = types.ModuleType("rocketlab.grading")
    grading.__path__ = [sys.argv[1]]
    sys.modules["rocketlab.grading"] = grading
from rocketlab.grading.sandbox_child import main
if lean:
    del sys.modules["rocketlab.grading"]
sys.exit(main(sys.argv[3:]))
"""
"""The sandbox process's first lines. ``lean`` (a lab without Spark): its modules (the channel, the codec,
the confinement: the standard library and nothing of the kit) are imported without running the grading
package's ``__init__`` (the lab table, every suite, the simulator: some 0.2 s of a 0.25 s start that such a
sandbox never uses); the stand-in package is then dropped, so a submission that imports
``rocketlab.grading`` gets the real one. ``full`` (a lab that passes DataFrames): the package as usual,
whose lab table names the lab's Spark factory."""


def limits_for(lab: str) -> dict[str, int]:
    """Resource limits of a lab's sandbox: a JVM (a lab whose tests start one, the lab table's ``java``:
    lab 07's Spark) needs far more address space, threads and descriptors than plain Python."""
    return dict(JVM_LIMITS if lab in LABS and LABS[lab].java else PYTHON_LIMITS)


class SandboxError(Exception):
    """The submission's code raised (``text`` in the learner's terms), or the sandbox broke its protocol."""

    def __init__(self, text: str, protocol: bool = False) -> None:
        super().__init__(text)
        self.text, self.protocol = text, protocol


class SandboxSetupError(RocketlabError):
    """The sandbox could not be set up (before any submission code ran): the grader's failure, never the
    submission's. Its text is "the grader could not start its sandbox: REASON"."""

    PREFIX = M.SETUP_PREFIX

    def __init__(self, reason: str) -> None:
        super().__init__(M.say(self.PREFIX) + reason)
        self.reason = reason


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
        home = WORK
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home, "TMPDIR": home,
               "PYTHONPATH": str(kit_root()), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
               "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
        for key in ("JAVA_HOME",):
            if os.environ.get(key):
                env[key] = os.environ[key]
        boot = "full" if lab in LABS and LABS[lab].spark is not None else "lean"
        self.cpu = CpuPair.pin(jvm=lab in LABS and LABS[lab].java)  # the sandbox inherits the judge's CPU
        argv = [sys.executable, "-c", CHILD_BOOT, str(Path(__file__).parent), boot, str(to_child_r), str(from_child_w)]
        if self.isolated:
            argv = [*_unshare_prefix(), *argv]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, env=env,
                                     pass_fds=(to_child_r, from_child_w), cwd="/",
                                     start_new_session=not self.isolated, preexec_fn=_pdeathsig)
        for fd in (to_child_r, from_child_w, out_w):
            os.close(fd)
        if self.cpu is not None:
            self.cpu.started(self.proc.pid)
        os.set_blocking(self.output_fd, False)
        self.output_open = True
        self.buffer = bytearray()
        self.kept, self.total = bytearray(), 0
        self.poller = select.poll()
        self.poller.register(self.from_child, select.POLLIN)
        self.poller.register(self.output_fd, select.POLLIN)
        self.callbacks: dict[int, Callable[..., Any]] = {}
        self.expected = 0  # the length of the batch in flight (map)
        self.broken: str | None = None
        self.memo = CallMemo()
        self.transcript: list[Step] | None = None  # the call-backs of the memoised call in flight
        config = {"hide": sorted(set(hide or [])), "limits": limits or limits_for(lab), "isolated": self.isolated,
                  "expose": exposed_paths(hide or []), "lab": lab, "lang": M.language()}
        self._ready(config)

    def _ready(self, config: dict[str, Any]) -> None:
        """Send the configuration and wait for the sandbox to say it is confined (SandboxSetupError if not)."""
        try:
            self._send(config)
            said = self._receive()
        except SandboxError:
            code = self.proc.poll()
            printed, _ = self.take_output()
            self.stop()
            tail = printed.strip().splitlines()[-1][:300] if printed.strip() else M.say(M.PRINTED_NOTHING)
            raise SandboxSetupError(M.say(M.ENDED_BEFORE_READY, code=code, tail=tail)) from None
        if said.get("confined") is not True:
            self.stop()
            raise SandboxSetupError(str(said.get("setup_error") or M.say(M.SAID, what=str(said)[:200])))

    # ------------------------------------------------------------------ channel
    def _send(self, message: dict[str, Any], encoded: bytes | None = None) -> None:
        data = (dumps(message) if encoded is None else encoded) + b"\n"
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
            how = M.say(M.KILLED_BY, signal=signal.Signals(-code).name)
        else:
            how = M.say(M.EXITED, code=code)
        limits = _limits_text(limits_for(self.lab))
        self.broken = M.say(M.PROCESS_ENDED, how=how, limits=limits)
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
        at = self.buffer.find(b"\n")
        while at < 0:
            ready = self.poller.poll(1000)
            for fd, _ in ready:
                if fd == self.output_fd:
                    self._drain_output()
            if not any(fd == self.from_child for fd, _ in ready):
                if self.proc.poll() is not None and not ready:
                    raise self._gone()
                continue
            # at most a pipe's capacity: a read of 1 MiB made Python map and unmap a 1 MiB buffer each time
            chunk = os.read(self.from_child, PIPE_READ)
            if not chunk:
                raise self._gone()
            at = chunk.find(b"\n")
            at = -1 if at < 0 else len(self.buffer) + at
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE and at < 0:
                self.broken = M.say(M.TOO_LONG)
                raise SandboxError(self.broken, protocol=True)
        line = bytes(self.buffer[:at])
        del self.buffer[:at + 1]
        try:
            message = loads(line)
        except ValueError:
            raise SandboxError(M.say(M.GARBAGE, what=repr(line[:80])), protocol=True) from None
        if type(message) is not dict:
            raise SandboxError(M.say(M.GARBAGE, what=repr(line[:80])), protocol=True)
        return message

    def request(self, message: dict[str, Any], batch: int = -1, raw: bool = False,
                encoded: bytes | None = None) -> Any:
        """Send one request (``encoded``: its JSON text, when the caller has it); answer callbacks until its
        reply; the reply's value, decoded (a ``map``'s: ``batch`` answers; with ``raw`` the reply itself,
        undecoded)."""
        self.expected = batch
        if self.broken:
            raise SandboxError(self.broken, protocol=True)
        try:
            return self._request(message, raw, encoded)
        except SandboxError as e:
            if e.protocol:  # a channel out of step is never trusted again: the judge starts a fresh sandbox
                self.broken = self.broken or e.text
            raise

    def _request(self, message: dict[str, Any], raw: bool = False, encoded: bytes | None = None) -> Any:
        if self.cpu is not None:
            self.cpu.watch()
        self._send(message, encoded)
        while True:
            reply = self._receive()
            if reply.get("op") == "callback":
                self._send(self._callback_reply(reply, self.transcript))
                continue
            return reply if raw else self._finish(reply)

    def _finish(self, reply: dict[str, Any]) -> Any:
        """A request's reply, decoded: its value, a batch's answers, a drain's reads; or its error raised."""
        if "raise" in reply:
            self._raise(reply["raise"])
        if "values" in reply:
            return self._outcomes(reply["values"])
        if "drained" in reply and self.expected == DRAIN:
            return self._drained(reply["drained"])
        if "value" not in reply:
            raise SandboxError(M.say(M.GARBAGE, what=str(reply)[:80]), protocol=True)
        try:
            return decode(reply["value"], frame_of=self._frame_of)
        except CodecError as e:
            raise SandboxError(M.say(M.UNREADABLE, why=e)) from None

    def _callback_reply(self, message: dict[str, Any], transcript: list[Step] | None = None) -> dict[str, Any]:
        """The judge's reply to a call-back (``transcript``: where a memoised call keeps it)."""
        fn = self.callbacks.get(message.get("fn")) if isinstance(message.get("fn"), int) else None
        if fn is None:
            raise SandboxError(M.say(M.UNKNOWN_CALLBACK), protocol=True)
        try:
            args = decode(message.get("args"))
            if type(args) is not list:
                raise CodecError("call-back arguments are not a list")
            value = fn(*args)
            reply: dict[str, Any] = {"value": encode(value, callables=self._register)}
        except CodecError as e:
            raise SandboxError(M.say(M.GARBAGE, what=e), protocol=True) from None
        except Exception as e:  # noqa: BLE001 - the kit's function raised for the learner's argument
            reply = {"raise": {"text": f"{type(e).__name__}: {str(e)[:MAX_TEXT]}"}}
        if transcript is not None:
            transcript.append((message["fn"], message.get("args"), json.dumps(reply)))
        return reply

    def _raise(self, info: Any) -> None:
        raise self._exception(info)

    def _exception(self, info: Any) -> Exception:
        """The exception an error crossing from the sandbox stands for (a kit class's own, rebuilt)."""
        if type(info) is not dict:
            raise SandboxError(M.say(M.MALFORMED_ERROR), protocol=True)
        text = str(info.get("text", ""))[:MAX_TEXT + 400]
        if info.get("not_implemented") is True:
            return NotImplementedError(text)
        kit = info.get("kit_class")
        if isinstance(kit, str):
            try:
                cls = kit_type(kit)
            except (CodecError, ImportError):
                cls = None
            if cls is not None and issubclass(cls, Exception) and not issubclass(cls, AssertionError):
                try:
                    err = cls(str(info.get("message", ""))[:MAX_TEXT])
                except Exception:  # noqa: BLE001 - a kit exception with another constructor
                    err = None
                if err is not None:
                    return err
        return SandboxError(text)

    def _outcomes(self, values: Any) -> list[tuple[bool, Any]]:
        """A batch's answers (``map``): (True, value) or (False, the exception), one per call, in order."""
        if type(values) is not list or len(values) != self.expected:
            raise SandboxError(M.say(M.BATCH_LENGTH), protocol=True)
        out: list[tuple[bool, Any]] = []
        for item in values:
            if type(item) is not dict or ("value" in item) == ("raise" in item):
                raise SandboxError(M.say(M.MALFORMED_ANSWER), protocol=True)
            if "raise" in item:
                out.append((False, self._exception(item["raise"])))
                continue
            value = item["value"]
            if value is None or type(value) in SCALARS:  # a table's plain answer (lab 02's True/False)
                out.append((True, value))
                continue
            try:
                out.append((True, decode(item["value"], frame_of=self._frame_of)))
            except CodecError as e:
                out.append((False, SandboxError(M.say(M.UNREADABLE, why=e))))
        return out

    def _register(self, fn: Callable[..., Any]) -> int:
        for handle, known in self.callbacks.items():  # one handle per function (a batch passes it per call)
            if known is fn:
                return handle
        handle = len(self.callbacks) + 1
        self.callbacks[handle] = fn
        return handle

    def _frame_of(self, data: Any) -> Any:
        """A DataFrame the submission returned: its collected rows, built into the lab's Spark session (the
        lab table's ``spark``) only if a test asks more of it than its columns and rows."""
        make = LABS[self.lab].spark if self.lab in LABS else None
        if make is None:
            raise CodecError(M.say(M.NO_FRAMES, lab=self.lab))
        return CollectedFrame(data, lambda d: data_to_frame(make(), d))

    def _encode_args(self, args: tuple[Any, ...]) -> Any:
        try:
            return encode(list(args), callables=self._register, frames=frame_to_data, memo={})
        except CodecError as e:
            raise SandboxError(M.say(M.CANNOT_PASS, why=e)) from None

    # ------------------------------------------------------------------ operations
    def load(self, source: str, filename: str, plugs: dict[str, str] | None = None) -> dict[str, str]:
        """Import the submission; its top-level names and kinds (``function``/``class``/other). ``plugs`` (override
        point -> attribute) are plugged in there too, so the kit's components the submission calls use its code."""
        return self.request({"op": "load", "source": source, "filename": filename, "plugs": plugs or {}})

    def call(self, attribute: str, args: tuple[Any, ...]) -> Any:
        """The learner's function ``attribute`` on ``args``: an identical earlier call's reply if its
        call-backs answer as before (:mod:`~rocketlab.grading.sandbox_memo`), else one crossing."""
        self.callbacks.clear()
        message = {"op": "call", "attr": attribute, "args": self._encode_args(args)}
        key = dumps(message)
        reply = self.memo.replay(key, self._callback_reply)
        if reply is None:
            self.transcript = []
            try:
                reply = self.request(message, raw=True, encoded=key)
                self.memo.store(key, self.transcript, reply)
            finally:
                self.transcript = None
        self.expected = -1
        try:
            return self._finish(reply)
        except SandboxError as e:
            if e.protocol:
                self.broken = self.broken or e.text
            raise

    def map(self, attribute: str, calls: list[tuple[Any, ...]]) -> list[tuple[bool, Any]]:
        """``attribute`` called once per argument tuple of ``calls`` in one crossing: (True, value) or
        (False, exception) per call (a table's cases)."""
        self.callbacks.clear()
        return self.request({"op": "map", "attr": attribute, "calls": self._encode_args(tuple(calls))}, len(calls))

    def drain(self, handle: int, feed: str, pull: str, chunks: list[Any], until: Any,
              limit: int) -> tuple[list[list[Any]], Exception | None, bool]:
        """A sans-IO object's reads in one crossing: per chunk ``feed(chunk)``, then ``pull()`` until it
        returns ``until`` (at most ``limit`` times). What each chunk's pulls returned (``until`` left out),
        the error that stopped it if any, and whether a chunk never reached ``until``."""
        self.callbacks.clear()
        return self.request({"op": "drain", "handle": handle, "feed": feed, "pull": pull, "limit": int(limit),
                             "args": self._encode_args((chunks, until))}, DRAIN)

    def _drained(self, data: Any) -> tuple[list[list[Any]], Exception | None, bool]:
        if type(data) is not dict or type(data.get("pulled")) is not list:
            raise SandboxError(M.say(M.MALFORMED_DRAIN), protocol=True)
        try:
            pulled = [[decode(v) for v in chunk] if type(chunk) is list else None for chunk in data["pulled"]]
        except CodecError as e:
            return [], SandboxError(M.say(M.UNREADABLE, why=e)), False
        if any(chunk is None for chunk in pulled):
            raise SandboxError(M.say(M.MALFORMED_DRAIN), protocol=True)
        error = self._exception(data["raise"]) if "raise" in data else None
        return pulled, error, data.get("unfinished") is True

    def new(self, attribute: str, args: tuple[Any, ...]) -> int:
        self.callbacks.clear()
        handle = self.request({"op": "new", "attr": attribute, "args": self._encode_args(args)})
        if type(handle) is not int:
            raise SandboxError(M.say(M.MALFORMED_HANDLE), protocol=True)
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
        if self.cpu is not None:
            self.cpu.stop()
        for fd in (self.to_child, self.from_child, self.output_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def exposed_paths(hide: list[str]) -> list[str]:
    """The directories the sandbox's user must reach: the interpreter (its prefix, its base prefix - a
    pyenv or conda Python under a venv - and its own directory), the kit, Java, and every directory on
    ``sys.path`` (a ``.pth`` file's), except the current directory and what lies in, or holds, a path to
    hide."""
    hidden = [Path(h).resolve() for h in hide]
    here = Path.cwd().resolve()
    fixed = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(sys.executable).resolve().parent,
             kit_root(), *(Path(j) for j in _java_dirs())}
    extra = set()
    for entry in sys.path:
        p = Path(entry).resolve() if entry else here
        if p != here and p.is_dir() and p != Path("/") and not any(
                h == p or h.is_relative_to(p) or p.is_relative_to(h) for h in hidden):
            extra.add(p)
    return sorted(str(p) for p in fixed | extra if p.is_dir())


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
    return M.say(M.LIMITS, gib=f"{limits['as'] / GiB:g}", cpu=limits["cpu"], nproc=limits["nproc"],
               fsize=limits["fsize"] // 1024**2, nofile=limits["nofile"])


class RemoteFunction:
    """The learner's function, seen from the judge: each call crosses to the sandbox as data."""

    def __init__(self, sandbox: Sandbox, attribute: str) -> None:
        self._sandbox, self._attribute = sandbox, attribute
        self.__name__ = attribute

    def __call__(self, *args: Any) -> Any:
        return self._sandbox.call(self._attribute, args)

    def map(self, calls: list[tuple[Any, ...]]) -> list[tuple[bool, Any]]:
        """Many calls in one crossing (a table's cases): (True, value) or (False, exception) each."""
        return self._sandbox.map(self._attribute, calls)

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

    def _drain(self, feed: str, pull: str, chunks: list[Any], until: Any,
               limit: int) -> tuple[list[list[Any]], Exception | None, bool]:
        """:meth:`Sandbox.drain` on this object (one crossing for a whole stream of reads)."""
        return self._sandbox.drain(self._handle, feed, pull, chunks, until, limit)


class RemoteClass:
    """The learner's class, seen from the judge: calling it makes an instance in the sandbox."""

    def __init__(self, sandbox: Sandbox, attribute: str) -> None:
        self._sandbox, self._attribute = sandbox, attribute
        self.__name__ = attribute

    def __call__(self, *args: Any) -> RemoteInstance:
        return RemoteInstance(self._sandbox, self._sandbox.new(self._attribute, args), self._attribute)
