package app

import (
	"errors"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/walltest"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true, "127.3.4.5:9": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:80": false, "10.0.0.5:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q): got %v, want %v", addr, got, want)
		}
	}
}

// TestCheckServe: where clusters are contained, anything may be served;
// where they are not, a non-loopback address is refused unless insecure,
// and classes need insecure.
func TestCheckServe(t *testing.T) {
	bin, data := t.TempDir(), t.TempDir()
	off, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{BinDir: bin, DataDir: data, Confine: cluster.ConfineOff}))
	if err != nil {
		t.Fatal(err)
	}
	a := &App{clusters: off}
	for _, tc := range []struct {
		addr      string
		insecure  bool
		wantErr   bool
		wantClass bool
	}{
		{"127.0.0.1:8080", false, false, false},
		{"0.0.0.0:8080", false, true, false},
		{"0.0.0.0:8080", true, false, true},
		{"127.0.0.1:8080", true, false, true},
	} {
		s, err := a.CheckServe(tc.addr, tc.insecure)
		if (err != nil) != tc.wantErr {
			t.Errorf("CheckServe(%s, insecure=%v): got error %v, want error %v", tc.addr, tc.insecure, err, tc.wantErr)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrUncontained) || !strings.Contains(err.Error(), "--insecure-clusters") || !strings.Contains(err.Error(), "bubblewrap") {
				t.Errorf("CheckServe(%s): the error must say what to install and which flag: %v", tc.addr, err)
			}
			continue
		}
		if s.Classes != tc.wantClass || s.Contained || s.Warning == "" {
			t.Errorf("CheckServe(%s, insecure=%v): got %+v, want classes=%v, not contained, a warning", tc.addr, tc.insecure, s, tc.wantClass)
		}
	}
	on, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{BinDir: clustertest.BinDir(t), DataDir: data}))
	if err != nil {
		t.Fatal(err)
	}
	walltest.Require(t, walltest.Cell, walltest.Contained(on.Contained()))
	s, err := (&App{clusters: on}).CheckServe("0.0.0.0:8080", false)
	if err != nil || !s.Contained || !s.Classes || s.Warning != "" {
		t.Errorf("contained: got %+v, %v; want contained, classes, no warning", s, err)
	}
}
