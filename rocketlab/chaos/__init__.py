"""A Jepsen-style campaign on real processes: ``rocketlab chaos``.

Nodes run as ``rocketlab node`` processes, each in a network namespace of its own joined to a bridge by
a veth pair (made and removed by the campaign); a seeded schedule cuts links (routes and interfaces
down), delays, drops and reorders frames (a relay of ours in front of every node: this kernel has no
netem), pauses processes (SIGSTOP/SIGCONT), kills and restarts them (SIGKILL), and loads the disk.
Every broker registers with a name server of the campaign; producers - RocketMQ clients through the name
server (the kit's, or the unchanged Java 4.9.5 client) - record what the application saw; after the heal
a consumer reads every queue back through the name server; a checker over the history, the stores and the merged trace counts acknowledged messages lost (naming the mechanism where
one is known), duplicates, gaps and order, and checks DLedger's and the controllers' safety. Without
root or ``ip netns`` it says so and runs on 127.0.0.1 what it can.

* :mod:`~rocketlab.chaos.netns` — namespaces, veth pairs, a bridge; cuts and isolation;
* :mod:`~rocketlab.chaos.relay` — the fault-injecting TCP relay (delay, loss, reorder, hold);
* :mod:`~rocketlab.chaos.systems` — what runs (classic pairs, a DLedger group, controller mode) and where;
* :mod:`~rocketlab.chaos.schedule` — the seeded fault schedule;
* :mod:`~rocketlab.chaos.history` — the history (what the applications saw);
* :mod:`~rocketlab.chaos.clients` — the producers and the read-back as the kit's RocketMQ client;
* :mod:`~rocketlab.chaos.java_clients` — the producers as the Java 4.9.5 client (``--client java``);
* :mod:`~rocketlab.chaos.checker` — the per-queue checks and the expected outcome of each system;
* :mod:`~rocketlab.chaos.acks` — the acknowledgement checks from the trace (and the trace against the stores);
* :mod:`~rocketlab.chaos.losses` — every lost message named from the evidence;
* :mod:`~rocketlab.chaos.stores` — what the stores hold at the end, read from their files;
* :mod:`~rocketlab.chaos.campaign` — one run, start to verdict; :mod:`~rocketlab.chaos.cli` — the command.
"""
