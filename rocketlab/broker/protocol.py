"""Requests a broker answers, with RocketMQ's request names (RequestCode), and their JSON codec.

* ``SendMessageRequest`` / ``SendMessageResponse`` — SEND_MESSAGE (10): a producer's put;
* ``PullMessageRequest`` / ``PullMessageResponse`` — PULL_MESSAGE (11), simplified to a direct read
  of one queue (no long polling, no filtering);
* ``GetAllMetadataRequest`` / ``GetAllMetadataResponse`` — what SlaveSynchronize pulls:
  GET_ALL_TOPIC_CONFIG (21), GET_ALL_CONSUMER_OFFSET (43), GET_ALL_DELAY_OFFSET (45) and
  GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) in one round trip (simplified: Java makes four);
* ``UpdateConsumerOffsetRequest`` — UPDATE_CONSUMER_OFFSET (15).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketlab.jsoncodec import JsonCodec


@dataclass(frozen=True, slots=True)
class SendMessageRequest:
    topic: str
    body: bytes
    queue_id: int = 0
    tags: str | None = None
    keys: str | None = None
    properties: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class SendMessageResponse:
    status: str
    msg_id: str | None = None
    queue_offset: int = -1
    phy_offset: int = -1
    remark: str | None = None


@dataclass(frozen=True, slots=True)
class PullMessageRequest:
    topic: str
    queue_id: int
    offset: int
    max_msg_nums: int = 32


@dataclass(frozen=True, slots=True)
class PullMessageResponse:
    status: str
    messages: tuple[dict[str, Any], ...] = ()
    next_begin_offset: int = 0
    min_offset: int = 0
    max_offset: int = 0
    suggest_which_broker_id: int = 0


@dataclass(frozen=True, slots=True)
class GetAllMetadataRequest:
    pass


@dataclass(frozen=True, slots=True)
class GetAllMetadataResponse:
    snapshot: dict[str, Any]


@dataclass(frozen=True, slots=True)
class UpdateConsumerOffsetRequest:
    group: str
    topic: str
    queue_id: int
    offset: int


@dataclass(frozen=True, slots=True)
class UpdateConsumerOffsetResponse:
    ok: bool = True


BROKER_MESSAGES = (SendMessageRequest, SendMessageResponse, PullMessageRequest, PullMessageResponse,
                   GetAllMetadataRequest, GetAllMetadataResponse, UpdateConsumerOffsetRequest,
                   UpdateConsumerOffsetResponse)


def broker_codec() -> JsonCodec:
    return JsonCodec(BROKER_MESSAGES)
