// Package jsonconv is the convention of the JSON that oplab's pages
// receive (docs/api.md): keys in camelCase; durations as whole
// milliseconds in keys that end in Ms; instants as RFC 3339 strings; ids
// as strings. A view's duration is a Duration, which writes itself in
// milliseconds; Check tells a type that does not keep the convention.
//
// The same holds for what `oplab ... -o json` writes. Records that only
// the store reads back (a session's working state, the details of its
// timeline's events) are not views: they keep the keys their rows were
// written with (a step's elapsedNs). A record that is shown as it is, such
// as the engine's Report, is a view.
package jsonconv

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Duration is a duration as a view holds it: a time.Duration that JSON
// carries as whole milliseconds (rounded to the nearest), under a key
// ending in Ms, and reads back from them. It is the one way a duration
// crosses to a browser or to `oplab -o json`: no view type needs a
// MarshalJSON of its own for its durations, so one embedded in another
// struct is written whole.
type Duration time.Duration

// Millis is d to the millisecond: the value its JSON will carry, for a
// view whose Go readers (a terminal) should see what a browser sees.
func Millis(d time.Duration) Duration { return Duration(d.Round(time.Millisecond)) }

// Duration returns d as a time.Duration.
func (d Duration) Duration() time.Duration { return time.Duration(d) }

// String is the time.Duration's.
func (d Duration) String() string { return time.Duration(d).String() }

// Milliseconds is d in whole milliseconds, rounded to the nearest: the
// number its JSON carries.
func (d Duration) Milliseconds() int64 {
	return int64(time.Duration(d).Round(time.Millisecond) / time.Millisecond)
}

// MarshalJSON writes d in whole milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, d.Milliseconds(), 10), nil
}

// UnmarshalJSON reads whole milliseconds (a stored view, a request such
// as {"byMs": 900000}); null leaves d as it is.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var ms int64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("a duration in whole milliseconds: %w", err)
	}
	*d = Duration(time.Duration(ms) * time.Millisecond)
	return nil
}
