package tablestore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"google.golang.org/protobuf/protoadapt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestRowFaultsRetried(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, func(c *Config) {
		c.RowAttempts = 20
		c.RetryBaseDelay = time.Millisecond
		c.RetryMaxDelay = 5 * time.Millisecond
	})
	tbl := table(t, b, backends.TableOptions{})
	for _, code := range []string{tablestoretest.CodeServerBusy, tablestoretest.CodePartitionUnavailable} {
		t.Run(code, func(t *testing.T) {
			muts := puts(450, ts(), code)
			srv.ResetStats()
			srv.FailRowsRandomly(7, 0.3, code)
			defer srv.ClearFaults()
			testkit.Apply(t, t.Context(), b, tbl, muts...)
			st := srv.Stats()["BatchWriteRow"]
			if st.RowErrors == 0 || st.RowsWritten != len(muts) {
				t.Fatalf("%d row errors, %d rows written; want some errors and each of %d rows written once", st.RowErrors, st.RowsWritten, len(muts))
			}
			checkAll(t, b, tbl, muts) // the read batches meet faults too
			if st := srv.Stats()["BatchGetRow"]; st.RowErrors == 0 {
				t.Errorf("no read row was failed: the read path went untested")
			}
		})
	}
}

func TestRowFaultOutcomes(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, func(c *Config) { c.RowAttempts = 3; c.RetryBaseDelay = time.Millisecond })
	tbl := table(t, b, backends.TableOptions{})
	tests := []struct {
		name      string
		code      string
		stamped   bool // cells carry timestamps (idempotent put)
		requests  int  // BatchWriteRow requests the Apply makes
		sentinel  error
		retryable bool
	}{
		{"not retryable", tablestoretest.CodeConditionCheckFail, true, 1, nil, false},
		{"invalid argument", tablestoretest.CodeParameterInvalid, true, 1, backends.ErrInvalidArgument, false},
		{"busy beyond the attempts", tablestoretest.CodeServerBusy, true, 3, nil, true},
		{"timeout, idempotent put: retried", tablestoretest.CodeTimeout, true, 3, nil, true},
		{"timeout, server-stamped put: not retried", tablestoretest.CodeTimeout, false, 1, nil, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			muts := puts(3, ts(), fmt.Sprintf("o%d", i))
			if !tt.stamped {
				muts[1].Cells[0].Timestamp = 0
			}
			srv.ResetStats()
			srv.InjectRowErrors(func(op, _ string, index int) *tablestoretest.Fault {
				if op == "BatchWriteRow" && index == 1 && srv.Stats()["BatchWriteRow"].RowErrors < 100 {
					// Row 1 of the first request, then the only row of every retry.
					return &tablestoretest.Fault{Code: tt.code}
				}
				if op == "BatchWriteRow" && index == 0 && srv.Stats()["BatchWriteRow"].Requests > 1 {
					return &tablestoretest.Fault{Code: tt.code}
				}
				return nil
			})
			defer srv.ClearFaults()
			rowErrs, err := b.Apply(t.Context(), tbl, muts)
			if err != nil || len(rowErrs) != 3 || rowErrs[0] != nil || rowErrs[2] != nil || rowErrs[1] == nil {
				t.Fatalf("Apply = %v, %v; want an error for row 1 only", rowErrs, err)
			}
			var oe *ots.OtsError
			if !errors.As(rowErrs[1], &oe) || oe.Code != tt.code {
				t.Errorf("row error %v does not carry code %s", rowErrs[1], tt.code)
			}
			if tt.sentinel != nil && !errors.Is(rowErrs[1], tt.sentinel) {
				t.Errorf("row error %v does not wrap %v", rowErrs[1], tt.sentinel)
			}
			if driverkit.IsRetryable(rowErrs[1]) != tt.retryable {
				t.Errorf("row error %v: retryable %v, want %v", rowErrs[1], !tt.retryable, tt.retryable)
			}
			if got := srv.Stats()["BatchWriteRow"].Requests; got != tt.requests {
				t.Errorf("%d BatchWriteRow requests, want %d", got, tt.requests)
			}
		})
	}
}

func TestRequestFaults(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	t.Run("retried by the SDK", func(t *testing.T) {
		b := te.open(t, nil)
		tbl := table(t, b, backends.TableOptions{})
		muts := puts(10, ts(), "r")
		srv.ResetStats()
		srv.FailNext("BatchWriteRow", tablestoretest.CodeServerBusy, 2)
		testkit.Apply(t, t.Context(), b, tbl, muts...)
		if st := srv.Stats()["BatchWriteRow"]; st.Requests != 3 || st.RowsWritten != len(muts) {
			t.Errorf("%d requests writing %d rows, want 3 writing %d: the SDK retries, brine adds none", st.Requests, st.RowsWritten, len(muts))
		}
	})
	t.Run("lost response: the resent put writes the same version", func(t *testing.T) {
		b := te.open(t, func(c *Config) { c.MaxVersions = 5 })
		tbl := table(t, b, backends.TableOptions{})
		muts := puts(3, ts(), "lost")
		var faulted bool
		srv.InjectErrors(func(op string, _ protoadapt.MessageV1) *tablestoretest.Fault {
			if op == "BatchWriteRow" && !faulted {
				faulted = true
				return &tablestoretest.Fault{Code: tablestoretest.CodeServerBusy, AfterApply: true}
			}
			return nil
		})
		defer srv.ClearFaults()
		testkit.Apply(t, t.Context(), b, tbl, muts...)
		pk := new(ots.PrimaryKey)
		pk.AddPrimaryKeyColumn(defaultKeyColumn, muts[0].Key)
		resp, err := b.Client().GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{
			TableName: tbl, PrimaryKey: pk, MaxVersion: 5,
		}})
		if err != nil || len(resp.Columns) != 1 {
			t.Fatalf("GetRow of all versions: %v columns, %v; want one version", resp, err)
		}
	})
	t.Run("given up: retryable whole-call error", func(t *testing.T) {
		// One batch at a time, so that the first failure stops the rest before they are sent.
		b := te.open(t, func(c *Config) { c.SDKRetryTimes = -1; c.Concurrency = 1 })
		tbl := table(t, b, backends.TableOptions{})
		srv.ResetStats()
		srv.FailNext("BatchWriteRow", tablestoretest.CodePartitionUnavailable, 1)
		rowErrs, err := b.Apply(t.Context(), tbl, puts(450, ts(), "g"))
		if !driverkit.IsRetryable(err) || rowErrs != nil {
			t.Fatalf("Apply = %d row errors, %v; want a retryable err and no row errors", len(rowErrs), err)
		}
		if st := srv.Stats()["BatchWriteRow"]; st.Requests != 1 || st.RowsWritten != 0 {
			t.Errorf("%d requests writing %d rows: the batches after a failed one must not be sent", st.Requests, st.RowsWritten)
		}
	})
	t.Run("scan page fault", func(t *testing.T) {
		b := te.open(t, func(c *Config) { c.SDKRetryTimes = -1 })
		tbl := table(t, b, backends.TableOptions{})
		testkit.Apply(t, t.Context(), b, tbl, puts(30, ts(), "s")...)
		srv.FailNext("GetRange", tablestoretest.CodeServerBusy, 1)
		var n int
		var last error
		for _, err := range b.Scan(t.Context(), tbl, backends.Range{}, backends.ScanOptions{}) {
			if err != nil {
				last = err
				continue
			}
			n++
		}
		if n != 0 || !driverkit.IsRetryable(last) {
			t.Fatalf("scan = %d rows, %v; want a retryable error", n, last)
		}
	})
}

func TestRetryStopsWithContext(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, func(c *Config) {
		c.RowAttempts = 1000
		c.RetryBaseDelay, c.RetryMaxDelay = 50*time.Millisecond, 50*time.Millisecond
	})
	tbl := table(t, b, backends.TableOptions{})
	srv.FailRowsRandomly(1, 1, tablestoretest.CodeServerBusy)
	defer srv.ClearFaults()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	rowErrs, err := b.Apply(ctx, tbl, puts(5, ts(), "c"))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Apply took %v after its context ended", d)
	}
	if err == nil && rowErrs == nil {
		t.Fatal("Apply succeeded while every row failed")
	}
	if err == nil && !errors.Is(rowErrs[0], context.DeadlineExceeded) {
		t.Errorf("row error %v does not say the context ended", rowErrs[0])
	}
}
