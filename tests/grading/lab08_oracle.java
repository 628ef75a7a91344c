// Lab 08's Java oracle: RocketMQ 4.9.5's own AllocateMessageQueueAveragely and MQFaultStrategy answering the
// grader's decision tables (tests/grading/test_lab08_java.py runs it with `java -cp <4.9.5 client> THIS_FILE`).
// One case per line on stdin, one answer per line on stdout (queues as broker:id, lists comma-separated, "-" empty):
//   A <group> <currentCID> <cid,cid,...> <queues>          -> the allocation, or "!" + the exception's class
//   S <counter> <lastBroker|-> <enable 0/1> <queues> <faults|-> <whichItemWorst> <broker:writeQueueNums,...>
//      faults: name:latency:startOffsetMs (startTimestamp = now + offset, set on the FaultItem itself)
//     -> "<chosen> <counter after> <route's list after> <fault table's names after, sorted> <whichItemWorst after>"
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.rocketmq.client.common.ThreadLocalIndex;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.impl.producer.TopicPublishInfo;
import org.apache.rocketmq.client.latency.LatencyFaultToleranceImpl;
import org.apache.rocketmq.client.latency.MQFaultStrategy;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.route.QueueData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;

public class Lab08Oracle {
    static final String TOPIC = "TopicTest";

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split(" ");
            out.append(f[0].equals("A") ? allocate(f) : select(f)).append('\n');
        }
        System.out.print(out);
    }

    static List<MessageQueue> queues(String text) {
        List<MessageQueue> mqs = new ArrayList<>();
        if (!text.equals("-")) {
            for (String q : text.split(",")) {
                String[] bq = q.split(":");
                mqs.add(new MessageQueue(TOPIC, bq[0], Integer.parseInt(bq[1])));
            }
        }
        return mqs;
    }

    static String show(List<MessageQueue> mqs) {
        if (mqs.isEmpty()) {
            return "-";
        }
        StringBuilder b = new StringBuilder();
        for (MessageQueue mq : mqs) {
            b.append(b.length() == 0 ? "" : ",").append(mq.getBrokerName()).append(':').append(mq.getQueueId());
        }
        return b.toString();
    }

    static String allocate(String[] f) {
        List<String> cids = new ArrayList<>();
        if (!f[3].equals("-")) {
            for (String c : f[3].split(",")) {
                cids.add(c);
            }
        }
        try {
            return show(new AllocateMessageQueueAveragely().allocate(f[1], f[2].equals("-") ? "" : f[2],
                queues(f[4]), cids));
        } catch (RuntimeException e) {
            return "!" + e.getClass().getSimpleName();
        }
    }

    @SuppressWarnings("unchecked")
    static ThreadLocal<Integer> counter(ThreadLocalIndex index) throws Exception {
        Field field = ThreadLocalIndex.class.getDeclaredField("threadLocalIndex");
        field.setAccessible(true);
        return (ThreadLocal<Integer>) field.get(index);
    }

    static String select(String[] f) throws Exception {
        TopicPublishInfo tp = new TopicPublishInfo();
        tp.setMessageQueueList(queues(f[4]));
        counter(tp.getSendWhichQueue()).set(Integer.parseInt(f[1]));
        TopicRouteData route = new TopicRouteData();
        List<QueueData> qds = new ArrayList<>();
        for (String bn : f[7].split(",")) {
            String[] parts = bn.split(":");
            QueueData qd = new QueueData();
            qd.setBrokerName(parts[0]);
            qd.setWriteQueueNums(Integer.parseInt(parts[1]));
            qd.setReadQueueNums(Integer.parseInt(parts[1]));
            qd.setPerm(6);
            qds.add(qd);
        }
        route.setQueueDatas(qds);
        tp.setTopicRouteData(route);
        MQFaultStrategy strategy = new MQFaultStrategy();
        strategy.setSendLatencyFaultEnable(f[3].equals("1"));
        Field lftField = MQFaultStrategy.class.getDeclaredField("latencyFaultTolerance");
        lftField.setAccessible(true);
        LatencyFaultToleranceImpl lft = (LatencyFaultToleranceImpl) lftField.get(strategy);
        Field worstField = LatencyFaultToleranceImpl.class.getDeclaredField("whichItemWorst");
        worstField.setAccessible(true);
        ThreadLocal<Integer> worst = counter((ThreadLocalIndex) worstField.get(lft));
        worst.set(Integer.parseInt(f[6]));
        Field tableField = LatencyFaultToleranceImpl.class.getDeclaredField("faultItemTable");
        tableField.setAccessible(true);
        Map<String, Object> table = (Map<String, Object>) tableField.get(lft);
        long now = System.currentTimeMillis();
        if (!f[5].equals("-")) {
            for (String item : f[5].split(",")) {
                String[] p = item.split(":");
                lft.updateFaultItem(p[0], Long.parseLong(p[1]), 0);
                Object fi = table.get(p[0]);
                Method set = fi.getClass().getDeclaredMethod("setStartTimestamp", long.class);
                set.setAccessible(true);
                set.invoke(fi, now + Long.parseLong(p[2]));
            }
        }
        String last = f[2].equals("-") ? null : f[2];
        MessageQueue mq = strategy.selectOneMessageQueue(tp, last);
        List<MessageQueue> chosen = new ArrayList<>();
        chosen.add(mq);
        return show(chosen) + " " + counter(tp.getSendWhichQueue()).get() + " " + show(tp.getMessageQueueList())
            + " " + (table.isEmpty() ? "-" : String.join(",", new TreeSet<>(table.keySet()))) + " " + worst.get();
    }
}
