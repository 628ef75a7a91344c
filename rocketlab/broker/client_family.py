"""CLIENT_FAMILY: the client-facing requests of :mod:`rocketlab.broker.client_messages` as remoting commands.

Requests by their 4.9.5 codes with their header classes and JSON bodies; answers as the processors
make them (``ClientManageProcessor``, ``ConsumerManageProcessor``, ``AdminBrokerProcessor``,
``QueryMessageProcessor``): SUCCESS with the response header, or the error code and Java's remark.
NOTIFY_CONSUMER_IDS_CHANGED goes oneway, as ``Broker2Client.notifyConsumerIdsChanged`` sends it; a broker
does not read it (the client's family, :mod:`rocketlab.client.protocol`, does): sent to a broker it is answered
REQUEST_CODE_NOT_SUPPORTED, as a 4.9.5 broker's default processor (``AdminBrokerProcessor``) answers it.
"""

from __future__ import annotations

from typing import Any

from rocketlab.broker import client_messages as m
from rocketlab.broker.client_messages import ClientRequestCode as C
from rocketlab.broker.client_messages import ClientResponseCode as R
from rocketlab.errors import CodecError
from rocketlab.remoting import fastjson
from rocketlab.remoting.command import RemotingCommand
from rocketlab.remoting.family import Family, Parts

_TOPIC_QUEUE = {m.GetMaxOffsetRequest: m.GET_MAX_OFFSET_REQUEST_HEADER, m.GetMinOffsetRequest: m.GET_MIN_OFFSET_REQUEST_HEADER,
                m.GetEarliestMsgStoretimeRequest: m.GET_EARLIEST_MSG_STORETIME_REQUEST_HEADER}
_CODE_OF_TOPIC_QUEUE = {m.CLIENT_REQUESTS[t]: t for t in _TOPIC_QUEUE}


class ClientFamily(Family):
    """See the module docstring."""

    name = "broker-client"
    requests = dict(m.CLIENT_REQUESTS)
    oneways = frozenset({m.NotifyConsumerIdsChanged})
    responses = frozenset({m.ClientAnswer, m.ConsumerListResponse, m.OffsetResponse, m.TimestampResponse,
                           m.MessageRecordsResponse, m.LockBatchResponse})
    codes = frozenset(m.CLIENT_REQUESTS.values()) - {C.NOTIFY_CONSUMER_IDS_CHANGED}
    """What a broker reads: every code above but NOTIFY_CONSUMER_IDS_CHANGED, which it only sends."""

    # ------------------------------------------------------------------ out
    def encode(self, msg: Any) -> Parts:
        t = type(msg)
        if t in self.requests:
            return self._encode_request(msg)
        if t is m.ClientAnswer:
            return Parts(msg.code, msg.remark, None, None)
        if t is m.ConsumerListResponse:
            return Parts(R.SUCCESS, None, None, fastjson.dumps({"consumerIdList": list(msg.consumer_id_list)}))
        if t is m.OffsetResponse:
            return Parts(R.SUCCESS, None, m.OFFSET_RESPONSE_HEADER.write({"offset": msg.offset}), None)
        if t is m.TimestampResponse:
            return Parts(R.SUCCESS, None, m.TIMESTAMP_RESPONSE_HEADER.write({"timestamp": msg.timestamp}), None)
        if t is m.MessageRecordsResponse:
            ext = None
            if msg.index_last_update_timestamp is not None:
                ext = m.QUERY_MESSAGE_RESPONSE_HEADER.write({
                    "indexLastUpdateTimestamp": msg.index_last_update_timestamp,
                    "indexLastUpdatePhyoffset": msg.index_last_update_phyoffset})
            return Parts(R.SUCCESS, None, ext, msg.records)
        if t is m.LockBatchResponse:
            return Parts(R.SUCCESS, None, None, fastjson.dumps({"lockOKMQSet": [q.to_json() for q in msg.lock_ok_mq_set]}))
        raise CodecError(f"cannot encode {t.__name__}: not a broker-client message")

    def _encode_request(self, msg: Any) -> Parts:
        t, code = type(msg), self.requests[type(msg)]
        if t is m.HeartbeatRequest:
            return Parts(code, None, None, m.heartbeat_body(msg))
        if t in (m.LockBatchRequest, m.UnlockBatchRequest):
            return Parts(code, None, None, m.lock_body(msg))
        if t in _TOPIC_QUEUE:
            return Parts(code, None, _TOPIC_QUEUE[t].write({"topic": msg.topic, "queueId": msg.queue_id}), None)
        ext: dict[str, str]
        if t is m.UnregisterClientRequest:
            ext = m.UNREGISTER_CLIENT_REQUEST_HEADER.write({"clientID": msg.client_id, "producerGroup": msg.producer_group,
                                                            "consumerGroup": msg.consumer_group})
        elif t is m.GetConsumerListByGroupRequest:
            ext = m.GET_CONSUMER_LIST_BY_GROUP_REQUEST_HEADER.write({"consumerGroup": msg.consumer_group})
        elif t is m.QueryConsumerOffsetRequest:
            ext = m.QUERY_CONSUMER_OFFSET_REQUEST_HEADER.write({"consumerGroup": msg.consumer_group, "topic": msg.topic,
                                                                "queueId": msg.queue_id})
        elif t is m.SearchOffsetRequest:
            ext = m.SEARCH_OFFSET_REQUEST_HEADER.write({"topic": msg.topic, "queueId": msg.queue_id,
                                                        "timestamp": msg.timestamp})
        elif t is m.ViewMessageRequest:
            ext = m.VIEW_MESSAGE_REQUEST_HEADER.write({"offset": msg.offset})
        elif t is m.QueryMessageRequest:
            ext = m.QUERY_MESSAGE_REQUEST_HEADER.write({"topic": msg.topic, "key": msg.key, "maxNum": msg.max_num,
                                                        "beginTimestamp": msg.begin_timestamp,
                                                        "endTimestamp": msg.end_timestamp})
            if msg.unique_key:
                ext[m.UNIQUE_MSG_QUERY_FLAG] = "true"
        else:
            ext = m.NOTIFY_CONSUMER_IDS_CHANGED_REQUEST_HEADER.write({"consumerGroup": msg.consumer_group})
        return Parts(code, None, ext, None)

    # ------------------------------------------------------------------ in
    def decode_request(self, cmd: RemotingCommand) -> Any:
        code = cmd.code
        if code == C.HEART_BEAT:
            return m.read_heartbeat(cmd.body, cmd.language, cmd.version)
        if code in (C.LOCK_BATCH_MQ, C.UNLOCK_BATCH_MQ):
            return m.read_lock_body(cmd.body, m.LockBatchRequest if code == C.LOCK_BATCH_MQ else m.UnlockBatchRequest)
        if code in _CODE_OF_TOPIC_QUEUE:
            t = _CODE_OF_TOPIC_QUEUE[code]
            h = _TOPIC_QUEUE[t].read(cmd)
            return t(h["topic"], h["queueId"])
        if code == C.UNREGISTER_CLIENT:
            h = m.UNREGISTER_CLIENT_REQUEST_HEADER.read(cmd)
            return m.UnregisterClientRequest(h["clientID"], h["producerGroup"], h["consumerGroup"])
        if code == C.GET_CONSUMER_LIST_BY_GROUP:
            return m.GetConsumerListByGroupRequest(m.GET_CONSUMER_LIST_BY_GROUP_REQUEST_HEADER.read(cmd)["consumerGroup"])
        if code == C.QUERY_CONSUMER_OFFSET:
            h = m.QUERY_CONSUMER_OFFSET_REQUEST_HEADER.read(cmd)
            return m.QueryConsumerOffsetRequest(h["consumerGroup"], h["topic"], h["queueId"])
        if code == C.SEARCH_OFFSET_BY_TIMESTAMP:
            h = m.SEARCH_OFFSET_REQUEST_HEADER.read(cmd)
            return m.SearchOffsetRequest(h["topic"], h["queueId"], h["timestamp"])
        if code == C.VIEW_MESSAGE_BY_ID:
            return m.ViewMessageRequest(m.VIEW_MESSAGE_REQUEST_HEADER.read(cmd)["offset"])
        if code == C.QUERY_MESSAGE:
            h = m.QUERY_MESSAGE_REQUEST_HEADER.read(cmd)
            return m.QueryMessageRequest(h["topic"], h["key"], h["maxNum"], h["beginTimestamp"], h["endTimestamp"],
                                         cmd.field(m.UNIQUE_MSG_QUERY_FLAG) == "true")
        raise CodecError(f"request code {code} is not a broker-client request")

    def decode_response(self, cmd: RemotingCommand, answers: type) -> Any:
        t = m.ANSWERS.get(answers)
        if t is None:
            raise CodecError(f"{answers.__name__} has no answer")
        if cmd.code != R.SUCCESS or t is m.ClientAnswer:
            return m.ClientAnswer(cmd.code, cmd.remark)
        if t is m.ConsumerListResponse:
            ids = m.read_json_body(cmd.body, "GetConsumerListByGroupResponseBody").get("consumerIdList") or []
            return m.ConsumerListResponse(tuple(str(i) for i in ids))
        if t is m.OffsetResponse:
            return m.OffsetResponse(m.OFFSET_RESPONSE_HEADER.read(cmd)["offset"])
        if t is m.TimestampResponse:
            return m.TimestampResponse(m.TIMESTAMP_RESPONSE_HEADER.read(cmd)["timestamp"])
        if t is m.MessageRecordsResponse:
            if answers is m.QueryMessageRequest:
                h = m.QUERY_MESSAGE_RESPONSE_HEADER.read(cmd)
                return m.MessageRecordsResponse(cmd.body or b"", h["indexLastUpdateTimestamp"],
                                                h["indexLastUpdatePhyoffset"])
            return m.MessageRecordsResponse(cmd.body or b"")
        body = m.read_json_body(cmd.body, "LockBatchResponseBody")
        return m.LockBatchResponse(tuple(m.MessageQueue.from_json(q) for q in body.get("lockOKMQSet") or []))


CLIENT_FAMILY = ClientFamily()
