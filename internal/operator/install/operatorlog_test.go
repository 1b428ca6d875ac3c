package install

import (
	"testing"

	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/cluster"
)

// TestOperatorLogOfAPod: where the operator's files cannot be found — no
// provider, a cluster the provider does not know, or an operator that
// never runs as a host process — its log is its pod's, read with the
// configuration given, for the operator asked about. (The host process's
// files, and a third-party operator beside them: TestInstallRealOperator.)
func TestOperatorLogOfAPod(t *testing.T) {
	p, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{
		BinDir: t.TempDir(), DataDir: t.TempDir(), Confine: cluster.ConfineOff}))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Info().Capabilities.HostProcesses {
		t.Fatal("the embedded provider: got no host processes, want them (the case below needs them)")
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	other := Release{Name: "other", Namespace: "other", Deployment: "other", Container: "other"}
	for _, tt := range []struct {
		what    string
		p       *cluster.Provider
		name    string
		rel     Release
		wantRel Release
	}{
		{"no provider", nil, "c", Release{}, Reference},
		{"a cluster the provider does not know", p, "c", Release{}, Reference},
		{"a third-party operator", nil, "c", other, other},
	} {
		got, ok := OperatorLog(tt.p, tt.name, cfg, tt.rel).(PodLog)
		if !ok || got.Config != cfg || got.Release != tt.wantRel {
			t.Errorf("%s: got %#v, want the pod log of %s through the configuration given", tt.what, got, tt.wantRel.Name)
		}
	}
}
