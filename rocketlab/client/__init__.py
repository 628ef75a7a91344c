"""The kit's RocketMQ 4.x client, modelled on the Java client of 4.9.5: sans-IO cores, an asyncio runtime, a
blocking facade for notebook cells.

Cores (plain objects, no I/O): :mod:`~rocketlab.client.message` (MessageQueue, Message, unique ids, batches,
compression, pulled records), :mod:`~rocketlab.client.route` (TopicPublishInfo, MQFaultStrategy,
LatencyFaultToleranceImpl), :mod:`~rocketlab.client.producer` (DefaultMQProducerImpl's send as a generator),
:mod:`~rocketlab.client.consumer` (allocation strategies, ProcessQueue, RemoteBrokerOffsetStore, RebalanceImpl),
:mod:`~rocketlab.client.protocol` (the client's requests on the wire). Runtime:
:mod:`~rocketlab.client.remoting_client`, :mod:`~rocketlab.client.instance` (MQClientInstance, Producer),
:mod:`~rocketlab.client.consumers` (PushConsumer, PullConsumer), :mod:`~rocketlab.client.blocking`.
"""

from rocketlab.client.consumer import AllocateMessageQueueAveragely, AllocateMessageQueueAveragelyByCircle
from rocketlab.client.consumers import PullConsumer, PushConsumer
from rocketlab.client.instance import MQClientInstance, Producer
from rocketlab.client.message import Message, MessageQueue
from rocketlab.client.producer import MQClientException, ProducerConfig, SendResult

__all__ = ["AllocateMessageQueueAveragely", "AllocateMessageQueueAveragelyByCircle", "MQClientException",
           "MQClientInstance", "Message", "MessageQueue", "Producer", "ProducerConfig", "PullConsumer",
           "PushConsumer", "SendResult"]
