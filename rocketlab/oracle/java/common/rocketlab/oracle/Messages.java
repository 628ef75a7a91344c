package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageExtBatch;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;

/** Messages as a broker hands them to the store, built from the JSON the Python side sends (see
 * {@code rocketlab.oracle.store.message_spec}). The class differs between releases only in its package,
 * so {@link Compat} makes the {@code MessageExtBrokerInner}; everything else is here. */
final class Messages {
    private Messages() {
    }

    /** As {@code SendMessageProcessor} fills a {@code MessageExtBrokerInner}: properties string in the
     * producer's order ({@code messageProperties2String} of the release), tags code, the IPv6 bits set
     * from the hosts. */
    static MessageExt build(JsonNode spec, InetSocketAddress storeHost) throws Exception {
        Map<String, String> props = Commands.properties(spec.get("properties"));
        MessageExt m = Compat.newInner(props, MessageDecoder.messageProperties2String(props));
        m.setTopic(spec.get("topic").asText());
        m.setQueueId(spec.path("queueId").asInt());
        m.setFlag(spec.path("flag").asInt());
        m.setBody(Commands.body(spec));
        InetSocketAddress born = Commands.host(spec.path("bornHost").asText("127.0.0.1:0"));
        m.setBornHost(born);
        m.setStoreHost(storeHost);
        m.setSysFlag(hostFlags(spec.path("sysFlag").asInt(), born, storeHost));
        m.setBornTimestamp(spec.path("bornTimestamp").asLong());
        m.setReconsumeTimes(spec.path("reconsumeTimes").asInt());
        m.setPreparedTransactionOffset(spec.path("preparedTransactionOffset").asLong());
        return m;
    }

    static int hostFlags(int sysFlag, InetSocketAddress born, InetSocketAddress store) {
        sysFlag &= ~(MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
        if (born.getAddress() instanceof Inet6Address) {
            sysFlag |= MessageSysFlag.BORNHOST_V6_FLAG;
        }
        if (store.getAddress() instanceof Inet6Address) {
            sysFlag |= MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
        }
        return sysFlag;
    }

    /** A batch as {@code SendMessageProcessor} builds it from the client's
     * {@code MessageDecoder.encodeMessages} body. */
    static MessageExtBatch batch(JsonNode spec, InetSocketAddress storeHost) throws Exception {
        List<Message> messages = new ArrayList<>();
        for (JsonNode one : spec.get("messages")) {
            Message m = new Message();
            m.setFlag(one.path("flag").asInt());
            m.setBody(Commands.body(one));
            MessageAccessor.setProperties(m, Commands.properties(one.get("properties")));
            messages.add(m);
        }
        MessageExtBatch batch = new MessageExtBatch();
        batch.setTopic(spec.get("topic").asText());
        batch.setQueueId(spec.path("queueId").asInt());
        batch.setBody(MessageDecoder.encodeMessages(messages));
        MessageAccessor.setProperties(batch, Commands.properties(spec.get("properties")));
        InetSocketAddress born = Commands.host(spec.path("bornHost").asText("127.0.0.1:0"));
        batch.setBornHost(born);
        batch.setStoreHost(storeHost);
        batch.setSysFlag(hostFlags(spec.path("sysFlag").asInt(), born, storeHost));
        batch.setBornTimestamp(spec.path("bornTimestamp").asLong());
        return batch;
    }
}
