package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Method;
import java.util.Base64;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.ControllerConfig;
import org.apache.rocketmq.controller.elect.impl.DefaultElectPolicy;
import org.apache.rocketmq.controller.helper.BrokerValidPredicate;
import org.apache.rocketmq.controller.impl.DLedgerController;
import org.apache.rocketmq.controller.impl.event.EventMessage;
import org.apache.rocketmq.controller.impl.event.EventSerializer;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.body.SyncStateSet;
import org.apache.rocketmq.remoting.protocol.header.controller.AlterSyncStateSetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.ElectMasterRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.GetReplicaInfoRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.admin.CleanControllerBrokerDataRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.register.ApplyBrokerIdRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.register.GetNextBrokerIdRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.register.RegisterBrokerToControllerRequestHeader;

/**
 * RocketMQ 5.3.3's {@code DLedgerController}: members of a controller group in this JVM (each its own DLedger
 * server on its own port), requests to one of them as the {@code ControllerRequestProcessor} makes them, and
 * {@code EventSerializer} on event bytes - the judge of the controllers' event log.
 *
 * <p>Commands: {@code controllerStart {group, peers, selfId, storePath}} (the broker valid predicate - the
 * election policy's too, as {@code ControllerManager} builds it - answers from the set {@code controllerAlive}
 * gives); {@code controllerAlive {brokers: [[cluster, name, id]...]}};
 * {@code controllerLeader} (the member in leader state, or null); {@code controllerCall {selfId, request, ...}}
 * (request: getNextBrokerId, applyBrokerId, registerBroker, electMaster (trigger broker/admin/controller),
 * alterSyncStateSet, cleanBrokerData, getReplicaInfo; answers code, remark and the header's fields);
 * {@code controllerShutdown}; {@code controllerDecodeEvents {bodies}} (each base64 entry body:
 * {@code EventSerializer.deserialize} as JSON of its getters, and {@code serialize} of that event again).
 */
public final class ControllerCommands {
    private static final Map<String, DLedgerController> MEMBERS = new TreeMap<>();
    private static final Set<String> ALIVE = ConcurrentHashMap.newKeySet();

    private ControllerCommands() {
    }

    public static JsonNode run(String cmd, JsonNode req) throws Exception {
        switch (cmd) {
            case "controllerStart":
                return start(req);
            case "controllerAlive":
                ALIVE.clear();
                for (JsonNode b : req.get("brokers")) {
                    ALIVE.add(b.get(0).asText() + "/" + b.get(1).asText() + "/" + b.get(2).asLong());
                }
                return Main.ok();
            case "controllerLeader":
                return leader();
            case "controllerCall":
                return call(req);
            case "controllerShutdown":
                for (DLedgerController c : MEMBERS.values()) {
                    c.shutdown();
                }
                MEMBERS.clear();
                return Main.ok();
            case "controllerDecodeEvents":
                return decode(req);
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    private static JsonNode start(JsonNode req) {
        ControllerConfig config = new ControllerConfig();
        String selfId = req.get("selfId").asText();
        config.setControllerDLegerGroup(req.get("group").asText());
        config.setControllerDLegerPeers(req.get("peers").asText());
        config.setControllerDLegerSelfId(selfId);
        config.setControllerStorePath(req.get("storePath").asText());
        config.setMappedFileSize(req.path("mappedFileSize").asInt(1024 * 1024));
        config.setScanInactiveMasterInterval(req.path("scanInactiveMasterInterval").asLong(5000));
        BrokerValidPredicate alive = (cluster, name, id) -> ALIVE.contains(cluster + "/" + name + "/" + id);
        // as ControllerManager builds it: the policy filters by the same predicate (no live info: the first)
        DLedgerController controller = new DLedgerController(config, alive, null, null, null,
            new DefaultElectPolicy(alive, null));
        controller.startup();
        MEMBERS.put(selfId, controller);
        return Main.ok();
    }

    private static JsonNode leader() {
        ObjectNode out = Main.ok();
        out.putNull("leader");
        for (Map.Entry<String, DLedgerController> e : MEMBERS.entrySet()) {
            if (e.getValue().isLeaderState()) {
                out.put("leader", e.getKey());
            }
        }
        return out;
    }

    private static Long optLong(JsonNode n, String field) {
        return n.hasNonNull(field) ? n.get(field).asLong() : null;
    }

    private static JsonNode call(JsonNode req) throws Exception {
        DLedgerController c = MEMBERS.get(req.get("selfId").asText());
        if (c == null) {
            throw new IllegalArgumentException("no controller member " + req.get("selfId"));
        }
        String cluster = req.path("clusterName").asText("DefaultCluster");
        String name = req.path("brokerName").asText("broker-a");
        RemotingCommand answer;
        switch (req.get("request").asText()) {
            case "getNextBrokerId":
                answer = c.getNextBrokerId(new GetNextBrokerIdRequestHeader(cluster, name)).get(10, TimeUnit.SECONDS);
                break;
            case "applyBrokerId":
                answer = c.applyBrokerId(new ApplyBrokerIdRequestHeader(cluster, name, optLong(req, "brokerId"),
                    req.get("registerCheckCode").asText())).get(10, TimeUnit.SECONDS);
                break;
            case "registerBroker":
                answer = c.registerBroker(new RegisterBrokerToControllerRequestHeader(cluster, name,
                    optLong(req, "brokerId"), req.get("brokerAddress").asText())).get(10, TimeUnit.SECONDS);
                break;
            case "electMaster": {
                String trigger = req.path("trigger").asText("broker");
                ElectMasterRequestHeader header = trigger.equals("controller")
                    ? ElectMasterRequestHeader.ofControllerTrigger(name)
                    : trigger.equals("admin") ? ElectMasterRequestHeader.ofAdminTrigger(cluster, name, optLong(req, "brokerId"))
                    : ElectMasterRequestHeader.ofBrokerTrigger(cluster, name, optLong(req, "brokerId"));
                answer = c.electMaster(header).get(10, TimeUnit.SECONDS);
                break;
            }
            case "alterSyncStateSet": {
                Set<Long> members = new HashSet<>();
                for (JsonNode id : req.get("syncStateSet")) {
                    members.add(id.asLong());
                }
                answer = c.alterSyncStateSet(new AlterSyncStateSetRequestHeader(name, optLong(req, "masterBrokerId"),
                        req.get("masterEpoch").asInt()), new SyncStateSet(members, req.get("syncStateSetEpoch").asInt()))
                    .get(10, TimeUnit.SECONDS);
                break;
            }
            case "cleanBrokerData":
                answer = c.cleanBrokerData(new CleanControllerBrokerDataRequestHeader(cluster, name,
                    req.path("brokerIdSetToClean").isNull() || req.path("brokerIdSetToClean").isMissingNode() ? null
                        : req.get("brokerIdSetToClean").asText(), req.path("cleanLivingBroker").asBoolean(false)))
                    .get(10, TimeUnit.SECONDS);
                break;
            case "getReplicaInfo":
                answer = c.getReplicaInfo(new GetReplicaInfoRequestHeader(name)).get(10, TimeUnit.SECONDS);
                break;
            default:
                throw new IllegalArgumentException("unknown controller request " + req.get("request"));
        }
        ObjectNode out = Main.ok();
        out.put("code", answer.getCode());
        out.put("remark", answer.getRemark());
        Object header = answer.readCustomHeader();
        if (header != null) {
            out.set("header", Main.JSON.valueToTree(header));
        }
        return out;
    }

    private static JsonNode decode(JsonNode req) throws Exception {
        EventSerializer serializer = new EventSerializer();
        ObjectNode out = Main.ok();
        ArrayNode events = out.putArray("events");
        for (JsonNode b64 : req.get("bodies")) {
            byte[] body = Base64.getDecoder().decode(b64.asText());
            EventMessage event = serializer.deserialize(body);
            ObjectNode e = events.addObject();
            if (event == null) {
                e.putNull("event");
                continue;
            }
            ObjectNode fields = e.putObject("event");
            for (Method m : event.getClass().getMethods()) {
                if (m.getParameterCount() == 0 && m.getDeclaringClass() != Object.class
                    && (m.getName().startsWith("get") || m.getName().startsWith("is"))) {
                    String prop = m.getName().startsWith("is") ? m.getName().substring(2) : m.getName().substring(3);
                    prop = Character.toLowerCase(prop.charAt(0)) + prop.substring(1);
                    Object value = m.invoke(event);
                    fields.set(prop, Main.JSON.valueToTree(value instanceof Enum ? ((Enum<?>) value).name() : value));
                }
            }
            e.put("reserialized", Base64.getEncoder().encodeToString(serializer.serialize(event)));
        }
        return out;
    }
}
