package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/salting"
)

// spread summarises how many rows each bucket or region received.
type spread struct {
	counts []int64
}

func (s spread) total() int64 {
	var t int64
	for _, c := range s.counts {
		t += c
	}
	return t
}

// maxOverMean is the hotspot factor: 1.0 is a perfect spread, len(counts) means one place got all.
func (s spread) maxOverMean() float64 {
	if len(s.counts) == 0 || s.total() == 0 {
		return 0
	}
	var m int64
	for _, c := range s.counts {
		m = max(m, c)
	}
	return float64(m) / (float64(s.total()) / float64(len(s.counts)))
}

func (s spread) empty() int {
	n := 0
	for _, c := range s.counts {
		if c == 0 {
			n++
		}
	}
	return n
}

// regionOf returns the index of the region holding key, given sorted split keys.
func regionOf(splits [][]byte, key []byte) int {
	return sort.Search(len(splits), func(i int) bool { return bytes.Compare(splits[i], key) > 0 })
}

type analysis struct {
	spec         string
	buckets      spread
	regions      spread
	unsalted     spread
	alternatives []alternative
}

type alternative struct {
	spec string
	skew float64
}

// analyzeKeys places keys with s, counts them per bucket and per pre-split region, and compares with
// the same keys unsalted in a table pre-split at the same boundaries, and with other bucket counts.
func analyzeKeys(keys [][]byte, s salting.Salter, regions int) (analysis, error) {
	a := analysis{spec: s.Spec()}
	splits := s.SplitKeys(regions)
	a.buckets.counts = make([]int64, s.Buckets())
	a.regions.counts = make([]int64, len(splits)+1)
	a.unsalted.counts = make([]int64, len(splits)+1)
	var buf []byte
	for i, k := range keys {
		b, err := s.Bucket(k)
		if err != nil {
			return a, fmt.Errorf("key %d (%q): %w", i+1, k, err)
		}
		if buf, err = s.AppendPhysical(buf[:0], k); err != nil {
			return a, fmt.Errorf("key %d (%q): %w", i+1, k, err)
		}
		a.buckets.counts[b]++
		a.regions.counts[regionOf(splits, buf)]++
		a.unsalted.counts[regionOf(splits, k)]++
	}
	for _, n := range []int{4, 8, 16, 32, 64, 128, 256} {
		alt, err := salting.ParseSpec(fmt.Sprintf("hash:%d", n))
		if err != nil {
			return a, err
		}
		sp := spread{counts: make([]int64, n)}
		for _, k := range keys {
			b, err := alt.Bucket(k)
			if err != nil {
				return a, err
			}
			sp.counts[b]++
		}
		a.alternatives = append(a.alternatives, alternative{alt.Spec(), sp.maxOverMean()})
	}
	return a, nil
}

func (a analysis) print(w io.Writer) {
	fmt.Fprintf(w, "keys: %d   salt: %s\n\n", a.buckets.total(), a.spec)
	fmt.Fprintln(w, "rows per bucket:")
	printBars(w, a.buckets.counts)
	fmt.Fprintf(w, "bucket max/mean %.3f, %d empty of %d\n", a.buckets.maxOverMean(), a.buckets.empty(), len(a.buckets.counts))
	fmt.Fprintf(w, "region max/mean %.3f salted vs %.3f unsalted (same %d regions; %d empty unsalted)\n",
		a.regions.maxOverMean(), a.unsalted.maxOverMean(), len(a.regions.counts), a.unsalted.empty())
	fmt.Fprintln(w, "\nother bucket counts (max/mean, 1.0 is perfect):")
	for _, alt := range a.alternatives {
		fmt.Fprintf(w, "  %-10s %.3f\n", alt.spec, alt.skew)
	}
}

// printBars draws one bar per count, scaled to the largest, at most 64 rows of output.
func printBars(w io.Writer, counts []int64) {
	if len(counts) > 64 {
		fmt.Fprintf(w, "  (%d buckets; showing the first 64)\n", len(counts))
		counts = counts[:64]
	}
	labels := make([]string, len(counts))
	for i := range counts {
		labels[i] = strconv.Itoa(i)
	}
	printLabelledBars(w, labels, counts)
}

// printLabelledBars draws one bar per count, scaled to the largest, after its label.
func printLabelledBars(w io.Writer, labels []string, counts []int64) {
	var top int64
	width := 4
	for i, c := range counts {
		top = max(top, c)
		width = max(width, len(labels[i]))
	}
	for i, c := range counts {
		bar := 0
		if top > 0 {
			bar = int(40 * c / top)
		}
		fmt.Fprintf(w, "  %*s %10d %s\n", width, labels[i], c, strings.Repeat("#", bar))
	}
}

func runAnalyze(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "analyze")
	salt := fs.String("salt", "hash:16", "salting spec to evaluate")
	regions := fs.Int("regions", 0, "regions to group buckets into (0: one per bucket)")
	hexKeys := fs.Bool("hex", false, "keys are hex, one per line")
	store := fs.String("store", "", "hbase://... : analyze TABLE's live load per bucket and server instead of keys")
	svg := fs.String("svg", "", "with --store: also draw the load as an SVG picture in this file")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *store != "" {
		if len(pos) != 1 {
			return fmt.Errorf("usage: brine analyze --store hbase://ZK TABLE [--svg FILE] (got %q)", pos)
		}
		return runAnalyzeLive(ctx, env, *store, pos[0], *svg)
	}
	if len(pos) > 1 {
		return fmt.Errorf("usage: brine analyze [flags] [FILE] (one file, got %q)", pos)
	}
	if *regions < 0 {
		return fmt.Errorf("--regions %d: want 0 or more", *regions)
	}
	s, err := salting.ParseSpec(*salt)
	if err != nil {
		return err
	}
	in := env.stdin
	if len(pos) == 1 && pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	var keys [][]byte
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" {
			continue
		}
		k := []byte(text)
		if *hexKeys {
			if k, err = hex.DecodeString(text); err != nil {
				return fmt.Errorf("line %d: not hex: %w", line, err)
			}
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading keys: %w", err)
	}
	if len(keys) == 0 {
		return errors.New("no keys to analyze")
	}
	rep, err := analyzeKeys(keys, s, *regions)
	if err != nil {
		return err
	}
	rep.print(env.stdout)
	return nil
}
