import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import org.neo4j.cli.ExecutionContext;
import org.neo4j.commandline.admin.security.SetInitialPasswordCommand;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import picocli.CommandLine;

/**
 * Main starts Neo4j Community embedded, serving Bolt on 0.0.0.0:7687 (or
 * NEO4J_BOLT_PORT) without TLS (the database network is private to the
 * control plane) and with auth on. Before the first start it sets the neo4j user's initial password with
 * the bundled SetInitialPasswordCommand, read from the file that
 * NEO4J_PASSWORD_FILE names (mounted at run time, never in the image).
 */
public final class Main {
    public static void main(String[] args) throws Exception {
        Path home = Path.of(env("NEO4J_HOME", "/data"));
        Path conf = home.resolve("conf");
        Files.createDirectories(conf);
        Path pwFile = Path.of(env("NEO4J_PASSWORD_FILE", "/run/secrets/neo4j-password"));
        if (!Files.exists(home.resolve("data/databases/system"))) {
            String pw = Files.readString(pwFile).strip();
            int rc = new CommandLine(new SetInitialPasswordCommand(new ExecutionContext(home, conf))).execute(pw);
            if (rc != 0) {
                System.err.println("set-initial-password failed: exit " + rc);
                System.exit(1);
            }
        }
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("0.0.0.0", Integer.parseInt(env("NEO4J_BOLT_PORT", "7687"))))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .build();
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stop.countDown();
        }));
        System.out.println("sandox-neo4j: bolt on 0.0.0.0:" + env("NEO4J_BOLT_PORT", "7687"));
        stop.await();
    }

    private static String env(String key, String def) {
        String v = System.getenv(key);
        return v == null || v.isEmpty() ? def : v;
    }
}
