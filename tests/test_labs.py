"""Every notebook in labs/ runs top to bottom headless, and none is stored with outputs.

Notebooks are found by glob, so a new lab is covered as soon as it exists. They run in their own
kernel (nbclient, the ``python3`` kernel of this environment) with ``ROCKETLAB_FAST=1``, which each lab
reads once in its first code cell to use fewer puts and seeds. Besides "no cell raised", the numbers and
events a lab's prose states are pinned in ``VALUES``: expressions over the lab's own variables, evaluated in
its kernel after its last cell, so that a lab whose story stops matching what the code does fails here, in
both modes, and its Chinese twin (the same code cells; tests/test_lab_twins.py) is held to the same values.
The few lines a learner must read as printed are pinned in ``SAID``, in both languages.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import nbformat
import pytest

from rocketlab import i18n
from rocketlab.labs_support.dledger_replication import SCHEDULE_COMMENTS, schedule_comments, schedule_text
from rocketlab.scenarios.dledger_schedules import FIGURE_8, ISSUE_251
from tests import lab_figures
from tests.i18n_support import IDEOGRAPH

LABS = Path(__file__).resolve().parents[1] / "labs"
NOTEBOOKS = sorted(LABS.glob("*.ipynb"))
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

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
        "100 <= first_master[1] <= 999",                                     # "within a second ... one broker is master"
        "sorted(first_roles(c.events)) == ['n0', 'n1', 'n2'] and all(role == 'CANDIDATE' and 1 <= t <= 2 for t, role "
        "in first_roles(c.events).values())",                                 # CANDIDATE from the start, traced 1-2 ms in
        "[tuple(row) for row in start[['node', 'up', 'role', 'broker_id', 'dledger_role', 'term', 'leader']]"
        ".itertuples(index=False)] == [('n0', True, 'SYNC_MASTER', 0, 'LEADER', 1, 'n0'), ('n1', True, 'SLAVE', 2, 'CANDIDATE', 1, "
        "None), ('n2', True, 'SLAVE', 3, 'CANDIDATE', 1, None)]",                   # the two layers; n1 -> brokerId 2
        "(lambda f: len(f) == 2 and all(600 <= t <= 619 for t in f.values()))({e['node']: e['t'] for e in c.events "
        "if e['kind'] == 'role' and e['role'] == 'FOLLOWER' and e['t'] < crash_ms})",  # ~10 ms after 605
        "(lambda r: [x[2:] for x in r] == [(0, 'WAIT_TO_VOTE_NEXT')] * 3 + [(1, 'REVOTE_IMMEDIATELY'), (1, 'PASSED')] "
        "and all(x[0] <= 9 for x in r[:3]) and all(100 <= x[0] <= 999 for x in r[3:]))([(e['t'], e['node'], e['term'], "
        "e['result']) for e in c.events if e['kind'] == 'vote_round' and e['t'] < crash_ms])",  # term 0 split; NOT_READY
        "(entry.index, entry.term, entry.pos, handles[0].wrote_offset) == (0, 1, 0, 48)",  # entry 0 at 0, its message at 48
        "800 <= rt['first_start'] <= 899 and 600 <= known <= 619",           # 200 ms after the election
        "1 <= round(rt['first']) <= 9 and 1 <= rt['mean'] < 6 and 1 <= round(rt['max']) <= 9",  # "a few milliseconds"
        "refused is None",                                                    # no put waited for a refused push
        "(lambda at, lead: (lambda lags: len(lags) == PUTS and 0 <= min(lags) <= 5 and 1 <= max(lags) <= 9)("
        "[at(lead, 'commit')[i] - t for i, t in at(lead, 'append').items() if i in at(lead, 'commit')]) and "
        "len({(min(at(n, 'commit')), max(at(n, 'commit'))) for n in ('n1', 'n2')}) == 1 and min(at('n1', 'commit')) "
        "== 0 and all(all(t == at(n, 'append').get(i + 1) for i, t in at(n, 'commit').items()) and max(at(n, 'commit')) "
        "< max(at(n, 'append')) for n in ('n1', 'n2')))(lambda n, k: {e['index']: e['t'] for e in c.events if e['kind'] "
        "== k and e['node'] == n and rt['first_start'] <= e['t'] <= crash_ms}, first_master[0])",  # followers trail by one
        "100 <= new_roles['MASTER'] - new_roles['LEADER'] <= 999",           # "a little after": under a second
        "500 <= p['pause'] <= 509 and p['push'] < p['follower_since']",      # the 500 ms pause, after the failover
        "0 <= b['crash'] - b['last_heartbeat'] and 6000 <= b['candidate'] - b['last_heartbeat'] <= 6009",  # 6 s, then
        "100 <= b['leader'] - b['candidate'] <= 999 and 100 <= b['master'] - b['leader'] <= 999",  # a round; the handler
        "len(acked) == PUTS and len(missing) == 0",                           # "None is missing"
        "(lambda t: [tuple(row) for row in t[['node', 'up', 'role', 'broker_id', 'dledger_role', 'term', 'leader']]"
        ".itertuples(index=False)] == [('n0', True, 'SLAVE', 1, 'FOLLOWER', 2, 'n1'), ('n1', True, 'SYNC_MASTER', 0, 'LEADER', 2, "
        "'n1'), ('n2', True, 'SLAVE', 3, 'FOLLOWER', 2, 'n1')] and t.ledger_end_index.nunique() == t.committed_index.nunique() "
        "== t.max_offset.nunique() == 1 and (t.ledger_end_index == t.committed_index).all() and (t.config_errors == 0)"
        ".all())(pd.DataFrame(node_table(c)))",                               # the old master rejoins, caught up
        "pairs['ASYNC_MASTER'].lost >= 1 and pairs['SYNC_MASTER'].lost == 0 and pairs['SYNC_MASTER'].acked > 0",
        "(lambda m: m['ASYNC_MASTER'] == 0.0 and 1 <= m['SYNC_MASTER'] <= 9 and 1 <= m['DLedger'] <= 9)({**{role: "
        "median_latency_ms(s.handles) for role, s in pairs.items()}, 'DLedger': median_latency_ms(handles)})",
        "sorted(set(votes_by_run['run'])) == ['dledger'] and {r: sorted(set(p['status'])) for r, p in "
        "puts_by_run.groupby('run')} == dict.fromkeys(['async_master', 'dledger', 'sync_master'], ['PUT_OK'])",  # section 6
    ],
    "01_master_slave.ipynb": [
        "max(e['t'] for e in part.events if e['kind'] == 'ha_report' and e['t'] < 10_000) == 9535",  # the last read
        "(losses[losses.role == 'ASYNC_MASTER'].lost > 0).mean() > 0.5",     # "most crashes lose a few"
        "(lambda a: (a['ASYNC_MASTER'] == a['SYNC_MASTER']).all())(losses.pivot(index='seed', columns='role', "
        "values='acked'))",                                                   # "acknowledged the same number"
        "c.node('n1').config.slave_sync_first_delay_ms == 3000 and c.now_ms > 5000",  # metadata after 3 s; over 5 s
        "(lambda ev: [(e['t'], e['kind']) for e in ev][:1] == [(1, 'stream_open')] and ev[1]['kind'] == 'ha_report' "
        "and 5000 <= ev[1]['t'] <= 5009 and ev[1]['offset'] == 0)([e for e in c.events if e['kind'] in ('stream_open', "
        "'ha_report', 'ha_transfer')])",                                      # 4.9.5: the first report ~5 s in
        "[(e['kind'], e.get('size'), e['offset']) for e in c.events if e['kind'] in ('ha_report', 'ha_transfer')][-2:] "
        "== [('ha_transfer', 297, 0), ('ha_report', None, 297)]",            # then bytes and the ack
        "encode_report(c.node('n1').max_offset).hex(' ') == '00 00 00 00 00 00 01 29'",  # the slave's 8-byte ack for 297
        "repr(first_answer) == 'NEED_DATA' and (lambda t: (t[1], t[3], t[4]) == ('NEED_DATA', 0, 'NEED_DATA'))((lambda p: "
        "(p.receive_data(frame[:7]), repr(p.next_event()), p.receive_data(frame[7:]), p.next_event().phy_offset, "
        "repr(p.next_event())))(TransferParser()))",                          # a split frame waits for its rest
        "offsets(late).loc['n1', ['broker_id', 'role', 'up', 'min_offset', 'max_offset']].tolist() == [1, 'SLAVE', True, "
        "12288, 15941]",                                                      # an empty slave starts at the last file
        "(lambda t: t.loc['ASYNC_MASTER', 'put latency p50'] == t.loc['ASYNC_MASTER', 'put latency max'] == 0 and 40 <= "
        "t.loc['ASYNC_MASTER', 'slave ack after p50'] < 60 and 90 <= t.loc['ASYNC_MASTER', 'slave ack after max'] < 110 "
        "and t.loc['ASYNC_MASTER', 'never acked'] == 0 and 2 <= t.loc['SYNC_MASTER', 'put latency p50'] <= 5 and 2 <= "
        "t.loc['SYNC_MASTER', 'put latency max'] <= 5)(latency_table({role: pair.events for role, pair in pairs.items()}))",
        "(one.role, one.seed, one.acked, one.warned, one.lost, one.master_end, one.slave_end) == ('ASYNC_MASTER', 5, 33, "
        "0, 6, 13351, 10347)",                                                # the crash the figure shows
        "losses[losses.role == 'ASYNC_MASTER'].lost.sum() > 0 and losses[losses.role == 'SYNC_MASTER'].lost.sum() == 0",
        "(lambda t: [tuple(r) for r in t[['status', 'puts', 'first_sent_ms', 'min_latency_ms']].itertuples(index=False)] "
        "== [('PUT_OK', 10, 5004, 2), ('FLUSH_SLAVE_TIMEOUT', 6, 10035, 3000), ('SLAVE_NOT_AVAILABLE', 18, 31035, 0), "
        "('FLUSH_SLAVE_TIMEOUT', 1, 40035, 3000), ('PUT_OK', 10, 43535, 2)] and t.loc[0, 'max_latency_ms'] == 4 and "
        "t.loc[[0, 1, 3], 'last_sent_ms'].tolist() == [9532, 27535, 40035] and t.loc[[1, 3], 'max_latency_ms'].tolist() "
        "== [3000, 3000])(status_runs(part.events))",                         # partition: slaveTimeout waits, none, one more
        "[(e['t'], e['node'], e['slave'], e['reason'].split(':')[0]) for e in part.events if e['kind'] == 'ha_close'][:1] "
        "== [(29536, 'n0', 'n1', 'housekeeping')]",                           # 20 s after the last read
        "[(e['t'], e['node'], e['kind'], e.get('reason', '').split(':')[0]) for e in part.events if e['kind'] in "
        "('stream_close', 'stream_open') and e['t'] >= 40000][:2] == [(40002, 'n1', 'stream_close', 'housekeeping'), "
        "(40004, 'n0', 'stream_open', '')]",                                  # back at once
        "(got.status, got.suggest_which_broker_id, [m['queue_offset'] for m in got.messages]) == ('FOUND', 1, [0, 1, 2, 3, "
        "4])",                                                                # reads from the slave
        "down.leader() is None and down.node('n1').role == 'SLAVE'",          # no failover
        "(RUNS / 'first-pair/nodes/n1/store/config/topics.json').is_file()",  # copied by SlaveSynchronize
        "per_run.pivot(index='run', columns='status', values='puts').fillna(0).astype(int).loc['sync-partition']"
        ".to_dict() == {'FLUSH_SLAVE_TIMEOUT': 7, 'PUT_OK': 20, 'SLAVE_NOT_AVAILABLE': 18}",  # Spark: puts per status
        "(lambda n: len(n) == 2 and n[0] == [n[0][0], 1, 0, n[0][0]] and n[0][0] > 0 and n[1] == [n[1][0], 1, n[1][0], 0])("
        "[[int(x) for x in _module('re').findall(r'\\d+', line)][2:] for line in lags])",  # [end, n1, slave at, behind]:
        # 0 then caught up (the lines' numbers, in either language)
        "[(p.status, p.wrote_offset, p.wrote_bytes, p.latency_ms) for p in puts] == [('PUT_OK', 0, 99, 0.0), ('PUT_OK', "
        "99, 99, 0.0), ('PUT_OK', 198, 99, 0.0)]",                            # 99 bytes each; 0 ms
        "before_ack.loc['n0', ['broker_id', 'role', 'up', 'min_offset', 'max_offset', 'slaves', 'push2_slave_max_offset']]"
        ".tolist() == [0, 'ASYNC_MASTER', True, 0, 297, 1, 0] and before_ack.loc['n1', ['min_offset', 'max_offset', "
        "'slaves']].tolist() == [-1, 0, '-']",                                # 297 on the master only, nothing acked
        "(frame[:12].hex(' '), frame[12:20].hex(' '), len(frame)) == ('00 00 00 00 00 00 00 00 00 00 01 29', "
        "'00 00 00 63 da a3 20 a7', 309)",                                    # the header, TOTALSIZE 99, magic
        "per_run.pivot(index='run', columns='status', values='puts').fillna(0).astype(int).loc['first-pair'].to_dict() "
        "== {'FLUSH_SLAVE_TIMEOUT': 0, 'PUT_OK': 3, 'SLAVE_NOT_AVAILABLE': 0}",  # exactly 3 puts
    ],
    "02_commitlog.ipynb": [
        "len(record) == 157",
        "len(files) >= 2 and len(full) == len(files) - 1 and full.records.nunique() == 1 and full.end_of_file_blank.str"
        ".fullmatch(r'\\d+ bytes at \\d+').all() and results[0].append_message_result.wrote_bytes > 0",  # a blank per full file
        "(lambda r: not r.normal and r.start_file == '0' * 20 and r.records == 60)(store.recovery_report)",  # abort file
        "len(pulled) == 60",                                                  # every message after the restart
        "None is not _module('re').search(r'30 valid records, commit log ends at (\\d+); cut \\d+ bytes at \\1 \\(invalid "
        "record at \\1: ' + _said_re('body CRC {crc} differs from stored BODYCRC {stored}', crc=r'\\S+', stored=r'\\S+'),"
        " flip['summary'])",                                                   # the record the byte broke (its reason
        # in the kernel's language: the store's own summary says it so)
        "(flip['before']['units'], flip['messages_left'], flip['last_message_left']) == (60, 30, 'm-0029')",
        "cost['SYNC_FLUSH'] > cost['ASYNC_FLUSH']",                           # an fsync per put
        "pd.DataFrame(record_fields(record)).loc[:1, ['field', 'offset', 'length', 'hex', 'value']].values.tolist() == "
        "[['TOTALSIZE', 0, 4, '00 00 00 9d', 157], ['MAGICCODE', 4, 4, 'da a3 20 a7', '0xdaa320a7']]",  # v1 magic
        "flip['units_trimmed'] == 30 and None is not _module('re').search(r'; trimmed 30 consume queue units; dropped "
        "index files \\d+$', flip['summary'])",                              # "the summary's last item"
        "units.loc[16, ['queue_offset', 'file', 'position', 'size']].tolist() == [16, '00000000000000000320', 0, 313]",
    ],
    "03_dledger_election.ipynb": [
        "all(4900 <= t - leak['crash_ms'] <= 5100 for t in leak['followers'].candidate_at_ms)",  # "1 s sooner"
        "figure16.CANDIDATE_PERSIST_MS == (2, 4) and figure16.REQUEST_LATENCY == 'constant:0' "
        "and figure16.REPLY_LATENCY == 'uniform:7:10'",                       # 2-4 ms, at once, 7-9: a 9-13 ms round
        "list(lab.figure16_scale(rows)['mean (ms)']) == sorted(lab.figure16_scale(rows)['mean (ms)'])",  # shorter, faster
        "lab.figure16_scale(rows)['mean / shortest timeout'].idxmax() == '12-24'",  # "the biggest multiple"
        "[(e['node'], e['term']) for e in group.cluster.events if e['kind'] == 'role' and e['role'] == 'LEADER'][0] "
        "== ('n0', 1) and 3 <= len(lab.votes_for(group.cluster.events, 'n0', 1)) <= 5",  # n0 leads term 1 by a majority
        "group.cluster.now_ms == 14000 and lab.settled_leader(group.cluster) == 'n4' and group.cluster.node('n4').term "
        "== 2",                                                               # a new leader after the crash
        "\"cluster.crash('n0')\" in group.replay_code()",                     # the replay code
        "nm['terms_before'] == nm['terms_after'] == {'n3': 1, 'n4': 1} and list(nm['rounds_by_rule']) == [3]",  # same term
        "(lambda d: (d.check, d.result.name) == (3, 'REJECT_EXPIRED_LEDGER_TERM'))(decide_vote(voter, stale, "
        "is_self=False))",                                                    # 0.2.0 and later
        "(lambda d: (d.check, d.result.name, d.effect.name) == (7, 'REJECT_TERM_NOT_READY', 'STEP_DOWN'))"
        "(lab.decide_vote_release_0_1(voter, stale, is_self=False))",        # 0.1
        "(lambda ev: [(e['role'], e['term']) for e in ev if e['kind'] == 'role'][:4] == [('CANDIDATE', 1)] * 4 and "
        "[(e['term'], e['result'], e['accepted'], e['rule']) for e in ev if e['kind'] == 'vote_round'][:4] == "
        "[(1, 'WAIT_TO_VOTE_NEXT', 0, 7)] * 4)([e for e in group.cluster.events if e['t'] >= crash_ms])",  # nobody grants
        "[(e['node'], e['result'], e['rule']) for e in group.cluster.events if e['kind'] == 'vote_round' and e['term'] "
        "== 2] == [('n4', 'REVOTE_IMMEDIATELY', 6), ('n4', 'PASSED', 5)]",
        "(lambda d: d['term_before'] == d['term_while_isolated'] == 1 and d['elections_after_heal'] == 0)"
        "(isolated['dledger-0.3.1.2'])",                                      # PreVote-like: the term stays
        "(lambda d: d['term_before'] == 1 and d['term_while_isolated'] >= 10 and 1 <= d['elections_after_heal'] <= 9)"
        "(isolated['raft'])",                                                 # Raft: the term climbs, then disrupts
        "300 <= winner_waits.mean() < 500",                                  # the smallest of five draws
        "len(leak['followers']) == 4 and leak['followers'].silence_ms.between(6000, 6009).all()",  # 6 s of silence
        "cut['role_now'] == 'CANDIDATE' and 4000 <= cut['stepped_down_after_ms'] <= 5999 and cut['term_before'] "
        "== cut['term_now'] == 1",                                            # the leader steps down, same term
        "fresh['role_now'] == 'CANDIDATE' and fresh['stepped_down_after_ms'] <= 99",  # lastSuccHeartBeatTime = -1
        "(tr['from'], tr['to'], tr['leader_now'], tr['term_now'], tr['term_before']) == ('n0', 'n4', 'n4', 2, 1)",
        "tr['moved_after_ms'] <= 99 and 300 <= tr['first_round_after_ms'] <= 999",  # "at once", then 300-1000
        "pref['leader_now'] == 'n2'",                                         # preferredLeaderIds=n2
        "(lambda t: t.loc['150-150', 'mean'] == t.loc['150-150', 'median'] == 20000)(lab.figure16_summary(rows))",
        "beside.set_index(['range', 'statistic']).loc[('150-155', 'median'), 'paper_ms'] == 287",
        "no_write[narrow] < kit[narrow]",                                     # without the candidate's disk write
        "2 <= round(slow[short] / kit[short], 1) < 10",                      # replies of 13-15 ms: a multiple
        "4000 <= lab.figure16_summary(contrast).loc['java defaults', 'mean'] < 10000",  # DLedger's defaults: seconds
        "(lambda t: list(t.columns[:4]) == ['term', 'candidate', 'first asked at (ms)', 'rounds'] and "
        "(t.groupby('term').size() > 1).any())(lab.votes_by_term(group.cluster.events))",  # one term, several elections
        "(lambda t: (t.loc[0, 'check'], t.loc[0, 'answer']) == (6, 'REJECT_ALREADY_VOTED') and str(t['check'].dtype) "
        "== 'Int64')(lab.answers_seen(group.cluster.events))",              # check numbers as integers
        "(lambda t: (t.loc[5, 'term'], t.loc[5, 'candidate'], t.loc[5, 'rounds'], t.loc[5, 'granted by']) == (1, 'n0', 2, "
        "'n0, n1, n2, n3, n4') and (t.loc[6, 'term'], t.loc[6, 'candidate'], t.loc[6, 'rounds']) == (1, 'n1', 1) and "
        "6000 <= t.loc[6, 'first asked at (ms)'] <= 6999)(lab.votes_by_term(group.cluster.events))",  # term 1's rounds
        "(lambda w6, w7: w6.min() == w6.max() == 10 and (w6 // 50).value_counts().idxmax() == 0 and "
        "(w7 // 50).value_counts().idxmax() == 6)(waits[waits.rule == 6].wait_ms, waits[waits.rule == 7].wait_ms)",
        "(lambda b: b.loc[('150-200', 'max'), 'paper_ms'] == 513 and b.loc[('150-200', 'max'), 'trials'] == TRIALS "
        "== (10 if FAST else 100))(beside.set_index(['range', 'statistic']))",  # "a worst case over 100 trials"
    ],
    "04_dledger_replication.ipynb": [
        "SHORT_TIMERS['heart_beat_time_interval_ms'] == 100 and DLedgerConfig().heart_beat_time_interval_ms == 2000",
        "SHORT_TIMERS['push_commit_interval_ms'] == 100 and DLedgerConfig().push_commit_interval_ms == 1000",
        "steps[-1] == _module('rocketlab.i18n')._('answer to the client: {code} at index {index}').format(code='SUCCESS', "
        "index=0)",                                                           # the journey ends in a commit
        "[s[3:] for s in push_states(c.events, leader)[:3]] == [('COMPARE', -1), ('COMPARE', -1), ('TRUNCATE', 0)]",
        "sorted(marks.values()) == [0, 5, 5] and median_commit_index(marks) == leader_committed == 5",  # the median
        "(lambda p: (p['append'], p['commit'], p['moved'], p['first'], p['last'], p['with_next']) == (0, 0, False, 1, 5, "
        "True) and len(p['delays']) == 5 and all(0 <= d <= 3 for d in p['delays']))(progress)",  # stays at 0; one push later
        "(end, committed) == (8, 5)",                                         # 3 entries a consumer must not see
        "(lambda f: (f['magic'], f['size'], f['index'], f['term'], f['pos'], f['body_size']) == (1, 53, 0, 1, 0, 5))"
        "(raw['fields'])",                                                    # the hex view's prose
        "d['old_log_before'] == [(b'shared', 1), (b'lonely-1', 1), (b'lonely-2', 1)] and d['new_log_terms'] == "
        "[(b'shared', 1), (b'after-1', 3), (b'after-2', 3)]",                 # term 1 vs 3
        "[(w['sent'], w['answer'], w['follower log'], w['rule'], w['next']) for w in d['walk']] == [(2, "
        "'INCONSISTENT_STATE', '0..2', 'mismatch-step-back', 'compare 1'), (1, 'INCONSISTENT_STATE', '0..2', "
        "'mismatch-step-back', 'compare 0'), (0, 'SUCCESS', '0..2', 'match-follower-longer', 'truncate 0')]",  # the walk
        "[(e['kind'], e.get('state'), e['index']) for e in d['events']][:5] == [('push_state', 'TRUNCATE', 0), "
        "('truncate', None, 1), ('push_state', 'APPEND', 0), ('append', None, 1), ('append', None, 2)]",  # then 1 and 2
        "d['cut'] == [(b'lonely-1', 1), (b'lonely-2', 1)] and d['old_log'] == [b'shared', b'after-1', b'after-2']",
        "(lambda a: a['committed_entry_lost'] is True and a['violated']['leader_completeness'] == 1 and list(a['violated'])"
        " == ['leader_completeness', 'committed_entries_stable'])(f8['dledger-0.3.1.2'][1].as_dict())",
        "(lambda a: a['committed_entry_lost'] is False and a['violated'] == {})(f8['raft'][1].as_dict())",
        "[s['name'] for s in figure8_view.bookmarks] == ['(a)', '(b)', '(c)', '(d)', '(e)'] and figure8_view.bookmarks[3]"
        "['t'] == loss['t'] and 'leader_completeness' in figure8_view.bookmarks[3]['text'] and "
        "'committed_entries_stable' in figure8_view.bookmarks[4]['text']",    # the stops
        "list(report.names) == ['S1', 'S2', 'S3', 'S4', 'S5'] and report.violations['leader_completeness'] == 1 and "
        "list(report.violations) == ['leader_completeness', 'committed_entries_stable']",
        "{r['profile']: (r['figure8_committed_entry_lost'], r['247_follower_rejoined'], r['251_follower_caught_up']) for r "
        "in rows if r['seed'] == 1} == {'dledger-0.3.1.2': (True, False, False), 'dledger-0.3.2': (True, True, True), "
        "'raft': (False, True, True)}",
        "(lambda f: {n: f.node(n).ledger_end_index for n in f.node_ids} == {'n0': 2, 'n1': -1, 'n2': 2} and len([e for e "
        "in f.events if e['kind'] == 'heartbeat' and e.get('code') == 'EXPIRED_TERM']) >= 10 and (lambda x: not any("
        "e['kind'] == 'role' and e['node'] == x['leader'] and e['t'] >= x['t'] and e['role'] != 'LEADER' for e in f.events))"
        "(next(e for e in f.events if e['kind'] == 'heartbeat' and e.get('code') == 'EXPIRED_TERM')))"
        "(issue247_view.cluster)",                                            # again and again, and the leader stays
        "{n: issue251_view.cluster.node(n).ledger_end_index for n in issue251_view.cluster.node_ids} == {'n0': 4, 'n1': 0, "
        "'n2': 4}",                                                           # F never catches up under 0.3.1.2
        "sweep['churn_ms'] == 7000 and sweep['seeds'] > 0 and None is not _module('re').fullmatch(r'\\d{4}-\\d\\d-\\d\\d', "
        "sweep['recorded'][:10]) and {'violation_per_1000', 'acked_write_lost_per_1000', 'not_converged_per_1000'} <= "
        "set(next(r for r in sweep['rows'] if r['profile'] == 'dledger-0.3.1.2'))",
        "None is not _module('re').match(r'leader_completeness: leader n\\d \\(term \\d\\) lacks committed index 2', "
        "loss['detail'])",                                                    # (d)
    ],
    "05_rocketmq_on_dledger.ipynb": [
        "_module('rocketlab.scenarios.broker_on_dledger').FAST['heart_beat_time_interval_ms'] * 10 "
        "== _module('rocketlab.dledger.config').DLedgerConfig().heart_beat_time_interval_ms == 2000",  # "ten times shorter"
        "'push_commit_interval_ms' not in _module('rocketlab.scenarios.broker_on_dledger').FAST "
        "and _module('rocketlab.dledger.config').DLedgerConfig().push_commit_interval_ms == 1000",  # "every second"
        "_module('rocketlab.scenarios.broker_on_dledger').FILE == 65536",  # "data files of 64 KiB"
        "'at 190: pos 4294967296 != 190;' in stale['recovery']",             # the garbage position the prose quotes
        "put.status == 'PUT_OK' and put.wrote_offset == 48 and put.queue_offset == 0",  # the first put, 48 bytes in
        "None is not _module('re').match(r' +0  00 00 00 01 00 00 00 [0-9a-f]{2} .* magic@0 size@4 index@8\\n', r['header_dump'])",
        "None is not _module('re').match(r' +48  00 00 00 [0-9a-f]{2} .* TOTALSIZE@48 MAGICCODE@52 BODYCRC@56 QUEUEID@60\\n +64  .* "
        "FLAG@64 QUEUEOFFSET@68 PHYSICALOFFSET@76\\n', r['record_dump'])",        # positions and field marks
        "r['header']['pos'] + 48 == r['record']['commit_log_offset'] == 48",       # the append hook wrote it
        "r['header']['size'] == 48 + r['header']['body_size'] and r['record']['store_size'] == r['header']['body_size']",
        "len(digests) == 3 and len(set(digests.values())) == 1",                    # identical on every replica
        "not answered and (lambda v: (v['ledger_end_index'], v['committed_index'], v['consume_queue_max_offset']) == (6, 5, 6) "
        "and v['commit_log_max_offset'] == v['committed_pos'] < v['write_pos'])(seen[cut])",  # committed only
        "len(pulled) == 6 and pulled[-1] == b'm4'",
        "pending.status == 'PUT_OK' and pulled_healed[-1] == b'not yet committed'",
        "f['acked_before_crash'] == 0",
        "(lambda s: (s['ledger_end_index'], s['committed_index'], s['broker_role']) == (26, 6, 'SLAVE'))(f['at_leadership'])",
        "(lambda s: (s['ledger_end_index'], s['committed_index'], s['broker_role']) == (26, 26, 'SYNC_MASTER'))(f['at_master'])",
        "100 <= f['master_at'] - f['leader_at'] < 200",                            # "at the next 100 ms poll"
        "len(inflight) == 20",                                                     # 20 of 20 in-flight messages
        "stale['before_restart'][0] == (0, 48, _said('in the log')) and [(u[0], u[2]) for u in "
        "stale['before_restart'][1:]] == [(1, _said(\"points past the log's end\")), (2, _said(\"points past the log's end\"))]",
        "stale['after_restart'] == [(0, 48, _said('in the log'))] and stale['recovery_trimmed'] == {'T/0': 2}",
        "None is not _module('re').match(r'DLedger: recovered entries up to index 1 \\(term \\d+\\), data end 190; cut the tail at 190: "
        "entry at 190: pos \\d+ != 190', stale['recovery'])",                     # the prose reads this line
        "len(upgraded) == 3 and all(u.upgraded and u.old_recovery.normal and u.old_recovery.records == 150 "
        "and u.old_recovery.start_file.endswith('0' * 20) and u.blank_written_at == u.old_recovery.process_offset "
        "for u in upgraded.values()) and len({u.blank_written_at for u in upgraded.values()}) == 1",
        "divided == 131072 == 65536 * 2",                                         # dividedCommitlogOffset
        "first.status == 'PUT_OK' and first.wrote_offset == divided + 48 and first.queue_offset == 150",
        "got[149][:14] == b'old-149old-149' and got[150][:14] == b'new-000new-000' and [row['log'] for o in "
        "(0, first.wrote_offset) for row in layout_upgraded if row['start'] <= o < row['end']] == ['old commit log', "
        "'DLedger log']",  # which log serves each read
        "all(u.divided_commitlog_offset == 131072 and not u.upgraded and 'recovered entries up to index 119 (' in u.dledger "
        "for u in restarted.values())",
        "got_restarted == got",                                                   # same messages after the restart
        "[e['old files'] for e in expiry] == [2, 1, 0, 0] and [e['deleteExpiredFile'] for e in expiry] == [None, 1, 1, "
        "2147483647]",
        "(expiry[2]['min phy offset'], expiry[2]['queue min offset']) == (131072, 150)",
        "[(e['DLedger fileReservedHours'], e['DLedger force clean']) for e in expiry] == [(87600, False)] * 3 + [(73, True)]",
        "after['deleted'] == 1 and after[\"time up (04 o'clock)\"] is True",
        "after['queue min offset'] == 150 + after['ledger begin index']",       # 150 old messages + ledger begin index
        "pull_0.status == 'OFFSET_TOO_SMALL'",
    ],
    "06_controller_mode.ipynb": [
        "len(f['removed_messages']) == 3 and f['removed_held_elsewhere'] == []",  # "3 messages that nobody else has"
        "[e[:2] for e in f['old_epochs']] == [(1, 0)] and f['new_master_epochs'][0][:2] == (1, 0)",  # epoch 1 at 0 on both
        "f['truncated_at'] == f['consistent_point'] == f['new_master_epochs'][-1][1]",  # cut where epoch 2 begins
        "(lambda t: 9000 <= t['min (ms)'] and t['max (ms)'] <= 15000)(times.set_index(['design', 'fault'])"
        ".loc[('controller mode', 'host failure')])",                        # a failed host: "9-15 s after the fault"
        "f['failover_ms'] < 100",                                             # a crashed process: "in milliseconds"
        "100 <= s['dledger_leader'] <= 999 and 100 <= s['controller_leader'] <= 999 and s['first_ask'] <= 9 "
        "and 1000 <= s['found'] <= 1999",                                    # "nothing happens for the first second"
        "[e['node'][0] for e in c.events if e['kind'] == 'controller_leader'][:1] == ['c']",  # a controller leads
        "any(e['kind'] == 'controller_call' and e.get('request') == 'ApplyBrokerIdRequestHeader' and e['code'] == 2014 "
        "for e in c.events)",                                                 # a lost race for a broker id
        "[e.get('master_epoch') for e in c.events if e['kind'] == 'controller_apply' "
        "and e.get('event') == 'ELECT_MASTER_EVENT'][0] == 1",          # the first election: epoch 1
        "config_ids[f['old_master']] == 0 and len(config_ids) == 3 and 0 not in "
        "[i for n, i in config_ids.items() if n != f['old_master']]",         # the master's brokerId 0, its 2 slaves' not
        "f['acked'] == 10 and f['in_flight_answered'] == 0 and f['after_acked'] == 5",  # 10 answered, 3 never; 5 more
        "0 <= f['failover_ms'] <= 99",                                        # a crash: its channel closes at once
        "any(e['kind'] == 'broker_inactive' and e['node'][0] == 'c' and e.get('reason') == 'channel closed' "
        "for e in c.events)",
        "any(e['kind'] == 'controller_apply' and e.get('event') == 'ELECT_MASTER_EVENT' and e.get('master_epoch') == 2 "
        "for e in c.events) and any(e['kind'] == 'controller_request' and e.get('src') == e['node'] and "
        "e['request'] == 'ElectMasterRequestHeader' and e['code'] == 0 and f['crash_ms'] <= e['t'] <= f['elected_ms'] "
        "for e in c.events)",                                                 # the controller leader's own election
        "(lambda hs: len(hs) == 2 and all(5000 <= min(e['t'] for e in c.events if e['kind'] == 'ha_report' and "
        "e['slave'] == n and e['t'] >= t) - t <= 5099 for n, t in hs.items()))({e['slave']: e['t'] for e in "
        "reversed(c.events) if e['kind'] == 'ha_handshake' and e['t'] >= f['elected_ms']})",  # haSendHeartbeatInterval
        "[len(e['members']) for e in c.events if e['kind'] == 'sync_state_set_proposed' and e['t'] >= f['elected_ms'] "
        "and 'caught up' in str(e.get('reason'))][:1] == [2]",              # at an ack, not a 5 s check
        "members == [1, 2, 3]",                                               # the SyncStateSet full again
        "len(f['old_epochs']) == 1 and [e[:2] for e in f['new_master_epochs']] == [(1, 0), (2, f['new_master_epochs'][0][2])] "
        " and find_consistent_point(local, master) == f['truncated_at'] "
        "and f['removed_bytes'] > 0",                                         # epoch 2 begins where the cut is
        "f['old_master_now']['role'] == 'SLAVE'",
        "1 <= median[('controller mode', 'process crash')] <= 99",            # milliseconds
        "9000 <= median[('controller mode', 'host failure')] <= 16999",      # 10 s timeout + a scan, from the last beat
        "4000 <= median[('DLedger commit log', 'process crash')] <= 8999",   # 3 missed 2 s heartbeats + a vote
        "5000 <= median[('DLedger commit log', 'host failure')] <= 9999",
        "median[('controller mode', 'process crash')] < median[('DLedger commit log', 'process crash')] "
        "and median[('DLedger commit log', 'host failure')] < median[('controller mode', 'host failure')]",
        "all(median[(d, 'host failure')] - median[(d, 'process crash')] >= 1 for d in ('controller mode', "
        "'DLedger commit log'))",                                             # "a little longer"
        "[elect({1, 2, 3}), elect({1, 2, 3, 4}), elect({1, 2, 3, 4}, old=2), elect({1, 2, 3, 4}, old=2, prefer=1), "
        "elect({1}, alive=(2, 3, 4)), elect({1}, unclean={1, 2, 3, 4}, alive=(2, 3, 4))] == [3, 4, 2, 1, None, 4]",
        "{2.0: -2147483648, 2.5: 1610612736, 3.9: 107374183, 4.0: 0, 4.5: -536870912}.items() "
        "<= dict(zip(wrap['ahead (GiB)'], wrap['(int)(o2 - o1)'])).items()",  # the int wrap, every 4 GiB
        "elect_master({1, 2}, None, None, None, lambda b: True, far.get) == 2",  # 2.5 GiB ahead, and not elected
        "after[('DLedger commit log', 3)] > 0 and pd.isna(after[('DLedger commit log', 2)])",  # no majority of 2
        "fastest[0] == 'controller mode, allAck'",                            # a crash closes its channel
        "after[('controller mode, allAck', 2)] > 0 and w.loc[('controller mode, allAck', 2), 'stored bytes per put'] "
        "== 300 and copy == 150 and w.loc[('DLedger commit log', 3), 'stored bytes per put'] == 594 == 3 * (copy + 48)",
        "(lambda r: r['controller-partition'][1] > 0 == r['controller-partition'][2] "
        "and r['controller-partition --profile allack'][1:] == (0, 0) "
        "and r['controller-5663 --profile before-5798'][0] > 0 and min(r['controller-5663 --profile before-5798']) > 0 "
        "and r['controller-5663'] == (0, 0, 0) and r['controller-unclean'][0] > 0 and r['controller-unclean'][1] > 0 "
        "== r['controller-unclean'][2] and r['controller-failover'][1:] == (0, 0))({x['scenario']: (x['acked'], "
        "x['acked lost'], x['violations']) for x in losses})",               # (acked, lost, violations) per run
        "island['acked by the cut-off master'] == 5 and island_set == [1, 2, 3]",  # PUT_OK on a cut-off master
    ],
    "07_spark.ipynb": [
        "None is not _module('re').fullmatch(r'4\\.\\d+\\.\\d+', spark.version) and spark.sparkContext.master == "
        "'local[2]' and seconds > 0",                                         # Spark 4 on two cores
        "(lambda s, r: r[r.index('figure8-dledger-0.3.1.2'):][:3] == ['figure8-dledger-0.3.1.2', 'figure8-dledger-0.3.2', "
        "'figure8-raft'] and s.loc['figure8-dledger-0.3.1.2', 'violations'] > 0 and s.loc['figure8-dledger-0.3.2', "
        "'violations'] > 0 and s.loc['figure8-raft', 'violations'] == 0)(summary.set_index('run'), list(summary.run))",
        "partitions == len(list(tour.glob('nodes/*/store/commitlog/*')))",  # one per mapped file
        "index_per_node == {'n0': 150, 'n1': 150, 'n2': 150}",  # keys
        "(lambda t: t.node.tolist() == ['n0', 'n1', 'n2'] and str(t.file.iloc[0]) == '20231114221321687' and "
        "t.phy_offset.nunique() == 1 and 131000 <= t.phy_offset.iloc[0] <= 139999 and (t['keys'] == 'new-007').all() "
        "and (t.queue_offset == 127).all())(hits)",  # one message, the same offset
        "per_node['node'].tolist()[:2] == ['n0', 'n1'] and per_node['count'].tolist()[0] == 60 and 50 <= "
        "per_node['count'].tolist()[1] <= 59",                                       # the slave holds fewer
        "(lambda s: s['ASYNC_MASTER'] >= 1 and s['SYNC_MASTER'] == 0)(lost.groupby('role')['lost'].sum())",
        "cq['units'].sum() == cq['consistent'].sum() and cq['mismatched'].sum() == cq['dangling'].sum() == 0",
        "no_leader['150-150'] == rows.groupby('range')['elected'].size()['150-150'] and no_leader['150-300'] == 0",
        "by_write['0-0'] < by_write['2-4'] < by_write['3-5']",                # the candidate's disk write splits votes
        "sorted(by_reply.index) == ['uniform:13:16', 'uniform:7:10'] and by_reply.notna().all()",
        "ordered == sorted(ordered)",                                        # Figure 16's bottom graph
        "(lambda b: (b.loc[('12-24', 'mean'), 'paper_ms'], b.loc[('12-24', 'max'), 'paper_ms']) == (35, 152) and "
        "b.loc[[('12-24', 'mean'), ('12-24', 'max')], 'ours_ms'].notna().all())(beside.set_index(['range', "
        "'statistic']))",                                                     # no NaN: after the bottom sweep
        "worst.paper_ms == 513 and round_ms == 213 and abs((worst.ours_ms - worst.paper_ms) / round_ms) < 9.95 and (FAST "
        "or (worst.trials == 1000 and abs((worst.ours_ms - worst.paper_ms) / round_ms) < 0.95))",  # within a round
        "by_timers['scaled to 150-300'] > raft_300",                          # DLedger scaled is slower than Raft
        "by_version['dledger-0.3.1.2'] == by_version['dledger-0.3.2']",      # elect alike on every seed
        "2000 <= round(by_timers['java defaults']) <= 9999",                 # seconds with Java's defaults
        "4000 <= round(mine[mine.param_timers == 'java defaults'].downtime_ms.min()) <= 9999",  # three 2 s beats first
    ],
}
"""Claims of the prose pinned on values: Python expressions over the lab's own variables, each true, evaluated in
the lab's kernel after its last cell, in the fast run and (for the labs of ``FULL_MODE``) the full one. They read
the run, not a printed English sentence, so a twin of a lab in another language (the same code cells) shares them.
Where a cell only displays a value, it keeps it in a variable (lab 00's ``start``, lab 05's ``seen``); where a table
is a pure function of the run, the expression calls it again (``lab.votes_by_term(group.cluster.events)``); where
a helper returns lines and no value behind them, the expression reads those lines. Numbers
that differ between the modes are read through the lab's own constants (``PUTS``, ``TRIALS``, ``FAST``)."""


def _check_on_template(lab: str) -> tuple[str, str]:
    """What ``check()`` on a lab's untouched exercise template prints first, in English and in Chinese."""
    return (rf"{lab}\.\w+: 0/\d+ points\n  FAIL \w+ \(0/\d+\): \w+ is not implemented yet",
            rf"{lab}\.\w+: 0/\d+ 分\n  未通过 \w+ \(0/\d+\): \w+ 还没有实现")


SAID: dict[str, list[tuple[str, str]]] = {
    **{name: [_check_on_template(f"lab{name[:2]}")] for name in (
        "01_master_slave.ipynb", "03_dledger_election.ipynb", "04_dledger_replication.ipynb",
        "05_rocketmq_on_dledger.ipynb", "06_controller_mode.ipynb", "07_spark.ipynb")},
    "02_commitlog.ipynb": [
        (r"lab02\.encode_record: 0/8 points", r"lab02\.encode_record: 0/8 分"),  # check() on the template
    ],
}
"""Lines a learner must read as printed (what the grader says of an unwritten exercise), each as a pair: the
English lab's line and its Chinese twin's (tests/test_lab_twins.py); every other claim is a value in ``VALUES``."""


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
import re as _pin_re
from importlib import import_module as _module
from rocketlab.i18n import _ as _said
def _said_re(template, **fields):
    parts = _pin_re.split(r"\\{(\\w+)[^{}]*\\}", _said(template))
    return "".join(_pin_re.escape(p) if i %% 2 == 0 else fields[p] for i, p in enumerate(parts))
def _pin(expression):
    try:
        value = eval(expression)
        return repr(bool(value) if type(value).__name__ in ("bool", "bool_") else value)  # numpy's True is True
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
print(_pin_json.dumps({e: _pin(e) for e in %r}))"""
"""The cell appended to a lab that has ``VALUES``: each expression's ``repr`` (or the exception it raised) as JSON.
An expression that reads a line the kit prints compares it with the catalogue's line in the kernel's language, so a
Chinese twin holds the same claim: ``_said(msgid)`` is that line, ``_said_re(msgid, field=regex, ...)`` a regular
expression of it whose fields match the given regexes."""


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
    expected = [en for en, _ in SAID.get(path.name, [])] + _java_expected(path.name)
    missing = [pattern for pattern in expected if not re.search(pattern, text)]
    assert not missing, f"{path.name}: outputs do not show {missing}"


MODE_FREE = ("05_rocketmq_on_dledger.ipynb", "06_controller_mode.ipynb")
"""Labs whose cells never read ``FAST`` past the setup cell: the fast run is the full run, so it checks their
``VALUES`` for both modes."""
FULL_MODE = [p for p in NOTEBOOKS if p.name in VALUES and p.name not in MODE_FREE]


def test_mode_free_labs_run_the_same_in_both_modes():
    for name in MODE_FREE:
        nb = nbformat.read(LABS / name, as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        reads = [i for i, source in enumerate(code) if re.search(r"\bFAST\b", source)]
        assert reads == [0], f"{name}: code cells {reads} read FAST; take it out of MODE_FREE and run it in full"


@pytest.mark.slow
@pytest.mark.parametrize("path", FULL_MODE, ids=_ids(FULL_MODE))
def test_notebook_claims_hold_in_full_mode(path, monkeypatch):
    """The full notebook (``ROCKETLAB_FAST`` unset, as a learner runs it) holds every claim of ``VALUES`` and
    shows the lines of ``SAID``."""
    monkeypatch.delenv("ROCKETLAB_FAST", raising=False)
    nb, values = _execute(path, timeout=1800)
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.output_type == "error"]
    assert not errors, [f"{e.ename}: {e.evalue}" for e in errors]
    text = _text_outputs(nb)
    missing = [en for en, _ in SAID.get(path.name, []) if not re.search(en, text)]
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


def test_lab04s_schedules_print_their_comments_in_the_kernels_language():
    """Lab 04 prints Figure 8's and #251's schedules: every comment paragraph is in the catalogue (the schedules
    stay English for ``rocketlab sim``); in English they print as written, in Chinese each comment is one Chinese
    line and every step is kept."""
    try:
        for script in (FIGURE_8, ISSUE_251):
            assert set(schedule_comments(script)) <= set(SCHEDULE_COMMENTS), schedule_comments(script)
            i18n.set_language("en")
            assert schedule_text(script) == script
            i18n.set_language("zh-CN")
            chinese = schedule_text(script).splitlines()
            comments = [line for line in chinese if line.startswith("#")]
            assert len(comments) == len(schedule_comments(script)) and all(IDEOGRAPH.search(c) for c in comments)
            assert [line for line in chinese if not line.startswith("#")] == [
                line for line in script.splitlines() if not line.startswith("#")]
    finally:
        i18n.set_language(None)


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
