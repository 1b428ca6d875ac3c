package oplog

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseCRI(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 1, 2, 10, 0, 1, 1, time.UTC)
	tests := []struct {
		line    string
		want    Record
		wantErr bool
	}{
		{line: "2026-01-02T10:00:01.000000001Z stderr F hello world", want: Record{Time: ts, Stream: "stderr", Text: "hello world"}},
		{line: "2026-01-02T10:00:01.000000001Z stdout P part ", want: Record{Time: ts, Stream: "stdout", Partial: true, Text: "part "}},
		{line: "2026-01-02T10:00:01.000000001Z stdout F ", want: Record{Time: ts, Stream: "stdout"}},
		{line: "2026-01-02T10:00:01.000000001Z stdout F", want: Record{Time: ts, Stream: "stdout"}},
		{line: "2026-01-02T11:00:01.000000001+01:00 stdout F zone", want: Record{Time: ts, Stream: "stdout", Text: "zone"}},
		{line: "yesterday stdout F text", wantErr: true},
		{line: "2026-01-02T10:00:01Z stdout X text", wantErr: true},
		{line: "2026-01-02T10:00:01Z stdout", wantErr: true},
		{line: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseCRI(tt.line)
		if tt.wantErr {
			if !errors.Is(err, ErrNotCRI) {
				t.Errorf("ParseCRI(%q): got error %v, want ErrNotCRI", tt.line, err)
			}
			continue
		}
		if err != nil || !got.Time.Equal(tt.want.Time) || got.Stream != tt.want.Stream || got.Partial != tt.want.Partial || got.Text != tt.want.Text {
			t.Errorf("ParseCRI(%q): got %+v, %v, want %+v", tt.line, got, err, tt.want)
		}
	}
}

func TestJoiner(t *testing.T) {
	t.Parallel()
	raw := []string{
		"2026-01-02T10:00:00Z stderr F whole",
		"2026-01-02T10:00:01Z stderr P first half, ",
		"2026-01-02T10:00:01Z stdout P out: ",       // another stream's partial in between
		"2026-01-02T10:00:02Z stderr F second half", // ends stderr's line only
		"not a cri line at all",
		"",
		"2026-01-02T10:00:03Z stdout F done",
		"2026-01-02T10:00:04Z stdout F ",
	}
	var j Joiner
	var got []string
	for _, r := range raw {
		if l, ok := j.Add(r); ok {
			got = append(got, l.Stream+"|"+l.Text)
		}
	}
	want := []string{"stderr|whole", "stderr|first half, second half", "|not a cri line at all", "stdout|out: done", "stdout|"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestJoinerBoundsPartials(t *testing.T) {
	t.Parallel()
	var j Joiner
	chunk := strings.Repeat("a", 16*1024)
	for range maxJoined/len(chunk) + 10 {
		if _, ok := j.Add("2026-01-02T10:00:00Z stdout P " + chunk); ok {
			t.Fatal("a partial record ended a line")
		}
	}
	l, ok := j.Add("2026-01-02T10:00:00Z stdout F end")
	if !ok || len(l.Text) != maxJoined {
		t.Errorf("got a line of %d bytes (ok %v), want %d", len(l.Text), ok, maxJoined)
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	data := "2026-01-02T10:00:00.5Z stderr F old line\n" +
		"2026-01-02T10:00:01.000000001Z stderr P first half, \n" +
		"2026-01-02T10:00:01.1Z stderr F second half\n" +
		"not a cri line at all\n" +
		"2026-01-02T10:00:03Z stderr F still being writ"
	var got []string
	if err := Read(strings.NewReader(data), func(l Line) error { got = append(got, l.Text); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{"old line", "first half, second half", "not a cri line at all"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	stop := errors.New("stop")
	n := 0
	err := Read(strings.NewReader(data), func(Line) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("emit failing: got %v after %d lines, want its error after 1", err, n)
	}
}
