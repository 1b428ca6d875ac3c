package cli

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
)

// fakeEnv is an environment of vars that records every name asked of it.
type fakeEnv struct {
	vars  map[string]string
	asked map[string]bool
}

func (e *fakeEnv) lookup(name string) (string, bool) {
	if e.asked == nil {
		e.asked = map[string]bool{}
	}
	e.asked[name] = true
	v, ok := e.vars[name]
	return v, ok
}

// rootIn builds the command tree in env and parses args' flags.
func rootIn(t *testing.T, env *fakeEnv, args ...string) (*globals, *cobra.Command) {
	t.Helper()
	var out bytes.Buffer
	g := &globals{streams: Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out}}
	root := newRoot(g, env.lookup)
	if err := root.PersistentFlags().Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return g, root
}

// helpOf runs `oplab <args> --help` in env and returns what it printed.
func helpOf(t *testing.T, env *fakeEnv, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	root := newRoot(&globals{streams: Streams{Out: &out, ErrOut: &out}}, env.lookup)
	root.SetArgs(append(args, "--help"))
	root.SetOut(&out)
	root.SetErr(&out)
	if err := root.Execute(); err != nil {
		t.Fatalf("oplab %s --help: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// TestHelpNamesEveryVariable: every variable oplab reads is named in the
// help of the commands that read it (the root's names them all), so that
// none is known only to whoever read the source. The variables are the
// ones the configuration asked the environment for, not a list kept here.
func TestHelpNamesEveryVariable(t *testing.T) {
	env := &fakeEnv{}
	root := helpOf(t, env)
	if len(env.asked) < len(settings()) {
		t.Fatalf("the configuration asked for %d variables, want at least the %d of its table", len(env.asked), len(settings()))
	}
	for name := range env.asked {
		if !strings.Contains(root, name) {
			t.Errorf("oplab --help does not name %s, which the configuration reads:\n%s", name, root)
		}
	}
	_, tree := rootIn(t, &fakeEnv{})
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, c := range cmd.Commands() {
			walk(c)
		}
		if !cmd.HasParent() || cmd.Hidden || cmd.Name() == "help" || cmd.Name() == "completion" {
			return
		}
		path := strings.Fields(cmd.CommandPath())[1:]
		help := helpOf(t, &fakeEnv{}, path...)
		for _, s := range settings() {
			if s.command != "" && s.command != cmd.Name() {
				if strings.Contains(help, s.env) {
					t.Errorf("oplab %s --help names %s, which only oplab %s reads", strings.Join(path, " "), s.env, s.command)
				}
				continue
			}
			if !strings.Contains(help, s.env) {
				t.Errorf("oplab %s --help does not name %s", strings.Join(path, " "), s.env)
			}
		}
	}
	walk(tree)
}

// TestHelpShowsNoSecret: the store's URL may hold a password and the
// cookie key is one; help prints neither, though both are set.
func TestHelpShowsNoSecret(t *testing.T) {
	env := &fakeEnv{vars: map[string]string{"OPLAB_STORE_URL": "postgres://u:hunter2@db/oplab", "OPLAB_COOKIE_KEY": "k3y-k3y-k3y"}}
	for _, args := range [][]string{nil, {"serve"}, {"lab", "start"}} {
		help := helpOf(t, env, args...)
		for _, secret := range []string{"hunter2", "k3y-k3y-k3y"} {
			if strings.Contains(help, secret) {
				t.Errorf("oplab %v --help shows %q:\n%s", args, secret, help)
			}
		}
	}
}

// TestConfigFromEnvironment: each variable reaches its field of
// app.Config, defaults hold when it is unset, and a flag wins over it.
func TestConfigFromEnvironment(t *testing.T) {
	all := map[string]string{
		"OPLAB_DATA": "/data", "OPLAB_BIN": "/bin-dir", "OPLAB_PROVIDER": "pods", "OPLAB_STORE_URL": "postgres://db/oplab",
		"OPLAB_KIND_NODE_IMAGE": "node:1", "OPLAB_KIND_CONFIG": "/kind.yaml",
		"OPLAB_PODS_KUBECONFIG": "/host.kubeconfig", "OPLAB_PODS_NAMESPACE": "cells", "OPLAB_PODS_IMAGE": "oplab:2",
		"OPLAB_PODS_STORAGE_CLASS": "fast", "OPLAB_PODS_REACH": "service", "OPLAB_PPROF": "1",
	}
	tests := []struct {
		name  string
		vars  map[string]string
		args  []string
		want  app.Config
		check func(t *testing.T, g *globals)
	}{{
		name: "every variable",
		vars: all,
		want: app.Config{DataDir: "/data", BinDir: "/bin-dir", Provider: "pods", Store: "postgres://db/oplab",
			KindNodeImage: "node:1", KindConfig: "/kind.yaml",
			Pods:      app.PodsHost{Kubeconfig: "/host.kubeconfig", Namespace: "cells", Image: "oplab:2", StorageClass: "fast", Reach: app.PodsReachService},
			Profiling: true},
	}, {
		name: "flags win",
		vars: all,
		args: []string{"--data-dir", "/flag-data", "--bin-dir", "/flag-bin", "--provider", "kind", "--store", "postgres://flag/db"},
		want: app.Config{DataDir: "/flag-data", BinDir: "/flag-bin", Provider: "kind", Store: "postgres://flag/db",
			KindNodeImage: "node:1", KindConfig: "/kind.yaml",
			Pods:      app.PodsHost{Kubeconfig: "/host.kubeconfig", Namespace: "cells", Image: "oplab:2", StorageClass: "fast", Reach: app.PodsReachService},
			Profiling: true},
	}, {
		name: "nothing set",
		vars: map[string]string{"XDG_DATA_HOME": "/xdg"},
		want: app.Config{DataDir: "/xdg/oplab", BinDir: defaultBinDir(), Provider: app.Embedded,
			Pods: app.PodsHost{Reach: app.PodsReachPortForward}},
	}, {
		name: "in a pod",
		vars: map[string]string{"XDG_DATA_HOME": "/xdg", "KUBERNETES_SERVICE_HOST": "10.96.0.1", "OPLAB_PPROF": "yes"},
		want: app.Config{DataDir: "/xdg/oplab", BinDir: defaultBinDir(), Provider: app.Embedded,
			Pods: app.PodsHost{Reach: app.PodsReachService}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := rootIn(t, &fakeEnv{vars: tt.vars}, tt.args...)
			if got := g.app(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCookieKeyAndColourFromEnvironment: the two settings that are not
// app.Config's reach the server's configuration and the terminal's style.
func TestCookieKeyAndColourFromEnvironment(t *testing.T) {
	g, _ := rootIn(t, &fakeEnv{vars: map[string]string{"OPLAB_COOKIE_KEY": "key", "NO_COLOR": "1"}})
	if g.cookieKey != "key" || g.noColor != "1" {
		t.Errorf("got cookie key %q and NO_COLOR %q, want key and 1", g.cookieKey, g.noColor)
	}
}

// TestServingDocListsEveryVariable: docs/serving.md's table of variables
// is the one the configuration's table renders.
func TestServingDocListsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("../../docs/serving.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- settings: made from internal/cli/config.go (TestServingDocListsEveryVariable) -->\n", "<!-- end settings -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/serving.md has no %q … %q block", strings.TrimSpace(begin), end)
	}
	if got, want := doc[i+len(begin):j], envTable(); got != want {
		t.Errorf("docs/serving.md's table of variables differs from the configuration's; want:\n%s", want)
	}
}
