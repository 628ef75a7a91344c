"""The sandbox's own process: loads a submission and runs its functions for the judge, values as data.

Started by :class:`~rocketlab.grading.sandbox.Sandbox` as ``python -c CHILD_BOOT DIR lean|full READ_FD
WRITE_FD`` (inside ``unshare``'s namespaces where it can make them; ``lean``: this module imported without
the grading package's ``__init__``, the lab table empty - it needs nothing of the kit but a Spark lab's
factory, and only a Spark lab's sandbox starts ``full``). It reads its configuration
(one JSON line), confines itself (:func:`rocketlab.grading.sandbox_confine.confine`) and says so
(``{"confined": true}``, or ``{"setup_error": why}``: the grader's failure, not the submission's), then answers one
request a line - ``load`` (the submission's source), ``call``, ``map`` (one function on many argument
lists: a table's cases in one crossing), ``new``, ``method``, ``drain`` (a parser's reads: feed each chunk,
pull until a kit constant, in one crossing) - with one reply a line: ``{"value": ...}``
(:mod:`rocketlab.grading.sandbox_codec`) or ``{"raise": ...}`` (the exception in the learner's terms), or
for ``map`` ``{"values": [...]}``, one of those per call. A function argument of the judge's is called back across the same pipe. The
channel's writer, encoders (``orjson``; ``json`` for what orjson refuses) and decoder are bound before the
submission runs, so code that patches ``os.write``, ``json.dumps`` or ``orjson`` cannot change what crosses. rocketlab's own addition.
"""

from __future__ import annotations

import inspect
import json
import linecache
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from rocketlab import plugs
from rocketlab.grading.sandbox_codec import MAX_TEXT, CodecError, data_to_frame, decode, encode, frame_to_data
from rocketlab.grading.sandbox_confine import SetupError, confine
from rocketlab.i18n import _, set_language

OPS = ("load", "call", "map", "drain", "new", "method")
"""The requests the judge sends."""


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
    where = _(" at line {line} of your file ({code})").format(line=mine[-1].lineno, code=mine[-1].line) if mine else ""
    last = tb[-1] if tb else None
    inside = _(" in {file}:{line} ({function})").format(file=Path(last.filename).name, line=last.lineno,
                                                        function=last.name) if last and not mine else ""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a __str__ that raises
        message = _("(its message could not be shown)")
    if len(message) > MAX_TEXT:
        message = message[:MAX_TEXT] + _("... ({n} characters, cut)").format(n=f"{len(message):,}")
    return f"{type(exc).__name__}: {message}{where}{inside}"


def _describe(value: Any) -> dict[str, Any]:
    """What the judge needs to know of a top-level name: its kind and parameters (to name a wrong
    signature), as data."""
    kind = "class" if isinstance(value, type) else "function" if callable(value) else "other"
    params = None
    if kind != "other":
        try:
            params = [[p.name, int(p.kind), p.default is not p.empty]
                      for p in inspect.signature(value).parameters.values()]
        except (TypeError, ValueError):
            params = None
    return {"kind": kind, "params": params}


def _labs() -> dict[str, Any]:
    """The lab table, as the grading package loaded it (``CHILD_BOOT``'s ``full``); empty in a ``lean``
    sandbox, which never imports the registry (some 8 ms of its start)."""
    registry = sys.modules.get("rocketlab.grading.registry")
    return registry.LABS if registry is not None else {}


class Batch:
    """A ``map`` request's answers, each already encoded (``{"value": ...}`` or ``{"raise": ...}``), or a
    ``drain``'s reads (``drained``)."""

    def __init__(self, answers: list[dict[str, Any]], drained: dict[str, Any] | None = None) -> None:
        self.answers, self.drained = answers, drained


class _Child:
    """The sandbox's end of the channel: the submission's namespace, its objects, and the pipe."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.reader = os.fdopen(read_fd, "rb", buffering=65536)  # a table's batch: 16 reads a MiB, not 256
        self.write_fd = write_fd
        # bound before the submission can patch them: the writer, the encoders and the reader's decoder
        self.write, self.dumps, self.fast_dumps, self.loads = os.write, json.dumps, orjson.dumps, orjson.loads
        self.module_globals: dict[str, Any] = {}
        self.filename = "submission.py"
        self.handles: dict[int, Any] = {}
        self.lab = ""
        self.spark_holder: list[Any] = []
        self.spark_lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        try:
            data = self.fast_dumps(message) + b"\n"
        except TypeError:  # what orjson refuses (a lone surrogate in a string): json writes it escaped
            data = (self.dumps(message) + "\n").encode()
        while data:
            data = data[self.write(self.write_fd, data):]

    def readline(self) -> dict[str, Any]:
        line = b""
        while not line.endswith(b"\n"):
            chunk = self.reader.readline()
            if not chunk:
                raise SystemExit(0)
            line += chunk
        return self.loads(line)  # the judge's own JSON: integers within 62 bits, no NaN

    def spark(self) -> Any:
        """The lab's Spark session (the lab table's ``spark``), made once: by :meth:`warm_up` while the
        judge starts its own, or at the first DataFrame. (Only a Spark lab's sandbox starts with the lab
        table loaded: ``CHILD_BOOT``'s ``full``; in any other the table is empty.)"""
        with self.spark_lock:
            if not self.spark_holder:
                labs = _labs()
                make = labs[self.lab].spark if self.lab in labs else None
                if make is None:
                    raise CodecError(_("{lab} passes no DataFrames").format(lab=self.lab or _("this lab")))
                self.spark_holder.append(make(app_name="rocketlab-sandbox", **{"spark.ui.enabled": "false"}))
            return self.spark_holder[0]

    def warm_up(self) -> None:
        """A lab that passes DataFrames: start its Spark session (a JVM, some ten seconds) now, in a thread,
        beside the judge's own start-up and the submission's import, instead of at the first DataFrame.
        A failure here is met again, and reported, at the first DataFrame."""
        labs = _labs()
        if self.lab in labs and labs[self.lab].spark is not None:
            # imported before the thread starts, so no other import meets a half-imported pyspark
            import pyspark.sql.functions  # noqa: F401  # lazy: Spark, only for a lab that passes DataFrames
            threading.Thread(target=self._warm, name="spark-warm-up", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.spark()
        except Exception:  # noqa: BLE001, S110 - said at the first DataFrame, where a test can fail for it
            pass

    def remote_callable(self, handle: int) -> Callable[..., Any]:
        def call_back(*args: Any) -> Any:
            self.send({"op": "callback", "fn": handle, "args": encode(list(args))})
            reply = self.readline()
            if "raise" in reply:
                raise RuntimeError(str(reply["raise"].get("text", "")))
            return decode(reply.get("value"))
        return call_back

    def args_of(self, message: dict[str, Any]) -> list[Any]:
        args = decode(message["args"], callable_of=self.remote_callable,
                      frame_of=lambda d: data_to_frame(self.spark(), d), refs={})
        return list(args)

    def load(self, message: dict[str, Any]) -> Any:
        """Run the submission's source as the module ``submission``; its top-level names described."""
        self.filename = str(message["filename"])
        source = str(message["source"])
        linecache.cache[self.filename] = (len(source), None, source.splitlines(True), self.filename)
        code = compile(source, self.filename, "exec")
        self.module_globals = {"__name__": "submission", "__file__": self.filename, "__builtins__": __builtins__}
        sys.modules["submission"] = type(sys)("submission")
        exec(code, self.module_globals)  # noqa: S102 - this process exists to run it
        vars(sys.modules["submission"]).update(self.module_globals)
        points = message.get("plugs") or {}  # override point -> the learner's attribute
        plugs.preset({point: self.module_globals[attr] for point, attr in points.items() if attr in self.module_globals})
        return {k: _describe(v) for k, v in self.module_globals.items() if not k.startswith("__")}

    def map(self, message: dict[str, Any]) -> Batch:
        """One call per argument list of ``message["calls"]``: each answer, or the error it raised."""
        fn = self.module_globals[message["attr"]]
        calls = decode(message["calls"], callable_of=self.remote_callable,
                       frame_of=lambda d: data_to_frame(self.spark(), d), refs={})
        out = []
        for args in calls:
            try:
                out.append({"value": encode(fn(*args), frames=frame_to_data)})
            except SystemExit as e:
                out.append({"raise": {"text": _("your code called sys.exit({code!r})").format(code=e.code)}})
            except BaseException as e:  # noqa: BLE001 - the learner's code raised: that call's answer
                out.append({"raise": _error_info(e, self.filename)})
        return Batch(out)

    def drain(self, message: dict[str, Any]) -> Batch:
        """Per chunk: ``feed(chunk)``, then ``pull()`` until it returns ``until`` (a kit constant such as
        NEED_DATA), at most ``limit`` times; every pulled value encoded; stops at the first error."""
        obj = self.handles[message["handle"]]
        feed, pull = getattr(obj, str(message["feed"])), getattr(obj, str(message["pull"]))
        chunks, until = self.args_of(message)
        pulled: list[list[Any]] = []
        out: dict[str, Any] = {"pulled": pulled}
        try:
            for chunk in chunks:
                feed(chunk)
                got: list[Any] = []
                pulled.append(got)
                for _step in range(int(message["limit"])):
                    value = pull()
                    if value is until:
                        break
                    got.append(encode(value, frames=frame_to_data))
                else:
                    out["unfinished"] = True
                    break
        except SystemExit as e:
            out["raise"] = {"text": _("your code called sys.exit({code!r})").format(code=e.code)}
        except BaseException as e:  # noqa: BLE001 - the learner's code raised: it stops the drain there
            out["raise"] = _error_info(e, self.filename)
        return Batch([], drained=out)

    def handle(self, op: Any, message: dict[str, Any]) -> Any:
        """One request's value (SystemExit for an unknown one)."""
        if op == "load":
            return self.load(message)
        if op == "call":
            return self.module_globals[message["attr"]](*self.args_of(message))
        if op == "map":
            return self.map(message)
        if op == "drain":
            return self.drain(message)
        if op == "new":
            obj = self.module_globals[message["attr"]](*self.args_of(message))
            handle = len(self.handles) + 1
            self.handles[handle] = obj
            return handle
        if op == "method":
            return getattr(self.handles[message["handle"]], message["name"])(*self.args_of(message))
        raise SystemExit(f"unknown op {op}")

    def serve(self) -> None:
        """Answer requests until the judge closes the pipe."""
        while True:
            message = self.readline()
            op = message.get("op")
            try:
                value = self.handle(op, message)
                sys.stdout.flush()
                if isinstance(value, Batch) and value.drained is not None:
                    self.send({"drained": value.drained})
                elif isinstance(value, Batch):
                    self.send({"values": value.answers})
                else:
                    self.send({"value": encode(value, frames=frame_to_data)})
            except SystemExit as e:
                if op is None or op not in OPS:
                    raise
                self.send({"raise": {"text": _("your code called sys.exit({code!r})").format(code=e.code)}})
            except BaseException as e:  # noqa: BLE001 - the learner's code raised: the text crosses, capped
                self.send({"raise": _error_info(e, self.filename)})


def _error_info(e: BaseException, filename: str) -> dict[str, Any]:
    """What crosses for an exception: its text in the learner's terms; a kit exception's class and message."""
    info: dict[str, Any] = {"text": _learner_text(e, filename), "not_implemented": isinstance(e, NotImplementedError)}
    mod = type(e).__module__
    if mod.startswith("rocketlab.") and not mod.startswith("rocketlab.grading"):
        info["kit_class"] = f"{mod}:{type(e).__qualname__}"
        info["message"] = str(e)[:MAX_TEXT]
    if isinstance(e, CodecError):
        info["text"] = _("your function's answer cannot cross to the grader: {why}").format(why=str(e)[:MAX_TEXT])
    return info


def main(argv: list[str]) -> int:
    child = _Child(int(argv[0]), int(argv[1]))
    config = child.readline()
    child.lab = str(config.get("lab", ""))
    set_language(config.get("lang"))  # the judge's language: the child's scrubbed environment names none
    try:
        confine(config)
    except (SetupError, OSError) as e:  # the grader's failure: said as such, before any submission code runs
        child.send({"setup_error": str(e) or type(e).__name__})
        return 1
    child.send({"confined": True})
    sys.stdout = _Passthrough(1)  # type: ignore[assignment]
    sys.stderr = _Passthrough(2)  # type: ignore[assignment]
    # the kit's own log (a store's recovery warnings, when a submission drives kit classes) is not the
    # learner's output: without a handler Python would print it on stderr, captured as "your code printed"
    logging.getLogger("rocketlab").addHandler(logging.NullHandler())
    child.warm_up()
    child.serve()
    return 0


if __name__ == "__main__":
    time.sleep(0)
    sys.exit(main(sys.argv[1:]))
