"""The campaign's network, for real (root, ``ip netns``): namespaces joined by veth pairs to a bridge; a
route cut stops one direction; an interface down stops everything; heal restores; destroy leaves nothing."""

from __future__ import annotations

import subprocess
import sys
import time

from rocketlab.chaos.netns import NetNamespaces

from .conftest import need_netns

PROBE = ("import socket,sys\ns=socket.socket()\ns.settimeout(1.0)\n"
         "try:\n    s.connect((sys.argv[1], int(sys.argv[2]))); print('ok')\nexcept OSError as e:\n    print('no')\n")


SERVER = ("import socket\ns=socket.socket()\ns.bind(('0.0.0.0',7000))\ns.listen(50)\nprint('ready', flush=True)\n"
          "while True:\n    c,_=s.accept(); c.close()")


def _reaches(net: NetNamespaces, src: str, dst: str, port: int) -> bool:
    """One connection attempt (1 s): a cut must hold on every attempt."""
    out = subprocess.run([*net.exec_prefix(src), sys.executable, "-c", PROBE, net.address(dst), str(port)],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip() == "ok"


def _comes_through(net: NetNamespaces, src: str, dst: str, port: int, within: float = 10.0) -> bool:
    """A reachable pair answers within ``within`` seconds: on a loaded machine one SYN may still meet a
    link the kernel is bringing up, and TCP's first retransmission comes after the probe's 1 s."""
    deadline = time.monotonic() + within
    while not _reaches(net, src, dst, port):
        if time.monotonic() > deadline:
            return False
    return True


def test_namespaces_cuts_isolation_heal_and_cleanup():
    need_netns()
    net = NetNamespaces("t33n", ["a", "b", "c"])
    servers = []
    try:
        net.create()
        for node in ("a", "b", "c"):
            servers.append(subprocess.Popen([*net.exec_prefix(node), sys.executable, "-c", SERVER],
                                            stdout=subprocess.PIPE, text=True))
        assert all(server.stdout.readline().strip() == "ready" for server in servers)
        assert all(_comes_through(net, x, y, 7000) for x in "abc" for y in "abc" if x != y)
        net.cut("a", "b")
        assert not _reaches(net, "a", "b", 7000)
        assert _comes_through(net, "a", "c", 7000) and _comes_through(net, "c", "b", 7000)
        net.isolate("c")
        assert not _reaches(net, "b", "c", 7000) and not _reaches(net, "c", "a", 7000)
        net.heal()
        assert all(_comes_through(net, x, y, 7000) for x in "abc" for y in "abc" if x != y)
    finally:
        for proc in servers:
            proc.kill()
            proc.wait()
        net.destroy()
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "link", "show"], capture_output=True, text=True).stdout
    assert "rlt33n" not in namespaces and "rlbt33n" not in links and "rvt33n" not in links
