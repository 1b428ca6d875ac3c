package oplog

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Record is one line of a CRI log file: "<RFC3339Nano> <stream> <P|F> <text>".
type Record struct {
	Time    time.Time
	Stream  string // stdout or stderr
	Partial bool   // tag P: the text goes on in the stream's next record
	Text    string
}

// ErrNotCRI is wrapped by ParseCRI's error for a line not in the CRI format.
var ErrNotCRI = errors.New("not a CRI log line")

// ParseCRI parses one line of a CRI log file, without its newline.
func ParseCRI(line string) (Record, error) {
	fields := strings.SplitN(line, " ", 4)
	if len(fields) < 3 {
		return Record{}, fmt.Errorf("%w: %q", ErrNotCRI, abbrev(line))
	}
	ts, err := time.Parse(time.RFC3339Nano, fields[0])
	if err != nil {
		return Record{}, fmt.Errorf("%w: time %q: %w", ErrNotCRI, abbrev(fields[0]), err)
	}
	var partial bool
	switch fields[2] {
	case "P":
		partial = true
	case "F":
	default:
		return Record{}, fmt.Errorf("%w: tag %q is neither P nor F", ErrNotCRI, abbrev(fields[2]))
	}
	r := Record{Time: ts, Stream: fields[1], Partial: partial}
	if len(fields) == 4 {
		r.Text = fields[3]
	}
	return r, nil
}

// Line is one whole line of the operator's output: its CRI records joined,
// or a line of the file that was not in the CRI format (Stream empty, Time
// zero), kept as it is so that nothing written is lost.
type Line struct {
	Time   time.Time // of the line's last record
	Stream string
	Text   string
}

// Joiner joins the partial records of each stream into whole lines. Its zero
// value is ready; it is not safe for concurrent use.
type Joiner struct {
	partial map[string]*strings.Builder
}

// maxJoined bounds a line joined from partial records, so that a writer that
// never ends its line cannot grow memory without limit; the rest is cut.
const maxJoined = 1 << 20

// Add reads one line of a CRI file and returns the whole line it completes,
// or ok false while its stream's line is still partial (or raw is empty).
func (j *Joiner) Add(raw string) (Line, bool) {
	if raw == "" {
		return Line{}, false
	}
	r, err := ParseCRI(raw)
	if err != nil {
		return Line{Text: raw}, true
	}
	b := j.partial[r.Stream]
	if r.Partial {
		if b == nil {
			if j.partial == nil {
				j.partial = map[string]*strings.Builder{}
			}
			b = &strings.Builder{}
			j.partial[r.Stream] = b
		}
		if b.Len() < maxJoined {
			b.WriteString(r.Text[:min(len(r.Text), maxJoined-b.Len())])
		}
		return Line{}, false
	}
	text := r.Text
	if b != nil {
		if b.Len() < maxJoined {
			b.WriteString(r.Text[:min(len(r.Text), maxJoined-b.Len())])
		}
		text = b.String()
		delete(j.partial, r.Stream)
	}
	return Line{Time: r.Time, Stream: r.Stream, Text: text}, true
}

// Reset forgets partial lines, for a file read again from its start.
func (j *Joiner) Reset() { clear(j.partial) }

func abbrev(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
