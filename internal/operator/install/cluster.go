package install

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"

	"oplab.dev/oplab/charts"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/oplog"
)

// ForCluster returns an Installer for the cluster name of p.
//
// On a provider that runs workloads as host processes (the embedded one) the
// operator runs from binDir (pg-operator, run by hostpod) with its
// kubeconfig, token and log in a directory beside the cluster's admin
// kubeconfig, so they go with the cluster. On a provider whose pods run no
// container the operator simulates its PostgreSQL instances, unless
// opts.Values sets instanceMode.
func ForCluster(p *cluster.Provider, name, binDir string, opts Options) (*Installer, error) {
	cfg, err := p.RESTConfig(name)
	if err != nil {
		return nil, err
	}
	info := p.Info()
	if opts.Release.Name != "" && opts.Release != Reference && !info.Capabilities.RealContainers {
		// Only the reference operator has a host process to stand in for
		// its pod.
		return nil, fmt.Errorf("operator %s needs real containers, which the %s provider does not run (use kind)", opts.Release.Name, info.Name)
	}
	if !info.Capabilities.RealContainers {
		vals := maps.Clone(opts.Values)
		if vals == nil {
			vals = map[string]any{}
		}
		if _, set := vals["instanceMode"]; !set {
			vals["instanceMode"] = "simulated"
		}
		opts.Values = vals
	}
	if info.Capabilities.HostProcesses && opts.Host == nil {
		kc, err := p.KubeconfigPath(name)
		if err != nil {
			return nil, err
		}
		opts.Host = &Host{
			Runner:          p,
			Cluster:         name,
			Operator:        filepath.Join(binDir, "pg-operator"),
			HostPod:         filepath.Join(binDir, "hostpod"),
			AdminKubeconfig: kc,
			Dir:             oplog.Beside(kc).Dir,
			// Where the cluster serves profiles, so does its operator.
			Profiling: p.Profiling(),
		}
	} else if info.Capabilities.CellOperator {
		if opts.Cell == nil {
			opts.Cell = &Cell{Dir: cluster.CellOperatorDir}
		}
	} else if info.Capabilities.LoadImages && opts.Preload == nil {
		opts.Preload = func(ctx context.Context) error { return preload(ctx, p, name, opts) }
	} else if !info.Capabilities.RealContainers && !info.Capabilities.HostProcesses {
		return nil, fmt.Errorf("provider %s can neither run the operator's container nor a host process", info.Name)
	}
	return New(cfg, opts), nil
}

// PostgresImage is the image of the instances of a PostgresCluster of
// version 15 (the operator names "postgres:<version>").
const PostgresImage = "docker.io/library/postgres:15"

// preload copies the operator's image into the cluster's nodes, and
// PostgreSQL's when the local engine has it (elsewhere the nodes may pull
// it from a registry).
func preload(ctx context.Context, p *cluster.Provider, name string, opts Options) error {
	if len(opts.Images) > 0 {
		return p.LoadImages(ctx, name, opts.Images...)
	}
	image, err := OperatorImage(opts)
	if err != nil {
		return err
	}
	if err := p.LoadImages(ctx, name, image); err != nil {
		return err
	}
	if err := p.LoadImages(ctx, name, PostgresImage); err != nil {
		if opts.Logger != nil {
			opts.Logger.Warn("PostgreSQL's image was not loaded; the nodes will pull it", "image", PostgresImage, "error", err)
		}
	}
	return nil
}

// OperatorImage is the operator image the chart's Deployment runs with
// opts.Values: image.repository and image.tag, the tag defaulting to the
// chart's appVersion.
func OperatorImage(opts Options) (string, error) {
	fsys := opts.Chart
	if fsys == nil {
		fsys = charts.PGOperator()
	}
	c, err := LoadChart(fsys)
	if err != nil {
		return "", err
	}
	values := maps.Clone(c.Values)
	if img, ok := opts.Values["image"].(map[string]any); ok {
		merged := map[string]any{}
		if base, ok := values["image"].(map[string]any); ok {
			maps.Copy(merged, base)
		}
		maps.Copy(merged, img)
		values["image"] = merged
	}
	img, _ := values["image"].(map[string]any)
	repo, _ := img["repository"].(string)
	tag, _ := img["tag"].(string)
	if tag == "" {
		tag = c.Metadata.AppVersion
	}
	if repo == "" || tag == "" {
		return "", fmt.Errorf("the chart names no operator image (image.repository %q, tag %q)", repo, tag)
	}
	return repo + ":" + tag, nil
}
