"""Eleven realistic wrong solutions: each a learner's mistake from a class the old tests never exercised.

A wrong solution is the learner-style solution of its lab (``tests/grading/solutions/``) with one edit
(``old`` replaced by ``new``, exactly once), as a learner would write it. :data:`WRONG` names, for each,
the class of input it gets wrong, the graded tests that must fail it, and a *direct check*: the wrong
function called on one input where it disagrees with the kit's reference (the consequence in words).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocketlab.grading.registry import LABS

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"


@dataclass(frozen=True)
class Wrong:
    name: str  # a short id: the file is tests/grading/wrong/<name>.py once written
    exercise: str
    kind: str  # the class of input the mistake hides in
    mistake: str
    edits: tuple[tuple[str, str], ...]  # (old, new) pairs, each old found exactly once
    killers: tuple[str, ...]  # graded tests (names after the exercise) of which at least one must fail it

    @property
    def lab(self) -> str:
        return self.exercise.split(".")[0]

    def source(self) -> str:
        text = (SOLUTIONS / LABS[self.lab].exercise_file).read_text().split('"""', 2)[2]
        for old, new in self.edits:
            if text.count(old) != 1:
                raise ValueError(f"{self.name}: {old!r} occurs {text.count(old)} times in the solution")
            text = text.replace(old, new)
        return f'"""Wrong solution {self.name}: {self.mistake}."""\n' + text

    def write(self, directory: Path) -> Path:
        path = Path(directory) / LABS[self.lab].exercise_file
        path.write_text(self.source())
        return path


WRONG: list[Wrong] = [
    Wrong("even_quorum_votes", "lab03.parse_vote_result", "even-sized groups",
          "a quorum of votes taken as half the group rounded up (right for 3 and 5, half of 4 is no majority)",
          (("    if is_quorum(tally.accepted_num, peer_size):\n",
            "    if tally.accepted_num >= (peer_size + 1) // 2:\n"),),
          ("parse_result_table", "any_tally", "even_groups")),
    Wrong("even_quorum_index", "lab04.quorum_index", "even-sized groups",
          "the median mark taken as the commit index (right for 3 and 5, only half of 4 members)",
          (("index = marks[len(marks) // 2]", "index = marks[(len(marks) - 1) // 2]"),),
          ("quorum_table", "any_marks", "even_groups")),
    Wrong("vote_equal_ledger_term", "lab03.handle_vote", "equal terms at a check's boundary",
          "check 8 with <=: a candidate whose term equals the voter's last log term is refused",
          (("if request.term < view.ledger_end_term:", "if request.term <= view.ledger_end_term:"),),
          ("decision_table", "term_boundaries")),
    Wrong("props_length_in_chars", "lab02.encode_record", "non-ASCII property values",
          "PROPERTIES length counted in characters, not UTF-8 bytes",
          (('props = "\\x02".join(f"{k}\\x01{v}" for k, v in msg.properties.items()).encode("utf-8")',
            'props_text = "\\x02".join(f"{k}\\x01{v}" for k, v in msg.properties.items())'),
           ('struct.pack(">h", len(props)) + props)', 'struct.pack(">h", len(props_text)) + props_text.encode())')),
          ("golden_records", "any_message_record")),
    Wrong("v6_flags_kept", "lab02.encode_record", "the IPv4/IPv6 host flag bits",
          "the message's own v6 flag bits kept: a v4 host written with a v6 flag",
          (("sys_flag = msg.sys_flag & ~(MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)",
            "sys_flag = msg.sys_flag"),),
          ("golden_records", "any_message_record")),
    Wrong("header_checked_late", "lab01.transfer_parser", "a frame header validated before the body arrives",
          "the header checked only once the whole body has arrived (a 2 GiB bodySize waits for ever)",
          (("        if offset < 0 or size < 0 or size > self.max_body:\n"
            "            raise RemoteProtocolError(f\"bad header {offset} {size}\")\n"
            "        if len(self.buf) < 12 + size:\n            return NEED_DATA\n",
            "        if len(self.buf) < 12 + size:\n            return NEED_DATA\n"
            "        if offset < 0 or size < 0 or size > self.max_body:\n"
            "            raise RemoteProtocolError(f\"bad header {offset} {size}\")\n"),),
          ("bad_frames", "header_alone")),
    Wrong("shared_buffer", "lab01.transfer_parser", "parser state shared between connections",
          "the buffer a class attribute (a bytearray grown and cut in place): every connection's parser shares it",
          (("class TransferParser:\n    def __init__(self, max_body: int = MAX_TRANSFER_BODY) -> None:\n"
            "        self.max_body = max_body\n        self.buf = b\"\"\n",
            "class TransferParser:\n    buf = bytearray()\n\n"
            "    def __init__(self, max_body: int = MAX_TRANSFER_BODY) -> None:\n        self.max_body = max_body\n"),
           ("        self.buf = self.buf[12 + size:]\n", "        del self.buf[:12 + size]\n"),
           ("            raise RemoteProtocolError(", "            self.buf.clear()\n            raise RemoteProtocolError(")),
          ("two_connections",)),
    Wrong("same_instant_crash_wins", "lab07.acked_but_lost", "two faults at the same instant, in both orders",
          "faults at the same instant ordered by kind (a crash wins), not by seq",
          (('orderBy(F.desc("t"), F.desc("seq"))', 'orderBy(F.desc("t"), F.desc(F.col("action") == "crash"))'),),
          ("every_rule", "fault_orders")),
    Wrong("partition_ends_crash", "lab07.acked_but_lost", "a partition after a crash",
          "every fault counts as a node's latest state: a partition after a crash makes it alive again",
          (('faults = events.filter(F.col("kind") == "fault").filter(F.col("action").isin("crash", "restart"))',
            'faults = events.filter(F.col("kind") == "fault")'),),
          ("every_rule", "fault_orders")),
    Wrong("touching_logs_disjoint", "lab04.decide_compare", "a follower log touching the leader's at one end",
          "logs that share one index at an end taken as disjoint (<= for <)",
          (("elif f_end < l_begin or f_begin > l_end:", "elif f_end <= l_begin or f_begin >= l_end:"),),
          ("decision_table", "any_logs")),
    Wrong("set_order_ids", "lab06.elect_master", "broker ids above 7",
          "candidates taken in the set's iteration order (sorted only for ids 0-7 in a small set)",
          (("candidates = [b for b in sorted(brokers) if is_valid(b)]",
            "candidates = [b for b in brokers if is_valid(b)]"),),
          ("election_table", "any_ids")),
]
