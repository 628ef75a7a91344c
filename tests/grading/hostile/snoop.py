"""Tries to read what it must not: a hidden test, another submission, the results file (@SECRET@), the
grader's environment and processes; phy_offset reports what it found as its error."""
import os

found = []
for path in "@SECRET@".split("|"):
    try:
        with open(path) as f:
            found.append(f"READ {path}: {f.read(40)!r}")
    except OSError as e:
        found.append(f"DENIED {type(e).__name__}")
found.append("ENV " + ",".join(sorted(os.environ)))
found.append("PIDS " + str(sum(1 for p in os.listdir("/proc") if p.isdigit())))
found.append("UID " + str(os.getuid()))
try:
    import socket

    socket.create_connection(("127.0.0.1", int("@PORT@")), timeout=2).close()
    found.append("NET CONNECTED")
except OSError as e:
    found.append(f"NET DENIED {type(e).__name__}")


def phy_offset(entry_pos):
    raise RuntimeError(" | ".join(found))


def which_log(offset, divided_commitlog_offset, committed_pos):
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
