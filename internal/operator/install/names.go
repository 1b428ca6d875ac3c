package install

// Where the chart is installed.
const (
	// Namespace holds the operator, its ServiceAccount and the helm release.
	Namespace = "oplab-system"
	// ReleaseName is the helm release, and the name of the Deployment and
	// ServiceAccount the chart makes.
	ReleaseName = "pg-operator"
	// ServiceAccount the operator runs as.
	ServiceAccount = "pg-operator"
	// Deployment of the operator.
	Deployment = "pg-operator"
	// Container of the operator in the Deployment's pods.
	Container = "pg-operator"
)

// Release is where a chart is installed and which Deployment runs its
// operator: the reference operator's (Reference), or a third-party
// operator's chart (see package thirdparty).
type Release struct {
	// Name is the helm release.
	Name string
	// Namespace holds the release and the operator.
	Namespace string
	// Deployment runs the operator, in a container called Container.
	Deployment, Container string
	// OwnsNamespace says the install made Namespace for the release alone,
	// so an uninstall deletes it.
	OwnsNamespace bool
}

// Reference is the reference operator's release.
var Reference = Release{Name: ReleaseName, Namespace: Namespace, Deployment: Deployment, Container: Container, OwnsNamespace: true}

func (r Release) orReference() Release {
	if r.Name == "" {
		return Reference
	}
	return r
}
