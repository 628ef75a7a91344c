"""The broker: a MessageStore with classic HA (master or slave), or with its commit log on DLedger.

* :mod:`~rocketlab.broker.broker` — BrokerCore: store + classic HA, 4.x put semantics, SlaveSynchronize;
* :mod:`~rocketlab.broker.dledger_commit_log`, :mod:`~rocketlab.broker.dledger_message_store` — the
  CommitLog on a DLedger log (DLedgerCommitLog, both record formats, smooth upgrade), with its put
  statuses (``dledger_commit_log_status``), record check (``_check``) and recovery (``_recovery``);
* :mod:`~rocketlab.broker.dledger_role_change_handler` — DLedger roles to broker roles;
* :mod:`~rocketlab.broker.dledger_broker` — DLedgerBrokerCore: a broker group that fails over by itself;
* :mod:`~rocketlab.broker.protocol` — requests a broker answers (SEND_MESSAGE, PULL_MESSAGE, metadata);
* :mod:`~rocketlab.broker.config_manager` — topics, consumer offsets, delay offsets, subscription groups;
* :mod:`~rocketlab.broker.processors` — what every broker kind serves its clients (BrokerController's
  processor table): :mod:`~rocketlab.broker.client_messages` and :mod:`~rocketlab.broker.client_family`
  (the codes on the wire), :mod:`~rocketlab.broker.client_manager` (producers and consumer groups),
  :mod:`~rocketlab.broker.pull_message_processor` with :mod:`~rocketlab.broker.pull_request_hold_service`
  (pulls and long polling), :mod:`~rocketlab.broker.admin_processors` (offsets, lookups, locks),
  :mod:`~rocketlab.broker.rebalance_lock_manager`, :mod:`~rocketlab.broker.processor_config` (its keys).
"""
