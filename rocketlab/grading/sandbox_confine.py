"""Inside the sandbox, before the submission loads: namespaces' mounts, resource limits, and the switch to ``nobody``.

Run by the sandbox's own process (:mod:`rocketlab.grading.sandbox_child`) in the new PID, mount and network
namespaces ``unshare`` made: an empty ``tmpfs`` over ``/tmp`` and over every path the submission must not
read, the interpreter kept reachable (carried through the new ``/tmp`` as a detached mount when it lives
there, re-exposed under directories ``nobody`` cannot enter), the loopback up, then ``RLIMIT_*`` and, as
root, ``nobody`` with ``no_new_privs``. What each step defends against is in ``docs/grading-trust.md``.
rocketlab's own addition.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import socket
import struct
import sys
from pathlib import Path
from typing import Any

NOBODY = 65534
WORK = "/tmp/work"
"""The sandbox's working directory (empty; also its ``HOME`` and ``TMPDIR``)."""


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    r = _libc().mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                      data.encode() if data else None)
    if r != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


MS_BIND, MS_REC, MS_RDONLY, MS_REMOUNT = 4096, 16384, 1, 32


def confine(config: dict[str, Any]) -> str:
    """Mounts, limits, and (as root) the switch to ``nobody``; returns the working directory."""
    work = WORK
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

