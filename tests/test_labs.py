"""Every notebook in labs/ runs top to bottom headless, and none is stored with outputs.

Notebooks are found by glob, so a new lab is covered as soon as it exists. They run in their own
kernel (nbclient, the ``python3`` kernel of this environment) with ``ROCKETLAB_FAST=1``, which each lab
reads once in its first code cell to use fewer puts and seeds. Besides "no cell raised", a lab can list
key outputs in ``EXPECTED``: regular expressions searched in the text of all its outputs, so that a lab
whose story stops matching what the code shows fails here.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import nbformat
import pytest

from tests import lab_figures

LABS = Path(__file__).resolve().parents[1] / "labs"
NOTEBOOKS = sorted(LABS.glob("*.ipynb"))
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

EXPECTED: dict[str, list[str]] = {
    "05_rocketmq_on_dledger.ipynb": [
        r"lab05\.\w+: 0/\d+ points\n  FAIL \w+ \(0/\d+\): \w+ is not implemented yet",  # check() on the template
        r"master n\d: PUT_OK, physical offset 48, queue offset 0",
        r"entry header:\n +0  00 00 00 01 00 00 00 [0-9a-f]{2} .* magic@0 size@4 index@8\n",  # positions, field marks
        r"\n +48  00 00 00 [0-9a-f]{2} .* TOTALSIZE@48 MAGICCODE@52 BODYCRC@56 QUEUEID@60\n",   # the record at 48
        r"\n +64  .* FLAG@64 QUEUEOFFSET@68 PHYSICALOFFSET@76\n",
        r"entry pos \+ 48 = 48; PHYSICALOFFSET in the record = 48",                 # the append hook wrote it
        r"entry size = 48 \+ bodySize: (\d+) = 48 \+ (\d+); record TOTALSIZE = \2",  # one record per entry
        r"identical on every replica: True",
        r"the put is answered: False\n(n\d MASTER \{'ledger_end_index': 6, 'committed_index': 5, 'write_pos': \d+, "
        r"'committed_pos': (\d+), 'commit_log_max_offset': \2, 'consume_queue_max_offset': 6\})",  # committed only
        r"a consumer pulls 6 messages; the last is b'm4'",
        r"the put is answered: PUT_OK",
        r"the last message a consumer pulls: b'not yet committed'",
        r"puts acknowledged before the crash: 0",
        r"leads DLedger at t=\d+ ms: \{'ledger_end_index': 26, 'committed_index': 6, .*'broker_role': 'SLAVE'\}",
        r"is MASTER at t=\d+ ms: \{'ledger_end_index': 26, 'committed_index': 26, .*'broker_role': 'SYNC_MASTER'\}",
        r"the LEADER task waited 1\d\d ms",                              # "at the next 100 ms poll"
        r"in-flight messages a consumer can read after the failover: 20 of 20",
        r"units before the restart: \[\(0, 48, 'in the log'\), \(1, \d+, \"points past the log's end\"\), "
        r"\(2, \d+, \"points past the log's end\"\)\]",
        r"units after the restart:  \[\(0, 48, 'in the log'\)\]",
        r"recovery at the restart: DLedger: recovered entries up to index 1 \(term \d+\), data end 190; cut the tail "
        r"at 190: entry at 190: pos \d+ != 190",                     # the prose reads this line
        r"trimmed by recovery: \{'T/0': 2\}",
        r"n0 .*upgraded from the old commit log \(normal recovery from 0{20}: 150 valid records, commit log ends at "
        r"(\d+)\); old blank written at \1\nn1 .*old blank written at \1\nn2 .*old blank written at \1\n",
        r"dividedCommitlogOffset = 131072 = file size 65536 x 2",
        r"first new message: PUT_OK, physical offset 131120 = 131072 \+ 48, queue offset 150",
        r"queue offset 149 -> b'old-149old-149'\.\.\. from the old commit log, queue offset 150 -> "
        r"b'new-000new-000'\.\.\. from the DLedger log",
        r"n\d DLedger: recovered entries up to index 119 \(term \d+\), data end \d+; divided commit log offset 131072\n",
        r"same messages after the restart: True",
        r"'round': 'before', 'deleteExpiredFile': None, 'old files': 2, .*'DLedger fileReservedHours': 87600, "
        r"'DLedger force clean': False",
        r"'round': 'round 1', 'deleteExpiredFile': 1, 'old files': 1, .*87600",
        r"'round': 'round 2', 'deleteExpiredFile': 1, 'old files': 0, 'min phy offset': 131072, 'queue min offset': 150",
        r"'round': 'round 3', 'deleteExpiredFile': 2147483647, .*'DLedger fileReservedHours': 73, 'DLedger force clean': True",
        r"'deleted': 1, \"time up \(04 o'clock\)\": True",
        r"first queue offset still readable: (\d+) = 150 old messages \+ ledger begin index (\d+)",
        r"a pull from queue offset 0 answers OFFSET_TOO_SMALL",
    ],
    "06_controller_mode.ipynb": [
        r"lab06\.\w+: 0/\d+ points\n  FAIL \w+ \(0/\d+\): \w+ is not implemented yet",  # check() on the template
        r"c\d leads the controllers",
        r"ApplyBrokerIdRequestHeader, answer code 2014",                   # a lost race for a broker id
        r"ELECT_MASTER_EVENT', 'master': \d, 'master_epoch': 1\}",
        r"the master n\d \(brokerControllerId \d\) registers with brokerConfig\.brokerId 0; its slaves with \[\d, \d\]",
        r"\n +acked: 10\n +in_flight_answered: 0\n",                          # 10 answered puts, 3 never answered
        r"\n +after_acked: 5\n",                                             # 5 more on the new master
        r"in_flight_answered: 0\n",
        r"failover_ms: \d{1,2}\n",                                           # a crash: its channel closes at once
        r"c\d: broker \d inactive \(channel closed\)",
        r"ELECT_MASTER_EVENT', 'master': \d, 'master_epoch': 2\}\n.*the controller leader's own election\): "
        r"ElectMasterRequestHeader, code 0",
        r"first ack from n\d at \d+ \(50\d\d ms after its handshake\)",     # haSendHeartbeatInterval
        r"slave \d caught up at \d+: proposes \[\d, \d\]",                     # at an ack, not a 5 s check
        r"SyncStateSet \[1, 2, 3\] at t=\d+ ms",
        r"old master: \[\(1, 0, (\d+)\)\]\nnew master: \[\(1, 0, (\d+)\), \(2, \2, \d+\)\]\n"
        r"findConsistentPoint: \2\n.*cut its log at \2 and removed [1-9]\d* bytes",
        r"now: \{'role': 'SLAVE'",
        r"controller mode, process crash: +median [1-9]\d? ms",              # milliseconds
        r"controller mode, host failure: +median (9\d{3}|1[0-6]\d{3}) ms",    # 10 s timeout + a scan, from the last beat
        r"DLedger commit log, process crash: +median [4-8]\d{3} ms",          # 3 missed 2 s heartbeats + a vote
        r"DLedger commit log, host failure: +median [5-9]\d{3} ms",
        r"after a process crash, controller mode fails over first\nafter a host failure, DLedger fails over first",
        r"controller mode: host failure median \d+ ms against \d+ ms after a process crash: [1-9]\d* ms longer\n"
        r"DLedger commit log: host failure median \d+ ms against \d+ ms after a process crash: [1-9]\d* ms longer",  # "a little longer"
        r"SyncStateSet \{1,2,3\}: +3\nSyncStateSet \{1,2,3,4\}: +4\nthe same, old master 2 alive: +2\n"
        r"the same, broker 1 designated: +1\nSyncStateSet \{1\}, 1 dead, clean: +None\n"
        r"SyncStateSet \{1\}, 1 dead, unclean: +4",
        r"2\.0 +-2147483648 +the broker ahead\n +2\.5 +1610612736 +the broker behind\n +3\.9 +107374183 +the broker "
        r"behind\n +4\.0 +0 +a tie",                                          # the int wrap, every 4 GiB
        r"4\.5 +-536870912 +the broker ahead",
        r"broker 1 is 2\.5 GiB ahead; elected: 2",
        r"DLedger needs 3 brokers to fail over \((\d+) ms\); with 2 it has no majority left: a new master never came",
        r"fastest failover: controller mode, allAck with [23] brokers",   # a crash closes its channel
        r"controller mode fails over with 2 brokers \(\d+ ms\) and stores 300 bytes per put against DLedger's 594\n"
        r"one record is 150 bytes; DLedger stores 3 x \(150 \+ 48-byte entry header\) = 594",  # followers' bytes too
        r"controller-partition +acked +\d+, lost [1-9]\d*, violations 0",
        r"controller-partition --profile allack +acked +\d+, lost 0, violations 0",
        r"controller-5663 --profile before-5798 +acked +[1-9]\d*, lost [1-9]\d*, violations [1-9]",
        r"controller-5663 +acked +0, lost 0, violations 0",
        r"controller-unclean +acked +[1-9]\d*, lost [1-9]\d*, violations 0",
        r"controller-failover +acked +\d+, lost 0, violations 0",
        r"the cut-off master \(defaults\) answered PUT_OK 5 times with its SyncStateSet still \[1, 2, 3\]",
    ],
}


BOTH_MODES: dict[str, list[str]] = {
    "00_tour.ipynb": [
        r"\n\('n\d', [1-9]\d\d\)\n",                                      # "within a second ... one broker is master"
        r"first DLedger role in the trace: \{'n0': 'CANDIDATE at [12] ms', 'n1': 'CANDIDATE at [12] ms', "
        r"'n2': 'CANDIDATE at [12] ms'\}",                                 # CANDIDATE from the start, traced 1-2 ms in
        r"0 +n0 +True +SYNC_MASTER +0 +LEADER +1 +n0 +\n1 +n1 +True +SLAVE +2 +CANDIDATE +1 +None +\n"
        r"2 +n2 +True +SLAVE +3 +CANDIDATE +1 +None",                       # the two layers; n1 -> brokerId 2
        r"'n2': 'CANDIDATE at [12] ms'\}\nFOLLOWER since: \{'n\d': 6[01]\d, 'n\d': 6[01]\d\}",  # ~10 ms after 605
        r"vote rounds \(t ms, candidate, term, result\): \[(\(\d, 'n\d', 0, 'WAIT_TO_VOTE_NEXT'\), ){3}"
        r"\(\d{3}, 'n\d', 1, 'REVOTE_IMMEDIATELY'\), \(\d{3}, 'n\d', 1, 'PASSED'\)\]",  # term 0 split; NOT_READY, re-ask
        r"\n\(0, 1, 0, 48\)\n",                                           # entry 0 at byte 0, its message 48 bytes in
        r"first put at (8\d\d) ms; both followers knew their leader since 6[01]\d ms",  # 200 ms after the election
        r"put latency: first [1-9] ms, mean [1-5]\.\d ms, longest [1-9] ms",  # "one round trip, a few milliseconds"
        r"runs with votes: \['[^']*dledger'\]\nput statuses per run: \{('[^']+': \['PUT_OK'\](, )?){3}\}",  # section 6
        r"a push refused because it came before the leader's heartbeat: None",  # no put waited for a refused push
        r"leader n\d commits each of its (20|60) entries [0-5]-[1-9] ms after appending it\n"           # lines almost coincide
        r"n\d commits entries 0-(\d+), each when the next entry's push arrives: True; the last entry, \d+, not yet\n"
        r"n\d commits entries 0-\2, each when the next entry's push arrives: True",                # trail by one put
        r"LEADER at \d+ ms, MASTER at \d+ ms: [1-9]\d\d ms later",       # "a little after": under a second
        r"its first push reached n\d at \d+ ms, before its heartbeat did \(n\d FOLLOWER at \d+ ms\): refused; "
        r"the next push at \d+ ms, 50\d ms later",                         # the 500 ms pause, after the failover
        r"last heartbeat from n\d at (\d+) ms, (\d+) ms before the crash at (\d+)\n"     # the 6 s start before the crash
        r"first CANDIDATE at \d+: 600\d ms after that heartbeat, \d+ ms after the crash\n",
        r"without a master: \d+ \+ [1-9]\d\d \+ [1-9]\d\d = \d+ ms",   # a failed round and a random wait; the handler
        r"\n\((20|60), 0\)\n",                                            # "None is missing"
        r"0 +n0 +True +SLAVE +1 +FOLLOWER +2 +n1 +\n1 +n1 +True +SYNC_MASTER +0 +LEADER +2 +n1 +\n"
        r"2 +n2 +True +SLAVE +3 +FOLLOWER +2 +n1 +\n\n +ledger_end_index +committed_index +max_offset +config_errors +\n"
        r"0 +(\d+) +\1 +(\d+) +0 +\n1 +\1 +\1 +\2 +0 +\n2 +\1 +\1 +\2 +0",     # the old master rejoins, caught up
        r"ASYNC_MASTER: .*: lost [1-9]\d* of \d+ acknowledged messages; no new master",   # the newest ones lost
        r"SYNC_MASTER: .*: lost 0 of \d+ acknowledged messages; no new master",
        r"\{'ASYNC_MASTER': 0\.0, 'SYNC_MASTER': [1-9]\.0, 'DLedger': [1-9]\.0\}",  # 0 ms; a round trip; a round trip
    ],
    "01_master_slave.ipynb": [
        r"lab01\.\w+: 0/\d+ points\n  FAIL \w+ \(0/\d+\): \w+ is not implemented yet",  # check() on the template
        r"t=1 n0 stream_open src=n1 dst=n0 channel=stream\nt=500\d n0 ha_report slave=n1 offset=0\n",  # 4.9.5: ~5 s
        r"ha_transfer slave=n1 offset=0 size=297\nt=\d+ n0 ha_report slave=n1 offset=297",   # then bytes and the ack
        r"'00 00 00 00 00 00 01 29'",                                  # the slave's 8-byte ack for 297
        r"\(NEED_DATA, 0, NEED_DATA\)",                                # a split frame waits for its rest
        r"n1\s+1\s+SLAVE\s+True\s+12288\s+15941",                      # an empty slave starts at the last file
        r"ASYNC_MASTER\s+\d+\s+0\.0\s+0\.0\s+(4\d|5\d)\.0",             # async: half acked after ~50 ms...
        r"ASYNC_MASTER\s+(9\d|10\d)\.0\s+0\b",                         # ...the slowest after ~100 ms
        r"SYNC_MASTER\s+\d+\s+[2-5]\.0\s+[2-5]\.0",                       # sync: one round trip
        r"CrashRun\(role='ASYNC_MASTER', seed=5, acked=33, warned=0, lost=6, master_end=13351, slave_end=10347\)",
        r"(?m)^ASYNC_MASTER: lost [1-9]\d* of \d+ acknowledged",      # the lesson, both halves
        r"(?m)^SYNC_MASTER: lost 0 of \d+ acknowledged",
        r"FLUSH_SLAVE_TIMEOUT\s+6\s+10035\.0\s+27535\.0\s+3000\.0",   # partition: waits of slaveTimeout...
        r"SLAVE_NOT_AVAILABLE\s+18\s+31035\.0",                      # ...none once housekeeping closed it...
        r"FLUSH_SLAVE_TIMEOUT\s+1\s+40035\.0\s+40035\.0\s+3000\.0",   # ...and one more after the heal
        r"t=29536 n0 ha_close slave=n1 reason=housekeeping",          # 20 s after the last read
        r"t=40002 n1 stream_close src=n0 dst=n1 reason=housekeeping.*\nt=40004 n0 stream_open src=n1",  # back at once
        r"\('FOUND', 1, \[0, 1, 2, 3, 4\]\)",                          # reads from the slave
        r"\(None, 'SLAVE'\)",                                          # no failover
        r"first-pair/nodes/n1/store/config/topics\.json",             # copied by SlaveSynchronize
        r"sync-partition\s+7\s+20\s+18",                               # Spark: puts per status per run
        r"t=\d+ ms: master n0 ends at (\d+); slave n1 at 0 \(\1 bytes behind\)\n"         # the viewer's pair, just put
        r"t=\d+ ms: master n0 ends at (\d+); slave n1 at \2 \(0 bytes behind\)",          # 100 ms later: caught up
        r"\n1\n\n+\[\('PUT_OK', 0, 99, 0\.0\), \('PUT_OK', 99, 99, 0\.0\), \('PUT_OK', 198, 99, 0\.0\)\]",  # 1 ms; 99 bytes; 0 ms
        r"n0 +0 +ASYNC_MASTER +True +0 +297 +1 +\nn1 +1 +SLAVE +True +-1 +0 +- +\n\n +push2_slave_max_offset +\n"
        r"node +\nn0 +0 +\n",                                                 # 297 on the master only, nothing acked
        r"\('00 00 00 00 00 00 00 00 00 00 01 29', '00 00 00 63 da a3 20 a7', 309\)",  # the header, TOTALSIZE 99, magic
        r"0 +PUT_OK +10 +5004\.0 +9532\.0 +2\.0 +\n(.*\n){6}0 +4\.0 +\n",   # stretch 1: PUT_OK in 2-5 ms
        r"4 +PUT_OK +10 +43535\.0 +49533\.0 +2\.0",                           # stretch 5: PUT_OK again after the heal
        r"first-pair +0 +3 +0\n",                                             # exactly 3 puts
    ],
    "02_commitlog.ipynb": [
        r"\n157 bytes\n",
        r"\d files; each full file holds \d+ records and ends with a blank of \d+ bytes at \d+: the next \d+-byte record",
        r"abnormal \(abort file found\) recovery from 0{20}: 60 valid records",
        r"60 messages can be pulled after the restart",
        r"30 valid records, commit log ends at (\d+); cut \d+ bytes at \1 \(invalid record at \1: body CRC",
        r"messages before: 60, after: 30 \(last one left: m-0029\)",
        r"SYNC_FLUSH is \d+x slower per put here",
        r"\n0 +TOTALSIZE +0 +4 .*\n1 +MAGICCODE +4 +4 (.|\n)*\n0 +00 00 00 9d +157 *\n1 +da a3 20 a7 +0xdaa320a7",  # v1 magic
        r"trimmed 30 consume queue units; dropped index files \d+\n",          # "the summary's last item"
        r"lab02\.encode_record: 0/8 points",
        r"\n16 +16 +00000000000000000320 +0 +\d+ +313",                   # 16 units (320 bytes) per consume-queue file
    ],
    "03_dledger_election.ipynb": [
        r"lab03\.\w+: 0/\d+ points\n  FAIL \w+ \(0/\d+\): \w+ is not implemented yet",  # check() on the template
        r"n0 leads term 1 since t=\d+ ms, elected by [n0-4, ]+ \([345] votes; a majority of 5 is 3\)",
        r"t=14000 ms: n4 leads term 2 since",                          # a new leader after the crash
        r"cluster\.crash\('n0'\)",                                     # the replay code
        r"after \{'n3': 1, 'n4': 1\}\ntheir vote rounds, by ParseResult rule: \{3: \d+\}",  # no majority: same term
        r"0\.2\.0 and later: VoteDecision\(check=3, result=<VoteResult\.REJECT_EXPIRED_LEDGER_TERM",
        r"0\.1: +VoteDecision\(check=7, result=<VoteResult\.REJECT_TERM_NOT_READY.*STEP_DOWN",
        r"crash targets=\[n0\]\n(t=\d+ n\d role term=1 role=CANDIDATE leader=None\n){4}"   # one by one, same term
        r"(t=\d+ n\d vote_round term=1 result=WAIT_TO_VOTE_NEXT accepted=0 .*rule=7\n){4}",  # nobody grants: rule 7
        r"n4 vote_round term=2 result=REVOTE_IMMEDIATELY .*rule=6\n.*n4 vote_round term=2 result=PASSED",
        r"dledger-0\.3\.1\.2: n\d cut off for 20 s: term 1 -> 1; after the heal 0 new election",
        r"raft: n\d cut off for 20 s: term 1 -> \d\d+; after the heal [1-9] new election",
        r"wait before the winning round: mean [34]\d\d ms",           # the smallest of five draws
        r"silence_ms\n(\s+n\d\s+\d+\s+\d+\s+600\d\n?){4}",        # every follower: 6 s of silence
        r"CANDIDATE after [45]\d\d\d ms, term 1 -> 1",                 # the leader steps down, same term
        r"right after its election: CANDIDATE after \d\d? ms",         # lastSuccHeartBeatTime = -1
        r"n0 -> n4: n4 leads term 2 \(was 1\)",
        r"preferredLeaderIds=n2: first elected n\d, leading now n2",
        r"\n150-150 +\d+ +20000\.0 +20000\.0\b",              # no randomness: no trial has a leader after 20 s
        r"150-155 median: paper +287 ms",
        r"without the candidate's disk write, 150-155's median is lower",
        r"with replies of 13-15 ms, 12-24's mean is [2-9]\.\d times the kit's",
        r"java defaults +\d+ +[4-9]\d\d\d\.\d",                       # DLedger's defaults: seconds
        r"term +candidate +first asked at \(ms\) +rounds",                      # one term, several elections: told apart
        r"check +answer +answers\n0 +6 +REJECT_ALREADY_VOTED +\d+\n",      # check numbers as integers
        r"\n5 +1 +n0 +\d+ +2 +n0, n1, n2, n3, n4",                          # term 1: n0 won at the start...
        r"\n6 +1 +n1 +6\d{3} +1 ",                                           # ...and the survivors' rounds in term 1
        r"rule 6 \(REVOTE_IMMEDIATELY\): \d+ waits, busiest 50 ms bin 0-50 ms, shortest 10 ms, longest 10 ms\n"
        r"rule 7 \(WAIT_TO_VOTE_NEXT\): \d+ waits, busiest 50 ms bin 300-350 ms",  # "pile up near 300 ms"; "one 10 ms tick"
        r"n4 moved to term 2 [1-9]?\d ms after the request; its first vote round came [3-9]\d\d ms later",  # "at once", then 300-1000
    ],
    "04_dledger_replication.ipynb": [
        r"lab04\.\w+: 0/\d+ points\n  FAIL \w+ \(0/\d+\): \w+ is not implemented yet",  # check() on the template
        r"answer to the client: SUCCESS at index 0",                   # the journey ends in a commit
        r"'COMPARE', -1\),\s+\(\d+, 'n\d', 'n\d', 'COMPARE', -1\),\s+\(\d+, 'n\d', 'n\d', 'TRUNCATE', 0\)",
        r"water marks: \{'n\d': 5, 'n\d': 0, 'n\d': 5\}\nmedian: 5  leader's commit index: 5",  # the median
        r"cut off n\d: append index 0, commit index 0; appends or commits after the cut: False\n"      # stays at 0
        r"leader n\d commits entries 1-5 each this many ms after n\d appended it: \[[0-3](, [0-3]){4}\]\n"  # at once
        r"n\d commits each entry when the push of the next one arrives: True",                       # one push later
        r"ledger end 8, committed 5: 3 entries a consumer must not see",
        r"'magic': 1, 'size': 53, 'index': 0, 'term': 1, 'pos': 0, .*'body_size': 5",  # the hex view's prose
        r"old leader's log before the heal \(body, term\): \[\(b'shared', 1\), \(b'lonely-1', 1\), \(b'lonely-2', 1\)\]\n"
        r"new leader's log \(body, term\): \[\(b'shared', 1\), \(b'after-1', 3\), \(b'after-2', 3\)\]\n",  # term 1 vs 3
        r"t=\d+ COMPARE at 2: INCONSISTENT_STATE \(follower holds 0\.\.2\) -> mismatch-step-back: compare 1\n"
        r"t=\d+ COMPARE at 1: INCONSISTENT_STATE \(follower holds 0\.\.2\) -> mismatch-step-back: compare 0\n"
        r"t=\d+ COMPARE at 0: SUCCESS \(follower holds 0\.\.2\) -> match-follower-longer: truncate 0\n",  # the walk
        r"n\d push_state \{'peer': 'n\d', 'state': 'TRUNCATE', 'index': 0\}\n\d+ n\d truncate \{'index': 1\}",
        r"\d+ n\d push_state \{'peer': 'n\d', 'state': 'APPEND', 'index': 0\}\n\d+ n\d append \{'index': 1, 'term': \d\}\n"
        r"\d+ n\d append \{'index': 2, 'term': \d\}\n",                        # APPEND from 0, then entries 1 and 2
        r"entries cut \(body, term\): \[\(b'lonely-1', 1\), \(b'lonely-2', 1\)\]",
        r"old leader's log now: \[b'shared', b'after-1', b'after-2'\]",    # the diverged tail was cut
        r"dledger-0\.3\.1\.2 \{.*'committed_entry_lost': True, 'violated': \{'leader_completeness': 1, "
        r"'committed_entries_stable': \d+\}",
        r"raft \{.*'committed_entry_lost': False, 'violated': \{\}",
        r"\(a\) t = \d+ ms: S1 \(n\d\) leads; W is committed, X reached S2 \(n\d\) only, and S1 \(n\d\) crashes\n"
        r"\(b\) t = \d+ ms: S5 .*\n\(c\) t = \d+ ms: S1 \(n\d\) leads again \(term \d\) and commits X.*\n"
        r"\(d\) t = (\d+) ms: S5 .*leader_completeness\n\(e\) t = \d+ ms: Y overwrites the committed X",  # the stops
        r"the schedule's names on the timeline's rows: S1 = n\d, S2 = n\d, S3 = n\d, S4 = n\d, S5 = n\d\n"
        r"violations, by invariant: \{'leader_completeness': 1, 'committed_entries_stable': \d+\}",
        r"dledger-0\.3\.1\.2 seed 1: figure 8 loses a committed entry: True; #247 member rejoins: False; "
        r"#251 follower catches up: False",
        r"dledger-0\.3\.2 seed 1: figure 8 loses a committed entry: True; #247 member rejoins: True; "
        r"#251 follower catches up: True",
        r"raft seed 1: figure 8 loses a committed entry: False; #247 member rejoins: True; #251 follower catches up: True",
        r"#247: t = \d+ ms: leader (n\d), ledger ends \{'n0': 2, 'n1': -1, 'n2': 2\}; heartbeats answered EXPIRED_TERM: "
        r"[1-9]\d+, the leader stepped down after the first: False",    # "again and again while the leader stays leader"
        r"#251: t = \d+ ms: leader n\d, ledger ends \{'n0': 4, 'n1': 0, 'n2': 4\}",  # F never catches up under 0.3.1.2
        r"dledger-churn, \d+ seeds per profile, 7000 ms of churn each \(recorded \d{4}-\d\d-\d\d\)",
        r"dledger-0\.3\.1\.2 +runs with a violation +\d+\.\d per 1000, acknowledged write lost +\d+\.\d per 1000, "
        r"did not converge +\d+\.\d per 1000",
        r"first violation at t = \d+ ms: leader_completeness: leader n\d \(term \d\) lacks committed index 2",  # (d)
    ],
    "06_controller_mode.ipynb": [
        r"controllers' DLedger leader at \d{3} ms, controller leader at \d{3} ms; brokers asked at \d ms \(no leader "
        r"yet\) and again at 1\d{3} ms",                                  # "nothing happens for the first second"
    ],
    "07_spark.ipynb": [
        r"lab07\.\w+: 0/\d+ points\n  FAIL \w+ \(0/\d+\): \w+ is not implemented yet",  # check() on the template
        r"Spark 4\.\d+\.\d+ on local\[2\]: the session took \d+\.\d s to start",
        r"figure8-dledger-0\.3\.1\.2 +\d+ events, .* [1-9]\d* violations\nfigure8-dledger-0\.3\.2 +\d+ events, .* "
        r"[1-9]\d* violations\nfigure8-raft +\d+ events, .* 0 violations",
        r"\d+ partitions \(one per mapped file\)",
        r"450 index entries: \{'n0': 150, 'n1': 150, 'n2': 150\}",        # rocketmq-index on data/: keys
        r"n0 +20231114221321687 +\d+ +\d+ +(13[1-9]\d{3}) +new-007 +127\n.*n1 .* \1 +new-007 +127\n.*n2 .* \1 +new-007",
        r"n0\s+60\n1\s+n1\s+(5\d)\b",                                     # the slave holds fewer
        r"ASYNC_MASTER: [1-9]\d* of \d+ acknowledged messages lost",
        r"SYNC_MASTER: 0 of \d+ acknowledged messages lost",
        r"(\d+) units in \d+ broker stores: \1 consistent, 0 mismatched, 0 dangling",
        r"150-150: +(\d+) of +\1 trials without a leader after 60 s",         # no randomness: no trial elects
        r"150-300:\s+0 of\s+\d+ trials without a leader",
        r"the median rises with the write: True",                      # the candidate's disk write splits votes
        r"12-24, replies of 7-9 ms: mean \d+ ms; of 13-15 ms: mean \d+ ms",
        r"shorter ranges, shorter failovers: True",                    # Figure 16's bottom graph
        r"   12-24   mean: paper +35 ms \(mean 35 ms\); ours +\d+ ms over \d+ trials\n"
        r"   12-24    max: paper +152 ms \(longest trial 152 ms\); ours +\d+ ms over \d+ trials",  # no NaN: after the bottom sweep
        r"150-200 worst case: ours \d+ ms over \d+ trials, paper 513 ms over 1000: [+-]\d\.\d election rounds of 213 ms apart",
        r"DLedger scaled to 150-300 is slower than Raft",
        r"0\.3\.1\.2 and 0\.3\.2 elect alike on every seed: True",
        r"median time without a leader: DLedger 0\.3\.1\.2, Java defaults [2-9]\d\d\d ms",
        r"DLedger 0\.3\.1\.2, Java defaults\s+min\s+[4-9]\d\d\d ",  # three 2 s heartbeats missed first
    ],
}
"""Claims of the prose that hold with and without ``ROCKETLAB_FAST`` (where a number differs between the modes,
the prose does not state it: a cell prints it). The fast run checks them with ``EXPECTED``; under
``ROCKETLAB_FULL=1`` :func:`test_notebook_claims_hold_in_full_mode` runs these labs in full."""


FULL_ONLY: dict[str, list[str]] = {
    "03_dledger_election.ipynb": [
        r"150-200 +max: paper +513 ms .*; ours +\d+ ms over 100 trials",     # "a worst case over 100 trials"
    ],
    "07_spark.ipynb": [
        r"150-200 worst case: ours \d+ ms over 1000 trials, paper 513 ms over 1000: [+-]0\.\d election rounds",  # within a round
    ],
}
"""Claims the prose makes of the full notebook only (the paper's 1,000 trials); the fast run prints its own."""


VALUES: dict[str, list[str]] = {
    "00_tour.ipynb": [
        "(lambda t: max(t) - min(t) <= 1)([e['t'] for e in c.events if e['kind'] == 'vote_round' "
        "and e['term'] == 0])",                                               # term 0: "within a millisecond"
        "(lambda r: 10 <= r['PASSED'] - r['REVOTE_IMMEDIATELY'] <= 20)({e['result']: e['t'] for e in c.events "
        "if e['kind'] == 'vote_round' and e['term'] == 1 and e['t'] < crash_ms})",  # NOT_READY, "asked again 10 ms later"
        "0 <= b['crash'] - b['last_heartbeat'] <= 2000",                      # "anywhere up to 2 s before the crash"
        "sorted(n for _, n, term, r in fr['rounds'] if term == 1 and r == 'WAIT_TO_VOTE_NEXT')"
        " == sorted(n for n in c.node_ids if n != old)",                      # both survivors' term-1 rounds fail
        "fr['new_term'] == 2 and fr['rounds'][-1][2:] == (2, 'PASSED') and 300 <= fr['waited_ms'] < 1000",
        "6000 <= b['master'] - b['crash'] <= 10000",                          # the table's "≈ 6–10 s"
    ],
    "01_master_slave.ipynb": [
        "max(e['t'] for e in part.events if e['kind'] == 'ha_report' and e['t'] < 10_000) == 9535",  # the last read
        "(losses[losses.role == 'ASYNC_MASTER'].lost > 0).mean() > 0.5",     # "most crashes lose a few"
        "(lambda a: (a['ASYNC_MASTER'] == a['SYNC_MASTER']).all())(losses.pivot(index='seed', columns='role', "
        "values='acked'))",                                                   # "acknowledged the same number"
        "c.node('n1').config.slave_sync_first_delay_ms == 3000 and c.now_ms > 5000",  # metadata after 3 s; over 5 s
    ],
    "03_dledger_election.ipynb": [
        "all(4900 <= t - leak['crash_ms'] <= 5100 for t in leak['followers'].candidate_at_ms)",  # "1 s sooner"
        "figure16.CANDIDATE_PERSIST_MS == (2, 4) and figure16.REQUEST_LATENCY == 'constant:0' "
        "and figure16.REPLY_LATENCY == 'uniform:7:10'",                       # 2-4 ms, at once, 7-9: a 9-13 ms round
        "list(lab.figure16_scale(rows)['mean (ms)']) == sorted(lab.figure16_scale(rows)['mean (ms)'])",  # shorter, faster
        "lab.figure16_scale(rows)['mean / shortest timeout'].idxmax() == '12-24'",  # "the biggest multiple"
    ],
    "04_dledger_replication.ipynb": [
        "SHORT_TIMERS['heart_beat_time_interval_ms'] == 100 and DLedgerConfig().heart_beat_time_interval_ms == 2000",
        "SHORT_TIMERS['push_commit_interval_ms'] == 100 and DLedgerConfig().push_commit_interval_ms == 1000",
    ],
    "05_rocketmq_on_dledger.ipynb": [
        "_module('rocketlab.scenarios.broker_on_dledger').FAST['heart_beat_time_interval_ms'] * 10 "
        "== _module('rocketlab.dledger.config').DLedgerConfig().heart_beat_time_interval_ms == 2000",  # "ten times shorter"
        "'push_commit_interval_ms' not in _module('rocketlab.scenarios.broker_on_dledger').FAST "
        "and _module('rocketlab.dledger.config').DLedgerConfig().push_commit_interval_ms == 1000",  # "every second"
        "_module('rocketlab.scenarios.broker_on_dledger').FILE == 65536",  # "data files of 64 KiB"
        "'at 190: pos 4294967296 != 190;' in stale['recovery']",             # the garbage position the prose quotes
    ],
    "06_controller_mode.ipynb": [
        "len(f['removed_messages']) == 3 and f['removed_held_elsewhere'] == []",  # "3 messages that nobody else has"
        "[e[:2] for e in f['old_epochs']] == [(1, 0)] and f['new_master_epochs'][0][:2] == (1, 0)",  # epoch 1 at 0 on both
        "f['truncated_at'] == f['consistent_point'] == f['new_master_epochs'][-1][1]",  # cut where epoch 2 begins
        "(lambda t: 9000 <= t['min (ms)'] and t['max (ms)'] <= 15000)(times.set_index(['design', 'fault'])"
        ".loc[('controller mode', 'host failure')])",                        # a failed host: "9-15 s after the fault"
        "f['failover_ms'] < 100",                                             # a crashed process: "in milliseconds"
    ],
}
"""Claims of the prose pinned on values: Python expressions over the lab's own variables, each true, evaluated in
the lab's kernel after its last cell, in the fast run and (for the labs of ``FULL_MODE``) the full one. They read
the run, not a printed English sentence, so a twin of a lab in another language (the same code cells) shares them."""


JAVA_EXPECTED: dict[str, list[str]] = {
    "01_master_slave.ipynb": [
        r"60 puts on our SYNC_MASTER: PUT_OK x60\na put while the Java slave is paused \(SIGSTOP\): FLUSH_SLAVE_TIMEOUT",
        r"both commit logs end at \d+: \d files, byte-identical: True",  # records carry CLUSTER, as a 4.9.5 broker adds it
    ],
    "05_rocketmq_on_dledger.ipynb": [   # section 7: each send followed into the unit and the record, all agreeing
        r"(send \d: SEND_OK, queue (\d), queue offset (\d+), \d+ B body, tags \w+; offsetMsgId [0-9A-F]{32} = [\d.]+:\d+ "
        r"\+ physical offset (\d+)\n  ConsumeQueue LabRealProducer/\2 unit \3: physical offset \4, size (\d+), tags code "
        r"(-?\d+) \(hashCode of ('\w+'|None): \6\)\n  CommitLog \S+ at \d+: TOTALSIZE \5, topic LabRealProducer, queue \2, "
        r"queue offset \3, PHYSICALOFFSET \4, sysFlag (0|769 \(compressed: \d+ B stored\)), born host [\d.]+:\d+\n?){6}",
        r"send 0: SEND_OK, .* 4096 B body, .*physical offset 48\n.*\n.*sysFlag 769 \(compressed: [1-9]\d B stored\)",  # 4 KiB: zlib
        r"100 B body, .*\n.*\n.*sysFlag 0,",                                   # below compressMsgBodyOverHowmuch
        r"4097 B body, tags None; .*\n.*tags code 0 \(hashCode of None: 0\)\n.*compressed: 4[1-9]\d\d B stored",  # random: longer
    ],
    "02_commitlog.ipynb": [
        r"RocketMQ 4\.9\.5 \(Java [\d.]+\) and rocketlab each stored the same 40 messages\.\n"
        r"put results \(status, offsets, msgId, queue offset\) identical: True \(40 of 40\)",
        r"commitlog +(\d) file\(s\), byte-identical: \1 of \1\n(consumequeue/LabTopic/\d +(\d) file\(s\), "
        r"byte-identical: \3 of \3\n){2}index +(\d) file\(s\), byte-identical: \4 of \4",
    ],
    "04_dledger_replication.ipynb": [
        r"members: n0 and n1 are ours, n2 is DLedger 0\.3\.1\.2 in Java; leader n\d \((python|java)\)",
        r"5 appends from Java's DLedgerClient, codes \[200\]; 5 from ours",
        r"SIGKILLed: the group elected n\d \((python|java)\)\nn\d restarted and caught up to index \d+ through "
        r"n\d's pushes: True",
        r"\(Java's store by Java, ours by ours\): \d+ entries, identical: True",
    ],
}
"""What the labs' cells beside the real RocketMQ show where the Java oracle is set up (CI sets it up); where it is
not, those cells must say how to get it instead."""


def _java_expected(name: str) -> list[str]:
    if name not in JAVA_EXPECTED:
        return []
    import os

    from rocketlab.oracle import find_oracle
    from rocketlab.oracle.client_jvm import find_broker_java

    if name == "05_rocketmq_on_dledger.ipynb":  # section 7: the Java client, name server and broker
        oracle, why = find_broker_java()
        without = [r"This section runs the real RocketMQ 4\.9\.5 Java client, and this machine cannot "
                   r"\(ROCKETLAB_JAVA_BROKER", r"class path in ROCKETLAB_JAVA_BROKER"]
    else:
        oracle, why = find_oracle("4.9.5")
        without = [r"This cell runs the real RocketMQ, and this machine does not have it \(ROCKETLAB_JAVA_4",
                   r"mvn dependency:build-classpath"]
    if oracle is not None:
        return JAVA_EXPECTED[name]
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} shows the real RocketMQ beside ours, and CI=true has no oracle: {why}")
    return without


def _ids(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


def _text_outputs(nb) -> str:
    """Stream text and text/plain results of every code cell, in order. A cell's stream chunks are joined
    as printed (the kernel may split one print's lines over several outputs); cells end with a newline."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif "text/plain" in out.get("data", {}):
                parts.append(f"\n{out.data['text/plain']}\n")
        parts.append("\n")
    return "".join(parts)


_PIN_CELL = """import json as _pin_json
from importlib import import_module as _module
def _pin(expression):
    try:
        value = eval(expression)
        return repr(bool(value) if type(value).__name__ in ("bool", "bool_") else value)  # numpy's True is True
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
print(_pin_json.dumps({e: _pin(e) for e in %r}))"""
"""The cell appended to a lab that has ``VALUES``: each expression's ``repr`` (or the exception it raised) as JSON."""


def _execute(path: Path, timeout: int) -> tuple[nbformat.NotebookNode, dict[str, str]]:
    """Run a lab in its own kernel (the environment's ``ROCKETLAB_FAST``), then its ``VALUES`` in the same kernel:
    the executed notebook (without that last cell) and each expression's ``repr``."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    expressions = VALUES.get(path.name, [])
    if expressions:
        nb.cells.append(nbformat.v4.new_code_cell(_PIN_CELL % (expressions,)))
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(LABS)}}).execute()
    if not expressions:
        return nb, {}
    pins = nb.cells.pop()
    (out,) = [o for o in pins.outputs if o.output_type == "stream" and o.name == "stdout"]
    return nb, json.loads(out.text)


def _untrue(values: dict[str, str]) -> dict[str, str]:
    return {expression: value for expression, value in values.items() if value != "True"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs_headless_in_fast_mode(path, monkeypatch):
    monkeypatch.setenv("ROCKETLAB_FAST", "1")  # the kernel inherits the environment it starts with
    nb, values = _execute(path, timeout=600)  # raises on the first failing cell
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.output_type == "error"]
    assert not errors, [f"{e.ename}: {e.evalue}" for e in errors]
    assert all(v == "True" for v in values.values()), f"{path.name}: values untrue: {_untrue(values)}"
    lab_figures.keep(path.name, nb)  # for the contrast test of every lab's figures (tests/viz)
    kit_logs = [out.text for cell in nb.cells for out in cell.get("outputs", [])
                if out.output_type == "stream" and out.name == "stderr" and "recovery:" in out.text]
    assert not kit_logs, f"{path.name}: the kit's own recovery log on stderr, beside the lab's report: {kit_logs}"
    text = _text_outputs(nb)
    expected = EXPECTED.get(path.name, []) + BOTH_MODES.get(path.name, []) + _java_expected(path.name)
    missing = [pattern for pattern in expected if not re.search(pattern, text)]
    assert not missing, f"{path.name}: outputs do not show {missing}"


MODE_FREE = ("05_rocketmq_on_dledger.ipynb", "06_controller_mode.ipynb")
"""Labs whose cells never read ``FAST`` past the setup cell: the fast run is the full run, so ``EXPECTED`` pins
their claims in both modes."""
FULL_MODE = [p for p in NOTEBOOKS if (p.name in BOTH_MODES or p.name in VALUES) and p.name not in MODE_FREE]


def test_mode_free_labs_run_the_same_in_both_modes():
    for name in MODE_FREE:
        nb = nbformat.read(LABS / name, as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        reads = [i for i, source in enumerate(code) if re.search(r"\bFAST\b", source)]
        assert reads == [0], f"{name}: code cells {reads} read FAST; move its claims to BOTH_MODES and run it in full"


@pytest.mark.slow
@pytest.mark.parametrize("path", FULL_MODE, ids=_ids(FULL_MODE))
def test_notebook_claims_hold_in_full_mode(path, monkeypatch):
    """The full notebook (``ROCKETLAB_FAST`` unset, as a learner runs it) shows every claim of ``BOTH_MODES``
    and ``VALUES``."""
    monkeypatch.delenv("ROCKETLAB_FAST", raising=False)
    nb, values = _execute(path, timeout=1800)
    text = _text_outputs(nb)
    expected = BOTH_MODES.get(path.name, []) + FULL_ONLY.get(path.name, [])
    missing = [pattern for pattern in expected if not re.search(pattern, text)]
    assert not missing, f"{path.name} (full mode): outputs do not show {missing}"
    assert all(v == "True" for v in values.values()), f"{path.name} (full mode): values untrue: {_untrue(values)}"


def test_lab03_answer_table_numbers_its_checks_as_integers():
    """Lab 03's table of handleVote answers: check 6, not 6.0; an answer without a check shows <NA>, not NaN."""
    from rocketlab.labs_support.dledger_election import answers_seen

    table = answers_seen([{"kind": "vote_response", "result": r} for r in
                          ("ACCEPT", "REJECT_ALREADY_VOTED", "REJECT_ALREADY_VOTED", "NO_SUCH_ANSWER")])
    assert str(table["check"].dtype) == "Int64"
    text = table.to_string()
    assert "6  REJECT_ALREADY_VOTED" in text and ".0" not in text and "NaN" not in text, text


def test_lab04_explains_the_profiles_table_next_to_it():
    """The paragraph that reads the profiles table ("Each row is one seed ...") follows the cells that show it."""
    nb = nbformat.read(LABS / "04_dledger_replication.ipynb", as_version=4)
    sources = [c.source for c in nb.cells]
    table = next(i for i, s in enumerate(sources) if "compare_profiles(" in s and "pd.DataFrame(rows)" in s)
    explained = next(i for i, s in enumerate(sources) if s.startswith("Each row is one seed under one profile."))
    between = [c.cell_type for c in nb.cells[table + 1:explained]]
    assert between in ([], ["code"]), between  # at most the cell printing the same rows as lines


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec") == KERNELSPEC
    stored = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
              and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not stored, f"{path.name}: code cells {stored} have stored outputs or execution counts"


def test_the_labs_are_found():
    assert "01_master_slave.ipynb" in _ids(NOTEBOOKS)


def test_the_graders_printed_output_is_the_learners_not_the_kits_log(tmp_path):
    """A learner's bug that makes the store's recovery cut bytes: the broker logs a warning, and the check's
    "your code printed" must not present that log as the learner's output."""
    from rocketlab.grading import grade
    from tests.grading.mutants import mutant_source

    path = tmp_path / "lab02_commitlog.py"
    path.write_text(mutant_source("lab02.encode_record", 'struct.pack(">i", 4 + len(after_total))',
                                  'struct.pack(">i", len(after_total))'))
    report = grade("lab02", path, only=["lab02.encode_record/store_round_trip"])
    (t,) = report.tests
    assert not t.passed
    assert "recovery" not in t.printed and t.printed_chars == 0, t.printed


def test_lab03_later_cells_do_not_use_the_learners_viewer():
    """Lab 03 invites the learner to crash leaders in ``view``; the scripted cells after it run on a
    group of their own, so that their numbers do not depend on what the learner clicked."""
    nb = nbformat.read(LABS / "03_dledger_election.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    first = next(i for i, s in enumerate(code) if "view = ClusterView" in s)
    uses = [s for s in code[first + 1:] if re.search(r"\bview\.(cluster|act|run_for|replay_code)\b", s)]
    assert not uses, uses


def test_layer_events_keep_one_layer_of_roles():
    from rocketlab.labs_support.tour import layer_events

    events = [{"t": 0, "kind": "role", "node": "n0", "role": "CANDIDATE"}, {"t": 0, "kind": "role", "node": "n0", "role": "SLAVE"},
              {"t": 5, "kind": "role", "node": "n0", "role": "LEADER"}, {"t": 5, "kind": "role", "node": "n0", "role": "MASTER"},
              {"t": 9, "kind": "fault", "node": None, "action": "crash", "targets": ["n0"]}]
    assert [e.get("role") for e in layer_events(events, "DLedger")] == ["CANDIDATE", "LEADER", None]
    assert [e.get("role") for e in layer_events(events, "broker")] == ["SLAVE", "MASTER", None]


def test_figure16_ranges_keep_their_style_in_both_graphs():
    import pandas as pd

    from rocketlab.labs_support.dledger_election import figure16_cdf
    from rocketlab.scenarios import figure16

    rows = pd.DataFrame([{"lo": lo, "hi": hi, "elected": True, "downtime_ms": 100 + i}
                         for lo, hi in {*figure16.RANGES_TOP, *figure16.RANGES_BOTTOM} for i in range(3)])
    styles = []
    for ranges in (figure16.RANGES_TOP, figure16.RANGES_BOTTOM):
        fig = figure16_cdf(rows, ranges, log_x=False, title="t")
        styles.append({tr.name: (tr.line.color, tr.marker.symbol) for tr in fig.data})
    shared = "150-300 ms (3)"
    assert styles[0][shared] == styles[1][shared]
    every = [s for graph in styles for s in graph.values()]
    assert len(set(every)) == len(every) - 1  # every other range has a colour and marker of its own


def test_a_cut_off_followers_progress_lines_reach_the_end_on_top():
    from rocketlab.viz import commit_progress

    events = [{"t": 1, "seq": i, "node": n, "kind": k, "index": 0} for i, (n, k) in
              enumerate((n, k) for n in ("n0", "n1", "n2") for k in ("append", "commit"))]
    events += [{"t": 50 + i, "seq": 10 + i, "node": n, "kind": k, "index": i + 1}
               for i in range(3) for n in ("n0", "n1") for k in ("append", "commit")]
    fig = commit_progress(events, highlight="n2")
    last = fig.data[-2:]
    assert [tr.name for tr in last] == ["n2 append", "n2 commit"]
    assert all(tr.x[-1] == 52 and tr.y[-1] == 0 for tr in last)


def _sections(nb) -> set[int]:
    return {int(m) for cell in nb.cells if cell.cell_type == "markdown"
            for m in re.findall(r"(?m)^## (\d+)\.", cell.source)}


REFERENCE = re.compile(r"(?:\b[Ll]ab (\d\d)(?: \([^)]*\))?,? )?\b(sections?|cells?) (\d+)((?:(?:, | and )\d+)*)(?![.\d])")
""""section 4", "sections 6 and 9", "lab 04, section 7", "lab 00, cell 26": the lab (group 1, else the text's
own), the kind, the numbers. A paper's "section 5.4.2" is not a lab's."""


def _dangling(text: str, lab: str | None, books: dict[str, nbformat.NotebookNode]) -> list[str]:
    """The references of ``text`` (in lab ``lab``, or in a page outside the labs: None) that point nowhere."""
    text = re.sub(r"\s+", " ", text)
    missing = [f"lab {other}" for other in re.findall(r"\b[Ll]abs? (\d\d)\b", text) if other not in books]
    for m in REFERENCE.finditer(text):
        target = m.group(1) or lab
        if target is None:
            continue  # a doc's "section 3" is its own
        numbers = [int(n) for n in [m.group(3), *re.findall(r"\d+", m.group(4))]]
        if target not in books:
            missing.append(f"lab {target} ({m.group(0)})")
        elif m.group(2).startswith("section"):
            missing += [f"lab {target} section {n} ({m.group(0)})" for n in numbers if n not in _sections(books[target])]
        else:
            missing += [f"lab {target} cell {n} ({m.group(0)})" for n in numbers if n >= len(books[target].cells)]
    return missing


@functools.cache
def _books() -> dict[str, nbformat.NotebookNode]:
    return {p.name[:2]: nbformat.read(p, as_version=4) for p in NOTEBOOKS}


def test_every_section_and_lab_a_lab_points_to_exists():
    """"section 4", "sections 6 and 9", "lab 04, section 7", "cell 12": the numbered ``## N.`` heading or the cell
    is there; "lab 03": the notebook is there. In the prose and in the checks' messages (the hints a learner reads)."""
    books = _books()
    missing = []
    for lab, nb in books.items():
        for cell in nb.cells:
            text = cell.source if cell.cell_type == "markdown" else " ".join(re.findall(r'"lab\d\d-check-\d+: ([^"]*)"',
                                                                                         cell.source))
            missing += [f"{lab}: {m}" for m in _dangling(text, lab, books)]
    assert not missing, missing


DOCS = [*sorted((LABS.parent / "docs").glob("*.md")), LABS.parent / "README.md"]


def test_the_docs_point_at_labs_and_sections_that_exist():
    """The docs and the README name notebooks that are there (``03_dledger_election.ipynb``), labs that are there
    with their sections ("lab 04, section 7"), and in the labs table a row's sections are its lab's."""
    books = _books()
    names = {p.name for p in NOTEBOOKS}
    missing = []
    for page in DOCS:
        for line in page.read_text(encoding="utf-8").splitlines():
            missing += [f"{page.name}: {n}" for n in re.findall(r"\b\d\d_[a-z0-9_]+\.ipynb\b", line) if n not in names]
            row = re.match(r"\| (\d\d) \|", line)  # a row of a table by lab
            missing += [f"{page.name}: {m}" for m in _dangling(line, row.group(1) if row else None, books)
                        if not m.startswith("lab 08")]  # lab 08 is announced before it lands
    assert not missing, missing


def test_the_labs_links_lead_somewhere():
    """Every relative link of a lab's markdown (``[Films](../docs/films.md)``) is a file of the checkout."""
    missing = []
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", cell.source):
                if "://" not in target and not (LABS / target).exists():
                    missing.append(f"{path.name}: {target}")
    assert not missing, missing


def test_the_loss_tables_settings_read_apart_in_a_notebook():
    """pandas cuts a cell at ``display.max_colwidth`` (50): every setting label fits, and no two are alike."""
    import pandas as pd

    from rocketlab.labs_support.controller_mode import LOSS_RUNS

    labels = [label for label, _, _ in LOSS_RUNS]
    assert all(len(label) <= pd.get_option("display.max_colwidth") for label in labels), labels
    assert len(set(labels)) == len(labels)


def test_role_timelines_reach_the_clusters_clock():
    """Lab 00 draws its timelines 200 ms after the last role change: the FOLLOWER bars must run to that
    instant, not stop at the last event (a 1 ms sliver)."""
    from rocketlab.labs_support.tour import role_timelines

    events = [{"t": 0, "seq": 0, "kind": "role", "node": "n0", "role": "CANDIDATE", "term": 0},
              {"t": 5, "seq": 1, "kind": "role", "node": "n0", "role": "FOLLOWER", "term": 1, "leader": "n1"},
              {"t": 6, "seq": 2, "kind": "role", "node": "n1", "role": "LEADER", "term": 1, "leader": "n1"}]
    dledger, _broker = role_timelines(events, until_ms=200)
    follower = next(tr for tr in dledger.data if tr.name and tr.name.startswith("FOLLOWER"))
    assert list(follower.base) == [5] and list(follower.x) == [195]
    assert dledger.layout.xaxis.range[1] >= 200
