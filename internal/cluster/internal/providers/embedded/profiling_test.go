package embedded

import (
	"reflect"
	"slices"
	"testing"
)

// Profiling is the options' to ask for, and only adds flags: the API server
// is told last (its default, --profiling=false, comes first and the last
// value wins) and etcd serves pprof; off, the tuning is the default one.
func TestWithProfiling(t *testing.T) {
	t.Setenv("OPLAB_PPROF", "1") // read by nothing below the CLI
	if got := withProfiling(defaultTuning(), false); !reflect.DeepEqual(got, defaultTuning()) {
		t.Errorf("off: got %+v, want the default tuning", got)
	}
	on := withProfiling(defaultTuning(), true)
	if got := on.apiserver[len(on.apiserver)-1]; got != "--profiling=true" {
		t.Errorf("on: the API server's last flag is %q, want --profiling=true", got)
	}
	if !slices.Contains(on.etcd, "--enable-pprof") {
		t.Errorf("on: etcd's flags %q lack --enable-pprof", on.etcd)
	}
}
