"""phy_offset loops forever; which_log is right."""


def phy_offset(entry_pos):
    while True:
        pass


def which_log(offset, divided_commitlog_offset, committed_pos):
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
