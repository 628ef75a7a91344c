package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.remoting.protocol.EpochEntry;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.StoreCheckpoint;
import org.apache.rocketmq.store.config.BrokerRole;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.ha.autoswitch.AutoSwitchHAService;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

/**
 * RocketMQ 5.3.3's controller-mode store: a {@code DefaultMessageStore} of a broker with
 * {@code enableControllerMode=true}, so its HA service is {@code AutoSwitchHAService} (epochs, the epoch file,
 * the SyncStateSet, the confirm offset). Roles are given as {@code ReplicasManager} gives them: the SyncStateSet
 * first, then {@code changeToMaster(epoch)} and SYNC_MASTER; or SLAVE, {@code changeToSlave} and the master's HA
 * address. One store per JVM.
 *
 * <p>Commands: {@code autoswitchOpen {root, brokerId, config, fenced}} (config: MessageStoreConfig settings, e.g.
 * haListenPort, mappedFileSizeCommitLog; the epoch file is {@code root/epochFileCheckpoint});
 * {@code autoswitchChangeToMaster {epoch, syncStateSet}}; {@code autoswitchChangeToSlave {masterHaAddress, epoch}};
 * {@code autoswitchPutMany {msgs}}; {@code autoswitchInfo}; {@code autoswitchQueue {topic, queueId}};
 * {@code autoswitchFence {fenced}}; {@code autoswitchShutdown}; {@code autoswitchSetCheckpointConfirm {root,
 * offset}} (no store open).
 */
public final class AutoSwitchCommands {
    private static DefaultMessageStore store;
    private static MessageStoreConfig config;
    private static long brokerId;
    private static final InetSocketAddress STORE_HOST = new InetSocketAddress("127.0.0.1", 10911);

    private AutoSwitchCommands() {
    }

    public static JsonNode run(String cmd, JsonNode req) throws Exception {
        switch (cmd) {
            case "autoswitchOpen":
                return open(req);
            case "autoswitchChangeToMaster":
                return changeToMaster(req);
            case "autoswitchChangeToSlave":
                return changeToSlave(req);
            case "autoswitchPutMany":
                return putMany(req);
            case "autoswitchInfo":
                return info();
            case "autoswitchQueue":
                return queue(req);
            case "autoswitchFence":
                store().getRunningFlags().makeFenced(req.path("fenced").asBoolean());
                return info();
            case "autoswitchShutdown":
                if (store != null) {
                    store.shutdown();
                    store = null;
                }
                return Main.ok();
            case "autoswitchSetCheckpointConfirm":
                return setCheckpointConfirm(req);
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    private static DefaultMessageStore store() {
        if (store == null) {
            throw new IllegalStateException("no controller-mode store is open");
        }
        return store;
    }

    private static AutoSwitchHAService ha() {
        return (AutoSwitchHAService) store().getHaService();
    }

    private static JsonNode open(JsonNode req) throws Exception {
        if (store != null) {
            throw new IllegalStateException("a controller-mode store is already open");
        }
        String root = req.get("root").asText();
        config = new MessageStoreConfig();
        config.setStorePathRootDir(root);
        config.setStorePathCommitLog(root + File.separator + "commitlog");
        config.setStorePathEpochFile(root + File.separator + "epochFileCheckpoint");
        config.setBrokerRole(BrokerRole.SLAVE);
        Commands.configure(config, req.get("config"));
        brokerId = req.get("brokerId").asLong();
        BrokerConfig brokerConfig = new BrokerConfig();
        brokerConfig.setBrokerId(brokerId);
        brokerConfig.setEnableControllerMode(true);
        DefaultMessageStore s = new DefaultMessageStore(config, new BrokerStatsManager("rocketlab", true), null,
            brokerConfig, new ConcurrentHashMap<>());
        boolean fenced = req.path("fenced").asBoolean(false);
        if (fenced) {
            s.getRunningFlags().makeFenced(true);  // BrokerController: setFenced(true) before the store loads
        }
        boolean abnormal = new File(root, "abort").exists();
        if (!s.load()) {
            s.shutdown();
            throw new IllegalStateException("DefaultMessageStore.load() returned false");
        }
        s.start();
        store = s;
        ha().setLocalBrokerId(brokerId);
        ObjectNode reply = info();
        reply.put("lastExitOK", !abnormal);
        return reply;
    }

    private static Set<Long> ids(JsonNode array) {
        Set<Long> out = new HashSet<>();
        for (JsonNode n : array) {
            out.add(n.asLong());
        }
        return out;
    }

    /** ReplicasManager.changeToMaster for a broker that was not master: changeSyncStateSet first, then the HA
     * service, then SYNC_MASTER. */
    private static JsonNode changeToMaster(JsonNode req) throws Exception {
        int epoch = req.get("epoch").asInt();
        ha().setSyncStateSet(ids(req.get("syncStateSet")));
        boolean accepted = ha().changeToMaster(epoch);
        config.setBrokerRole(BrokerRole.SYNC_MASTER);
        ObjectNode reply = info();
        reply.put("accepted", accepted);
        return reply;
    }

    /** ReplicasManager.changeToSlave for a new master: SLAVE, then the HA service follows the master's HA address. */
    private static JsonNode changeToSlave(JsonNode req) {
        config.setBrokerRole(BrokerRole.SLAVE);
        boolean accepted = ha().changeToSlave("", req.get("epoch").asInt(), brokerId);
        ha().updateHaMasterAddress(req.get("masterHaAddress").asText());
        ObjectNode reply = info();
        reply.put("accepted", accepted);
        return reply;
    }

    private static JsonNode putMany(JsonNode req) throws Exception {
        ObjectNode reply = Main.ok();
        ArrayNode results = reply.putArray("results");
        for (JsonNode msg : req.get("msgs")) {
            results.add(Commands.result(Compat.putInner(store(), Messages.build(msg, STORE_HOST))));
        }
        return reply;
    }

    private static ObjectNode info() {
        DefaultMessageStore s = store();
        ObjectNode out = Main.ok();
        out.put("role", config.getBrokerRole().name());
        out.put("minPhyOffset", s.getMinPhyOffset());
        out.put("maxPhyOffset", s.getMaxPhyOffset());
        out.put("confirmOffset", s.getConfirmOffset());
        out.put("dispatchBehindBytes", s.dispatchBehindBytes());
        out.put("connections", s.getHaService().getConnectionCount().get());
        out.put("synchronizing", ha().isSynchronizingSyncStateSet());
        ArrayNode local = out.putArray("syncStateSet");
        new TreeSet<>(ha().getLocalSyncStateSet()).forEach(local::add);
        ArrayNode epochs = out.putArray("epochs");
        for (EpochEntry e : ha().getEpochEntries()) {
            ArrayNode row = epochs.addArray();
            row.add(e.getEpoch());
            row.add(e.getStartOffset());
        }
        return out;
    }

    private static JsonNode queue(JsonNode req) throws Exception {
        ObjectNode out = info();
        String topic = req.get("topic").asText();
        int queueId = req.path("queueId").asInt(0);
        out.put("maxOffsetInQueue", store().getMaxOffsetInQueue(topic, queueId));
        out.put("minOffsetInQueue", store().getMinOffsetInQueue(topic, queueId));
        return out;
    }

    private static JsonNode setCheckpointConfirm(JsonNode req) throws Exception {
        if (store != null) {
            throw new IllegalStateException("shut the store down first");
        }
        StoreCheckpoint checkpoint = new StoreCheckpoint(req.get("root").asText() + File.separator + "checkpoint");
        ObjectNode out = Main.ok();
        out.put("was", checkpoint.getConfirmPhyOffset());
        checkpoint.setConfirmPhyOffset(req.get("offset").asLong());
        checkpoint.shutdown();
        return out;
    }
}
