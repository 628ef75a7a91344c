"""phy_offset asks for 3 GiB; which_log is right."""


def phy_offset(entry_pos):
    hog = bytearray(3 * 1024**3)
    return entry_pos + 48 + len(hog) * 0


def which_log(offset, divided_commitlog_offset, committed_pos):
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
