"""The broker: a MessageStore with classic HA (master or slave) or, later, a commit log on DLedger.

* :mod:`~rocketlab.broker.protocol` — requests a broker answers (SEND_MESSAGE, PULL_MESSAGE, metadata);
* :mod:`~rocketlab.broker.config_manager` — topics, consumer offsets, delay offsets, subscription groups.
"""
