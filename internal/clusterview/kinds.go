package clusterview

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/thirdparty"
)

// Kind is what a cluster view watches: a custom resource, the pods and
// Services it makes, and how to read them into a View. The zero Kind (nil
// in a Watcher) is oplab's PostgresCluster.
type Kind struct {
	// Resource is the custom resource's.
	Resource schema.GroupVersionResource
	// Pods selects the pods of the resource called name.
	Pods func(name string) labels.Set
	// Services names the Services of name whose endpoints the view shows.
	Services func(name string) []string
	// RoleLabel is the pods' role label; Roles maps its values to the
	// view's (primary, replica).
	RoleLabel string
	Roles     map[string]string
	// Read reads the resource into the view's Cluster.
	Read func(u *unstructured.Unstructured) (*Cluster, error)
}

// Kinds of the course's operators, by the name a lab gives its operator.
var (
	// Reference is oplab's PostgresCluster.
	Reference = Kind{
		Resource:  pgv1.GroupVersion.WithResource("postgresclusters"),
		Pods:      func(name string) labels.Set { return labels.Set{pgv1.LabelCluster: name} },
		Services:  func(name string) []string { return []string{name + "-rw", name + "-ro"} },
		RoleLabel: pgv1.LabelRole,
		Read: func(u *unstructured.Unstructured) (*Cluster, error) {
			var pgc pgv1.PostgresCluster
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pgc); err != nil {
				return nil, err
			}
			return clusterOf(&pgc), nil
		},
	}
	// Zalando is Zalando's postgresql: Patroni labels its pods' roles
	// (spilo-role), the Service <name> is the leader's, <name>-repl the
	// replicas'.
	Zalando = Kind{
		Resource:  schema.GroupVersionResource{Group: "acid.zalan.do", Version: "v1", Resource: "postgresqls"},
		Pods:      func(name string) labels.Set { return labels.Set{"application": "spilo", "cluster-name": name} },
		Services:  func(name string) []string { return []string{name, name + "-repl"} },
		RoleLabel: "spilo-role",
		Roles:     map[string]string{"master": pgv1.RolePrimary, "replica": pgv1.RoleReplica},
		Read: func(u *unstructured.Unstructured) (*Cluster, error) {
			status, _, _ := unstructured.NestedString(u.Object, "status", "PostgresClusterStatus")
			n, _, _ := unstructured.NestedInt64(u.Object, "spec", "numberOfInstances")
			return &Cluster{Phase: status, Replicas: int32(n), Generation: u.GetGeneration(), Deleting: u.GetDeletionTimestamp() != nil}, nil
		},
	}
	// Spotahome is Spotahome's RedisFailover: Redis pods rfr-<name>-N and
	// Sentinel pods rfs-<name>-N, the Redis ones labelled master or slave.
	Spotahome = Kind{
		Resource:  schema.GroupVersionResource{Group: "databases.spotahome.com", Version: "v1", Resource: "redisfailovers"},
		Pods:      func(name string) labels.Set { return labels.Set{"app.kubernetes.io/name": name} },
		Services:  func(name string) []string { return []string{"rfs-" + name, "rfr-" + name} },
		RoleLabel: "redisfailovers-role",
		Roles:     map[string]string{"master": pgv1.RolePrimary, "slave": pgv1.RoleReplica},
		Read: func(u *unstructured.Unstructured) (*Cluster, error) {
			n, _, _ := unstructured.NestedInt64(u.Object, "spec", "redis", "replicas")
			return &Cluster{Replicas: int32(n), Generation: u.GetGeneration(), Deleting: u.GetDeletionTimestamp() != nil}, nil
		},
	}
)

// KindOf returns the Kind of a lab's operator ("" is the reference one).
func KindOf(operator string) (Kind, bool) {
	k, ok := map[string]Kind{"": Reference, thirdparty.Zalando.Name: Zalando, thirdparty.Spotahome.Name: Spotahome}[operator]
	return k, ok
}

// role maps a pod's role label to the view's.
func (k Kind) role(labels map[string]string) string {
	v := labels[k.RoleLabel]
	if r, ok := k.Roles[v]; ok {
		return r
	}
	return v
}

// services are the Services of name, sorted.
func (k Kind) services(name string) []string {
	s := k.Services(name)
	slices.Sort(s)
	return s
}
