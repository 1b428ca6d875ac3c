package thirdparty

import (
	"os"
	"slices"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/operator/install"
)

// TestCharts takes each operator's chart out of its Go module, as the
// build does, and renders it as a lab installs it: the chart is the one
// pinned (name and version from its Chart.yaml), its CRDs come with it,
// the operator's Deployment and container are the ones the installer waits
// for and reads the log of, and every image the operator's pods and the
// pods it makes would run is one built here (no registry is reachable).
func TestCharts(t *testing.T) {
	bin := t.TempDir()
	for _, o := range All {
		t.Run(o.Name, func(t *testing.T) {
			if err := o.Extract(bin); err != nil {
				t.Fatal(err)
			}
			c, err := install.LoadChart(os.DirFS(o.ChartDir(bin)))
			if err != nil {
				t.Fatal(err)
			}
			if c.Name() != o.Chart || c.Metadata.Version != o.Version {
				t.Errorf("chart: got %s %s, want %s %s", c.Name(), c.Metadata.Version, o.Chart, o.Version)
			}
			if len(c.CRDObjects()) == 0 {
				t.Errorf("chart %s has no CRDs", o.Chart)
			}
			objs, err := install.Render(c, o.Release.Name, o.Release.Namespace, o.Values)
			if err != nil {
				t.Fatal(err)
			}
			var images []string
			found := false
			for _, m := range objs {
				for _, ctr := range containers(m.Object) {
					images = append(images, ctr["image"].(string))
					if m.Kind == "Deployment" && m.Name == o.Release.Deployment && ctr["name"] == o.Release.Container {
						found = true
					}
				}
				// Zalando names its pods' image in its configuration.
				images = append(images, valuesOf(m.Object, "docker_image")...)
			}
			if !found {
				t.Errorf("no Deployment %s with a container %s among %d objects", o.Release.Deployment, o.Release.Container, len(objs))
			}
			// Every image built for the chart is one it runs.
			for _, img := range o.ChartImages {
				if !slices.Contains(images, img) {
					t.Errorf("image %s is built for %s, but its chart does not run it (it runs %v)", img, o.Name, images)
				}
			}
			for _, img := range images {
				if !slices.Contains(o.ChartImages, img) || !strings.HasPrefix(img, "oplab.local/") {
					t.Errorf("image %s: want one of the images built here, %v", img, o.ChartImages)
				}
			}
		})
	}
}

// valuesOf returns the strings under key anywhere in v.
func valuesOf(v any, key string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == key {
				out = append(out, s)
			}
			out = append(out, valuesOf(x, key)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, valuesOf(x, key)...)
		}
	}
	return out
}

// containers returns the containers of a rendered workload.
func containers(obj map[string]any) []map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pspec, _ := tmpl["spec"].(map[string]any)
	var out []map[string]any
	for _, key := range []string{"initContainers", "containers"} {
		list, _ := pspec[key].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func TestFind(t *testing.T) {
	if o, err := Find("redis-operator"); err != nil || o.Release.Deployment != "redis-operator" {
		t.Errorf("Find(redis-operator): got %+v, %v", o.Release, err)
	}
	if _, err := Find("mysql-operator"); err == nil || !strings.Contains(err.Error(), "postgres-operator") {
		t.Errorf("Find(mysql-operator): got %v, want an error naming the operators there are", err)
	}
}

// TestImagesAreTheBuilt: the images the installer loads are the ones
// hack/kind/build-images.sh builds, which takes the modules' versions from
// here (hack/charts -module) and names the operators' images by them.
func TestImagesAreTheBuilt(t *testing.T) {
	script, err := os.ReadFile("../../../hack/kind/build-images.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SPILO_IMAGE=" + SpiloImage + "\n", "REDIS_IMAGE=" + RedisImage + "\n",
		`operator_image "oplab.local/postgres-operator:$version"`, `operator_image "oplab.local/redis-operator:${SPOTAHOME#*@}"`,
		"pin postgres-operator", "pin redis-operator"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("build-images.sh does not say %q", want)
		}
	}
	for _, o := range All {
		if want := "oplab.local/" + o.Name + ":" + o.ModuleVersion; o.ChartImages[0] != want {
			t.Errorf("%s's operator image: got %s, want %s (what build-images.sh tags)", o.Name, o.ChartImages[0], want)
		}
	}
}
