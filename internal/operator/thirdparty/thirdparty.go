// Package thirdparty names the third-party operators the course installs
// as it installs them: each from its own Helm chart, with the chart's own
// values plus only the image overrides an offline machine needs. The
// charts are not in this repository: hack/kind/build-images.sh takes them
// from the operators' Go module zips, at the versions pinned here, into
// the bin directory (<bin>/charts/<chart>-<version>/), and builds the
// images named here. They run on providers with real containers (kind).
//
// Like the reference operator, they run in oplab-system: its
// ServiceAccounts are the cluster's trusted machinery (package fence), where
// the learner changes nothing but an operator's replicas. In default, where
// the learner may mint tokens, their ServiceAccount could be borrowed to
// pass the fence.
package thirdparty

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/operator/install"
)

// Operator is a third-party operator as a lab installs it.
type Operator struct {
	// Name is how a lab names it.
	Name string
	// Module is the Go module the operator, its chart and its CRDs come
	// from, at Version (module version, "v" included).
	Module, ModuleVersion string
	// ModuleChart is the chart's directory in the module.
	ModuleChart string
	// Chart and Version are the chart's name and version (its Chart.yaml),
	// which name its directory under <bin>/charts.
	Chart, Version string
	// Release is where the chart is installed and which Deployment runs
	// the operator.
	Release install.Release
	// Values override the chart's values.yaml: only the images.
	Values map[string]any
	// ChartImages are the images the chart runs with Values: the
	// operator's, and its data plane's where its configuration names it.
	ChartImages []string
	// ResourceImages are the images the custom resources name (a
	// RedisFailover's spec.redis.image), which labs set.
	ResourceImages []string
	// Managed selects the pods and claims the operator makes for its
	// custom resources, in any namespace.
	Managed string
}

// Images are what the installer loads into the cluster's nodes: every
// image the operator's pods and the pods it makes run, all built by
// `make images-operators`.
func (o Operator) Images() []string { return slices.Concat(o.ChartImages, o.ResourceImages) }

// The course's third-party operators.
var (
	// Zalando is Zalando's postgres-operator: Patroni-based PostgreSQL
	// clusters (CRD postgresql.acid.zalan.do/v1), whose pods run Spilo;
	// here a Spilo-compatible image of Debian's Patroni and PostgreSQL 15.
	Zalando = Operator{
		Name:   "postgres-operator",
		Module: "github.com/zalando/postgres-operator", ModuleVersion: "v1.15.1",
		ModuleChart: "charts/postgres-operator", Chart: "postgres-operator", Version: "1.15.1",
		Release: install.Release{Name: "postgres-operator", Namespace: install.Namespace,
			Deployment: "postgres-operator", Container: "postgres-operator"},
		Values: map[string]any{
			"image":         map[string]any{"registry": "oplab.local", "repository": "postgres-operator", "tag": "v1.15.1"},
			"configGeneral": map[string]any{"docker_image": SpiloImage},
		},
		ChartImages: []string{"oplab.local/postgres-operator:v1.15.1", SpiloImage},
		Managed:     "application=spilo",
	}
	// Spotahome is Spotahome's redis-operator: Redis with Sentinel
	// (CRD RedisFailover of databases.spotahome.com/v1). Its pods take the
	// image a RedisFailover names (spec.redis.image, spec.sentinel.image):
	// RedisImage here.
	Spotahome = Operator{
		Name:   "redis-operator",
		Module: "github.com/spotahome/redis-operator", ModuleVersion: "v1.2.4",
		ModuleChart: "charts/redisoperator", Chart: "redis-operator", Version: "3.2.6",
		Release: install.Release{Name: "redis-operator", Namespace: install.Namespace,
			Deployment: "redis-operator", Container: "redis-operator"},
		Values: map[string]any{
			"image": map[string]any{"repository": "oplab.local/redis-operator", "tag": "v1.2.4"},
		},
		ChartImages:    []string{"oplab.local/redis-operator:v1.2.4"},
		ResourceImages: []string{RedisImage},
		Managed:        "app.kubernetes.io/managed-by=redis-operator",
	}
)

// Images of the data planes, built here from Debian's packages.
const (
	// SpiloImage runs Patroni and PostgreSQL 15 as Spilo does, from the
	// variables the operator sets.
	SpiloImage = "oplab.local/spilo:15"
	// RedisImage holds redis-server, redis-sentinel and redis-cli 7.0.
	RedisImage = "oplab.local/redis:7.0.15"
)

// All are the operators a lab may name.
var All = []Operator{Zalando, Spotahome}

// Find returns the operator a lab names.
func Find(name string) (Operator, error) {
	i := slices.IndexFunc(All, func(o Operator) bool { return o.Name == name })
	if i < 0 {
		names := make([]string, len(All))
		for j, o := range All {
			names[j] = o.Name
		}
		return Operator{}, fmt.Errorf("no third-party operator %q: there are %s", name, strings.Join(names, ", "))
	}
	return All[i], nil
}

// ChartDir is where the build put the operator's chart under binDir.
func (o Operator) ChartDir(binDir string) string {
	return filepath.Join(binDir, "charts", o.Chart+"-"+o.Version)
}

// Installer returns an installer of the operator into cluster name of p,
// from its chart under binDir. It fails at once, saying what to do, when
// the chart was not built or p runs no containers.
func (o Operator) Installer(p *cluster.Provider, name, binDir string, timeout time.Duration, log *slog.Logger) (*install.Installer, error) {
	dir := o.ChartDir(binDir)
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		return nil, fmt.Errorf("chart of %s: %w (make images-operators takes it from %s@%s)", o.Name, err, o.Module, o.ModuleVersion)
	}
	return install.ForCluster(p, name, binDir, install.Options{
		Chart: os.DirFS(dir), Release: o.Release, Values: o.Values, Images: o.Images(), Timeout: timeout, Logger: log,
	})
}

// Extract copies o's chart out of its Go module (downloaded into the
// module cache by `go mod download`) into ChartDir(binDir). A chart already
// there is left alone.
func (o Operator) Extract(binDir string) error {
	dst := o.ChartDir(binDir)
	if _, err := os.Stat(filepath.Join(dst, "Chart.yaml")); err == nil {
		return nil
	}
	out, err := exec.Command("go", "mod", "download", "-json", o.Module+"@"+o.ModuleVersion).Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); err != nil || jerr != nil || mod.Dir == "" {
		return fmt.Errorf("go mod download %s@%s: %v %s", o.Module, o.ModuleVersion, errors.Join(err, jerr), mod.Error)
	}
	src := filepath.Join(mod.Dir, o.ModuleChart)
	tmp := dst + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case filepath.Dir(rel) == "." && (filepath.Ext(path) == ".tgz" || rel == "index.yaml"):
			return nil // packaged releases of the chart and their index, not the chart
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("copy the chart of %s: %w", o.Name, err)
	}
	return os.Rename(tmp, dst)
}
