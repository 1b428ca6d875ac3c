package walltest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records whether Require skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

// TestRequire: a wall that can be made is tested; one that cannot fails
// the test, unless the run is -short or said OPLAB_WALLS=untested outside
// CI, and then the skip names the wall after Untested.
func TestRequire(t *testing.T) {
	cannot := errors.New("bwrap: setting up uid map: Permission denied")
	for _, tc := range []struct {
		name      string
		err       error
		ci, walls string
		want      string // "", "skip" or "fail"
	}{
		{name: "the wall can be made", err: nil, want: ""},
		{name: "cannot, nothing said", err: cannot, want: "fail"},
		{name: "cannot, said untested", err: cannot, walls: EnvUntested, want: "skip"},
		{name: "cannot, another value", err: cannot, walls: "1", want: "fail"},
		{name: "cannot, said untested in CI", err: cannot, ci: "true", walls: EnvUntested, want: "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			t.Setenv(Env, tc.walls)
			want := tc.want
			if testing.Short() && tc.err != nil {
				want = "skip" // the inner loop tests no wall, and says so
			}
			r := &recorder{TB: t}
			Require(r, Cell, tc.err)
			got := ""
			switch {
			case r.skipped != "" && r.failed != "":
				t.Fatalf("both skipped (%q) and failed (%q)", r.skipped, r.failed)
			case r.skipped != "":
				got = "skip"
				if !strings.HasPrefix(r.skipped, Untested+Cell+": ") || !strings.Contains(r.skipped, cannot.Error()) {
					t.Errorf("skip message %q: want it to start with %q and give the reason", r.skipped, Untested+Cell+": ")
				}
			case r.failed != "":
				got = "fail"
				for _, w := range []string{Cell, cannot.Error(), Env + "=" + EnvUntested} {
					if !strings.Contains(r.failed, w) {
						t.Errorf("failure %q: want it to name %q", r.failed, w)
					}
				}
			}
			if got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
