package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
)

// Names of the objects of a cluster.
func HeadlessServiceName(pgc *pgv1.PostgresCluster) string { return pgc.Name + "-pods" }
func SecretName(pgc *pgv1.PostgresCluster) string          { return pgc.Name + "-credentials" }
func ConfigMapName(pgc *pgv1.PostgresCluster) string       { return pgc.Name + "-config" }
func CronJobName(pgc *pgv1.PostgresCluster) string         { return pgc.Name + "-backup" }

// ServiceName is the name of the Service that selects role: <name>-rw for
// the primary, <name>-ro for the replicas.
func ServiceName(pgc *pgv1.PostgresCluster, role string) string {
	if role == pgv1.RolePrimary {
		return pgc.Name + "-rw"
	}
	return pgc.Name + "-ro"
}

// AnnotationSpecHash on an owned object is a hash of the spec the operator
// built for it. The reconciler updates the object only when the hash of the
// freshly built spec differs, so it never fights the API server's defaults.
const AnnotationSpecHash = "databases.example.com/spec-hash"

// SelectorLabels select the instance pods of a cluster.
func SelectorLabels(pgc *pgv1.PostgresCluster) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "postgresql",
		"app.kubernetes.io/instance": pgc.Name,
		pgv1.LabelCluster:            pgc.Name,
	}
}

// Labels are put on every object of a cluster.
func Labels(pgc *pgv1.PostgresCluster) map[string]string {
	l := SelectorLabels(pgc)
	l["app.kubernetes.io/managed-by"] = "pg-operator"
	return l
}

// objectMeta is the metadata of an owned object called name.
func objectMeta(pgc *pgv1.PostgresCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       pgc.Namespace,
		Labels:          Labels(pgc),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(pgc, pgv1.GroupVersion.WithKind("PostgresCluster"))},
	}
}

// withHash stores the hash of spec in meta's annotations.
func withHash(meta *metav1.ObjectMeta, spec any) {
	b, err := json.Marshal(spec)
	if err != nil {
		panic("specs: marshal spec: " + err.Error()) // only plain API structs are hashed
	}
	sum := sha256.Sum256(b)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[AnnotationSpecHash] = hex.EncodeToString(sum[:8])
}
