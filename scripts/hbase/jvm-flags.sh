# shellcheck shell=bash
# JVM flags for HBase 2.6 on JDK 17, sourced by up.sh, admin.sh and docker/hbase/entrypoint.sh so that
# the Maven path and the Docker image run the same JVM. Defines the array HBASE_JVM_FLAGS.
#
# HBase and its shaded Netty/protobuf reach into JDK internals; since JDK 17 strong encapsulation turns
# that into InaccessibleObjectException (or silently slower fallbacks) unless the packages are opened
# to the class path ("ALL-UNNAMED"). These are the flags the release's bin/hbase adds on JDK 11+.
HBASE_JVM_FLAGS=(
  # Netty (shaded as org.apache.hbase.thirdparty) may use reflection on direct buffers: faster I/O path.
  -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
  # sun.misc.Unsafe, used by HBase's UnsafeAccess/ByteBufferUtils and by Netty.
  --add-modules jdk.unsupported
  # Direct ByteBuffer address and cleaner (HBase's ByteBuffAllocator, Netty).
  --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  # Reflection on core classes (Hadoop's ReflectionUtils, HBase's ClassSize and metrics, Netty).
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent=ALL-UNNAMED
  # jdk.internal.misc.Unsafe/VM (Netty's cleaner, max direct memory); Kerberos and DNS helpers that
  # Hadoop links against even with security off.
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-exports java.base/sun.net.dns=ALL-UNNAMED
  --add-exports java.base/sun.net.util=ALL-UNNAMED
  # IPv4 only: no IPv6 wildcard binds or lookups on a loopback-only setup.
  -Djava.net.preferIPv4Stack=true
)
