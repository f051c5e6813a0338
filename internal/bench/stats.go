package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 < p <= 100) of samples by the nearest-rank method: the
// smallest sample at or above which p% of the samples lie. It is 0 for no samples. samples is not
// modified.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Median returns the median of xs (the mean of the two middle values for an even count), 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianDuration is Median for durations.
func MedianDuration(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(Median(xs))
}

// Ratio returns a/b, or 0 when b is 0: every figure in a report must survive JSON, which has no NaN
// or infinity.
func Ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return 0
	}
	return a / b
}

// MaxOverMean is how uneven counts are: the largest over the mean, 1.0 when perfectly even and
// len(counts) when one holds everything; 0 when there is nothing.
func MaxOverMean(counts []int64) float64 {
	var sum, top int64
	for _, c := range counts {
		sum += c
		top = max(top, c)
	}
	if sum == 0 {
		return 0
	}
	return Ratio(float64(top), float64(sum)/float64(len(counts)))
}

// RowsPerSecond is rows over elapsed, 0 when no time passed.
func RowsPerSecond(rows int64, elapsed time.Duration) float64 {
	return Ratio(float64(rows), elapsed.Seconds())
}
