"""phy_offset forks sleeping children until it cannot (@TARGET@ names them); which_log is right."""
import os


def phy_offset(entry_pos):
    for _ in range(5000):
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "600", "@TARGET@"])
    return entry_pos + 48


def which_log(offset, divided_commitlog_offset, committed_pos):
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
