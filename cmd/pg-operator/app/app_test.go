package app

import (
	"bytes"
	"strings"
	"testing"

	clientgofeatures "k8s.io/client-go/features"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    Options
		wantErr string
	}{
		{"defaults", nil, Options{MetricsAddr: ":8080", ProbeAddr: ":8081", LeaderElect: true, InstanceMode: "sql"}, ""},
		{"embedded", []string{"--instance-mode=simulated", "--leader-elect=false", "--watch-namespace", "team", "--metrics-bind-address", "0"},
			Options{MetricsAddr: "0", ProbeAddr: ":8081", WatchNamespace: "team", InstanceMode: "simulated"}, ""},
		{"unknown mode", []string{"--instance-mode=docker"}, Options{}, `--instance-mode: got "docker", want sql or simulated`},
		{"stray argument", []string{"run"}, Options{}, "unexpected arguments: run"},
		{"unknown flag", []string{"--verbose"}, Options{}, "flag provided but not defined: -verbose"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			got, err := parseFlags(tt.args, &stderr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLeaseNamespace(t *testing.T) {
	t.Parallel()
	if got := leaseNamespace(Options{LeaderElectionNamespace: "x"}); got != "x" {
		t.Errorf("flag: got %q, want x", got)
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	NewLogger(&buf).WithValues("controller", "postgrescluster", "controllerGroup", "databases.example.com",
		"controllerKind", "PostgresCluster", "PostgresCluster", map[string]string{"name": "db"}, "namespace", "team").
		Info("in sync", "took", "3ms")
	got := buf.String()
	for _, want := range []string{"msg=\"in sync\"", "controller=postgrescluster", "namespace=team", "took=3ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("log line %q lacks %s", got, want)
		}
	}
	for _, unwanted := range []string{"controllerGroup", "controllerKind", "PostgresCluster"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("log line %q still has %s", got, unwanted)
		}
	}
}

// allOn is a set of feature gates with every feature on.
type allOn struct{}

func (allOn) Enabled(clientgofeatures.Feature) bool { return true }

func TestListFirstTurnsOffOnlyWatchList(t *testing.T) {
	g := listFirst{allOn{}}
	if g.Enabled(clientgofeatures.WatchListClient) {
		t.Error("WatchListClient: enabled, want off")
	}
	if !g.Enabled(clientgofeatures.ClientsAllowCBOR) {
		t.Error("ClientsAllowCBOR: off, want what the wrapped gates say (on)")
	}
}
