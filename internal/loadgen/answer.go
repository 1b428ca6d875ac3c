package loadgen

import (
	"bytes"
	"io"
)

// errorMark is what the console's answer puts before the error that ended
// a line (web/static/console.js reads it the same way).
const errorMark = "\n\x00error: "

// Answer is what the web console said of one line.
type Answer struct {
	// Output counts the bytes the command wrote before its end.
	Output int64
	// Error is the one line the server wrote after the error mark: why
	// the line was refused or the command failed (kubectl's status, the
	// output or memory limit). Empty when kubectl ran and exited 0.
	Error string
}

// Refused says the line started nothing: the answer is the server's
// error alone (a refusal writes no output; a command that ran and failed
// has written kubectl's stderr or the console's note first).
func (a Answer) Refused() bool { return a.Error != "" && a.Output == 0 }

// maxAnswerTail is how much of an answer's end readAnswer keeps to find
// the error mark and the error: the console's errors are one line.
const maxAnswerTail = 8 << 10

// readAnswer reads a console answer to its end, keeping only its tail: a
// command's output (up to the console's 1 MiB) is counted, not held, so
// that four commands at once cost the reader little.
func readAnswer(r io.Reader) (Answer, error) {
	var (
		total int64
		tail  []byte
		buf   = make([]byte, 32<<10)
	)
	for {
		n, err := r.Read(buf)
		total += int64(n)
		tail = append(tail, buf[:n]...)
		if len(tail) > maxAnswerTail {
			tail = append(tail[:0], tail[len(tail)-maxAnswerTail:]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Answer{Output: total}, err
		}
	}
	i := bytes.LastIndex(tail, []byte(errorMark))
	if i < 0 {
		return Answer{Output: total}, nil
	}
	before := total - int64(len(tail)-i)
	msg := bytes.TrimRight(tail[i+len(errorMark):], "\n")
	return Answer{Output: before, Error: string(msg)}, nil
}
