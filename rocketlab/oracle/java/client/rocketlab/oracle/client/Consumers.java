package rocketlab.oracle.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

/**
 * Consumers by name, every style of the 4.9.5 client: {@code pull} (DefaultMQPullConsumer, each queue from its
 * committed offset, else its min offset), {@code lite_assign} (DefaultLitePullConsumer.assign on every queue),
 * {@code lite_subscribe} (DefaultLitePullConsumer.subscribe), {@code push} (DefaultMQPushConsumer, clustering,
 * one consume thread so a queue's messages are handed over in queue order; {@code from} first or last;
 * {@code fail}: the listener answers RECONSUME_LATER, so messages come back by retry and end in %DLQ%group
 * after {@code max_reconsume}). Each message handed over is one {@code recv} event.
 */
final class Consumers {
    private final Map<String, AutoCloseable> byName = new HashMap<>();
    private final Map<String, DefaultMQPushConsumer> pushes = new HashMap<>();
    private final Map<String, DefaultLitePullConsumer> lites = new HashMap<>();

    JsonNode start(JsonNode req) throws Exception {
        String name = req.path("name").asText();
        if (byName.containsKey(name)) {
            throw new IllegalArgumentException("consumer " + name + " exists");
        }
        String style = req.path("style").asText();
        String instance = "c-" + name + "-" + ProcessHandle.current().pid();
        ConsumeFromWhere from = "last".equals(req.path("from").asText("first"))
            ? ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET : ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET;
        switch (style) {
            case "push":
                byName.put(name, push(req, name, instance, from));
                break;
            case "lite_assign":
            case "lite_subscribe":
                byName.put(name, lite(req, name, instance, style));
                break;
            case "pull":
                byName.put(name, pull(req, name, instance));
                break;
            default:
                throw new IllegalArgumentException("unknown consumer style " + style);
        }
        return ClientApp.ok();
    }

    private AutoCloseable push(JsonNode req, String name, String instance, ConsumeFromWhere from) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(req.path("group").asText());
        c.setNamesrvAddr(req.path("namesrv").asText());
        c.setInstanceName(instance);
        c.setPollNameServerInterval(req.path("poll_namesrv_ms").asInt(1000));
        c.setConsumeFromWhere(from);
        c.setMessageModel(MessageModel.CLUSTERING);
        c.setConsumeThreadMin(1);
        c.setConsumeThreadMax(1);
        c.setMaxReconsumeTimes(req.path("max_reconsume").asInt(2));
        c.setPersistConsumerOffsetInterval(req.path("persist_ms").asInt(1000));
        c.subscribe(req.path("topic").asText(), req.path("expr").asText("*"));
        final boolean fail = req.path("fail").asBoolean(false);
        final String group = c.getConsumerGroup();
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                emit(name, group, "push", m);
            }
            return fail ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        pushes.put(name, c);
        return c::shutdown;
    }

    private AutoCloseable lite(JsonNode req, String name, String instance, String style) throws Exception {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(req.path("group").asText());
        c.setNamesrvAddr(req.path("namesrv").asText());
        c.setInstanceName(instance);
        c.setPollNameServerInterval(req.path("poll_namesrv_ms").asInt(1000));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setAutoCommitIntervalMillis(1000);
        String topic = req.path("topic").asText();
        if ("lite_subscribe".equals(style)) {
            c.subscribe(topic, req.path("expr").asText("*"));
            c.start();
        } else {
            c.start();
            c.assign(c.fetchMessageQueues(topic));
        }
        lites.put(name, c);
        final String group = c.getConsumerGroup();
        Thread t = loop("poll-" + name, () -> {
            for (MessageExt m : c.poll(200)) {
                emit(name, group, style, m);
            }
        });
        return () -> {
            t.interrupt();
            t.join(5000);
            c.shutdown();
        };
    }

    private AutoCloseable pull(JsonNode req, String name, String instance) throws Exception {
        DefaultMQPullConsumer c = new DefaultMQPullConsumer(req.path("group").asText());
        c.setNamesrvAddr(req.path("namesrv").asText());
        c.setInstanceName(instance);
        c.setPollNameServerInterval(req.path("poll_namesrv_ms").asInt(1000));
        c.start();
        String topic = req.path("topic").asText();
        String expr = req.path("expr").asText("*");
        List<MessageQueue> queues = new ArrayList<>(c.fetchSubscribeMessageQueues(topic));
        Map<MessageQueue, Long> next = new HashMap<>();
        for (MessageQueue mq : queues) {
            long committed = c.fetchConsumeOffset(mq, true);
            next.put(mq, committed >= 0 ? committed : c.minOffset(mq));
        }
        final String group = c.getConsumerGroup();
        Thread t = loop("pull-" + name, () -> {
            boolean idle = true;
            for (MessageQueue mq : queues) {
                PullResult r = c.pull(mq, expr, next.get(mq), 32);
                if (r.getPullStatus() == PullStatus.FOUND) {
                    idle = false;
                    for (MessageExt m : r.getMsgFoundList()) {
                        emit(name, group, "pull", m);
                    }
                }
                next.put(mq, r.getNextBeginOffset());
                c.updateConsumeOffset(mq, r.getNextBeginOffset());
            }
            if (idle) {
                Thread.sleep(100);
            }
        });
        return () -> {
            t.interrupt();
            t.join(5000);
            c.shutdown();
        };
    }

    interface Step {
        void run() throws Exception;
    }

    /** A daemon thread running {@code step} until interrupted (a flag: the client's poll swallows interrupts). */
    private static Thread loop(String name, Step step) {
        final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread t = new Thread(() -> {
            while (!stop.get()) {
                try {
                    step.run();
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable e) {
                    ObjectNode ev = ClientApp.event("consumer_error");
                    ev.put("thread", Thread.currentThread().getName());
                    ev.put("error", ClientApp.oneLine(e));
                    ClientApp.emit(ev);
                    try {
                        Thread.sleep(500);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }, name) {
            @Override
            public void interrupt() {
                stop.set(true);
                super.interrupt();
            }
        };
        t.setDaemon(true);
        t.start();
        return t;
    }

    static ObjectNode record(ObjectNode n, MessageExt m) {
        n.put("uniq", MessageClientIDSetter.getUniqID(m));
        n.put("offset_msg_id", m instanceof org.apache.rocketmq.common.message.MessageClientExt
            ? ((org.apache.rocketmq.common.message.MessageClientExt) m).getOffsetMsgId() : m.getMsgId());
        n.put("queue", m.getQueueId());
        n.put("queue_offset", m.getQueueOffset());
        n.put("store_host", String.valueOf(m.getStoreHost()).replace("/", ""));
        n.put("born_host", String.valueOf(m.getBornHost()).replace("/", ""));
        n.put("born_ts", m.getBornTimestamp());
        n.put("store_ts", m.getStoreTimestamp());
        n.put("reconsume", m.getReconsumeTimes());
        n.put("sys_flag", m.getSysFlag());
        Shapes.describe(n, m);
        return n;
    }

    private static void emit(String name, String group, String style, MessageExt m) {
        ObjectNode e = ClientApp.event("recv");
        e.put("consumer", name);
        e.put("group", group);
        e.put("style", style);
        record(e, m);
        ClientApp.emit(e);
    }

    JsonNode stop(String name) throws Exception {
        AutoCloseable c = byName.remove(name);
        if (c == null) {
            throw new IllegalArgumentException("no consumer " + name);
        }
        c.close();
        pushes.remove(name);
        lites.remove(name);
        return ClientApp.ok();
    }

    /** The queues a push consumer holds now ("broker:queue"). */
    JsonNode allocation(String name) {
        Set<MessageQueue> held;
        if (pushes.containsKey(name)) {
            held = pushes.get(name).getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet();
        } else {
            throw new IllegalArgumentException("no push consumer " + name);
        }
        ObjectNode r = ClientApp.ok();
        ArrayNode qs = r.putArray("queues");
        for (MessageQueue mq : held) {
            qs.add(mq.getBrokerName() + ":" + mq.getQueueId());
        }
        return r;
    }

    void closeAll() {
        for (AutoCloseable c : byName.values()) {
            try {
                c.close();
            } catch (Exception e) {
                // shutting down: nothing to report to
            }
        }
        byName.clear();
    }
}
