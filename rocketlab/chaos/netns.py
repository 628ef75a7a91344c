"""The campaign's network: one Linux network namespace per node, veth pairs to one bridge, and the faults
the kernel itself can make - made and removed by the campaign (``ip`` from iproute2, as root).

Layout of a campaign with id ``ID`` and nodes ``n0..nk``: a bridge ``rlbID`` in the root namespace with
``10.RR.SS.1/24`` (a subnet chosen from the id, so campaigns side by side do not collide); per node a
namespace ``rlID-<node>`` with ``lo`` up and ``eth0`` = ``10.RR.SS.(10+i)/24``, its other end
``rvID<i>`` enslaved to the bridge. The campaign itself (its producer, consumer and relays' controls)
stays in the root namespace and reaches every node through the bridge.

Faults (each undone by :meth:`NetNamespaces.heal`):

* :meth:`cut` - ``src`` no longer reaches ``dst``: a ``blackhole`` route to ``dst``'s address in
  ``src``'s namespace (packets from ``src`` to ``dst`` vanish; a TCP connection between them stalls both
  ways since ``src``'s segments and acknowledgements vanish, a new one from ``src`` hangs in SYN-SENT);
  cutting both directions is a partition between the two;
* :meth:`isolate` - a node's interface goes down (``ip link set eth0 down`` in its namespace): nothing
  in or out, as a pulled cable.

The kernel here has no ``netem`` qdisc and neither nftables nor iptables: delay, loss and reordering
are the relay's (:mod:`rocketlab.chaos.relay`). :func:`available` says whether this machine can do any
of it (root, ``ip``, ``ip netns``); without it the campaign runs on 127.0.0.1 and says so.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from rocketlab.errors import RocketlabError


def _ip(*args: str, namespace: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["ip", "netns", "exec", namespace, "ip", *args] if namespace else ["ip", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise RocketlabError(f"{' '.join(cmd)}: {proc.stderr.strip() or proc.returncode}")
    return proc


def _wait_up(device: str, namespace: str | None = None, timeout: float = 10.0) -> None:
    """Until ``device`` is operationally up: ``ip link set up`` returns before the kernel has brought the
    link's operstate and queue up (its linkwatch work runs asynchronously), and packets sent before that
    may be dropped."""
    deadline = time.monotonic() + timeout
    while True:
        shown = _ip("-o", "link", "show", "dev", device, namespace=namespace).stdout
        if " state UP " in shown:
            return
        if time.monotonic() > deadline:
            raise RocketlabError(f"{device} ({namespace or 'root namespace'}) not up after {timeout:.0f} s: {shown.strip()}")
        time.sleep(0.02)


def available() -> tuple[bool, str]:
    """(True, "") where network namespaces can be made here, else (False, why not)."""
    if shutil.which("ip") is None:
        return False, "no `ip` command (install iproute2)"
    if os.geteuid() != 0:
        return False, "not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN"
    probe = f"rlprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=30)
    if made.returncode != 0:
        return False, f"`ip netns add` failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=30)
    return True, ""


def _subnet(campaign_id: str) -> tuple[int, int]:
    digest = hashlib.sha256(campaign_id.encode()).digest()
    return 100 + digest[0] % 100, digest[1]


@dataclass
class NetNamespaces:
    """The namespaces of one campaign (see the module docstring); :meth:`create` / :meth:`destroy`."""

    campaign_id: str
    nodes: list[str]
    created: list[tuple[str, str]] = field(default_factory=list)
    cuts: set[tuple[str, str]] = field(default_factory=set)
    isolated: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if len(self.campaign_id) > 6 or not self.campaign_id.isalnum():
            raise RocketlabError(f"campaign id {self.campaign_id!r}: at most 6 letters or digits (interface names)")
        a, b = _subnet(self.campaign_id)
        self.prefix = f"10.{a}.{b}"
        self.bridge = f"rlb{self.campaign_id}"

    def namespace(self, node: str) -> str:
        return f"rl{self.campaign_id}-{node}"

    def address(self, node: str) -> str:
        return f"{self.prefix}.{10 + self.nodes.index(node)}"

    @property
    def gateway(self) -> str:
        """The bridge's address: the campaign's own, from the root namespace."""
        return f"{self.prefix}.1"

    def create(self) -> None:
        """The bridge, and per node a namespace with its veth pair; undone by :meth:`destroy` (also at exit)."""
        atexit.register(self.destroy)
        _ip("link", "add", self.bridge, "type", "bridge")
        self.created.append(("link", self.bridge))
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, node in enumerate(self.nodes):
            ns, host_end = self.namespace(node), f"rv{self.campaign_id}{i}"
            _ip("netns", "add", ns)
            self.created.append(("netns", ns))
            _ip("link", "add", host_end, "type", "veth", "peer", "name", f"rn{self.campaign_id}{i}")
            self.created.append(("link", host_end))
            _ip("link", "set", f"rn{self.campaign_id}{i}", "netns", ns)
            _ip("link", "set", host_end, "master", self.bridge)
            _ip("link", "set", host_end, "up")
            _ip("link", "set", "lo", "up", namespace=ns)
            _ip("link", "set", f"rn{self.campaign_id}{i}", "name", "eth0", namespace=ns)
            _ip("addr", "add", f"{self.address(node)}/24", "dev", "eth0", namespace=ns)
            _ip("link", "set", "eth0", "up", namespace=ns)
        for i, node in enumerate(self.nodes):
            _wait_up("eth0", self.namespace(node))
            _wait_up(f"rv{self.campaign_id}{i}")
        _wait_up(self.bridge)

    def destroy(self) -> None:
        """Remove everything :meth:`create` made (namespaces first: their veth ends go with them)."""
        for kind, name in reversed(self.created):
            if kind == "netns":
                subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)
            else:
                subprocess.run(["ip", "link", "del", name], capture_output=True, timeout=30)
        self.created.clear()

    def exec_prefix(self, node: str) -> list[str]:
        """The command prefix that runs a process inside ``node``'s namespace (it keeps the PID: ``ip netns
        exec`` execs the command)."""
        return ["ip", "netns", "exec", self.namespace(node)]

    # ------------------------------------------------------------------ faults
    def cut(self, src: str, dst: str) -> None:
        """``src`` no longer reaches ``dst`` (a blackhole route in ``src``'s namespace)."""
        if (src, dst) in self.cuts:
            return
        _ip("route", "add", "blackhole", f"{self.address(dst)}/32", namespace=self.namespace(src))
        self.cuts.add((src, dst))

    def restore(self, src: str, dst: str) -> None:
        if (src, dst) not in self.cuts:
            return
        _ip("route", "del", "blackhole", f"{self.address(dst)}/32", namespace=self.namespace(src), check=False)
        self.cuts.discard((src, dst))

    def isolate(self, node: str) -> None:
        """``node``'s interface down: nothing in or out."""
        if node not in self.isolated:
            _ip("link", "set", "eth0", "down", namespace=self.namespace(node))
            self.isolated.add(node)

    def rejoin(self, node: str) -> None:
        if node in self.isolated:
            _ip("link", "set", "eth0", "up", namespace=self.namespace(node))
            _ip("addr", "replace", f"{self.address(node)}/24", "dev", "eth0", namespace=self.namespace(node))
            _wait_up("eth0", self.namespace(node))
            self.isolated.discard(node)

    def heal(self) -> None:
        for src, dst in sorted(self.cuts):
            self.restore(src, dst)
        for node in sorted(self.isolated):
            self.rejoin(node)
