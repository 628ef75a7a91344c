"""phy_offset raises an exception with a 20 MB message."""


def phy_offset(entry_pos):
    raise ValueError("x" * 20_000_000)


def which_log(offset, divided_commitlog_offset, committed_pos):
    raise RuntimeError("y" * 20_000_000)
