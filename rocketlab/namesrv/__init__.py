"""RocketMQ 4.9.5's name server: where brokers register and clients find a topic's route.

* :mod:`~rocketlab.namesrv.route` — the beans a name server stores and answers (``TopicRouteData``,
  ``QueueData``, ``BrokerData``, ``ClusterInfo``, ``TopicList``, ``RegisterBrokerBody``) and their JSON
  as fastjson writes it;
* :mod:`~rocketlab.namesrv.protocol` — REGISTER_BROKER, UNREGISTER_BROKER, GET_ROUTEINFO_BY_TOPIC,
  GET_BROKER_CLUSTER_INFO, GET_ALL_TOPIC_LIST_FROM_NAMESERVER with their 4.9.5 headers: the family;
* :mod:`~rocketlab.namesrv.route_info_manager` — ``RouteInfoManager``'s tables and expiry;
* :mod:`~rocketlab.namesrv.namesrv_controller` — the core (``NamesrvController`` +
  ``DefaultRequestProcessor``);
* :mod:`~rocketlab.namesrv.node` — ``nodeKind=namesrv`` for ``rocketlab node``.
"""
