package oplog

import (
	"fmt"
	"strings"
	"time"
)

// Text renders e for a terminal. A reconcile pass shows as the loop: a head
// line (time, object, what the operator said, how long it took, when it
// runs next), then one indented line per step that has something: watch,
// diff, act (one line per act) and status. An idle pass is its head line
// alone. Any other line is printed as the operator wrote it.
func (e Entry) Text() string {
	p := e.Pass
	if p == nil {
		return e.Raw
	}
	var b strings.Builder
	if !e.Time.IsZero() {
		b.WriteString(e.Time.Format("15:04:05.000 "))
	}
	if e.Level != "" && e.Level != LevelInfo {
		b.WriteString(strings.ToUpper(e.Level) + " ")
	}
	if e.Object != "" {
		b.WriteString(e.Object + " ")
	}
	b.WriteString(e.Message)
	b.WriteString(" (" + p.timing() + ")")
	if e.Error != "" {
		b.WriteString(": " + e.Error)
	}
	if p.Idle {
		return b.String()
	}
	step := func(name string, lines ...string) {
		for i, l := range lines {
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(&b, "\n  %-6s %s", name, l)
		}
	}
	step("watch", p.Watch...)
	step("diff", p.Diff...)
	step("act", p.Act...)
	if st := p.statusText(); st != "" {
		step("status", st)
	}
	return b.String()
}

// timing says how long the pass took and when it runs next.
func (p Pass) timing() string {
	s := "took " + shortDuration(p.Took.Duration())
	if p.Next > 0 {
		s += ", next in " + shortDuration(p.Next.Duration())
	}
	return s
}

// statusText says what the pass left in the status: what it wrote, and the
// current primary.
func (p Pass) statusText() string {
	var parts []string
	if p.Status != "" {
		parts = append(parts, "wrote "+p.Status)
	} else if p.Primary != "" {
		parts = append(parts, "unchanged")
	}
	if p.Primary != "" {
		parts = append(parts, "primary "+p.Primary)
	}
	return strings.Join(parts, ", ")
}

// shortDuration rounds d for a reader: microseconds below a millisecond,
// tenths of a millisecond below a second.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
