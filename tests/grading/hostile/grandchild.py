"""At import, a grandchild in a session of its own waits, then tries to overwrite the results (@TARGET@)."""
import os

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sh", ["sh", "-c", "sleep 4; echo '{\"score\": 999}' > '@TARGET@'; sleep 600", "@TARGET@"])
    os._exit(0)
os.wait()


def phy_offset(entry_pos):
    return entry_pos + 48


def which_log(offset, divided_commitlog_offset, committed_pos):
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
