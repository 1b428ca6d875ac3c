package jsonconv

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// good keeps the convention: its durations write themselves in whole
// milliseconds.
type good struct {
	ID         string         `json:"id"`
	LabID      string         `json:"labId"`
	Seq        int64          `json:"seq"`
	Took       Duration       `json:"tookMs"`
	Recoveries []Duration     `json:"recoveriesMs,omitempty"`
	Created    time.Time      `json:"created"`
	Inner      inner          `json:"inner"`
	Counts     map[string]int `json:"counts,omitempty"` // keys are data
	Embedded
}

type inner struct {
	ElapsedMs int64 `json:"elapsedMs"`
}

type Embedded struct {
	Note string `json:"note,omitempty"`
}

// written writes another struct (for its own reasons): its fields need
// no tags, and its JSON is what is checked.
type written struct {
	Took Duration
	Next Duration
	Idle bool
}

func (w written) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TookMs Duration `json:"tookMs"`
		NextMs Duration `json:"nextMs,omitempty"`
		Idle   bool     `json:"idle"`
	}{w.Took, w.Next, w.Idle})
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
		Took Duration `json:"tookNs"`
	}
	notConverted struct {
		Took time.Duration `json:"tookMs"`
	}
	// converted writes its time.Duration in milliseconds itself: the
	// rule is one type, not each type's own MarshalJSON.
	converted struct {
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
		Recovery Duration `json:"recoveryNs,omitempty"`
	}
	pointerMarshaler struct {
		Took Duration
	}
	outer struct {
		In pointerMarshaler `json:"in"`
	}
	snake struct {
		Started time.Time `json:"started_at"`
	}
	// forgot adds a duration its MarshalJSON does not write.
	forgot struct {
		Took Duration
		Wait Duration
	}
	// writtenNs writes its duration in nanoseconds.
	writtenNs struct {
		Took Duration
	}
)

func (c converted) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Took int64 `json:"tookMs"`
	}{c.Took.Milliseconds()})
}

func (f forgot) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TookMs Duration `json:"tookMs"`
	}{f.Took})
}

func (w writtenNs) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TookNs int64 `json:"tookNs"`
	}{w.Took.Duration().Nanoseconds()})
}

// MarshalJSON writes the instant as seconds since 1970.
func (u unixTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		At int64 `json:"at"`
	}{u.At.Unix()})
}

// MarshalJSON on the pointer only: a field holding the value is written
// without it, under the Go name.
func (p *pointerMarshaler) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Took Duration `json:"tookMs"`
	}{p.Took})
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
		{"a bare duration", bareDuration{}, []string{`bareDuration.Timeout: holds a time.Duration, which JSON writes in nanoseconds`,
			`key "Timeout" is not camelCase`}},
		{"nanoseconds", nanos{}, []string{`key "tookNs" is in nanoseconds`, `key "tookNs" holds a duration: name it ...Ms`,
			`key "tookNs" is in nanoseconds`}},
		{"named Ms, written in ns", notConverted{}, []string{`notConverted.Took: holds a time.Duration`}},
		{"a time.Duration its MarshalJSON converts", converted{}, []string{`converted.Took: holds a time.Duration`}},
		{"Ms that are not whole", floatMillis{}, []string{`key "tookMs" ends in Ms but holds float64`}},
		{"a numeric id", numericID{}, []string{`key "id" is an id but holds int`}},
		{"an instant as a number", unixTime{}, []string{`key "at" is written as 1767323045`}},
		{"deep inside lists and maps", deep{}, []string{`jsonconv.cell.Recovery: key "recoveryNs" is in nanoseconds`,
			`holds a duration: name it ...Ms`, `is in nanoseconds`}},
		{"a pointer-receiver MarshalJSON", outer{}, []string{`pointerMarshaler.Took: key "Took" is not camelCase`,
			`pointerMarshaler.Took: key "Took" holds a duration`, `key "Took" is not camelCase`}},
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

func TestDuration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{1500 * time.Microsecond, "2"},
		{1499 * time.Microsecond, "1"},
		{10 * time.Minute, "600000"},
		{SampleDuration, "1235"},
		{-1500 * time.Microsecond, "-2"},
	}
	for _, tc := range cases {
		b, err := json.Marshal(Duration(tc.d))
		if err != nil || string(b) != tc.want {
			t.Errorf("Duration(%v): got %s, %v, want %s", tc.d, b, err, tc.want)
		}
		if got := Millis(tc.d); got.Milliseconds() != Duration(tc.d).Milliseconds() || got.Duration()%time.Millisecond != 0 {
			t.Errorf("Millis(%v): got %v, want whole milliseconds written as %s", tc.d, got, tc.want)
		}
	}
	// A view read back (a stored console event, a request's byMs) holds
	// what was written; null and a missing key leave it as it was.
	var back struct {
		By   Duration  `json:"byMs"`
		Left Duration  `json:"leftMs,omitempty"`
		None *Duration `json:"noneMs"`
	}
	back.Left = Duration(time.Second)
	if err := json.Unmarshal([]byte(`{"byMs": 900000, "noneMs": null}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.By.Duration() != 15*time.Minute || back.Left.Duration() != time.Second || back.None != nil {
		t.Errorf("read back: got %+v, want byMs 15m, leftMs untouched at 1s, noneMs nil", back)
	}
	if err := json.Unmarshal([]byte(`{"byMs": 1.5}`), &back); err == nil || !strings.Contains(err.Error(), "whole milliseconds") {
		t.Errorf("1.5 ms: got %v, want an error about whole milliseconds", err)
	}
	// omitempty leaves a zero Duration out, as it does an integer.
	if b, _ := json.Marshal(struct {
		Left Duration `json:"leftMs,omitempty"`
	}{}); string(b) != "{}" {
		t.Errorf("zero with omitempty: got %s, want {}", b)
	}
}
