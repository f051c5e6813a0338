package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/backends/tablestore"
)

// defaultStore is the embedded store in the working directory: no server needed.
const defaultStore = "local://brine.db"

// storeURLHelp is shown by -store's usage and by errors about a bad URL.
const storeURLHelp = `local://PATH[?nosync=1] | memory:// | hbase://ZKHOST:PORT[,ZKHOST:PORT][/ZNODE] | ` +
	`tablestore://INSTANCE@HOST (https) | tablestore+http://INSTANCE@HOST:PORT | tablestore:// (all from TABLESTORE_* env)`

// localBusyHelp follows the error of a local:// store another process has open.
const localBusyHelp = "the embedded store (local://) is single-process: one process at a time has its file open, and " +
	"another one (a brine command still running, or a program of yours) has it now. Run the commands one after " +
	"another, open the store once in your own program, or use a store many processes share: hbase:// or tablestore://"

// hbaseConfig is the driver config of the store URL raw, hbase://QUORUM[/ZNODE-ROOT] (rest: after
// the scheme).
func hbaseConfig(env *cliEnv, raw, rest string) (hbase.Config, error) {
	quorum, root, _ := strings.Cut(rest, "/")
	if quorum == "" {
		return hbase.Config{}, fmt.Errorf("store URL %q: hbase:// needs the ZooKeeper quorum, host:port[,host:port]", raw)
	}
	cfg := hbase.Config{ZKQuorum: quorum}
	cfg.Logger, cfg.GohbaseLogger = env.logger, env.gohbaseLog()
	if root != "" {
		cfg.ZKRoot = "/" + root
	}
	return cfg, nil
}

// openStore opens the backend a store URL names. Credentials never come from the URL: Tablestore's are
// read from the environment (TABLESTORE_ACCESS_KEY_ID / TABLESTORE_ACCESS_KEY_SECRET), so they do not
// end up in shell history, process lists or logs. With mustExist, a local:// file that is not there
// is an error instead of a new, empty store (a mistyped path in a read command).
func openStore(ctx context.Context, env *cliEnv, raw string, mustExist bool) (backends.Backend, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fmt.Errorf("store URL %q: want %s", raw, storeURLHelp)
	}
	switch scheme {
	case "local":
		path, query, _ := strings.Cut(rest, "?")
		if path == "" {
			return nil, fmt.Errorf("store URL %q: local:// needs a file path", raw)
		}
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, fmt.Errorf("store URL %q: %w", raw, err)
		}
		cfg := local.Config{Path: path}
		for k, v := range q {
			switch {
			case k == "nosync" && (v[0] == "1" || v[0] == "true"):
				cfg.NoSync = true
			case k == "nosync":
			default:
				return nil, fmt.Errorf("store URL %q: unknown parameter %q (known: nosync)", raw, k)
			}
		}
		if mustExist {
			if _, err := os.Stat(path); err != nil {
				return nil, fmt.Errorf("store %q: %w (this command does not create a store: check the path; create and import --create make one)", raw, err)
			}
		}
		if dir := filepath.Dir(path); dir != "." {
			// A mistyped directory is an error, not a new tree of directories made in silence.
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("store %q: %w: directory %s is not there (brine makes the store's file, not its directories: make it first)",
					raw, backends.ErrInvalidArgument, dir)
			}
		}
		st, err := local.Open(ctx, cfg)
		if errors.Is(err, local.ErrLocked) {
			return nil, fmt.Errorf("store %q: %w\n%s", raw, err, localBusyHelp)
		}
		return st, err
	case "memory":
		return memory.New(), nil
	case "hbase":
		cfg, err := hbaseConfig(env, raw, rest)
		if err != nil {
			return nil, err
		}
		if err := dialQuorum(ctx, cfg.ZKQuorum); err != nil {
			return nil, fmt.Errorf("store %q: %w", raw, err)
		}
		return hbase.Open(ctx, cfg)
	case "tablestore", "tablestore+http":
		cfg := tablestore.Config{
			Endpoint:        env.getenv(tablestore.EnvEndpoint),
			Instance:        env.getenv(tablestore.EnvInstance),
			AccessKeyID:     env.getenv(tablestore.EnvAccessKeyID),
			AccessKeySecret: env.getenv(tablestore.EnvAccessKeySecret),
			SecurityToken:   env.getenv(tablestore.EnvSecurityToken),
		}
		if rest != "" {
			instance, host, ok := strings.Cut(rest, "@")
			if !ok || instance == "" || host == "" {
				return nil, fmt.Errorf("store URL %q: want tablestore://INSTANCE@HOST", raw)
			}
			if strings.ContainsAny(instance, ":") {
				return nil, fmt.Errorf("store URL %q: credentials do not go in the URL; set %s and %s",
					redactURL(raw), tablestore.EnvAccessKeyID, tablestore.EnvAccessKeySecret)
			}
			proto := "https"
			if scheme == "tablestore+http" {
				proto = "http"
			}
			cfg.Instance, cfg.Endpoint = instance, proto+"://"+strings.TrimSuffix(host, "/")
		}
		if cfg.Endpoint == "" || cfg.Instance == "" || cfg.AccessKeyID == "" || cfg.AccessKeySecret == "" {
			return nil, fmt.Errorf("store %q: set %s and %s (and %s, %s unless the URL names them)",
				redactURL(raw), tablestore.EnvAccessKeyID, tablestore.EnvAccessKeySecret, tablestore.EnvEndpoint, tablestore.EnvInstance)
		}
		cfg.Logger = env.logger
		return tablestore.Open(ctx, cfg)
	default:
		return nil, fmt.Errorf("store URL %q: unknown scheme %q; want %s", raw, scheme, storeURLHelp)
	}
}

// localPath is the file of a local:// store URL.
func localPath(raw string) (string, bool) {
	rest, ok := strings.CutPrefix(raw, "local://")
	if !ok {
		return "", false
	}
	path, _, _ := strings.Cut(rest, "?")
	return path, path != ""
}

// dialQuorum fails at once when no ZooKeeper host of the quorum accepts a TCP connection (a wrong
// port is refused immediately, where the ZooKeeper client would retry until its session timeout).
func dialQuorum(ctx context.Context, quorum string) error {
	var errs []error
	for _, host := range strings.Split(quorum, ",") {
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(host, "2181")
		}
		d := net.Dialer{Timeout: 5 * time.Second}
		conn, err := d.DialContext(ctx, "tcp", host)
		if err == nil {
			conn.Close()
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("no ZooKeeper answers at %s: %w", quorum, errors.Join(errs...))
}

// redactURL drops anything before an '@' that looks like user:password.
func redactURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	if user, host, ok := strings.Cut(rest, "@"); ok && strings.Contains(user, ":") {
		return scheme + "://REDACTED@" + host
	}
	return raw
}
