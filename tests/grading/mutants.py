"""Hand-written mutants of the learner-style solutions: each a realistic mistake that must lose points.

A mutant is ``(exercise, mistake, old, new)``: ``old`` is replaced by ``new`` (exactly once) in the
lab's solution file in ``tests/grading/solutions/``. ``python -m tests.grading.mutants`` grades every
mutant on all of its exercise's tests and prints which tests kill it (the table in the issue note).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rocketlab.grading.registry import LABS
from tests.grading.lab08_wrong import MUTANTS8

SOLUTIONS = Path(__file__).parent / "solutions"

MUTANTS: list[tuple[str, str, str, str]] = [
    # ---- lab01.transfer_parser
    ("lab01.transfer_parser", "waits for 8 header bytes instead of 12", "if len(self.buf) < 12:", "if len(self.buf) < 8:"),
    ("lab01.transfer_parser", "little-endian header", 'HEADER = struct.Struct(">qi")', 'HEADER = struct.Struct("<qi")'),
    ("lab01.transfer_parser", "forgets to drop the parsed frame", "        self.buf = self.buf[12 + size:]\n", ""),
    ("lab01.transfer_parser", "drops only the body, not the header", "self.buf = self.buf[12 + size:]", "self.buf = self.buf[size:]"),
    ("lab01.transfer_parser", "no check of bodySize against max_body",
     "if offset < 0 or size < 0 or size > self.max_body:", "if offset < 0 or size < 0:"),
    ("lab01.transfer_parser", "a body of exactly max_body refused",
     "size > self.max_body:", "size >= self.max_body:"),
    ("lab01.transfer_parser", "overwrites the buffer instead of appending", "self.buf += data", "self.buf = data"),
    # ---- lab01.decide_wait_transfer
    ("lab01.decide_wait_transfer", "> for >=: an ack exactly at the put's end is not enough",
     "done = push2_slave_max_offset >= next_offset", "done = push2_slave_max_offset > next_offset"),
    ("lab01.decide_wait_transfer", "the master not counted as a replica", "replicas = 1", "replicas = 0"),
    ("lab01.decide_wait_transfer", "timeout checked before success",
     "    if done:\n        return True\n    if now_ms >= deadline_ms:\n        return False\n",
     "    if now_ms >= deadline_ms:\n        return False\n    if done:\n        return True\n"),
    ("lab01.decide_wait_transfer", "never times out", "        return False\n    return None", "        return None\n    return None"),
    ("lab01.decide_wait_transfer", "5.x counting ignored (always 4.x)", "    if ack_nums <= 1:\n", "    if True:\n"),
    # ---- lab02.encode_record
    ("lab02.encode_record", "CRC of the whole body without the 0x7FFFFFFF mask",
     "zlib.crc32(body) & 0x7FFFFFFF", "zlib.crc32(body) & 0xFFFFFFFF"),
    ("lab02.encode_record", "TOTALSIZE without its own 4 bytes", 'struct.pack(">i", 4 + len(after_total))',
     'struct.pack(">i", len(after_total))'),
    ("lab02.encode_record", "v6 flags not set", "    if len(born) == 20:\n        sys_flag |= MessageSysFlag.BORNHOST_V6_FLAG\n", ""),
    ("lab02.encode_record", "message's own born timestamp ignored",
     "born_ts = msg.born_timestamp if msg.born_timestamp is not None else born_timestamp", "born_ts = born_timestamp"),
    ("lab02.encode_record", "a separator after the last property too (5.2+'s string, not 4.9.5's)",
     '"\\x02".join(f"{k}\\x01{v}" for', '"".join(f"{k}\\x01{v}\\x02" for'),
    ("lab02.encode_record", "topic length counted in characters, not bytes",
     'struct.pack(">b", len(topic)) + topic', 'struct.pack(">b", len(msg.topic)) + topic'),
    # ---- lab02.is_end_of_file
    ("lab02.is_end_of_file", "a record that fits exactly treated as not fitting",
     "return record_length + 8 > file_size - wrote_position", "return record_length + 8 >= file_size - wrote_position"),
    ("lab02.is_end_of_file", "forgets the 8-byte blank", "return record_length + 8 > file_size - wrote_position",
     "return record_length > file_size - wrote_position"),
    ("lab02.is_end_of_file", "compares with the file size, not what is left",
     "return record_length + 8 > file_size - wrote_position", "return record_length + 8 > file_size"),
    ("lab02.is_end_of_file", "reserves 4 bytes instead of 8", "return record_length + 8 > file_size - wrote_position",
     "return record_length + 4 > file_size - wrote_position"),
    ("lab02.is_end_of_file", "answer inverted", "return record_length + 8 > file_size - wrote_position",
     "return record_length + 8 <= file_size - wrote_position"),
    # ---- lab02.unit_position
    ("lab02.unit_position", "forgets the 20-byte unit size", "logical = index * 20", "logical = index"),
    ("lab02.unit_position", "file number instead of its offset",
     "return logical // mapped_file_size * mapped_file_size, logical % mapped_file_size",
     "return logical // mapped_file_size, logical % mapped_file_size"),
    ("lab02.unit_position", "position not reduced modulo the file size",
     "return logical // mapped_file_size * mapped_file_size, logical % mapped_file_size",
     "return logical // mapped_file_size * mapped_file_size, logical"),
    ("lab02.unit_position", "units counted from 1", "logical = index * 20", "logical = (index + 1) * 20"),
    ("lab02.unit_position", "units of 16 bytes", "logical = index * 20", "logical = index * 16"),
    # ---- lab02.index_positions
    ("lab02.index_positions", "forgets the 40-byte header", "slot = 40 + (key_hash % hash_slot_num) * 4",
     "slot = (key_hash % hash_slot_num) * 4"),
    ("lab02.index_positions", "slots of 20 bytes", "slot = 40 + (key_hash % hash_slot_num) * 4",
     "slot = 40 + (key_hash % hash_slot_num) * 20"),
    ("lab02.index_positions", "entries start right after the header",
     "entry = 40 + hash_slot_num * 4 + index_count * 20", "entry = 40 + index_count * 20"),
    ("lab02.index_positions", "entry numbers from 0 (index_count - 1)",
     "entry = 40 + hash_slot_num * 4 + index_count * 20", "entry = 40 + hash_slot_num * 4 + (index_count - 1) * 20"),
    ("lab02.index_positions", "hash taken modulo the entry count",
     "slot = 40 + (key_hash % hash_slot_num) * 4", "slot = 40 + (key_hash % max(index_count, 1) % hash_slot_num) * 4"),
    # ---- lab03.handle_vote
    ("lab03.handle_vote", "term checked before the log (DLedger 0.1's order)",
     "    if request.ledger_end_term < view.ledger_end_term:\n        return VoteDecision(3, VoteResult.REJECT_EXPIRED_LEDGER_TERM, t)\n",
     "    if request.term < t:\n        return VoteDecision(5, VoteResult.REJECT_EXPIRED_VOTE_TERM, t)\n"
     "    if request.ledger_end_term < view.ledger_end_term:\n        return VoteDecision(3, VoteResult.REJECT_EXPIRED_LEDGER_TERM, t)\n"),
    ("lab03.handle_vote", "forgets to persist the vote (no GRANT effect)",
     "return VoteDecision(10, VoteResult.ACCEPT, t, VoteEffect.GRANT)", "return VoteDecision(10, VoteResult.ACCEPT, t)"),
    ("lab03.handle_vote", "votes again in the same term", "if view.curr_vote_for is not None and view.curr_vote_for != request.leader_id:",
     "if False:"),
    ("lab03.handle_vote", "> for >= on the ledger end index",
     "request.ledger_end_index < view.ledger_end_index:", "request.ledger_end_index <= view.ledger_end_index:"),
    ("lab03.handle_vote", "a newer term accepted at once instead of stepping down",
     "        return VoteDecision(7, VoteResult.REJECT_TERM_NOT_READY, t, VoteEffect.STEP_DOWN)\n", "        pass\n"),
    ("lab03.handle_vote", "answers REJECT_TERM_SMALL_THAN_LEDGER with the voter's term",
     "REJECT_TERM_SMALL_THAN_LEDGER, view.ledger_end_term)", "REJECT_TERM_SMALL_THAN_LEDGER, t)"),
    # ---- lab03.parse_vote_result
    ("lab03.parse_vote_result", "counting the candidate twice (quorum of accepted + 1)",
     "if is_quorum(tally.accepted_num, peer_size):", "if is_quorum(tally.accepted_num + 1, peer_size):"),
    ("lab03.parse_vote_result", "quorum as half, not more than half",
     "if is_quorum(tally.accepted_num, peer_size):", "if tally.accepted_num >= peer_size // 2:"),
    ("lab03.parse_vote_result", "bigger term ignored",
     "    if tally.known_max_term_in_group > term:\n        return VoteRoundDecision(1, ParseResult.WAIT_TO_VOTE_NEXT, NextVote.DEFAULT)\n", ""),
    ("lab03.parse_vote_result", "rules 5 and 6 swapped",
     "    if is_quorum(tally.accepted_num, peer_size):\n        return VoteRoundDecision(5, ParseResult.PASSED, NextVote.UNCHANGED)\n"
     "    if is_quorum(tally.accepted_num + tally.not_ready_term_num, peer_size):\n"
     "        return VoteRoundDecision(6, ParseResult.REVOTE_IMMEDIATELY, NextVote.UNCHANGED)\n",
     "    if is_quorum(tally.accepted_num + tally.not_ready_term_num, peer_size):\n"
     "        return VoteRoundDecision(6, ParseResult.REVOTE_IMMEDIATELY, NextVote.UNCHANGED)\n"
     "    if is_quorum(tally.accepted_num, peer_size):\n        return VoteRoundDecision(5, ParseResult.PASSED, NextVote.UNCHANGED)\n"),
    ("lab03.parse_vote_result", "already-has-leader waits the default time",
     "return VoteRoundDecision(2, ParseResult.WAIT_TO_REVOTE, NextVote.PLUS_LEAK)",
     "return VoteRoundDecision(2, ParseResult.WAIT_TO_REVOTE, NextVote.DEFAULT)"),
    # ---- lab03.handle_heart_beat (find the bug: the fault planted again, or other faults)
    ("lab03.handle_heart_beat", "the planted fault: rows 4 and 6 merged (no leader: refresh only)",
     "        if request_leader_id == leader_id:\n",
     "        if request_leader_id == leader_id or leader_id is None:\n"),
    ("lab03.handle_heart_beat", "an older term's heartbeat accepted",
     "    if request_term < curr_term:\n        return HeartBeatDecision(3,",
     "    if request_term < curr_term - 1:\n        return HeartBeatDecision(3,"),
    ("lab03.handle_heart_beat", "a newer term's leader followed at once (Raft's way, not DLedger's)",
     "return HeartBeatDecision(9, DLedgerResponseCode.TERM_NOT_READY, -1, HeartBeatEffect.STEP_DOWN)",
     "return HeartBeatDecision(6, DLedgerResponseCode.SUCCESS, -1, HeartBeatEffect.BECOME_FOLLOWER)"),
    ("lab03.handle_heart_beat", "another leader of the same term followed",
     "        return HeartBeatDecision(8, DLedgerResponseCode.INCONSISTENT_LEADER, -1)\n",
     "        return HeartBeatDecision(6, DLedgerResponseCode.SUCCESS, -1, HeartBeatEffect.BECOME_FOLLOWER)\n"),
    ("lab03.handle_heart_beat", "the expired term answered with the sender's term",
     "return HeartBeatDecision(3, DLedgerResponseCode.EXPIRED_TERM, curr_term)",
     "return HeartBeatDecision(3, DLedgerResponseCode.EXPIRED_TERM, request_term)"),
    # ---- lab04.quorum_index
    ("lab04.quorum_index", "counting the leader twice (1 + every mark, the leader's included)",
     "index = marks[len(marks) // 2]", "index = max(i for i in marks if 1 + sum(m >= i for m in marks) > len(marks) // 2)"),
    ("lab04.quorum_index", "waits for every member (the lowest mark)", "index = marks[len(marks) // 2]",
     "index = marks[-1]"),
    ("lab04.quorum_index", "ignores Raft's current-term rule",
     "if commit_only_current_term and index > committed_index and term_of(index) != term:", "if False:"),
    ("lab04.quorum_index", "off by one: len // 2 - 1", "index = marks[len(marks) // 2]", "index = marks[len(marks) // 2 - 1]"),
    ("lab04.quorum_index", "the rule applied under every profile",
     "if commit_only_current_term and index > committed_index and term_of(index) != term:",
     "if index > committed_index and term_of(index) != term:"),
    # ---- lab04.commit_rule (the design exercise: realistic half-fixes)
    ("lab04.commit_rule", "counts replicas, as DLedger does (no term check)",
     "and term_of(index) == term:", ":"),
    ("lab04.commit_rule", "half of the group is enough",
     "majority = len(water_marks) // 2 + 1", "majority = len(water_marks) // 2"),
    ("lab04.commit_rule", "waits for every member", "majority = len(water_marks) // 2 + 1",
     "majority = len(water_marks)"),
    ("lab04.commit_rule", "the term of the first uncommitted entry decides",
     "and term_of(index) == term:", "and term_of(committed_index + 1) == term:"),
    ("lab04.commit_rule", "the term of the leader's last entry decides",
     "and term_of(index) == term:", "and term_of(max(water_marks.values())) == term:"),
    ("lab04.commit_rule", "never commits", "            return index\n    return committed_index",
     "            return committed_index\n    return committed_index"),
    # ---- lab04.decide_compare
    ("lab04.decide_compare", "SUCCESS always appends", 'rule, truncate = "match-follower-longer", compare_index',
     'return CompareDecision("match", "append", compare_index)'),
    ("lab04.decide_compare", "steps back by two", 'rule, compare_index = "mismatch-step-back", compare_index - 1',
     'rule, compare_index = "mismatch-step-back", compare_index - 2'),
    ("lab04.decide_compare", "no check against the leader's first index",
     '    if compare_index < l_begin:\n        rule, truncate = rule + "+below-leader-begin", l_begin\n', ""),
    ("lab04.decide_compare", "no-intersection truncates at the follower's begin",
     'rule, truncate = "no-intersection", l_begin', 'rule, truncate = "no-intersection", f_begin'),
    ("lab04.decide_compare", "above the follower's end steps back by one",
     'rule, compare_index = "above-follower-end", f_end', 'rule, compare_index = "above-follower-end", compare_index - 1'),
    # ---- lab05.phy_offset
    ("lab05.phy_offset", "phy offset without the 48-byte header", "return entry_pos + 48", "return entry_pos"),
    ("lab05.phy_offset", "header taken as 40 bytes", "return entry_pos + 48", "return entry_pos + 40"),
    ("lab05.phy_offset", "header subtracted", "return entry_pos + 48", "return entry_pos - 48"),
    ("lab05.phy_offset", "header and size field", "return entry_pos + 48", "return entry_pos + 52"),
    ("lab05.phy_offset", "off by one", "return entry_pos + 48", "return entry_pos + 47"),
    # ---- lab05.which_log
    ("lab05.which_log", "<= at the divide (the first DLedger byte read from the old files)",
     "if offset < divided_commitlog_offset:", "if offset <= divided_commitlog_offset:"),
    ("lab05.which_log", "serves uncommitted bytes", "    if offset >= committed_pos:\n        return None\n", ""),
    ("lab05.which_log", "> for >= at committedPos", "if offset >= committed_pos:", "if offset > committed_pos:"),
    ("lab05.which_log", "always DLedger", '        return "commitlog"\n', '        return "dledger"\n'),
    ("lab05.which_log", "old log only when there is no DLedger data",
     "if offset < divided_commitlog_offset:", "if committed_pos <= 0:"),
    # ---- lab06.find_consistent_point
    ("lab06.find_consistent_point", "the larger end offset (keeps bytes the master never had)",
     "return min(entry.end_offset, match.end_offset)", "return max(entry.end_offset, match.end_offset)"),
    ("lab06.find_consistent_point", "searches from the oldest epoch", "for entry in reversed(local):",
     "for entry in local:"),
    ("lab06.find_consistent_point", "same epoch number taken as same history (start offsets not compared)",
     "if match is not None and match.start_offset == entry.start_offset:", "if match is not None:"),
    ("lab06.find_consistent_point", "the local end offset only",
     "return min(entry.end_offset, match.end_offset)", "return entry.end_offset"),
    ("lab06.find_consistent_point", "the start of the common epoch, not its end",
     "return min(entry.end_offset, match.end_offset)", "return entry.start_offset"),
    ("lab06.find_consistent_point", "0 instead of -1 when nothing matches", "    return -1\n", "    return 0\n"),
    # ---- lab06.elect_master
    ("lab06.elect_master", "dead brokers not filtered out", "candidates = [b for b in sorted(brokers) if is_valid(b)]",
     "candidates = sorted(brokers)"),
    ("lab06.elect_master", "the old master stays even when another broker is preferred",
     "if old_master in candidates and prefer_broker_id in (None, old_master):", "if old_master in candidates:"),
    ("lab06.elect_master", "the broker furthest behind sorts first", "return java_int(b.max_offset - a.max_offset)",
     "return java_int(a.max_offset - b.max_offset)"),
    ("lab06.elect_master", "the higher election priority number wins",
     "return java_int(a.election_priority - b.election_priority)",
     "return java_int(b.election_priority - a.election_priority)"),
    ("lab06.elect_master", "offset compared before epoch",
     "    if a.epoch != b.epoch:\n        return java_int(b.epoch - a.epoch)\n"
     "    if a.max_offset != b.max_offset:\n        return java_int(b.max_offset - a.max_offset)\n",
     "    if a.max_offset != b.max_offset:\n        return java_int(b.max_offset - a.max_offset)\n"
     "    if a.epoch != b.epoch:\n        return java_int(b.epoch - a.epoch)\n"),
    ("lab06.elect_master", "a preferred broker that is not a candidate falls through to the best",
     "        return prefer_broker_id if prefer_broker_id in candidates else None\n",
     "        if prefer_broker_id in candidates:\n            return prefer_broker_id\n"),
    ("lab06.elect_master", "unclean replicas tried before the SyncStateSet",
     "    if sync_state_brokers is not None:\n        chosen = try_elect(sync_state_brokers,",
     "    if all_replica_brokers is not None:\n        sync_state_brokers = all_replica_brokers\n"
     "    if sync_state_brokers is not None:\n        chosen = try_elect(sync_state_brokers,"),
    ("lab06.elect_master", "offset gap compared without Java's 32-bit wrap",
     "return java_int(b.max_offset - a.max_offset)", "return b.max_offset - a.max_offset"),
    # ---- lab07.acked_but_lost
    ("lab07.acked_but_lost", "an inner join: finds the held messages instead of the lost ones",
     'how="left_anti").dropDuplicates()', 'how="inner").dropDuplicates()'),
    ("lab07.acked_but_lost", "joined on the offset only: runs mixed up", 'on=["run", "phy_offset", "size"], how="left_anti"',
     'on=["phy_offset", "size"], how="left_anti"'),
    ("lab07.acked_but_lost", "the size not compared", 'on=["run", "phy_offset", "size"], how="left_anti"',
     'on=["run", "phy_offset"], how="left_anti"'),
    ("lab07.acked_but_lost", "a node that crashed once counts as down even after its restart",
     'down = latest.filter(F.col("action") == "crash")', 'down = per_node.filter(F.col("action") == "crash")'),
    ("lab07.acked_but_lost", "the crashed replicas' records count too",
     'alive = records.filter(F.col("corrupt").isNull()).join(down, on=["run", "node"], how="left_anti")',
     'alive = records.filter(F.col("corrupt").isNull())'),
    ("lab07.acked_but_lost", "every put counts, acknowledged or not",
     'events.filter((F.col("kind") == "put") & (F.col("status") == "PUT_OK"))', 'events.filter(F.col("kind") == "put")'),
    ("lab07.acked_but_lost", "corrupt records count as held", 'records.filter(F.col("corrupt").isNull())', "records"),
    *MUTANTS8,  # lab08: its realistic wrong solutions and more (tests/grading/lab08_wrong.py)
]


def mutant_source(exercise: str, old: str, new: str) -> str:
    lab = exercise.split(".")[0]
    source = (SOLUTIONS / LABS[lab].exercise_file).read_text()
    count = source.count(old)
    if count != 1:
        raise ValueError(f"{exercise}: {old!r} occurs {count} times in the solution, expected once")
    return source.replace(old, new)


def grade_mutant(exercise: str, path: Path, *, everything: bool = False) -> Any:
    """Grade the mutant file ``path`` of ``exercise`` as the suite does: the exercise's decision tables
    first, its scenario tests only when the tables pass (``everything``: all its tests at once, where a
    failing scenario runs to its limits). Returns the grading report."""
    from rocketlab.grading import grade
    from rocketlab.grading.registry import TESTS, load_builtin

    lab = exercise.split(".")[0]
    load_builtin(lab)
    if not everything:
        units = [t.name for t in TESTS.values() if t.exercise == exercise and t.seeds is None]
        report = grade(lab, path, only=units)
        if not report.all_passed:
            return report
    return grade(lab, path, only=[exercise])


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - the report behind the issue note
    """Print the table of mutants and the tests that kill them (:func:`grade_mutant`; ``--all`` runs every
    test of the exercise on every mutant, which takes hours)."""
    import argparse
    import tempfile

    args = argparse.ArgumentParser(prog="python -m tests.grading.mutants")
    args.add_argument("--all", action="store_true", help="run every test on every mutant")
    everything = args.parse_args(argv).all
    print("| exercise | mistake | killed by |\n|---|---|---|")
    survivors = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (exercise, mistake, old, new) in enumerate(MUTANTS):
            path = Path(tmp) / f"m{i}_{LABS[exercise.split('.')[0]].exercise_file}"
            path.write_text(mutant_source(exercise, old, new))
            report = grade_mutant(exercise, path, everything=everything)
            killers = [t.name.split("/", 1)[1] for t in report.tests if not t.passed]
            survivors += not killers
            print(f"| {exercise} | {mistake} | {', '.join(killers) or '**survived**'} |", flush=True)
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
