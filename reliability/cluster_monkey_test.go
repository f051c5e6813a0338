//go:build integration

package reliability_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// monkey is the chaos loop of TestClusterChaos, after HBase's ChaosMonkey: at random, every few
// seconds, one of kill -9 (and restart) a region server, stop one gracefully (and restart), move a
// region to another server, split a region, merge two adjacent regions, flush, major-compact, or run
// the balancer; and at fixed points of every run the faults of cluster_pause_test.go: a short and a
// long pause of a region server, a restart of the master. At most one server is down at a time. An
// operation HBase refuses (a merge of a region that still has reference files, a move of a region in
// transition) is counted, not fatal: the point is what the clients see, and ChaosMonkey's actions
// fail the same way.
type monkey struct {
	t       *testing.T
	cl      *hbasetest.Cluster
	sess    *hbasetest.Session
	table   string   // the salted brine table
	tables  []string // every table to flush and compact (the control's too)
	rnd     *rand.Rand
	mu      sync.Mutex
	counts  map[string]int
	refused map[string]int
	crossed int // merges across a bucket boundary
	faults  faultStats
}

func newMonkey(t *testing.T, cl *hbasetest.Cluster, sess *hbasetest.Session, table string, more ...string) *monkey {
	seed := uint64(time.Now().UnixNano())
	t.Logf("chaos seed %d", seed)
	return &monkey{
		t: t, cl: cl, sess: sess, table: table, tables: append([]string{table}, more...),
		rnd: rand.New(rand.NewPCG(seed, 3)), counts: map[string]int{}, refused: map[string]int{},
	}
}

// monkeyActions is one deck of actions: run shuffles it, plays it through, and shuffles again, so
// every kind of action happens in every run long enough for one deck (about a minute).
var monkeyActions = []string{"kill", "kill", "stop", "move", "move", "split", "merge", "flush", "compact", "balance"}

// run acts until d has passed and at least one whole deck has been played: the faults of
// faultSchedule when their time has come, the deck's actions between them (the faults take about
// two minutes of a run of 2m, which alone would leave the deck a few actions); a fault a short run
// did not reach happens after it.
func (m *monkey) run(ctx context.Context, d time.Duration) {
	began := time.Now()
	sched := faultSchedule(d)
	var deck []string
	dealt := 0
	played := func() bool { return dealt > 1 || (dealt == 1 && len(deck) == 0) } // the first deck
	for (time.Since(began) < d || !played()) && ctx.Err() == nil {
		var act string
		if len(sched) > 0 && time.Since(began) >= sched[0].at {
			act, sched = sched[0].act, sched[1:]
		} else {
			if len(deck) == 0 {
				deck = slices.Clone(monkeyActions)
				m.rnd.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
				dealt++
			}
			act, deck = deck[0], deck[1:]
		}
		m.play(ctx, act)
		time.Sleep(time.Duration(1000+m.rnd.IntN(3000)) * time.Millisecond)
	}
	for _, f := range monkeyFaults {
		for try := 0; try < 3 && m.done(f.act) == 0 && ctx.Err() == nil; try++ {
			m.play(ctx, f.act)
		}
	}
}

// play does one action and counts it, done or refused.
func (m *monkey) play(ctx context.Context, act string) {
	timeout := 3 * time.Minute
	if isFault(act) {
		timeout = 10 * time.Minute // a long pause waits for the whole cluster before, and twice after
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	err := m.do(actx, act)
	cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.refused[act]++
		m.t.Logf("chaos: %s refused: %v", act, err)
	} else {
		m.counts[act]++
	}
}

func (m *monkey) done(act string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[act]
}

func (m *monkey) do(ctx context.Context, act string) error {
	n := 1 + m.rnd.IntN(m.cl.RegionServers())
	switch act {
	case "kill", "stop":
		var err error
		if act == "kill" {
			err = m.cl.KillRS(ctx, n)
		} else {
			err = m.cl.StopRS(ctx, n)
		}
		if err != nil {
			m.t.Fatalf("chaos: %s rs%d: %v", act, n, err) // the cluster script itself failed
		}
		time.Sleep(time.Duration(1000+m.rnd.IntN(3000)) * time.Millisecond)
		if err := m.cl.StartRS(ctx, n); err != nil {
			m.t.Fatalf("chaos: restarting rs%d: %v", n, err)
		}
		return nil
	case "move":
		locs, servers, err := m.placement(ctx)
		if err != nil {
			return err
		}
		r := locs[m.rnd.IntN(len(locs))]
		others := slices.DeleteFunc(servers, func(s string) bool { return hbasetest.HostPort(s) == hbasetest.HostPort(r.Server) })
		if len(others) == 0 {
			return fmt.Errorf("no other server than %s", r.Server)
		}
		return m.sess.MoveTo(ctx, m.table, regionKey(r.Start), hbasetest.HostPort(others[m.rnd.IntN(len(others))]))
	case "split":
		locs, _, err := m.placement(ctx)
		if err != nil {
			return err
		}
		i := m.rnd.IntN(len(locs))
		var next []byte
		if i+1 < len(locs) {
			next = locs[i+1].Start
		}
		for range 20 {
			// A physical key inside the region: its bucket byte and a logical key of the workloads.
			bucket := byte(0)
			if len(locs[i].Start) > 0 {
				bucket = locs[i].Start[0]
			}
			kinds := []string{"base", "imp", "put0-", "put1-", "put2-"}
			k := append([]byte{bucket}, chaosKey(kinds[m.rnd.IntN(len(kinds))], m.rnd.IntN(200_000))...)
			if bytes.Compare(k, locs[i].Start) > 0 && (next == nil || bytes.Compare(k, next) < 0) {
				return m.sess.Split(ctx, m.table, k)
			}
		}
		return fmt.Errorf("no split key found inside region %q", locs[i].Start)
	case "merge":
		locs, _, err := m.placement(ctx)
		if err != nil {
			return err
		}
		if len(locs) < 2 {
			return fmt.Errorf("only %d region", len(locs))
		}
		i := m.rnd.IntN(len(locs) - 1)
		if err := m.sess.Merge(ctx, m.table, regionKey(locs[i].Start)); err != nil {
			return err
		}
		if bucketOf(locs[i].Start) != bucketOf(locs[i+1].Start) {
			m.crossed++
		}
		return nil
	case "flush":
		for _, tb := range m.tables {
			if err := m.sess.Flush(ctx, tb); err != nil {
				return err
			}
		}
		return nil
	case "compact":
		return m.sess.MajorCompact(ctx, m.tables[m.rnd.IntN(len(m.tables))])
	case "balance":
		_, err := m.sess.Balance(ctx)
		return err
	case "pause", "longpause":
		return m.pause(ctx, act == "longpause")
	case "master":
		return m.restartMaster(ctx)
	}
	return fmt.Errorf("unknown action %q", act)
}

// regionKey is a key inside the region that starts at start (the first region starts at "").
func regionKey(start []byte) []byte {
	if len(start) == 0 {
		return []byte{0}
	}
	return start
}

func bucketOf(start []byte) int {
	if len(start) == 0 {
		return 0
	}
	return int(start[0])
}

// placement is the table's online regions and the live servers.
func (m *monkey) placement(ctx context.Context) ([]hbasetest.RegionLoc, []string, error) {
	locs, err := m.sess.Locate(ctx, m.table)
	if err != nil {
		return nil, nil, err
	}
	if len(locs) == 0 {
		return nil, nil, fmt.Errorf("no online region")
	}
	servers, err := m.sess.Servers(ctx)
	return locs, servers, err
}

// heal makes sure every region server runs and every region of the table is online on one of them.
func (m *monkey) heal(ctx context.Context) error {
	for n := 1; n <= m.cl.RegionServers(); n++ {
		if err := m.cl.StartRS(ctx, n); err != nil { // a no-op for a running one
			return err
		}
	}
	return m.healthy(ctx)
}

// healthy waits until every region server is live and every region of the table online on one.
func (m *monkey) healthy(ctx context.Context) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		locs, servers, err := m.placement(ctx)
		if err == nil && len(servers) == m.cl.RegionServers() {
			online := 0
			for _, l := range locs {
				if l.Server != "-" && slices.Contains(servers, l.Server) {
					online++
				}
			}
			if online == len(locs) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("regions not all online after 3 minutes: %v", err)
		}
		time.Sleep(time.Second)
	}
}

func (m *monkey) print() {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Printf("kills: %d\n", m.counts["kill"])
	fmt.Printf("graceful stops: %d\n", m.counts["stop"])
	fmt.Printf("moves: %d\n", m.counts["move"])
	fmt.Printf("splits: %d\n", m.counts["split"])
	fmt.Printf("merges: %d (%d across a bucket boundary)\n", m.counts["merge"], m.crossed)
	fmt.Printf("flushes: %d\n", m.counts["flush"])
	fmt.Printf("major compactions: %d\n", m.counts["compact"])
	fmt.Printf("balancer runs: %d\n", m.counts["balance"])
	m.printFaults()
	refused := 0
	for _, n := range m.refused {
		refused += n
	}
	fmt.Printf("actions HBase refused: %d %v\n", refused, m.refused)
}

// control is the raw-gohbase writer of TestClusterChaos: an unsalted table written by plain gohbase
// Puts under the same kills. If it loses an acknowledged row, the cluster's setup (WAL, file system)
// is wrong, not brine.
type control struct {
	t      *testing.T
	client gohbase.Client
	table  string
	mu     sync.Mutex
	acked  [][]byte
	at     []time.Time // when each acked row was acknowledged: the evidence if one is lost
}

func newControl(t *testing.T, zk string) *control {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &control{t: t, client: gohbase.NewClient(zk), table: hbasetest.Table("brine_chaos_control")}
	admin := gohbase.NewAdminClient(zk)
	var splits [][]byte
	for i := 1; i < 6; i++ {
		splits = append(splits, fmt.Appendf(nil, "c%d", i))
	}
	create := hrpc.NewCreateTable(ctx, []byte(c.table), map[string]map[string]string{"d": nil}, hrpc.SplitKeys(splits))
	if err := admin.CreateTable(create); err != nil {
		t.Fatalf("control: CreateTable(%s): %v", c.table, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := admin.DisableTable(hrpc.NewDisableTable(ctx, []byte(c.table))); err != nil {
			t.Errorf("control: DisableTable: %v", err)
		}
		if err := admin.DeleteTable(hrpc.NewDeleteTable(ctx, []byte(c.table))); err != nil {
			t.Errorf("control: DeleteTable: %v", err)
		}
		c.client.Close()
	})
	return c
}

// write runs 6 writers of keys c<w>-<seq> until ctx ends; a Put that returned nil is acknowledged.
func (c *control) write(ctx context.Context) {
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ctx.Err() == nil; seq++ {
				k := fmt.Appendf(nil, "c%d-%08d", w, seq)
				pctx, cancel := context.WithTimeout(ctx, 90*time.Second)
				put, err := hrpc.NewPutStr(pctx, c.table, string(k), map[string]map[string][]byte{"d": {"q": value(k)}})
				if err == nil {
					_, err = c.client.Put(put)
				}
				cancel()
				if err == nil {
					c.mu.Lock()
					c.acked = append(c.acked, k)
					c.at = append(c.at, time.Now())
					c.mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
}

// verify scans the control table and returns how many acknowledged rows are missing or wrong, and how
// many of those were acknowledged in an unfenced window (zombie: acknowledged at that time).
func (c *control) verify(ctx context.Context, t *testing.T, zombie func(time.Time) bool) (lost, unfenced, acked int) {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	sc, err := hrpc.NewScanStr(sctx, c.table)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	scanner := c.client.Scan(sc)
	for res, err := range testkit.Seq(scanner.Next, scanner.Close) {
		if err != nil {
			t.Fatalf("control: scan: %v", err)
		}
		for _, cell := range res.Cells {
			stored[string(cell.Row)] = bytes.Equal(cell.Value, value(cell.Row))
		}
	}
	for i, k := range c.acked {
		if !stored[string(k)] {
			lost++
			in := zombie(c.at[i])
			if in {
				unfenced++
			}
			if lost <= 20 {
				t.Logf("control: lost %s, acknowledged at %s (in an unfenced window: %v)", k, c.at[i].Format("15:04:05.000"), in)
			}
		}
	}
	return lost, unfenced, len(c.acked)
}
