package install

import (
	"fmt"
	"io"
	"io/fs"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"sigs.k8s.io/yaml"
)

// LoadChart reads a chart whose Chart.yaml is at the root of fsys, such as
// charts.PGOperator().
func LoadChart(fsys fs.FS) (*chart.Chart, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: path, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read chart: %w", err)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	return c, nil
}

// Manifest is one rendered object of a chart.
type Manifest struct {
	Kind, Name, Namespace string
	// Object is the decoded YAML document.
	Object map[string]any
}

// Render renders chart c as `helm template` would, for release name and
// namespace with values vals, without a cluster. The result holds the
// templates' objects, not the CRDs of crds/.
func Render(c *chart.Chart, name, namespace string, vals map[string]any) ([]Manifest, error) {
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
	in := action.NewInstall(cfg)
	in.DryRun = true
	in.ClientOnly = true
	in.ReleaseName = name
	in.Namespace = namespace
	in.Replace = true
	in.IncludeCRDs = false
	in.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.1", Major: "1", Minor: "36"}
	rel, err := in.Run(c, vals)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", c.Name(), err)
	}
	return splitManifest(rel.Manifest)
}

// splitManifest decodes a release manifest into its objects.
func splitManifest(manifest string) ([]Manifest, error) {
	var out []Manifest
	for _, doc := range releaseutil.SplitManifests(manifest) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("decode rendered object: %w", err)
		}
		if obj == nil {
			continue
		}
		m := Manifest{Object: obj}
		m.Kind, _ = obj["kind"].(string)
		if md, ok := obj["metadata"].(map[string]any); ok {
			m.Name, _ = md["name"].(string)
			m.Namespace, _ = md["namespace"].(string)
		}
		out = append(out, m)
	}
	return out, nil
}

// field walks obj along path; numbers index lists.
func field(obj any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := obj.(map[string]any)
			if !ok {
				return nil
			}
			obj = m[k]
		case int:
			l, ok := obj.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			obj = l[k]
		}
	}
	return obj
}

func asSlice(v any) []any {
	l, _ := v.([]any)
	return l
}
