package fence

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The learner's identity.
const (
	// Namespace holds the learner's ServiceAccount.
	Namespace = "oplab-learner"
	// ServiceAccount is the account the learner acts as.
	ServiceAccount = "learner"
	// User is the learner's user name as the API server knows it.
	User = "system:serviceaccount:" + Namespace + ":" + ServiceAccount
	// Label marks the fence's objects; a learner can change none of them.
	Label = "oplab.dev/fence"
)

// untrustedCondition names the match condition every policy gets: the
// negation of manifests/trusted.cel.
const untrustedCondition = "untrusted"

//go:embed manifests
var manifests embed.FS

// Objects returns the fence's objects in the order they are applied: the
// identity and its RBAC (identity.yaml), then each policy (policy-*.yaml)
// and its binding. Every ValidatingAdmissionPolicy gets, as its first
// match condition, that the request comes from an untrusted identity.
func Objects() ([]*unstructured.Unstructured, error) {
	trusted, err := trustedExpression()
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(manifests, "manifests/policy-*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, f := range append([]string{"manifests/identity.yaml"}, files...) {
		objs, err := decode(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.GetKind() == "ValidatingAdmissionPolicy" {
				if err := addUntrusted(o, trusted); err != nil {
					return nil, fmt.Errorf("%s: %w", path.Base(f), err)
				}
			}
		}
		out = append(out, objs...)
	}
	return out, nil
}

// trustedExpression reads manifests/trusted.cel without its comments.
func trustedExpression() (string, error) {
	data, err := manifests.ReadFile("manifests/trusted.cel")
	if err != nil {
		return "", err
	}
	var lines []string
	for l := range strings.Lines(string(data)) {
		if !strings.HasPrefix(strings.TrimSpace(l), "//") {
			lines = append(lines, l)
		}
	}
	return strings.TrimSpace(strings.Join(lines, "")), nil
}

// decode reads the YAML documents of a manifest file.
func decode(name string) ([]*unstructured.Unstructured, error) {
	data, err := manifests.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for doc := range bytes.SplitSeq(data, []byte("\n---\n")) {
		var m map[string]any
		if err := yaml.UnmarshalStrict(doc, &m); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path.Base(name), err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// addUntrusted puts the untrusted condition first among the policy's
// match conditions.
func addUntrusted(policy *unstructured.Unstructured, trusted string) error {
	conds, _, err := unstructured.NestedSlice(policy.Object, "spec", "matchConditions")
	if err != nil {
		return err
	}
	if slices.ContainsFunc(conds, func(c any) bool {
		m, _ := c.(map[string]any)
		return m["name"] == untrustedCondition
	}) {
		return fmt.Errorf("policy %s names its own %q condition", policy.GetName(), untrustedCondition)
	}
	cond := map[string]any{"name": untrustedCondition, "expression": "!(\n" + trusted + "\n)"}
	return unstructured.SetNestedSlice(policy.Object, append([]any{cond}, conds...), "spec", "matchConditions")
}

// resources maps the kinds of the fence's objects to their resources.
var resources = map[string]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	"Namespace":                        {schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false},
	"ServiceAccount":                   {schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true},
	"ClusterRole":                      {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false},
	"ClusterRoleBinding":               {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false},
	"ValidatingAdmissionPolicy":        {schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}, false},
	"ValidatingAdmissionPolicyBinding": {schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}, false},
}
