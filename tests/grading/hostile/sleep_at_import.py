"""Sleeps for an hour at import."""
import time

time.sleep(3600)


def phy_offset(entry_pos):
    return entry_pos + 48


def which_log(offset, divided_commitlog_offset, committed_pos):
    return None
