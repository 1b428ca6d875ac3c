package jsonconv

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// good keeps the convention: a duration converted at the JSON edge by a
// MarshalJSON that shadows the field's key.
type good struct {
	ID         string          `json:"id"`
	LabID      string          `json:"labId"`
	Seq        int64           `json:"seq"`
	Took       time.Duration   `json:"tookMs"`
	Recoveries []time.Duration `json:"recoveriesMs,omitempty"`
	Created    time.Time       `json:"created"`
	Inner      inner           `json:"inner"`
	Counts     map[string]int  `json:"counts,omitempty"` // keys are data
	Embedded
}

func (g good) MarshalJSON() ([]byte, error) {
	type plain good
	return json.Marshal(struct {
		plain
		Took       int64   `json:"tookMs"`
		Recoveries []int64 `json:"recoveriesMs,omitempty"`
	}{plain(g), Millis(g.Took), MillisList(g.Recoveries)})
}

type inner struct {
	ElapsedMs int64 `json:"elapsedMs"`
}

type Embedded struct {
	Note string `json:"note,omitempty"`
}

// written writes another struct: its fields need no tags, and its JSON
// is what is checked.
type written struct {
	Took time.Duration
	Next time.Duration
	Idle bool
}

func (w written) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TookMs int64 `json:"tookMs"`
		NextMs int64 `json:"nextMs,omitempty"`
		Idle   bool  `json:"idle"`
	}{Millis(w.Took), Millis(w.Next), w.Idle})
}

// The types below each break the convention once.
type (
	goName struct {
		Name string
	}
	bareDuration struct {
		Timeout time.Duration
	}
	nanos struct {
		Took time.Duration `json:"tookNs"`
	}
	notConverted struct {
		Took time.Duration `json:"tookMs"`
	}
	floatMillis struct {
		Took float64 `json:"tookMs"`
	}
	numericID struct {
		ID int `json:"id"`
	}
	unixTime struct {
		At time.Time `json:"at"`
	}
	deep struct {
		Rows []*row `json:"rows"`
	}
	row struct {
		Cells map[string]cell `json:"cells"`
	}
	cell struct {
		Recovery time.Duration `json:"recoveryNs,omitempty"`
	}
	pointerMarshaler struct {
		Took time.Duration `json:"tookMs"`
	}
	outer struct {
		In pointerMarshaler `json:"in"`
	}
	snake struct {
		Started time.Time `json:"started_at"`
	}
	// forgot adds a duration its MarshalJSON does not write.
	forgot struct {
		Took time.Duration
		Wait time.Duration
	}
	// writtenNs writes its duration in nanoseconds.
	writtenNs struct {
		Took time.Duration
	}
)

func (f forgot) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TookMs int64 `json:"tookMs"`
	}{Millis(f.Took)})
}

func (w writtenNs) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TookNs int64 `json:"tookNs"`
	}{w.Took.Nanoseconds()})
}

// MarshalJSON writes the instant as seconds since 1970.
func (u unixTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		At int64 `json:"at"`
	}{u.At.Unix()})
}

// MarshalJSON on the pointer only: a field holding the value is written
// without it.
func (p *pointerMarshaler) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Took int64 `json:"tookMs"`
	}{Millis(p.Took)})
}

func TestCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		v    any
		want []string // a substring of each error, in order
	}{
		{"keeps the convention", good{}, nil},
		{"a pointer to a list of it", &[]good{}, nil},
		{"its MarshalJSON writes another struct", written{}, nil},
		{"a Go field name", goName{}, []string{`goName.Name: key "Name" is not camelCase`, `key "Name" is not camelCase`}},
		{"a bare duration", bareDuration{}, []string{`key "Timeout" is not camelCase`, `key "Timeout" holds a time.Duration`,
			`key "Timeout" is not camelCase`, `key "Timeout" is written as 1234567800`}},
		{"nanoseconds", nanos{}, []string{`key "tookNs" is in nanoseconds`, `key "tookNs" holds a time.Duration`,
			`key "tookNs" is in nanoseconds`, `key "tookNs" is written as 1234567800`}},
		{"named Ms, written in ns", notConverted{}, []string{`key "tookMs" is written as 1234567800`}},
		{"Ms that are not whole", floatMillis{}, []string{`key "tookMs" ends in Ms but holds float64`}},
		{"a numeric id", numericID{}, []string{`key "id" is an id but holds int`}},
		{"an instant as a number", unixTime{}, []string{`key "at" is written as 1767323045`}},
		{"deep inside lists and maps", deep{}, []string{`jsonconv.cell.Recovery: key "recoveryNs" is in nanoseconds`,
			`holds a time.Duration`, `is in nanoseconds`, `is written as 1234567800`}},
		{"a pointer-receiver MarshalJSON", outer{}, []string{`pointerMarshaler.Took: key "tookMs" is written as 1234567800`}},
		{"snake case", snake{}, []string{`key "started_at" is not camelCase`, `key "started_at" is not camelCase`}},
		{"a duration its MarshalJSON forgets", forgot{}, []string{`2 durations (jsonconv.forgot.Took, jsonconv.forgot.Wait) but 1 keys ending in Ms`}},
		{"a MarshalJSON that writes ns", writtenNs{}, []string{`key "tookNs" is in nanoseconds`, `1 durations (jsonconv.writtenNs.Took) but 0 keys`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := Check(tc.v)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d %q", len(errs), errs, len(tc.want), tc.want)
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tc.want[i]) {
					t.Errorf("error %d: got %q, want it to say %q", i, err, tc.want[i])
				}
			}
		})
	}
}

func TestMillis(t *testing.T) {
	t.Parallel()
	cases := []struct {
		d    time.Duration
		want int64
	}{
		{0, 0},
		{1500 * time.Microsecond, 2},
		{1499 * time.Microsecond, 1},
		{10 * time.Minute, 600000},
		{SampleDuration, SampleMillis},
		{-1500 * time.Microsecond, -2},
	}
	for _, tc := range cases {
		if got := Millis(tc.d); got != tc.want {
			t.Errorf("Millis(%v): got %d, want %d", tc.d, got, tc.want)
		}
	}
	if got := MillisList(nil); got != nil {
		t.Errorf("MillisList(nil): got %v, want nil", got)
	}
	if got := MillisList([]time.Duration{time.Second, SampleDuration}); len(got) != 2 || got[0] != 1000 || got[1] != SampleMillis {
		t.Errorf("MillisList: got %v, want [1000 %d]", got, SampleMillis)
	}
}
