package kind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// images is an engine's local store for nodeImage: the images it has, and
// what a pull answers.
type images struct {
	have    []string
	pullErr error
	pulled  []string
}

func (s *images) hasImage(_ context.Context, ref string) bool { return slices.Contains(s.have, ref) }

func (s *images) pullImage(_ context.Context, ref string) error {
	s.pulled = append(s.pulled, ref)
	return s.pullErr
}

func TestNodeImageChoice(t *testing.T) {
	offline := errors.New(`Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host`)
	const mine = "example.org/my-node:v1"
	tests := []struct {
		name       string
		configured string
		have       []string
		pullErr    error
		want       string
		wantPulled []string
		wantErr    []string // the error's message contains each
	}{
		{"make images built it", "", []string{OfflineNodeImage}, offline, OfflineNodeImage, nil, nil},
		{"built beats upstream", "", []string{DefaultNodeImage, OfflineNodeImage}, nil, OfflineNodeImage, nil, nil},
		{"upstream present", "", []string{DefaultNodeImage}, offline, DefaultNodeImage, nil, nil},
		{"upstream pulled", "", nil, nil, DefaultNodeImage, []string{DefaultNodeImage}, nil},
		{"none, no registry", "", nil, offline, "", []string{DefaultNodeImage}, []string{
			"the docker engine has neither " + OfflineNodeImage + " nor kindest/node:v1.36.1, and pulling it failed",
			"no such host", "run `make images` to build " + OfflineNodeImage, "set " + NodeImageEnv,
		}},
		{"configured present", mine, []string{mine}, offline, mine, nil, nil},
		{"configured wins over built", mine, []string{mine, OfflineNodeImage}, nil, mine, nil, nil},
		{"configured pulled", mine, []string{OfflineNodeImage}, nil, mine, []string{mine}, nil},
		{"configured missing, no registry", mine, []string{OfflineNodeImage}, offline, "", []string{mine}, []string{
			"the docker engine has no " + mine + ", and pulling it failed", "run `make images`", "set " + NodeImageEnv,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &images{have: tt.have, pullErr: tt.pullErr}
			got, err := nodeImage(t.Context(), s, "docker", tt.configured)
			if !slices.Equal(s.pulled, tt.wantPulled) {
				t.Errorf("pulled: got %q, want %q", s.pulled, tt.wantPulled)
			}
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrNoNodeImage) {
				t.Fatalf("got %q, %v; want ErrNoNodeImage", got, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error has %d lines, want one: %s", strings.Count(msg, "\n")+1, msg)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// The offline node image is named as hack/kind/build-images.sh tags it:
// oplab.local/kind-node:<the Kubernetes version of hack/kind/nodebins>.
// The upstream image is of the same version.
func TestOfflineNodeImageIsWhatMakeImagesBuilds(t *testing.T) {
	hack := filepath.Join("..", "..", "..", "..", "..", "hack", "kind")
	mod, err := os.ReadFile(filepath.Join(hack, "nodebins", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("hack/kind/nodebins/go.mod requires no k8s.io/kubernetes")
	}
	version := string(m[1])
	if want := "oplab.local/kind-node:" + version; OfflineNodeImage != want {
		t.Errorf("OfflineNodeImage: got %q, want %q", OfflineNodeImage, want)
	}
	if want := "kindest/node:" + version + "@"; !strings.HasPrefix(DefaultNodeImage, want) {
		t.Errorf("DefaultNodeImage: got %q, want it to start with %q", DefaultNodeImage, want)
	}
	script, err := os.ReadFile(filepath.Join(hack, "build-images.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "NODE_IMAGE=oplab.local/kind-node:$KUBE_VERSION") {
		t.Error("build-images.sh no longer tags the node image oplab.local/kind-node:$KUBE_VERSION: change OfflineNodeImage with it")
	}
}

// fakeEngine puts a docker CLI on PATH that answers info and ps as an
// engine with no clusters, has only the images named, fails every pull as a
// machine without a registry does, and fails anything else. It returns the
// file where each call's arguments are logged.
func fakeEngine(t *testing.T, have ...string) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := `#!/bin/sh
echo "$*" >> ` + log + `
case "$1" in
info) echo 28.2.2 ;;
ps) ;;
image)
	for ref in ` + strings.Join(have, " ") + `; do
		[ "$5" = "$ref" ] && { echo sha256:0123; exit 0; }
	done
	echo "Error response from daemon: No such image: $5" >&2; exit 1 ;;
pull)
	echo "Using default tag: latest" >&2
	echo "Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host" >&2
	exit 1 ;;
*) echo "fake docker: $1 is not answered" >&2; exit 3 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DOCKER_HOST", "")
	return log
}

// With neither node image in the engine and no registry, Create fails
// before kind runs: in one line that says to run `make images`, having
// pulled once and started nothing, and leaving no directory.
func TestCreateWithoutNodeImageSaysMakeImages(t *testing.T) {
	calls := fakeEngine(t)
	dir := t.TempDir()
	p, err := New(Options{DataDir: dir, Engine: "docker"})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	err = p.Create(t.Context(), "alice", providers.CreateOptions{Progress: func(s providers.Step) {
		if s.Done {
			steps = append(steps, s.Name)
		}
	}})
	if !errors.Is(err, ErrNoNodeImage) {
		t.Fatalf("Create: got %v, want ErrNoNodeImage", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "run `make images`") || !strings.Contains(msg, "no such host") {
		t.Errorf("Create: got %q, want one line with the engine's reason and `make images`", msg)
	}
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	var verbs []string
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		verbs = append(verbs, strings.Join(strings.Fields(l)[:min(2, len(strings.Fields(l)))], " "))
	}
	for _, v := range verbs {
		if !slices.Contains([]string{"info --format", "ps -a", "image inspect", "pull " + DefaultNodeImage}, v) {
			t.Errorf("engine call %q; want only info, ps, image inspect and one pull (all calls: %q)", v, verbs)
		}
	}
	if n := slices.Index(verbs, "pull "+DefaultNodeImage); n < 0 || slices.Index(verbs[n+1:], "pull "+DefaultNodeImage) >= 0 {
		t.Errorf("engine calls %q: want exactly one pull of %s", verbs, DefaultNodeImage)
	}
	if want := []string{"Pulling node image " + DefaultNodeImage}; !slices.Equal(steps, want) {
		t.Errorf("finished steps: got %q, want %q", steps, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("data dir has %d entries after a failed create, want 0", len(entries))
	}
}

// With the image `make images` built in the engine, Create hands kind that
// image (kind then fails against the fake engine, and its error names the
// image it was given) and pulls nothing.
func TestCreateTakesTheBuiltNodeImage(t *testing.T) {
	calls := fakeEngine(t, OfflineNodeImage)
	p, err := New(Options{DataDir: t.TempDir(), Engine: "docker"})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Create(t.Context(), "alice", providers.CreateOptions{})
	if err == nil || errors.Is(err, ErrNoNodeImage) || !strings.Contains(err.Error(), "with node image "+OfflineNodeImage+":") {
		t.Fatalf("Create: got %v, want kind's failure with node image %s", err, OfflineNodeImage)
	}
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "\npull ") {
		t.Errorf("engine calls include a pull:\n%s", log)
	}
}
