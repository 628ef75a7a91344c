"""Classic master-slave HA (RocketMQ 4.x ``HAService``), as sans-IO pieces hosted by the broker core.

* :mod:`~rocketlab.ha.wire` — the byte-exact wire protocol and its h11-style parsers;
* :mod:`~rocketlab.ha.ha_connection` — the master's per-slave connection (read and write halves);
* :mod:`~rocketlab.ha.group_transfer` — SYNC_MASTER waits (GroupTransferService);
* :mod:`~rocketlab.ha.ha_service` — the master side (accept, push2SlaveMaxOffset, isSlaveOK);
* :mod:`~rocketlab.ha.ha_client` — the slave side (HAClient);
* :mod:`~rocketlab.ha.config` — the HA keys of MessageStoreConfig.
"""
