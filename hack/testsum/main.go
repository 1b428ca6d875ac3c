// Command testsum reads `go test -json` and prints what `go test` prints
// without -v — each package's result, and the output of the tests that
// failed — followed by how many tests were skipped, and why, and which
// of the walls between a learner and the machine were not tested: one
// line for each wall whose tests skipped (package walltest's rule says
// when they may). `make test` and `make test-short` pipe into it, so that
// neither passes having tested less than it names without saying so; the
// inner loop says how much of the suite it left to `make test`.
//
//	go test -short -json ./... | go run ./hack/testsum
//
// It exits 1 when a test or a package failed.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"oplab.dev/oplab/internal/walltest"
)

func main() {
	failed, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json's TestEvent, and the
// go command's build events, which name ImportPath instead of Package).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// testKey names a test within its package.
type testKey struct{ pkg, test string }

// summary is what the stream has told so far.
type summary struct {
	out     io.Writer
	pending map[testKey][]string // output of tests still running
	skips   map[string]int       // reason -> tests skipped for it
	skipped int
	walls   map[string]*untested // wall -> its tests that skipped
	failed  bool
}

// summarize copies the report of the stream in to out and reports whether
// anything failed.
func summarize(in io.Reader, out io.Writer) (bool, error) {
	s := &summary{out: out, pending: map[testKey][]string{}, skips: map[string]int{}, walls: map[string]*untested{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			// Not an event (the go command's own errors): pass it on.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		s.add(ev)
	}
	if err := sc.Err(); err != nil {
		return true, fmt.Errorf("read the test stream: %w", err)
	}
	s.report()
	return s.failed, nil
}

// framing matches the lines test2json's verbose run adds that a plain
// `go test` does not print.
var framing = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)\s|--- (PASS|SKIP): )`)

func (s *summary) add(ev event) {
	switch ev.Action {
	case "build-output":
		fmt.Fprint(s.out, ev.Output)
	case "build-fail":
		s.failed = true
	case "output":
		if ev.Test == "" {
			// The package's own lines: its result, and what TestMain or a
			// crash printed. "PASS" is -v's; go test prints only "ok".
			if ev.Output != "PASS\n" {
				fmt.Fprint(s.out, ev.Output)
			}
			return
		}
		k := testKey{ev.Package, ev.Test}
		if !framing.MatchString(ev.Output) {
			s.pending[k] = append(s.pending[k], ev.Output)
		}
	case "fail":
		s.failed = true
		s.flush(testKey{ev.Package, ev.Test}, true)
	case "pass":
		s.flush(testKey{ev.Package, ev.Test}, false)
	case "skip":
		if ev.Test == "" {
			return // a package without tests; its "?" line was output
		}
		k := testKey{ev.Package, ev.Test}
		reason := skipReason(s.pending[k])
		s.skipped++
		s.skips[reason]++
		s.wallSkipped(k, reason)
		delete(s.pending, k)
	}
}

// untested is what the report says of one wall whose tests skipped.
type untested struct {
	tests []string // package.Test, in the order they skipped
	why   string   // the first one's reason
}

// wallSkipped notes k's skip when its reason says a wall was not tested:
// walltest's skips start with walltest.Untested and the wall's name.
func (s *summary) wallSkipped(k testKey, reason string) {
	rest, ok := strings.CutPrefix(reason, walltest.Untested)
	if !ok {
		return
	}
	wall, why, _ := strings.Cut(rest, ": ")
	u := s.walls[wall]
	if u == nil {
		u = &untested{why: why}
		s.walls[wall] = u
	}
	u.tests = append(u.tests, k.pkg[strings.LastIndexByte(k.pkg, '/')+1:]+"."+k.test)
}

// flush prints a failed test's output and forgets the test's lines.
func (s *summary) flush(k testKey, print bool) {
	if print {
		for _, l := range s.pending[k] {
			fmt.Fprint(s.out, l)
		}
	}
	delete(s.pending, k)
}

// location is the "file_test.go:12: " that t.Skip puts before its message.
var location = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason is the message of a skipped test's t.Skip: its last line of
// output, without the file and line.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(location.ReplaceAllString(lines[i], "")); l != "" {
			return l
		}
	}
	return "(no reason given)"
}

func (s *summary) report() {
	// A test binary that crashed or timed out may leave tests without an
	// end: their output is what explains it.
	unfinished := make([]testKey, 0, len(s.pending))
	for k := range s.pending {
		unfinished = append(unfinished, k)
	}
	slices.SortFunc(unfinished, func(a, b testKey) int {
		return cmp.Or(cmp.Compare(a.pkg, b.pkg), cmp.Compare(a.test, b.test))
	})
	for _, k := range unfinished {
		fmt.Fprintf(s.out, "--- %s %s did not finish:\n", k.pkg, k.test)
		s.flush(k, true)
	}
	fmt.Fprintf(s.out, "\n%d tests skipped", s.skipped)
	if s.skipped == 0 {
		fmt.Fprintln(s.out)
		return
	}
	defer s.reportWalls()
	fmt.Fprintln(s.out, ", by reason:")
	reasons := make([]string, 0, len(s.skips))
	for r := range s.skips {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.skips[b], s.skips[a]), cmp.Compare(a, b))
	})
	for _, r := range reasons {
		fmt.Fprintf(s.out, "%6d  %s\n", s.skips[r], r)
	}
}

// reportWalls ends the report with one line for each wall not tested: how
// many of its tests skipped, the first few, and why.
func (s *summary) reportWalls() {
	if len(s.walls) == 0 {
		return
	}
	walls := make([]string, 0, len(s.walls))
	for w := range s.walls {
		walls = append(walls, w)
	}
	slices.Sort(walls)
	fmt.Fprintf(s.out, "\nWALLS NOT TESTED (%d): this run does not show that they hold\n", len(walls))
	for _, w := range walls {
		u := s.walls[w]
		names := u.tests
		more := ""
		if len(names) > 3 {
			names, more = names[:3], fmt.Sprintf(" and %d more", len(u.tests)-3)
		}
		fmt.Fprintf(s.out, "  %s: %d tests skipped (%s%s): %s\n", w, len(u.tests), strings.Join(names, ", "), more, u.why)
	}
}
