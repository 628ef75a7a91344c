"""Inside the sandbox, before the submission loads: namespaces' mounts, resource limits, and the switch to ``nobody``.

Run by the sandbox's own process (:mod:`rocketlab.grading.sandbox_child`) in the new PID, mount and network
namespaces ``unshare`` made: an empty ``tmpfs`` over ``/tmp`` and over every path the submission must not
read, the interpreter kept reachable (carried through the new ``/tmp`` as a detached mount when it lives
there; under directories ``nobody`` cannot enter, one tmpfs per such directory holds every exposed path
below it), the loopback up, then ``RLIMIT_*`` and, as
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
    """Mounts, limits, and (as root) the switch to ``nobody``; returns the working directory. Raises
    :class:`SetupError` (the grader's failure, never the submission's) when the sandbox cannot be made."""
    work = WORK
    exposed = [str(Path(e)) for e in config.get("expose", [])]
    if config.get("isolated"):
        _loopback_up()
        _cover(Path("/tmp"), [Path(e) for e in exposed if Path(e).is_relative_to("/tmp")], "size=512m,mode=1777")
        as_root_outside = os.geteuid() == 0 and _outer_uid() == 0
        if as_root_outside:
            _expose(exposed)
        needed = [Path(e) for e in exposed]
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
    if os.geteuid() == 0 and _outer_uid() == 0 and (config.get("isolated") or _open_to_others(exposed)):
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
    _check_reachable(exposed)
    return work


class SetupError(Exception):
    """The sandbox could not be set up (a mount refused, the interpreter out of reach): the grader's fault."""


def _check_reachable(paths: list[str]) -> None:
    """After confinement, as the user the submission runs as: every exposed directory can be listed (the
    interpreter, its libraries, the kit), so a missing one is the grader's failure here, not an ImportError
    blamed on the submission later."""
    for path in paths:
        try:
            os.listdir(path)
        except OSError as e:
            hint = "; its mode lets no other user in: chmod o+rx it" if os.geteuid() == NOBODY else ""
            raise SetupError(f"{path} is out of the sandbox's reach once confined ({e.strerror or e}{hint})") from None
    if not os.access(sys.executable, os.X_OK):
        raise SetupError(f"the interpreter {sys.executable} is out of the sandbox's reach once confined")


OPEN_TREE_CLONE, AT_RECURSIVE, AT_FDCWD, MOVE_MOUNT_F_EMPTY_PATH = 1, 0x8000, -100, 0x4
SYS_OPEN_TREE, SYS_MOVE_MOUNT = 428, 429  # the same number on every architecture (added in Linux 5.2)


def _outermost(paths: list[Path]) -> list[Path]:
    """``paths`` without those lying under another one of them."""
    unique = sorted(set(paths))
    return [p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique)]


def _clone(path: Path) -> int:
    """A detached copy of the tree at ``path`` (``open_tree``), to be attached again by :func:`_attach`."""
    fd = _libc().syscall(SYS_OPEN_TREE, AT_FDCWD, str(path).encode(), OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC)
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"open_tree {path}: {os.strerror(err)}")
    return int(fd)


def _cover(ancestor: Path, paths: list[Path], options: str) -> None:
    """Cover ``ancestor`` with an empty tmpfs that holds every one of ``paths`` (each under it) at its
    place, on a skeleton of open directories: detached copies of all of them are taken first, then the
    tmpfs mounted, then each copy attached (so the second path never has to be found under a tmpfs that
    holds only the first)."""
    carried = [(_clone(p), p) for p in _outermost([p for p in paths if p != ancestor])]
    _mount("none", str(ancestor), "tmpfs", 0, options)
    _attach(carried)


def _attach(carried: list[tuple[int, Path]]) -> None:
    libc = _libc()
    for fd, path in carried:
        os.makedirs(path, mode=0o755, exist_ok=True)
        if libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, str(path).encode(), MOVE_MOUNT_F_EMPTY_PATH) != 0:
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


def _nobody_can_enter(path: Path) -> bool:
    """Whether ``nobody`` (no supplementary groups) may search directory ``path``."""
    st = os.stat(path)
    if st.st_uid == NOBODY:
        return bool(st.st_mode & 0o100)
    return bool(st.st_mode & (0o010 if st.st_gid == NOBODY else 0o001))


def _closed_ancestor(path: Path, exposed: set[Path]) -> Path | None:
    """The outermost directory above ``path`` that ``nobody`` cannot enter (an exposed one excepted:
    covering it would hide what it exposes), or None."""
    return next((a for a in reversed(path.parents) if a != Path("/") and a not in exposed
                 and not _nobody_can_enter(a)), None)


def _expose(paths: list[str]) -> None:
    """Make ``paths`` reachable by ``nobody``: each closed ancestor (``/root``, mode 700, holding a pyenv
    interpreter and a venv) is covered with one empty tmpfs holding every exposed path under it, on open
    directories. Closed directories further down (a closed folder inside an exposed one, on the way to
    another exposed one) are opened the same way in the next round."""
    wanted = {Path(p) for p in paths}
    for _ in range(64):  # each round opens the outermost closed ancestors; a path has far fewer levels
        groups: dict[Path, list[Path]] = {}
        for p in sorted(wanted):
            closed = _closed_ancestor(p, wanted)
            if closed is not None:
                groups.setdefault(closed, []).append(p)
        if not groups:
            return
        for ancestor, under in groups.items():  # outermost ones: no two nest
            _cover(ancestor, under, "size=1m,mode=755")
    raise SetupError(f"could not open the way to {sorted(map(str, wanted))} for the sandbox's user")
