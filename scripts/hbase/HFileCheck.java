import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.fs.HFileSystem;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileBlock;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;

/**
 * Reads HFiles as a region server does, with HBase's own block checksums verified: HFilePrettyPrinter
 * opens files through a plain FileSystem, which turns HBase checksums off, so a wrong CRC32C would
 * pass it unseen. brine's hfile tests run this through scripts/hbase/hfile.sh check.
 *
 * <pre>
 *   HFileCheck FILE...     one line per file: "blocks=N DATABLK*=n IDXLEAF2=n ... cells=N checksumFailures=N"
 * </pre>
 *
 * Every block from the first to the trailer is read (blockRange), then every cell through a scanner.
 * A checksum mismatch makes HBase warn and re-read with the file system's checksums; it is counted in
 * HFile's checksum failure counter, printed here, and the exit status is 1 if any file had one.
 */
public class HFileCheck {
  public static void main(String[] args) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    HFileSystem fs = new HFileSystem(conf, true); // true: HBase verifies the block checksums
    boolean failed = false;
    for (String arg : args) {
      Path path = new Path(arg);
      HFile.getAndResetChecksumFailuresCount();
      try (HFile.Reader reader = HFile.createReader(fs, path, CacheConfig.DISABLED, true, conf)) {
        TreeMap<String, Integer> types = new TreeMap<>();
        long blocks = 0;
        HFileBlock.BlockIterator it = reader.getUncachedBlockReader()
          .blockRange(0, reader.length() - reader.getTrailer().getTrailerSize());
        for (HFileBlock b; (b = it.nextBlock()) != null;) {
          blocks++;
          types.merge(b.getBlockType().toString(), 1, Integer::sum);
          b.release();
        }
        long cells = 0;
        HFileScanner scanner = reader.getScanner(conf, false, false);
        if (scanner.seekTo()) {
          do {
            cells++;
          } while (scanner.next());
        }
        scanner.close();
        long failures = HFile.getAndResetChecksumFailuresCount();
        failed |= failures > 0;
        StringBuilder line = new StringBuilder(arg).append(" blocks=").append(blocks);
        types.forEach((t, n) -> line.append(' ').append(t).append('=').append(n));
        System.out.println(line.append(" cells=").append(cells).append(" checksumFailures=").append(failures));
      }
    }
    System.exit(failed ? 1 : 0);
  }
}
