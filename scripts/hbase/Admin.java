import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Region operations the pinned gohbase cannot send (its protobufs predate HBase 2's split/flush/compact
 * RPCs, and it cannot open an AdminService connection to a region server). brine's fault tests drive
 * them through scripts/hbase/admin.sh, which compiles this file against the same Maven classpath as the
 * server. Keys are given and printed in HBase's "binary string" form: printable ASCII as is, any other
 * byte as \xNN (Bytes.toStringBinary / Bytes.toBytesBinary).
 *
 * <pre>
 *   Admin [-zk host:port] [-timeout seconds] COMMAND TABLE [KEY]
 *   regions TABLE          one line per online region: its start key (empty line for the first)
 *   split TABLE KEY        split the region holding KEY at KEY; wait until the daughters serve
 *   flush TABLE            flush all memstores of TABLE to HFiles
 *   compact TABLE          major-compact TABLE; wait until no compaction runs
 *   move TABLE KEY         move the region holding KEY (to any server; with one server it reopens)
 *   close TABLE KEY        unassign the region holding KEY: it stays offline until `open`
 *   open TABLE KEY         assign the region holding KEY again
 *   servers                one line per live region server: host,port,startcode
 *   locate TABLE           one line per online region: start key, server, read and write request
 *                          counts (asked of each region server itself, so they are current)
 *   moveto TABLE KEY HOST,PORT  move the region holding KEY to that live server; wait until it serves
 *   merge TABLE KEY        merge the region holding KEY with the next one; wait until the result serves
 *   balance                run the balancer once; prints whether it ran
 *   shutdown               the cluster's orderly shutdown (region servers flush and close, then the master stops)
 *   serve                  commands from stdin, one connection for all (see serve)
 * </pre>
 *
 * Exit status 0 on success, 1 on failure (message on stderr), 2 on bad usage.
 */
@SuppressWarnings("deprecation") // Admin.split and unassign(byte[], boolean): still the simplest calls in 2.6
public final class Admin {
  private static final String USAGE =
      "usage: Admin [-zk host:port] [-timeout seconds] regions|split|flush|compact|move|close|open|locate|moveto|merge TABLE [KEY [HOST,PORT]] | servers | balance | shutdown | serve";

  private Admin() {}

  public static void main(String[] argv) {
    String zk = System.getenv().getOrDefault("BRINE_HBASE_ZK", "127.0.0.1:2181");
    long timeoutSec = 120;
    List<String> args = new ArrayList<>(Arrays.asList(argv));
    while (!args.isEmpty() && args.get(0).startsWith("-")) {
      String flag = args.remove(0);
      if (args.isEmpty()) {
        usage();
      }
      switch (flag) {
        case "-zk":
          zk = args.remove(0);
          break;
        case "-timeout":
          timeoutSec = Long.parseLong(args.remove(0));
          break;
        default:
          usage();
      }
    }
    if (args.isEmpty()) {
      usage();
    }
    Configuration conf = HBaseConfiguration.create();
    int colon = zk.lastIndexOf(':');
    conf.set("hbase.zookeeper.quorum", colon < 0 ? zk : zk.substring(0, colon));
    if (colon >= 0) {
      conf.set("hbase.zookeeper.property.clientPort", zk.substring(colon + 1));
    }
    // Fail within the timeout rather than after the client's default of minutes of retries.
    conf.setInt("hbase.client.retries.number", 10);
    conf.setLong("hbase.client.operation.timeout", TimeUnit.SECONDS.toMillis(timeoutSec));

    try (Connection conn = ConnectionFactory.createConnection(conf);
        org.apache.hadoop.hbase.client.Admin admin = conn.getAdmin()) {
      if (args.get(0).equals("serve")) {
        serve(conn, admin);
        return;
      }
      run(conn, admin, args, timeoutSec, System.out);
    } catch (IllegalArgumentException e) {
      usage();
    } catch (Exception e) {
      System.err.println("Admin " + String.join(" ", args) + ": " + e);
      System.exit(1);
    }
  }

  /**
   * serve runs one command per line of stdin, "SECONDS COMMAND [ARGS]", on one connection (a JVM
   * start per operation costs seconds of CPU, too much for a chaos loop on a small machine). Each
   * command's output lines come back prefixed with "= ", then a line "OK" or "ERR message".
   */
  private static void serve(Connection conn, org.apache.hadoop.hbase.client.Admin admin)
      throws IOException {
    java.io.BufferedReader in =
        new java.io.BufferedReader(new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      List<String> args = new ArrayList<>(Arrays.asList(line.trim().split("\\s+")));
      java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
      java.io.PrintStream out = new java.io.PrintStream(buf, true, java.nio.charset.StandardCharsets.UTF_8);
      String result = "OK";
      try {
        long timeoutSec = Long.parseLong(args.remove(0));
        run(conn, admin, args, timeoutSec, out);
      } catch (IllegalArgumentException e) {
        result = "ERR " + USAGE;
      } catch (Exception e) {
        result = ("ERR " + e).replace('\n', ' ');
      }
      for (String l : buf.toString(java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
        if (!l.isEmpty()) {
          System.out.println("= " + l);
        }
      }
      System.out.println(result);
      System.out.flush();
    }
  }

  private static void run(Connection conn, org.apache.hadoop.hbase.client.Admin admin,
      List<String> args, long timeoutSec, java.io.PrintStream out) throws Exception {
    String cmd = args.isEmpty() ? "" : args.get(0);
    boolean noTable = Arrays.asList("servers", "balance", "shutdown").contains(cmd);
    if (!noTable && args.size() < 2) {
      throw new IllegalArgumentException(USAGE);
    }
    TableName table = noTable ? null : TableName.valueOf(args.get(1));
    byte[] key = args.size() > 2 ? Bytes.toBytesBinary(args.get(2)) : null;
    boolean needsKey = Arrays.asList("split", "move", "close", "open", "moveto", "merge").contains(cmd);
    if (needsKey && key == null || cmd.equals("moveto") && args.size() < 4) {
      throw new IllegalArgumentException(USAGE);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSec);
    switch (cmd) {
      case "regions":
        for (RegionInfo r : onlineRegions(admin, table)) {
          out.println(Bytes.toStringBinary(r.getStartKey()));
        }
        break;
      case "split":
        split(conn, admin, table, key, deadline);
        break;
      case "flush":
        admin.flush(table);
        break;
      case "compact":
        compact(admin, table, deadline);
        break;
      case "move":
        admin.move(regionFor(conn, table, key).getEncodedNameAsBytes());
        waitServing(conn, table, key, deadline);
        break;
      case "close":
        admin.unassign(regionFor(conn, table, key).getRegionName(), true);
        break;
      case "open":
        admin.assign(regionFor(conn, table, key).getRegionName());
        waitServing(conn, table, key, deadline);
        break;
      case "servers":
        for (ServerName sn : admin.getRegionServers()) {
          out.println(sn.getServerName());
        }
        break;
      case "locate":
        locate(conn, admin, table, out);
        break;
      case "moveto":
        admin.move(regionFor(conn, table, key).getEncodedNameAsBytes(), liveServer(admin, args.get(3)));
        waitServing(conn, table, key, deadline);
        break;
      case "merge":
        merge(conn, admin, table, key, deadline);
        break;
      case "balance":
        admin.balancerSwitch(true, true);
        out.println(admin.balance() ? "ran" : "did not run");
        break;
      case "shutdown":
        admin.shutdown();
        break;
      default:
        throw new IllegalArgumentException(USAGE);
    }
  }

  private static void usage() {
    System.err.println(USAGE);
    System.exit(2);
  }

  /** The regions of table that serve data: split parents stay in hbase:meta for a while, offline. */
  private static List<RegionInfo> onlineRegions(org.apache.hadoop.hbase.client.Admin admin,
      TableName table) throws IOException {
    List<RegionInfo> out = new ArrayList<>();
    for (RegionInfo r : admin.getRegions(table)) {
      if (!r.isOffline() && !r.isSplitParent()) {
        out.add(r);
      }
    }
    out.sort(RegionInfo.COMPARATOR);
    return out;
  }

  private static RegionInfo regionFor(Connection conn, TableName table, byte[] key)
      throws IOException {
    try (RegionLocator loc = conn.getRegionLocator(table)) {
      return loc.getRegionLocation(key, true).getRegion();
    }
  }

  /** Prints start key, server, read and write requests of every online region of table. */
  private static void locate(Connection conn, org.apache.hadoop.hbase.client.Admin admin,
      TableName table, java.io.PrintStream out) throws IOException {
    java.util.Map<String, RegionMetrics> metrics = new java.util.HashMap<>();
    for (ServerName sn : admin.getRegionServers()) {
      for (RegionMetrics m : admin.getRegionMetrics(sn, table)) {
        metrics.put(Bytes.toStringBinary(m.getRegionName()), m);
      }
    }
    try (RegionLocator loc = conn.getRegionLocator(table)) {
      for (HRegionLocation l : loc.getAllRegionLocations()) {
        RegionInfo r = l.getRegion();
        if (r.isOffline() || r.isSplitParent()) {
          continue;
        }
        RegionMetrics m = metrics.get(Bytes.toStringBinary(r.getRegionName()));
        out.println(Bytes.toStringBinary(r.getStartKey()) + "\t"
            + (l.getServerName() == null ? "-" : l.getServerName().getServerName()) + "\t"
            + (m == null ? -1 : m.getReadRequestCount()) + "\t"
            + (m == null ? -1 : m.getWriteRequestCount()));
      }
    }
  }

  /** The live region server whose "host,port" (or full server name) is hostPort. */
  private static ServerName liveServer(org.apache.hadoop.hbase.client.Admin admin, String hostPort)
      throws IOException {
    for (ServerName sn : admin.getRegionServers()) {
      if (sn.getServerName().equals(hostPort) || sn.getAddress().toString().equals(hostPort.replace(',', ':'))) {
        return sn;
      }
    }
    throw new IOException("no live region server " + hostPort);
  }

  /** Merges the region holding key with the next region of the table and waits until it serves. */
  private static void merge(Connection conn, org.apache.hadoop.hbase.client.Admin admin,
      TableName table, byte[] key, long deadline) throws Exception {
    List<RegionInfo> regions = onlineRegions(admin, table);
    RegionInfo a = regionFor(conn, table, key);
    RegionInfo b = null;
    for (RegionInfo r : regions) {
      if (Bytes.equals(r.getStartKey(), a.getEndKey()) && a.getEndKey().length > 0) {
        b = r;
      }
    }
    if (b == null) {
      throw new IOException("no region after the one holding " + Bytes.toStringBinary(key));
    }
    admin.mergeRegionsAsync(new byte[][] {a.getEncodedNameAsBytes(), b.getEncodedNameAsBytes()}, false)
        .get(Math.max(1, TimeUnit.NANOSECONDS.toSeconds(deadline - System.nanoTime())), TimeUnit.SECONDS);
    waitServing(conn, table, key, deadline);
  }

  private static void split(Connection conn, org.apache.hadoop.hbase.client.Admin admin,
      TableName table, byte[] key, long deadline) throws Exception {
    for (RegionInfo r : onlineRegions(admin, table)) {
      if (Bytes.equals(r.getStartKey(), key)) {
        return; // already a boundary: splitting again would fail, and the caller's goal holds
      }
    }
    admin.split(table, key);
    // The split runs as a master procedure; the call returns before the daughters are online.
    while (true) {
      boolean boundary = false;
      for (RegionInfo r : onlineRegions(admin, table)) {
        boundary |= Bytes.equals(r.getStartKey(), key);
      }
      if (boundary) {
        waitServing(conn, table, key, deadline);
        return;
      }
      sleepUntil(deadline, "split at " + Bytes.toStringBinary(key));
    }
  }

  private static void compact(org.apache.hadoop.hbase.client.Admin admin, TableName table,
      long deadline) throws Exception {
    admin.majorCompact(table);
    // The request is queued: give it a moment to show up as running before waiting for it to end.
    long seenBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    boolean seen = false;
    while (true) {
      CompactionState s = admin.getCompactionState(table);
      if (s != CompactionState.NONE) {
        seen = true;
      } else if (seen || System.nanoTime() > seenBy) {
        return;
      }
      sleepUntil(deadline, "major compaction");
    }
  }

  /** Waits until a fresh lookup of key finds an open region with a server. */
  private static void waitServing(Connection conn, TableName table, byte[] key, long deadline)
      throws Exception {
    while (true) {
      try (RegionLocator loc = conn.getRegionLocator(table)) {
        HRegionLocation l = loc.getRegionLocation(key, true);
        if (l != null && l.getServerName() != null && !l.getRegion().isOffline()) {
          try (org.apache.hadoop.hbase.client.Table t = conn.getTable(table)) {
            t.get(new org.apache.hadoop.hbase.client.Get(key));
            return;
          } catch (IOException notYet) {
            // still opening
          }
        }
      }
      sleepUntil(deadline, "region of " + Bytes.toStringBinary(key) + " to serve");
    }
  }

  private static void sleepUntil(long deadline, String what) throws Exception {
    if (System.nanoTime() > deadline) {
      throw new IOException("timed out waiting for " + what);
    }
    Thread.sleep(200);
  }
}
