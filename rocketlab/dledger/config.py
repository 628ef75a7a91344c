"""DLedgerConfig: DLedger's settings with their Java names (snake_case) and defaults, plus profiles.

Theory of operation
-------------------
A config is a frozen dataclass validated on construction: every problem raises
:class:`~rocketlab.errors.ConfigError` naming the field. It loads from a mapping or a Java-properties
file whose keys may be Java's camelCase names (``heartBeatTimeIntervalMs``) or the snake_case field names.

Profiles (docs/architecture.md, "Fidelity is explicit") choose where released versions differ; each is named after what it
models. Each difference is one boolean field; leaving it ``None`` takes the profile's value, setting it
overrides the profile. Java line numbers are of ``DLedgerLeaderElector.java`` / ``DLedgerEntryPusher.java``
/ ``DLedgerMmapFileStore.java`` / ``MemberState.java`` at the tags named:

===============================  =========  =====  ====  ==================================================
field                            0.3.1.2    0.3.2  raft  what it switches
===============================  =========  =====  ====  ==================================================
step_down_on_bigger_term         False      True   True  #247 (0.3.2, commit 4ee007d): the leader waits for
                                                         its heartbeat latch (at most the interval - 10 ms),
                                                         sleeps 10 ms more, then steps down first if any
                                                         answer carried a bigger term; 0.3.1.2 judges the
                                                         round when the latch opens and checks the bigger
                                                         term only after a quorum of SUCCESS failed
remove_stuck_buffered_push       False      True   True  #251 (0.3.2, 888883a): checkAbnormalFuture
                                                         *removes* the stuck buffered push it answers
                                                         INCONSISTENT_STATE; 0.3.1.2 keeps it, so
                                                         re-pushes of that index get REPEATED_PUSH forever
bounded_push_queue               True       False  True  #282 (0.3.1.1/0.3.1.2 only, never merged into
                                                         0.3.2): COMPARE/TRUNCATE/COMMIT pushes go to a
                                                         1024-slot queue with ``offer`` (PUSH_REQUEST_IS_FULL
                                                         when full) drained with NOT_FOLLOWER when the
                                                         member is no longer a follower; 0.3.2 blocks on a
                                                         100-slot queue and keeps what is queued
commit_only_current_term         False      False  True  QuorumAckChecker commits only up to an entry of the
                                                         current term (Raft 5.4.2); DLedger commits old-term
                                                         entries by counting replicas (issue #4, Figure 8)
append_noop_on_leadership        False      False  True  a new leader appends an empty NOOP entry (magic 2,
                                                         as DLedger master's enableFastAdvanceCommitIndex)
truncate_zeroes_bytes            False      False  True  kit's safer store: a truncation zeroes the cut
                                                         bytes; Java only moves the write position, so the
                                                         stale entries stay and a restart's recovery may read
                                                         them back
recover_noop_entries             False      False  True  recovery accepts magic 2 (the raft profile's NOOP);
                                                         0.3.x accepts magic 1 only (``CURRENT_MAGIC``)
durable_currterm                 False      False  True  ``currterm`` written with fsync and an atomic
                                                         rename; Java (IOUtils.string2File) writes
                                                         ``.tmp``, copies the old file to ``.bak``, deletes,
                                                         renames, never fsyncs: a power loss can lose a vote
raft_election                    False      False  True  Raft's election rules (see below) instead of
                                                         DLedger's elector
fresh_compare_on_new_term        False      False  True  a new term's COMPARE starts from the leader's end:
                                                         Java's changeState(-1, COMPARE) resets compareIndex
                                                         only when leaving APPEND, so a dispatcher that was
                                                         in COMPARE when its member last led compares at that
                                                         stale index, gets SUCCESS and truncates a follower's
                                                         matching log down to it, committed entries included
                                                         (the follower may then vote for a stale candidate)
===============================  =========  =====  ====  ==================================================

* ``dledger-0.3.1.2`` (the default everywhere): DLedger as RocketMQ ships it: ``dleger.version`` is
  0.3.1.2 in the ``pom.xml`` of rocketmq-all-4.9.5 to 4.9.8 and 5.1.1 to 5.3.3 (5.0.0 and 5.1.0 ship
  0.3.1); ``rocketmq-4.9.5`` is an accepted alias.
* ``dledger-0.3.2``: that tag. It was cut from master before the 0.3.1.x maintenance releases, so it has
  the #247 and #251 fixes but not 0.3.1.1's #282 queue fix.
* ``raft``: the textbook rules, matching no DLedger release: commit only entries of the current term, a
  no-op on taking leadership, never a cut of a follower's matching log at a compare index left from an
  earlier term, the store's safer choices above, and Raft's election (``raft_election``):
  a member adopts a higher term from any request or response at once (a candidate or leader steps
  down; its vote is cleared), a follower or candidate starts an election (term + 1, vote for itself)
  when its election timer fires, the timer is drawn uniformly from ``[election_timeout_min_ms,
  election_timeout_max_ms]`` and reset on a heartbeat from the current leader and on granting a vote,
  votes go to the first candidate of a term whose log is at least as up to date, and the leader
  heartbeats every ``election_timeout_min_ms // 2`` (the set-up of Raft's Figure 16; DLedger's
  ``heart_beat_time_interval_ms`` and vote intervals are then unused). The labs use it to contrast
  Raft's Figure 8 and Figure 16 with what DLedger does.

Java hard-codes some timers; rocketlab makes them fields (their Java value is the default) so that tests
and labs can shrink every timer down to single milliseconds: ``rpc_timeout_ms`` (3000),
``state_maintainer_interval_ms`` (10), ``vote_round_wait_base_ms`` (2000), ``push_commit_interval_ms``
(1000), ``follower_push_timeout_ms`` (1000), ``check_abnormal_future_interval_ms`` (1000),
``dispatcher_error_backoff_ms`` (500), ``leak_check_interval_ms`` (1000),
``check_preferred_leader_interval_ms`` (1000), ``max_pending_size`` (1000, per EntryDispatcher).

Java file: ``DLedgerConfig.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from rocketlab.dledger.entry import INDEX_UNIT_SIZE
from rocketlab.errors import ConfigError
from rocketlab.i18n import N_, _
from rocketlab.peers import parse_peers as shared_parse_peers
from rocketlab.properties import parse_properties as shared_parse_properties

_SWITCH_ORDER = ("step_down_on_bigger_term", "remove_stuck_buffered_push", "bounded_push_queue",
                 "commit_only_current_term", "append_noop_on_leadership", "truncate_zeroes_bytes",
                 "recover_noop_entries", "durable_currterm", "raft_election", "fresh_compare_on_new_term")


def _profile(*values: bool) -> dict[str, bool]:
    return dict(zip(_SWITCH_ORDER, values, strict=True))


PROFILES: dict[str, dict[str, bool]] = {
    #                           247    251    282    commit noop   zero   magic2 fsync  raft-election compare
    "dledger-0.3.1.2": _profile(False, False, True, False, False, False, False, False, False, False),
    "dledger-0.3.2": _profile(True, True, False, False, False, False, False, False, False, False),
    "raft": _profile(True, True, True, True, True, True, True, True, True, True),
}
PROFILE_ALIASES: dict[str, str] = {"rocketmq-4.9.5": "dledger-0.3.1.2"}
"""Other accepted names of a profile (``rocketmq-4.9.5`` ships DLedger 0.3.1.2)."""
DEFAULT_PROFILE = "dledger-0.3.1.2"
PROFILE_SWITCHES = tuple(PROFILES[DEFAULT_PROFILE])


def delete_hours(delete_when: str) -> tuple[int, ...]:
    """The hours of a ``deleteWhen`` value (``"04"``, ``"04;16"``); ConfigError for anything else."""
    parts = delete_when.split(";")
    if not all(p.strip().isdigit() and int(p) < 24 for p in parts):
        raise ConfigError(_("{name}: hours of the day separated by ';' (e.g. '04' or '04;16'), got {value!r}").format(
            name="delete_when", value=delete_when))
    return tuple(int(p) for p in parts)


def commits_only_current_term(profile: str, overrides: Mapping[str, Any] | None = None) -> bool:
    """Whether a group with this profile and these DLedgerConfig overrides commits only entries of the
    current term (so no committed entry can ever be lost: what the invariant checker may demand)."""
    explicit = (overrides or {}).get("commit_only_current_term")
    return PROFILES[resolve_profile(profile)]["commit_only_current_term"] if explicit is None else bool(explicit)


def resolve_profile(name: str) -> str:
    """The profile's canonical name (aliases resolved); ConfigError listing the known names otherwise."""
    if name in PROFILES:
        return name
    if name in PROFILE_ALIASES:
        return PROFILE_ALIASES[name]
    known = ", ".join([*PROFILES, *(f"{a} (= {c})" for a, c in PROFILE_ALIASES.items())])
    raise ConfigError(_("profile: unknown profile {name!r}, expected one of {known}").format(name=name, known=known))


STORE_TYPES = ("FILE", "MEMORY")
FSYNC_POLICIES = ("interval", "always", "never")
#: :meth:`DLedgerConfig.load`'s configs by their input values (at most ``_LOADED_MAX``, then started afresh).
_LOADED: dict[tuple[Any, ...], Any] = {}
_LOADED_MAX = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class DLedgerConfig:
    """Models DLedgerConfig, DLedger 0.3.1.2: one member's settings, validated on construction.

    Simplified: no multi-path data dirs, no ``enablePushToFollower`` (declared but unused in Java); peers are parsed
    once here (``DLedgerConfig.init`` in Java). Added: profile switches and Java's hard-coded timers
    (see the module docstring), and ``fsync_policy``: ``interval`` (flush data with fsync every
    ``flush_file_interval`` ms, as DLedger's FlushDataService), ``always`` (fsync after every append) or
    ``never`` (flush on the same interval but never call fsync: page cache only, for fast simulations;
    a simulated power loss still forgets what was not flushed). ``currterm`` and ``checkpoint`` are
    fsynced unless ``never``.
    """

    group: str = "default"
    self_id: str = "n0"
    peers: str = "n0-localhost:20911"
    store_base_dir: str = "/tmp/dledgerstore"
    store_type: str = "FILE"
    mapped_file_size_for_entry_data: int = 1024 * 1024 * 1024
    mapped_file_size_for_entry_index: int = INDEX_UNIT_SIZE * 5 * 1024 * 1024
    enable_leader_elector: bool = True
    heart_beat_time_interval_ms: int = 2000
    max_heart_beat_leak: int = 3
    min_vote_interval_ms: int = 300
    max_vote_interval_ms: int = 1000
    preferred_leader_ids: str | None = None
    max_leadership_transfer_wait_index: int = 1000
    min_take_leadership_vote_interval_ms: int = 30
    max_take_leadership_vote_interval_ms: int = 100
    leadership_transfer_wait_timeout: int = 1000
    max_pending_requests_num: int = 10000
    max_wait_ack_time_ms: int = 2500
    max_push_time_out_ms: int = 1000
    peer_push_throttle_point: int = 300 * 1024 * 1024
    peer_push_quota: int = 20 * 1024 * 1024
    is_enable_batch_push: bool = False
    max_batch_push_size: int = 4 * 1024
    flush_file_interval: int = 10
    check_point_interval: int = 3000
    file_reserved_hours: int = 72
    delete_when: str = "04"
    disk_space_ratio_to_check_expired: float = 0.70
    disk_space_ratio_to_force_clean: float = 0.85
    enable_disk_force_clean: bool = True
    # rocketlab: profile and its switches (None = take the profile's value)
    profile: str = DEFAULT_PROFILE
    step_down_on_bigger_term: bool | None = None
    remove_stuck_buffered_push: bool | None = None
    commit_only_current_term: bool | None = None
    append_noop_on_leadership: bool | None = None
    bounded_push_queue: bool | None = None
    truncate_zeroes_bytes: bool | None = None
    recover_noop_entries: bool | None = None
    durable_currterm: bool | None = None
    raft_election: bool | None = None
    fresh_compare_on_new_term: bool | None = None
    # rocketlab: Raft's election timer range (used with raft_election only)
    election_timeout_min_ms: int = 150
    election_timeout_max_ms: int = 300
    # rocketlab: a candidate's own disk write (term and vote) before it sends its vote requests, drawn
    # uniformly from [min, max] ms (raft_election only; 0 = sent at once)
    candidate_persist_min_ms: int = 0
    candidate_persist_max_ms: int = 0
    # rocketlab: Java's hard-coded constants, made configurable
    rpc_timeout_ms: int = 3000
    state_maintainer_interval_ms: int = 10
    vote_round_wait_base_ms: int = 2000
    push_commit_interval_ms: int = 1000
    follower_push_timeout_ms: int = 1000
    check_abnormal_future_interval_ms: int = 1000
    dispatcher_error_backoff_ms: int = 500
    leak_check_interval_ms: int = 1000
    check_preferred_leader_interval_ms: int = 1000
    max_pending_size: int = 1000
    fsync_policy: str = "interval"
    peer_map: dict[str, str] = field(default_factory=dict, init=False, compare=False, repr=False)
    explicit_switches: frozenset[str] = field(default=frozenset(), init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _check_types(self)
        object.__setattr__(self, "profile", resolve_profile(self.profile))
        explicit = frozenset(name for name in PROFILE_SWITCHES if getattr(self, name) is not None)
        object.__setattr__(self, "explicit_switches", explicit)
        for name, value in PROFILES[self.profile].items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
        object.__setattr__(self, "peer_map", parse_peers(self.peers))
        _validate(self)

    # ------------------------------------------------------------------ derived values
    @property
    def default_path(self) -> Path:
        """``storeBaseDir/dledger-<selfId>`` (``getDefaultPath()``)."""
        return Path(self.store_base_dir) / f"dledger-{self.self_id}"

    @property
    def leader_heart_beat_interval_ms(self) -> int:
        """How often a leader heartbeats: ``heart_beat_time_interval_ms``, or under ``raft_election`` half
        the minimum election timeout (Raft's Figure 16 set-up)."""
        return self.election_timeout_min_ms // 2 if self.raft_election else self.heart_beat_time_interval_ms

    @property
    def disk_full_ratio(self) -> float:
        """``getDiskFullRatio``: the force-clean ratio plus 0.05, at most 0.95; beyond it appends fail
        with DISK_FULL."""
        return min(self.disk_space_ratio_to_force_clean + 0.05, 0.95)

    @property
    def delete_hours(self) -> tuple[int, ...]:
        """The hours of ``delete_when`` (``"04"`` or ``"04;16"``)."""
        return delete_hours(self.delete_when)

    @property
    def peer_ids(self) -> tuple[str, ...]:
        """Member ids, sorted (broadcasts go out in this order)."""
        return tuple(sorted(self.peer_map))

    @property
    def self_address(self) -> str:
        return self.peer_map[self.self_id]

    @property
    def preferred_leader_id_list(self) -> tuple[str, ...]:
        if not self.preferred_leader_ids:
            return ()
        return tuple(p.strip() for p in self.preferred_leader_ids.split(";") if p.strip())

    def replace(self, **changes: Any) -> DLedgerConfig:
        """A copy with some fields changed (validated again); profile switches not set explicitly follow
        the (possibly new) profile."""
        return DLedgerConfig(**(self.to_dict() | changes))

    def to_dict(self) -> dict[str, Any]:
        """The init fields; profile switches only where they were set explicitly."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.init and (f.name not in PROFILE_SWITCHES or f.name in self.explicit_switches)}

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, values: Mapping[str, Any]) -> DLedgerConfig:
        """Build from a mapping of Java (camelCase) or snake_case names to values or strings.

        The same values give the same (immutable) config again without validating twice: a sweep builds
        thousands of groups from a handful of configs (added for speed, issue #14; errors are not cached)."""
        try:
            key = (cls, tuple((k, type(v), v) for k, v in values.items()))  # types too: True == 1
            return _LOADED[key]
        except TypeError:  # an unhashable value: build it and let validation name the problem
            key = None
        except KeyError:
            pass
        kwargs: dict[str, Any] = {}
        for name_or_key, raw in values.items():
            name = _field_name(str(name_or_key))
            kwargs[name] = _convert(name, raw)
        config = cls(**kwargs)
        if key is not None:
            if len(_LOADED) >= _LOADED_MAX:
                _LOADED.clear()
            _LOADED[key] = config
        return config

    @classmethod
    def from_properties(cls, path: str | Path) -> DLedgerConfig:
        """Load a Java-properties file (``key=value`` or ``key: value``; ``#``/``!`` comments)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(_("cannot read config file {path}: {why}").format(path=path, why=e.strerror)) from e
        return cls.load(parse_properties(text, source=str(path)))

    def to_properties(self) -> str:
        """Render as a properties text that :meth:`from_properties` reads back to an equal config."""
        lines = []
        for name, value in self.to_dict().items():
            if value is None:
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            lines.append(f"{name}={text}")
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- helpers
def members_peers(ids: list[str] | tuple[str, ...], host: str = "127.0.0.1", base_port: int = 40911) -> str:
    """A ``peers`` string for the given ids: ``n0-127.0.0.1:40911;n1-127.0.0.1:40912;...``."""
    return ";".join(f"{i}-{host}:{base_port + k}" for k, i in enumerate(ids))


def parse_peers(peers: str) -> dict[str, str]:
    """Parse ``n0-host:port;n1-host:port`` into ``{id: "host:port"}`` (see :mod:`rocketlab.peers`)."""
    if not isinstance(peers, str):
        raise ConfigError(_("peers: must be a string like 'n0-127.0.0.1:40911;n1-127.0.0.1:40912'"))
    return {peer_id: (f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
            for peer_id, (host, port) in shared_parse_peers(peers).items()}


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """``key=value`` lines (see :mod:`rocketlab.properties`)."""
    return shared_parse_properties(text, source)


@functools.cache
def _field_names() -> dict[str, Field[Any]]:
    return {f.name: f for f in fields(DLedgerConfig) if f.init}


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


_ALIASES = {"enable_batch_push": "is_enable_batch_push", "preferred_leader_id": "preferred_leader_ids"}


def _field_name(key: str) -> str:
    name = _camel_to_snake(key) if key not in _field_names() else key
    name = _ALIASES.get(name, name)
    if name not in _field_names():
        raise ConfigError(_("{key}: unknown DLedger config field").format(key=key))
    return name


_BOOL_FIELDS = {"enable_leader_elector", "is_enable_batch_push", "enable_disk_force_clean", *PROFILE_SWITCHES}
_STR_FIELDS = {"group", "self_id", "peers", "store_base_dir", "store_type", "profile", "fsync_policy", "delete_when"}
_FLOAT_FIELDS = {"disk_space_ratio_to_check_expired", "disk_space_ratio_to_force_clean"}
_OPT_STR_FIELDS = {"preferred_leader_ids"}


def _convert(name: str, raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if name in _BOOL_FIELDS:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        if text == "" and name in PROFILE_SWITCHES:
            return None
        raise ConfigError(_("{name}: expected true or false, got {value!r}").format(name=name, value=raw))
    if name in _STR_FIELDS:
        return text
    if name in _OPT_STR_FIELDS:
        return text or None
    if name in _FLOAT_FIELDS:
        try:
            return float(text)
        except ValueError:
            raise ConfigError(_("{name}: expected a number, got {value!r}").format(name=name, value=raw)) from None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(_("{name}: expected an integer, got {value!r}").format(name=name, value=raw)) from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@functools.cache
def _type_rules() -> tuple[tuple[str, tuple[type, ...], Callable[[Any], bool], str], ...]:
    """Per field: the value types that pass at once (the common case), the full check for any other value
    and what the error calls the expected kind."""
    rules = []
    for name in _field_names():
        if name in _BOOL_FIELDS:
            optional = name in PROFILE_SWITCHES
            rule = ((bool, type(None)) if optional else (bool,),
                    lambda v, optional=optional: isinstance(v, bool) or (optional and v is None), N_("a boolean"))
        elif name in _STR_FIELDS:
            rule = ((str,), lambda v: isinstance(v, str), N_("a string"))
        elif name in _OPT_STR_FIELDS:
            rule = ((str, type(None)), lambda v: v is None or isinstance(v, str), N_("a string or None"))
        elif name in _FLOAT_FIELDS:
            rule = ((int, float), lambda v: _is_int(v) or isinstance(v, float), N_("a number"))
        else:
            rule = ((int,), _is_int, N_("an integer"))
        rules.append((name, *rule))
    return tuple(rules)


def _check_types(cfg: DLedgerConfig) -> None:
    for name, plain, ok, kind in _type_rules():
        value = getattr(cfg, name)
        if type(value) not in plain and not ok(value):
            raise ConfigError(_("{name}: expected {kind}, got {value!r}").format(name=name, kind=_(kind), value=value))


_POSITIVE = (
    "heart_beat_time_interval_ms", "max_heart_beat_leak", "max_vote_interval_ms", "max_pending_requests_num",
    "max_wait_ack_time_ms", "max_push_time_out_ms", "max_batch_push_size", "flush_file_interval",
    "check_point_interval", "rpc_timeout_ms", "state_maintainer_interval_ms", "push_commit_interval_ms",
    "follower_push_timeout_ms", "check_abnormal_future_interval_ms", "dispatcher_error_backoff_ms",
    "leak_check_interval_ms", "check_preferred_leader_interval_ms", "max_pending_size",
    "max_take_leadership_vote_interval_ms", "leadership_transfer_wait_timeout", "peer_push_quota",
)
_NON_NEGATIVE = (
    "min_vote_interval_ms", "min_take_leadership_vote_interval_ms", "max_leadership_transfer_wait_index",
    "vote_round_wait_base_ms", "peer_push_throttle_point", "file_reserved_hours",
)


def _validate(cfg: DLedgerConfig) -> None:
    for name in _POSITIVE:
        if getattr(cfg, name) <= 0:
            raise ConfigError(_("{name}: must be > 0, got {value}").format(name=name, value=getattr(cfg, name)))
    for name in _NON_NEGATIVE:
        if getattr(cfg, name) < 0:
            raise ConfigError(_("{name}: must be >= 0, got {value}").format(name=name, value=getattr(cfg, name)))
    for name in _FLOAT_FIELDS:
        if not 0 <= getattr(cfg, name) <= 1:
            raise ConfigError(_("{name}: a fraction of the disk in 0..1, got {value}").format(name=name, value=getattr(cfg, name)))
    delete_hours(cfg.delete_when)
    if cfg.election_timeout_min_ms < 2 or cfg.election_timeout_max_ms < cfg.election_timeout_min_ms:
        raise ConfigError(_("election_timeout_min_ms/max_ms: need 2 <= min <= max, got {low}-{high}").format(
            low=cfg.election_timeout_min_ms, high=cfg.election_timeout_max_ms))
    if cfg.min_vote_interval_ms > cfg.max_vote_interval_ms:
        raise ConfigError(_("min_vote_interval_ms: {low} > max_vote_interval_ms {high}").format(
            low=cfg.min_vote_interval_ms, high=cfg.max_vote_interval_ms))
    if cfg.min_take_leadership_vote_interval_ms > cfg.max_take_leadership_vote_interval_ms:
        raise ConfigError(_("min_take_leadership_vote_interval_ms: greater than max_take_leadership_vote_interval_ms"))
    if not cfg.group:
        raise ConfigError(_("{name}: must not be empty").format(name="group"))
    if cfg.self_id not in cfg.peer_map:
        raise ConfigError(_("{name}: {value!r} is not one of peers {peers}").format(
            name="self_id", value=cfg.self_id, peers=sorted(cfg.peer_map)))
    if cfg.store_type not in STORE_TYPES:
        raise ConfigError(_("{name}: expected one of {choices}, got {value!r}").format(
            name="store_type", choices=STORE_TYPES, value=cfg.store_type))
    if cfg.fsync_policy not in FSYNC_POLICIES:
        raise ConfigError(_("{name}: expected one of {choices}, got {value!r}").format(
            name="fsync_policy", choices=FSYNC_POLICIES, value=cfg.fsync_policy))
    if cfg.mapped_file_size_for_entry_data < 64:
        raise ConfigError(_("mapped_file_size_for_entry_data: must be >= 64 bytes (one header + blank)"))
    idx = cfg.mapped_file_size_for_entry_index
    if idx < INDEX_UNIT_SIZE or idx % INDEX_UNIT_SIZE:
        raise ConfigError(_("mapped_file_size_for_entry_index: must be a positive multiple of {unit}").format(unit=INDEX_UNIT_SIZE))
    for pid in cfg.preferred_leader_id_list:
        if pid not in cfg.peer_map:
            raise ConfigError(_("{name}: {value!r} is not one of peers {peers}").format(
                name="preferred_leader_ids", value=pid, peers=sorted(cfg.peer_map)))
