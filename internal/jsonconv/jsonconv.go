// Package jsonconv is the convention of the JSON that oplab's pages
// receive (docs/api.md): keys in camelCase; durations as whole
// milliseconds in keys that end in Ms; instants as RFC 3339 strings; ids
// as strings. View types keep their durations as time.Duration and write
// them with Millis at the JSON edge; Check tells a type that does not.
package jsonconv

import (
	"time"
)

// Millis is d in whole milliseconds, rounded to the nearest: how a
// duration goes to a browser.
func Millis(d time.Duration) int64 { return int64(d.Round(time.Millisecond) / time.Millisecond) }

// MillisList is Millis of each of ds; nil when ds is empty, so that an
// omitempty key stays out.
func MillisList(ds []time.Duration) []int64 {
	if len(ds) == 0 {
		return nil
	}
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = Millis(d)
	}
	return out
}
