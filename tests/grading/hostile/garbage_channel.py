"""phy_offset writes garbage (and an extra 'ready') to every descriptor above 2; which_log is right."""
import os


def phy_offset(entry_pos):
    for fd in range(3, 64):
        try:
            os.write(fd, b'{"event": "ready"}\nthis is not json\n\x00\xff{"value": 1\n')
        except OSError:
            pass
    return entry_pos + 48


def which_log(offset, divided_commitlog_offset, committed_pos):
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
