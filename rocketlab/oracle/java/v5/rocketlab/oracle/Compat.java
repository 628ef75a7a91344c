package rocketlab.oracle;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.queue.ConsumeQueueInterface;
import org.apache.rocketmq.store.queue.CqUnit;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

/** What differs between RocketMQ 4.9.5 and 5.3.3 for {@link Commands}: this is the 5.3.3 side. */
final class Compat {
    static final String RELEASE = "5.3.3";

    private Compat() {
    }

    static DefaultMessageStore newStore(MessageStoreConfig config) throws Exception {
        return new DefaultMessageStore(config, new BrokerStatsManager("rocketlab", true), null, new BrokerConfig(),
            new ConcurrentHashMap<>());
    }

    /** A {@code MessageExtBrokerInner} with its properties, properties string and tags code. */
    static MessageExt newInner(Map<String, String> props, String propertiesString) {
        MessageExtBrokerInner m = new MessageExtBrokerInner();
        MessageAccessor.setProperties(m, props);
        m.setPropertiesString(propertiesString);
        m.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(m.getTags()));
        return m;
    }

    static PutMessageResult putInner(DefaultMessageStore store, MessageExt msg) {
        return store.putMessage((MessageExtBrokerInner) msg);
    }

    /** [queueOffset, phyOffset, size, tagsCode] of each unit in [min, max). */
    static List<long[]> units(DefaultMessageStore store, String topic, int queueId, long min, long max) {
        ConsumeQueueInterface cq = store.getConsumeQueue(topic, queueId);
        List<long[]> out = new ArrayList<>();
        for (long index = min; index < max; index++) {
            CqUnit u = cq.get(index);
            if (u == null) {
                throw new IllegalStateException("no ConsumeQueue unit at " + topic + "/" + queueId + " " + index);
            }
            out.add(new long[] {index, u.getPos(), u.getSize(), u.getTagsCode()});
        }
        return out;
    }

    static ObjectNode haInfo(DefaultMessageStore store) {
        ObjectNode out = Main.ok();
        out.put("push2SlaveMaxOffset", store.getHaService().getPush2SlaveMaxOffset().get());
        out.put("connectionCount", store.getHaService().getConnectionCount().get());
        out.put("maxPhyOffset", store.getMaxPhyOffset());
        return out;
    }
}
