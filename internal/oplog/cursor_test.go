package oplog

import (
	"testing"
	"time"
)

// TestCursorSortsAsTime: cursors of growing times grow in string order,
// whatever their zones and however many digits their fractions have, and
// a line without a time has none.
func TestCursorSortsAsTime(t *testing.T) {
	base := time.Date(2026, 12, 2, 23, 59, 59, 0, time.UTC)
	seoul := time.FixedZone("KST", 9*3600)
	times := []time.Time{
		base,
		base.Add(5 * time.Nanosecond),
		base.Add(123456789 * time.Nanosecond).In(seoul),
		base.Add(500 * time.Millisecond),
		base.Add(time.Second).In(seoul), // the next day in Seoul
		base.Add(11 * time.Second),
	}
	for i := 1; i < len(times); i++ {
		a, b := Cursor(Line{Time: times[i-1]}), Cursor(Line{Time: times[i]})
		if !(a < b) {
			t.Errorf("cursor of %v is %q, of the later %v %q: want it to sort after", times[i-1], a, times[i], b)
		}
	}
	if c := Cursor(Line{Text: "no time"}); c != "" {
		t.Errorf("a line without a time: got cursor %q, want none", c)
	}
}
