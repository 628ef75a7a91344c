"""phy_offset writes 64 MB straight to descriptor 2 (and prints); its answers are right."""
import os

CHUNK = b"z" * (1024 * 1024)
done = [False]


def phy_offset(entry_pos):
    if not done[0]:
        done[0] = True
        for _ in range(64):
            os.write(2, CHUNK)
        print("and a print")
    return entry_pos + 48


def which_log(offset, divided_commitlog_offset, committed_pos):
    if offset < divided_commitlog_offset:
        return "commitlog"
    if offset >= committed_pos:
        return None
    return "dledger"
