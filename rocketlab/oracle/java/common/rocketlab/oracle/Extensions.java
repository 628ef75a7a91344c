package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.InvocationTargetException;

/** Commands that exist for one release only (a class under {@code v5/}): called by name, so that the common
 * code compiles against either release; a release without the class answers that it lacks it. */
final class Extensions {
    private Extensions() {
    }

    static JsonNode run(String className, String cmd, JsonNode req) throws Exception {
        Class<?> type;
        try {
            type = Class.forName(className);
        } catch (ClassNotFoundException e) {
            throw new UnsupportedOperationException(cmd + " needs RocketMQ 5.3.3 (this driver runs " + Compat.RELEASE + ")");
        }
        try {
            return (JsonNode) type.getMethod("run", String.class, JsonNode.class).invoke(null, cmd, req);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            throw cause instanceof Exception ? (Exception) cause : new RuntimeException(cause);
        }
    }
}
