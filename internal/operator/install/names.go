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
