package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// Fake credentials, distinctive enough that any leak of them, whole or in part, is found by grep.
const (
	fakeKeyID  = "LTAIfakeKeyIdForBrineTests"
	fakeSecret = "brineFAKEsecret0xDEADBEEFnotForLogs"
	fakeToken  = "brineFAKEstsTokenCAISnotForLogsEither"
	wrongSec   = "brineWRONGsecretAlsoNeverLogged42"
)

// syncBuffer collects output from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureProcessOutput sends os.Stdout, os.Stderr, the log package and slog's default to out until
// the returned function is first called: a library that prints on its own is caught too. The test must not
// run in parallel with others (it swaps process-wide writers).
func captureProcessOutput(t *testing.T, out io.Writer) (restore func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr, oldLog, oldFlags, oldSlog := os.Stdout, os.Stderr, log.Writer(), log.Flags(), slog.Default()
	os.Stdout, os.Stderr = w, w
	log.SetOutput(w)
	slog.SetDefault(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})))
	var copied sync.WaitGroup
	copied.Go(func() { _, _ = io.Copy(out, r) })
	var once sync.Once
	return func() {
		once.Do(func() {
			os.Stdout, os.Stderr = oldOut, oldErr
			log.SetOutput(oldLog)
			log.SetFlags(oldFlags)
			slog.SetDefault(oldSlog)
			w.Close()
			copied.Wait()
			r.Close()
		})
	}
}

// leaks returns the secrets found in s: each whole, and its first and last 12 characters (a leak
// may be cut or redacted carelessly).
func leaks(s string) []string {
	var found []string
	for _, secret := range []string{fakeSecret, fakeToken, wrongSec} {
		for _, part := range []string{secret, secret[:12], secret[len(secret)-12:]} {
			if strings.Contains(s, part) {
				found = append(found, part)
			}
		}
	}
	return found
}

// TestSecretsNeverLeak runs the Tablestore configuration path with fake credentials from the
// environment (ConfigFromEnv), every way a config gets printed, Open with debug logging, a bulk import
// whose rows fail (server-side row errors, injected faults, oversized keys), failing scans, and Open
// with a wrong secret; it captures every log line, error, failure report and process output, and
// fails if a secret appears in any of it.
func TestSecretsNeverLeak(t *testing.T) {
	var out syncBuffer
	restore := captureProcessOutput(t, &out)
	defer restore()
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()

	srv := tablestoretest.Start(t, tablestoretest.WithCredentials(fakeKeyID, fakeSecret), tablestoretest.WithSecurityToken(fakeToken))
	t.Setenv(tablestore.EnvEndpoint, srv.Endpoint())
	t.Setenv(tablestore.EnvInstance, srv.Instance())
	t.Setenv(tablestore.EnvAccessKeyID, fakeKeyID)
	t.Setenv(tablestore.EnvAccessKeySecret, fakeSecret)
	t.Setenv(tablestore.EnvSecurityToken, fakeToken)

	cfg, err := tablestore.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AccessKeySecret != fakeSecret {
		t.Fatal("ConfigFromEnv did not read the secret: the test would prove nothing")
	}
	cfg.Logger = logger
	cfg.SDKRetryTimes = -1
	cfg.RowAttempts = 2
	cfg.RetryBaseDelay = time.Millisecond
	// Every way a config gets printed or dumped.
	fmt.Fprintf(&out, "%v|%+v|%#v|%s|%q\n", cfg, cfg, cfg, cfg, cfg)
	fmt.Fprintln(&out, cfg, &cfg)
	logger.Info("config", "cfg", cfg, "ptr", &cfg)
	if js, err := json.Marshal(cfg); err != nil {
		t.Fatal(err)
	} else {
		out.Write(js)
	}

	b, err := tablestore.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := faulty.New(b, faulty.Config{Seed: 1, Rules: []faulty.Rule{
		{Fault: faulty.RowError, Prob: 0.05},
		{Fault: faulty.Error, Ops: faulty.OpScan, Prob: 0.5, AfterRows: 10},
	}})
	c := client.New(f, client.WithLogger(logger))
	defer c.Close()
	fmt.Fprintf(&out, "%v|%+v|%#v|%+v|%+v\n", b, b, b, f, c) // a driver dumped in a debug session
	tbl, err := c.CreateTable(ctx, "secrets", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	srv.FailRowsRandomly(7, 0.05, "OTSParameterInvalid")

	in := make([]client.Mutation, 300)
	for i := range in {
		k := fmt.Appendf(nil, "row%04d", i)
		if i%50 == 3 {
			k = bytes.Repeat([]byte("k"), 2000) // over Tablestore's 1 KB key column limit
		}
		in[i] = putRow(k)
		in[i].Cells[0].Timestamp = 0 // the service refuses versions a day away from its clock
	}
	var failed int
	stats, err := tbl.Import(ctx, slicesSeq(in), client.ImportOptions{
		BatchRows: 40, MaxAttempts: 2, BaseBackoff: time.Millisecond,
		OnFailure: func(fr client.FailedRow) {
			failed++
			if fr.Index%50 == 3 && !errors.Is(fr.Err, client.ErrInvalidKey) {
				t.Errorf("row %d, a 2000-byte key: %v; want ErrInvalidKey (Tablestore's limit is 1 KB)", fr.Index, fr.Err)
			}
			fmt.Fprintf(&out, "failed row %d: %v | %+v\n", fr.Index, fr.Err, fr)
			logger.Error("import row failed", "row", fr.Index, "err", fr.Err)
		},
		Progress: func(s client.ImportStats) { logger.Info("progress", "stats", s) },
	})
	fmt.Fprintf(&out, "import: %+v %v\n", stats, err)
	if failed == 0 || stats.Written == 0 || !errors.Is(err, client.ErrRowsFailed) {
		t.Fatalf("import %+v, %v: no failure path was exercised", stats, err)
	}
	for range 5 {
		_, serr := testkit.CollectErr(tbl.Scan(ctx, client.Range{}))
		fmt.Fprintf(&out, "scan: %v\n", serr)
	}
	_, gerr := tbl.GetMany(ctx, [][]byte{[]byte("row0001"), bytes.Repeat([]byte("k"), 2000)})
	fmt.Fprintf(&out, "get many: %v %+v\n", gerr, gerr)

	// A wrong secret: the refusal must not echo either secret.
	bad := cfg
	bad.AccessKeySecret = wrongSec
	if _, err := tablestore.Open(ctx, bad); err == nil {
		t.Fatal("Open with a wrong secret succeeded: the server does not check, the test proves nothing")
	} else {
		fmt.Fprintf(&out, "open with a wrong secret: %v | %+v | %#v\n", err, err, err)
	}
	// Missing variables: the error names them, never their values.
	t.Setenv(tablestore.EnvAccessKeyID, "")
	if _, err := tablestore.ConfigFromEnv(); err == nil {
		t.Fatal("ConfigFromEnv without an access key id succeeded")
	} else {
		fmt.Fprintf(&out, "config from env: %v\n", err)
	}

	restore()
	text := out.String()
	if p := os.Getenv("BRINE_SECRETS_DUMP"); p != "" {
		_ = os.WriteFile(p, []byte(text), 0o600) // to read what was checked
	}
	if found := leaks(text); len(found) > 0 {
		for _, line := range strings.Split(text, "\n") {
			if len(leaks(line)) > 0 {
				t.Errorf("leak: %.300s", line)
			}
		}
		t.Fatalf("secrets found in the output: %q", found)
	}
	if !strings.Contains(text, fakeKeyID[:4]) || !strings.Contains(text, "failed row") {
		t.Fatalf("the capture missed the output it should hold (%d bytes): the test proves nothing", len(text))
	}
	t.Logf("%d bytes of logs, errors and reports captured, %d failed rows reported; no secret in them", len(text), failed)
}

// TestLeakCheckFindsSecrets: the grep itself finds a secret, whole or cut.
func TestLeakCheckFindsSecrets(t *testing.T) {
	for _, s := range []string{"x" + fakeSecret + "y", "secret=" + fakeSecret[:15] + "***", fakeToken[3:]} {
		if len(leaks(s)) == 0 {
			t.Errorf("leaks(%q) found nothing", s)
		}
	}
	if found := leaks("access_key_secret=*** id=LTAI***"); len(found) != 0 {
		t.Errorf("a redacted line reported as a leak: %q", found)
	}
}
