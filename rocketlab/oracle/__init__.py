"""The real Java as the judge: Apache RocketMQ 4.9.5 / 5.3.3 and DLedger 0.3.1.2 run beside the kit.

The kit's fidelity is checked against the released Java code itself, not only against our reading of
it: the same messages through a real ``DefaultMessageStore`` and ours give byte-identical files; each
side recovers the other's stores; a real DLedger store recovers every rocketlab member; a real store
replicates from a rocketlab master over RocketMQ's HA wire and the other way round.

Where the Java comes from
    One setting per release, each a Java class path (``:``-separated; ``dir/*`` for every jar of a
    directory; or ``@FILE`` naming a file that holds one):

    * ``ROCKETLAB_JAVA_4``: ``org.apache.rocketmq:rocketmq-store:4.9.5`` (with ``rocketmq-common``,
      ``rocketmq-remoting``, ``rocketmq-logging`` 4.9.5) and ``io.openmessaging.storage:dledger:0.3.1.2``,
      with their dependencies (netty, fastjson, slf4j, jackson, ...);
    * ``ROCKETLAB_JAVA_5``: ``org.apache.rocketmq:rocketmq-store:5.3.3`` (and ``rocketmq-controller``,
      ``rocketmq-common``, ``rocketmq-remoting`` 5.3.3) with theirs.

    With network access, Maven builds either: a ``pom.xml`` that depends on those coordinates, then
    ``mvn dependency:build-classpath -Dmdep.outputFile=cp4.txt`` and ``ROCKETLAB_JAVA_4=@cp4.txt``. A JDK 17
    or newer is needed (``javac`` too: the driver is compiled on first use). CI sets both from the jars
    built from the release tags (``.ci/oracle-classpath``).

Modules
    :mod:`~rocketlab.oracle.jvm` finds, compiles (``compile_cached``, the driver's and the client
    application's one compile-and-cache) and runs the JVMs (one subprocess each, JSON lines on stdin/stdout,
    stopped by PID); :mod:`~rocketlab.oracle.servers` is the one launcher of server processes (the real
    4.9.5 name server and broker, the kit's nodes: up on their JSON line, stopped by PID); :mod:`~rocketlab.oracle.store` drives a real ``DefaultMessageStore`` and
    reads ours into the same shape; :mod:`~rocketlab.oracle.dledger` does the same for DLedger members;
    :mod:`~rocketlab.oracle.ha` runs a master and a slave across languages; :mod:`~rocketlab.oracle.autoswitch`
    does the same for controller mode (5.3.3's AutoSwitchHAService beside our broker core, roles given by the
    test) and runs real ``DLedgerController`` members and ``EventSerializer``; :mod:`~rocketlab.oracle.mix` is
    the seeded mix of messages the comparisons put through both. For applications (issue 39):
    :mod:`~rocketlab.oracle.client_jvm` finds the 4.9.5 client/name server/broker class path
    (``ROCKETLAB_JAVA_BROKER``) and compiles the client application (``java/client``);
    :mod:`~rocketlab.oracle.broker_group` starts a name server and brokers, Java's or the kit's;
    :mod:`~rocketlab.oracle.client_app` drives the unchanged producer and consumers and checks what they saw;
    :mod:`~rocketlab.oracle.failover` measures a failover as the application sees it;
    :mod:`~rocketlab.oracle.pypi_client` runs PyPI's ``rocketmq`` (rocketmq-client-cpp) as a second client. ``java/`` holds our driver's sources
    (ours: it only calls the released code's public API).

Known differences (the oracle tests name them): a message with a delay level (Java's CommitLog moves it to
``SCHEDULE_TOPIC_XXXX`` and re-serialises its properties in HashMap order; the kit has no schedule
service); a DLedger member written under the ``raft`` profile (its magic-2 no-op entries, which Java's
recovery cuts at: the kit refuses to open such a log under a DLedger release profile instead).
"""

from rocketlab.oracle.jvm import (
    ENV,
    RELEASES,
    Oracle,
    OracleDied,
    OracleError,
    OracleProcess,
    OracleUnavailable,
    find_oracle,
)

__all__ = ["ENV", "RELEASES", "Oracle", "OracleDied", "OracleError", "OracleProcess", "OracleUnavailable",
           "find_oracle"]
