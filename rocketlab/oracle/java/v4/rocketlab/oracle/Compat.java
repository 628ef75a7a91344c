package rocketlab.oracle;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.store.ConsumeQueue;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.MessageExtBrokerInner;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.SelectMappedBufferResult;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

/** What differs between RocketMQ 4.9.5 and 5.3.3 for {@link Commands}: this is the 4.9.5 side. */
final class Compat {
    static final String RELEASE = "4.9.5";

    private Compat() {
    }

    static DefaultMessageStore newStore(MessageStoreConfig config) throws Exception {
        return new DefaultMessageStore(config, new BrokerStatsManager("rocketlab", true), null, new BrokerConfig());
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
        ConsumeQueue cq = store.findConsumeQueue(topic, queueId);
        List<long[]> out = new ArrayList<>();
        long index = min;
        while (index < max) {
            SelectMappedBufferResult r = cq.getIndexBuffer(index);
            if (r == null) {
                throw new IllegalStateException("no ConsumeQueue unit at " + topic + "/" + queueId + " " + index);
            }
            try {
                ByteBuffer bb = r.getByteBuffer();
                int n = r.getSize() / ConsumeQueue.CQ_STORE_UNIT_SIZE;
                for (int i = 0; i < n && index < max; i++, index++) {
                    out.add(new long[] {index, bb.getLong(), bb.getInt(), bb.getLong()});
                }
            } finally {
                r.release();
            }
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
