// Package crilog writes a program's output in the CRI log format that
// kubelets write container logs in: one "<RFC3339Nano> <stream> <tag> <text>"
// line per line of output, where the tag is F for a full line and P for a
// partial one.
//
// oplab runs the operator as a host process on the embedded provider, where
// its Deployment's pod is simulated by KWOK; KWOK serves that pod's log from a
// file, and it accepts only this format (or docker's json-file lines).
package crilog

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// maxLine is the longest text written as one line; longer lines are split into
// partial (P) records as kubelets do.
const maxLine = 16 * 1024

// Writer turns whatever is written to it into CRI log lines on its
// destination. It is safe for concurrent use.
type Writer struct {
	mu     *sync.Mutex // shared by the writers of one destination
	dst    io.Writer
	stream string
	now    func() time.Time
	buf    []byte
}

// NewWriter returns a Writer for stream ("stdout" or "stderr") that writes to
// dst.
func NewWriter(dst io.Writer, stream string) *Writer {
	return &Writer{mu: new(sync.Mutex), dst: dst, stream: stream, now: time.Now}
}

// NewWriters returns the stdout and stderr Writers of one destination,
// which stamp and write each record under one lock: the log's times then
// grow in the order its lines are written, as a kubelet's do, and a
// reader may take a line's time for its place in the log (oplog.Cursor).
func NewWriters(dst io.Writer) (stdout, stderr *Writer) {
	mu := new(sync.Mutex)
	return &Writer{mu: mu, dst: dst, stream: "stdout", now: time.Now},
		&Writer{mu: mu, dst: dst, stream: "stderr", now: time.Now}
}

// Write records p; complete lines are written at once, the rest when its line
// ends, grows past the line limit, or Flush is called.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	var out []byte
	for {
		i := bytes.IndexByte(w.buf, '\n')
		switch {
		case i > maxLine || i < 0 && len(w.buf) >= maxLine:
			out = w.record(out, w.buf[:maxLine], "P")
			w.buf = w.buf[maxLine:]
			continue
		case i >= 0:
			out = w.record(out, w.buf[:i], "F")
			w.buf = w.buf[i+1:]
			continue
		}
		break
	}
	w.buf = append([]byte(nil), w.buf...) // drop the written prefix's memory
	if len(out) == 0 {
		return len(p), nil
	}
	if _, err := w.dst.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a pending partial line as a full one.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	out := w.record(nil, w.buf, "F")
	w.buf = w.buf[:0]
	_, err := w.dst.Write(out)
	return err
}

func (w *Writer) record(out, text []byte, tag string) []byte {
	out = w.now().UTC().AppendFormat(out, time.RFC3339Nano)
	out = append(out, ' ')
	out = append(out, w.stream...)
	out = append(out, ' ')
	out = append(out, tag...)
	out = append(out, ' ')
	out = append(out, bytes.TrimSuffix(text, []byte{'\r'})...)
	return append(out, '\n')
}
