package class

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Form is a class's fields as text, the way a web form or the command
// line's flags give them. Both front ends hand their text here, so what a
// time, a time limit or a capacity may look like is decided once.
type Form struct {
	Name string
	// Labs are lab ids in the order the class runs them.
	Labs []string
	// Capacity is a whole number; empty means no cap.
	Capacity string
	// Opens and Closes are times (see ParseWhen); empty means no bound.
	Opens, Closes string
	// TimeLimit is a duration such as 90m or 1h30m; empty means none.
	TimeLimit string
	// Warm is the warm sessions per lab as typed (see ParseWarm); a form
	// may show a field for every lab, so a lab the class does not run may
	// have 0 or nothing.
	Warm map[string]string
	// Zone is where a time without an offset is read; time.Local when
	// nil.
	Zone *time.Location
}

// Spec parses f into a Spec. The error names the field and says what it
// accepts; it wraps ErrInvalid.
func (f Form) Spec() (Spec, error) {
	sp := Spec{Name: strings.TrimSpace(f.Name), Labs: f.Labs}
	var err error
	if sp.Capacity, err = ParseCapacity(f.Capacity); err != nil {
		return sp, err
	}
	if sp.Opens, err = ParseWhen("opens", f.Opens, f.Zone); err != nil {
		return sp, err
	}
	if sp.Closes, err = ParseWhen("closes", f.Closes, f.Zone); err != nil {
		return sp, err
	}
	if sp.TimeLimit, err = ParseTimeLimit(f.TimeLimit); err != nil {
		return sp, err
	}
	if sp.Warm, err = f.warm(sp.Labs); err != nil {
		return sp, err
	}
	return sp, nil
}

// warm parses f.Warm, leaving out the zeros of labs the class does not
// run (a number for one of those is left for the Spec's check to refuse).
func (f Form) warm(labs []string) (map[string]int, error) {
	if f.Warm == nil {
		return nil, nil
	}
	w, err := ParseWarm(f.Warm)
	if err != nil {
		return nil, err
	}
	maps.DeleteFunc(w, func(id string, n int) bool { return n == 0 && !slices.Contains(labs, id) })
	return w, nil
}

// Changes parses f into the Changes that set every field of a class to
// f's (an edit form shows them all).
func (f Form) Changes() (Changes, error) {
	sp, err := f.Spec()
	if err != nil {
		return Changes{}, err
	}
	labs := sp.Labs
	if labs == nil {
		labs = []string{}
	}
	return Changes{Labs: labs, Capacity: &sp.Capacity, Opens: &sp.Opens, Closes: &sp.Closes, TimeLimit: &sp.TimeLimit, Warm: sp.Warm}, nil
}

// whenLayouts are the forms of a time without an offset that ParseWhen
// accepts besides RFC 3339 (the second is an HTML datetime-local input's).
var whenLayouts = []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05"}

// ParseWhen reads the time of field: empty or "none" is no time (the
// zero time); RFC 3339; or a date and time read in zone (time.Local when
// nil).
func ParseWhen(field, v string, zone *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "none" {
		return time.Time{}, nil
	}
	if zone == nil {
		zone = time.Local
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	for _, l := range whenLayouts {
		if t, err := time.ParseInLocation(l, v, zone); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf(`%w: %s %q: give a time as "2026-12-07 09:00" (local time), RFC 3339 ("2026-12-07T09:00:00Z"), or "none"`,
		ErrInvalid, field, v)
}

// ParseTimeLimit reads a session's time limit: empty or "0" is none; else
// a positive duration such as 90m or 1h30m.
func ParseTimeLimit(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf(`%w: time limit %q: give a duration such as 90m or 1h30m, or 0 for none`, ErrInvalid, v)
	}
	return d, nil
}

// ParseCapacity reads how many learners may join: empty or 0 is no cap.
func ParseCapacity(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: capacity %q: give a whole number of learners, or 0 for no cap", ErrInvalid, v)
	}
	return n, nil
}
