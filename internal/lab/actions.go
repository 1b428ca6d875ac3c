package lab

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

func actionSpecs() []KindSpec {
	return append([]KindSpec{
		newSpec[InstallOperator]("installOperator", "install the lab's operator's chart (the reference operator's, or a third-party one) and wait for its Deployment", 3*time.Minute, 0),
		newSpec[CreateCluster]("createCluster", "create a PostgresCluster", 30*time.Second, 0),
		newSpec[ApplyManifest]("applyManifest", "server-side apply one or more YAML documents", 30*time.Second, 0),
		newSpec[DeleteObject]("deleteObject", "delete one object, ignoring not found", 30*time.Second, 0),
		newSpec[WaitCondition]("waitCondition", "wait until a condition of the PostgresCluster has a status", 2*time.Minute, 0),
		newSpec[DeletePrimaryPod]("deletePrimaryPod", "delete the pod named in status.currentPrimary; T0 when it is gone", 30*time.Second, 0),
		newSpec[RemoveRoleVerbs]("removeRoleVerbs", "remove verbs on resources from the operator's role; T0 when the operator logs forbidden", 30*time.Second, 0),
		newSpec[ApplyQuota]("applyQuota", "apply a ResourceQuota; T0 when a FailedCreate event cites it", 30*time.Second, 0),
		newSpec[CopyStorageClass]("copyStorageClass", "create a StorageClass as a copy of another (the default class when from is empty)", 30*time.Second, 0),
		newSpec[SetStorageClass]("setStorageClass", "set spec.storage.storageClassName of the PostgresCluster", 30*time.Second, 0),
		newSpec[StopOperator]("stopOperator", "scale the operator's Deployment to 0 (or stop its process)", 30*time.Second, 0),
		newSpec[StartOperator]("startOperator", "scale the operator's Deployment back to 1", time.Minute, 0),
		newSpec[ScaleCluster]("scaleCluster", "set spec.replicas of the PostgresCluster", 30*time.Second, 0),
		newSpec[Switchover]("switchover", "ask the operator to make another instance the primary", time.Minute, 0),
		newSpec[PatchObject]("patchObject", "merge-patch one object or its status, as a hand with kubectl would", 30*time.Second, 0),
		newSpec[WaitPods]("waitPods", "wait until count pods of the selector are ready", 5*time.Minute, 0),
		newSpec[DeletePod]("deletePod", "delete the one ready pod the selector picks (a leader, a master); T0 when it is gone", time.Minute, 0),
		newSpec[ExecInPod]("execInPod", "run a command in the one ready pod the selector picks (write a row, a key)", time.Minute, 0),
	}, controllerActionSpecs()...)
}

// InstallOperator installs the bundled operator chart.
type InstallOperator struct {
	Namespace string `yaml:"namespace,omitempty"` // default oplab-system
	// Operator is a third-party operator to install from its own chart
	// (the lab's operator); the reference operator when empty.
	Operator string `yaml:"operator,omitempty"`
}

// CreateCluster creates a PostgresCluster.
type CreateCluster struct {
	Target        `yaml:",inline"`
	Replicas      int               `yaml:"replicas"`
	Version       string            `yaml:"version,omitempty"`
	Storage       Storage           `yaml:"storage,omitempty"`
	Requests      map[string]string `yaml:"requests,omitempty"`
	Limits        map[string]string `yaml:"limits,omitempty"`
	FailoverDelay Duration          `yaml:"failoverDelay,omitempty"`
}

// Storage is the storage part of a PostgresCluster spec.
type Storage struct {
	Size             string `yaml:"size,omitempty"`
	StorageClassName string `yaml:"storageClassName,omitempty"`
}

// Validate implements Validator.
func (c *CreateCluster) Validate() []FieldError {
	var errs []FieldError
	if c.Replicas < 1 || c.Replicas > 10 {
		errs = append(errs, FieldError{"replicas", fmt.Sprintf("must be 1..10, got %d", c.Replicas)})
	}
	if !versionRE.MatchString(c.Version) {
		errs = append(errs, FieldError{"version", fmt.Sprintf("want a PostgreSQL major version such as \"16\", got %q", c.Version)})
	}
	if c.Storage.Size != "" {
		errs = append(errs, quantity("storage.size", c.Storage.Size)...)
	}
	errs = append(errs, quantities("requests", c.Requests)...)
	return append(errs, quantities("limits", c.Limits)...)
}

// versionRE is the CRD's pattern for spec.version.
var versionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ApplyManifest applies YAML documents given inline.
type ApplyManifest struct {
	Manifest string `yaml:"manifest"`
}

// Validate implements Validator: each document needs apiVersion, kind and
// metadata.name.
func (a *ApplyManifest) Validate() []FieldError {
	if strings.TrimSpace(a.Manifest) == "" {
		return []FieldError{{"manifest", "is required"}}
	}
	var errs []FieldError
	dec := yaml.NewDecoder(strings.NewReader(a.Manifest))
	for i := 0; ; i++ {
		var obj struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		err := dec.Decode(&obj)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				errs = append(errs, FieldError{"manifest", fmt.Sprintf("document %d: %v", i+1, err)})
			}
			break
		}
		if obj.APIVersion == "" || obj.Kind == "" || obj.Metadata.Name == "" {
			errs = append(errs, FieldError{"manifest", fmt.Sprintf("document %d needs apiVersion, kind and metadata.name", i+1)})
		}
	}
	return errs
}

// DeleteObject deletes one object and, with Wait, waits until it is gone.
type DeleteObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Name       string `yaml:"name"`
	Namespace  string `yaml:"namespace,omitempty"`
	Wait       bool   `yaml:"wait,omitempty"`
}

// Validate implements Validator.
func (d *DeleteObject) Validate() []FieldError {
	errs := required("apiVersion", d.APIVersion)
	errs = append(errs, required("kind", d.Kind)...)
	return append(errs, dnsName("name", d.Name)...)
}

// WaitCondition waits for a condition of the PostgresCluster.
type WaitCondition struct {
	Target `yaml:",inline"`
	Type   string `yaml:"type"`
	Status string `yaml:"status"`
	Reason string `yaml:"reason,omitempty"`
}

// Validate implements Validator.
func (w *WaitCondition) Validate() []FieldError {
	return append(oneOf("type", w.Type, conditionTypes, false), oneOf("status", w.Status, statuses, false)...)
}

// DeletePrimaryPod deletes the current primary's pod.
type DeletePrimaryPod struct {
	Target `yaml:",inline"`
	Force  bool `yaml:"force,omitempty"` // grace period 0
}

// RemoveRoleVerbs removes verbs on resources from a role's rules.
type RemoveRoleVerbs struct {
	Role      string   `yaml:"role"`
	RoleKind  string   `yaml:"roleKind,omitempty"` // ClusterRole (default) or Role
	Namespace string   `yaml:"namespace,omitempty"`
	Resources []string `yaml:"resources"`
	Verbs     []string `yaml:"verbs"`
}

// Validate implements Validator.
func (r *RemoveRoleVerbs) Validate() []FieldError {
	errs := dnsName("role", r.Role)
	errs = append(errs, oneOf("roleKind", r.RoleKind, roleKinds, true)...)
	if r.RoleKind == "Role" && r.Namespace == "" {
		errs = append(errs, FieldError{"namespace", "is required for a Role"})
	}
	if len(r.Resources) == 0 {
		errs = append(errs, FieldError{"resources", "needs at least one resource"})
	}
	return append(errs, verbs("verbs", r.Verbs, false)...)
}

// ApplyQuota applies a ResourceQuota.
type ApplyQuota struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace"`
	Hard      map[string]string `yaml:"hard"`
}

// Validate implements Validator.
func (q *ApplyQuota) Validate() []FieldError {
	errs := append(dnsName("name", q.Name), dnsName("namespace", q.Namespace)...)
	if len(q.Hard) == 0 {
		errs = append(errs, FieldError{"hard", "needs at least one limit"})
	}
	return append(errs, quantities("hard", q.Hard)...)
}

// SetStorageClass changes the storage class a PostgresCluster asks for.
type SetStorageClass struct {
	Target           `yaml:",inline"`
	StorageClassName string `yaml:"storageClassName"`
}

// Validate implements Validator.
func (s *SetStorageClass) Validate() []FieldError {
	return dnsName("storageClassName", s.StorageClassName)
}

// CopyStorageClass creates the StorageClass Name with the provisioner,
// parameters, reclaim policy and binding mode of From, or of the cluster's
// default class when From is empty. A solution that names no provisioner
// works on every cluster provider: the embedded one provisions host paths,
// kind local-path volumes.
type CopyStorageClass struct {
	Name string `yaml:"name"`
	From string `yaml:"from,omitempty"`
}

// Validate implements Validator.
func (c *CopyStorageClass) Validate() []FieldError {
	errs := dnsName("name", c.Name)
	if c.From != "" {
		errs = append(errs, dnsName("from", c.From)...)
		if c.From == c.Name {
			errs = append(errs, FieldError{"from", fmt.Sprintf("must differ from name %q", c.Name)})
		}
	}
	return errs
}

// StopOperator stops the operator.
type StopOperator struct{}

// StartOperator starts the operator again.
type StartOperator struct{}

// ScaleCluster sets the number of instances.
type ScaleCluster struct {
	Target   `yaml:",inline"`
	Replicas int `yaml:"replicas"`
}

// Validate implements Validator.
func (s *ScaleCluster) Validate() []FieldError {
	if s.Replicas < 1 || s.Replicas > 10 {
		return []FieldError{{"replicas", fmt.Sprintf("must be 1..10, got %d", s.Replicas)}}
	}
	return nil
}

// Switchover makes Instance (a pod name) the primary.
type Switchover struct {
	Target   `yaml:",inline"`
	Instance string `yaml:"instance"`
}

// Validate implements Validator.
func (s *Switchover) Validate() []FieldError { return dnsName("instance", s.Instance) }

// PatchObject merge-patches one object (RFC 7386), or its status when
// Subresource is "status". Patch is a YAML or JSON mapping.
type PatchObject struct {
	APIVersion  string `yaml:"apiVersion"`
	Kind        string `yaml:"kind"`
	Name        string `yaml:"name"`
	Namespace   string `yaml:"namespace,omitempty"`
	Subresource string `yaml:"subresource,omitempty"`
	Patch       string `yaml:"patch"`
}

// Validate implements Validator.
func (p *PatchObject) Validate() []FieldError {
	errs := required("apiVersion", p.APIVersion)
	errs = append(errs, required("kind", p.Kind)...)
	errs = append(errs, dnsName("name", p.Name)...)
	errs = append(errs, oneOf("subresource", p.Subresource, []string{"status"}, true)...)
	var m map[string]any
	if err := yaml.Unmarshal([]byte(p.Patch), &m); err != nil || len(m) == 0 {
		errs = append(errs, FieldError{"patch", fmt.Sprintf("want a non-empty mapping (a merge patch), got %q", p.Patch)})
	}
	return errs
}

func quantity(field, v string) []FieldError {
	if _, err := resource.ParseQuantity(v); err != nil {
		return []FieldError{{field, fmt.Sprintf("%q is not a quantity: %v", v, err)}}
	}
	return nil
}

func quantities(field string, m map[string]string) []FieldError {
	var errs []FieldError
	for k, v := range m {
		errs = append(errs, quantity(field+"."+k, v)...)
	}
	return errs
}
