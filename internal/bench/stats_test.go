package bench

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond // descending: Percentile must sort
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample", ms(7), 99, 7 * time.Millisecond},
		{"p50 odd", ms(5, 1, 3), 50, 3 * time.Millisecond},
		{"p50 even takes the lower middle", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p100 is the max", hundred, 100, 100 * time.Millisecond},
		{"p50 of 100", hundred, 50, 50 * time.Millisecond},
		{"tiny p is the min", hundred, 0.1, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]time.Duration(nil), tt.samples...)
			if got := Percentile(tt.samples, tt.p); got != tt.want {
				t.Errorf("Percentile(p%v) = %v, want %v", tt.p, got, tt.want)
			}
			for i := range before {
				if before[i] != tt.samples[i] {
					t.Fatalf("Percentile reordered its input")
				}
			}
		})
	}
}

func TestMedianRatioSpread(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"median odd", Median([]float64{3, 1, 2}), 2},
		{"median even", Median([]float64{4, 1, 3, 2}), 2.5},
		{"median empty", Median(nil), 0},
		{"median duration", float64(MedianDuration([]time.Duration{3, 1, 2})), 2},
		{"ratio", Ratio(3, 2), 1.5},
		{"ratio by zero", Ratio(3, 0), 0},
		{"ratio of NaN", Ratio(math.NaN(), 2), 0},
		{"even spread", MaxOverMean([]int64{5, 5, 5, 5}), 1},
		{"one hot region", MaxOverMean([]int64{0, 12, 0, 0}), 4},
		{"uneven", MaxOverMean([]int64{1, 3}), 1.5},
		{"nothing", MaxOverMean([]int64{0, 0}), 0},
		{"rows per second", RowsPerSecond(500, 250*time.Millisecond), 2000},
		{"rows per no time", RowsPerSecond(500, 0), 0},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > 1e-9 {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
