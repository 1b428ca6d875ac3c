package v1

// Condition types of a PostgresCluster.
const (
	// ConditionReady is True when every instance is ready and the primary
	// is behind the -rw Service.
	ConditionReady = "Ready"
	// ConditionPrimaryAvailable is True when the current primary is ready.
	ConditionPrimaryAvailable = "PrimaryAvailable"
	// ConditionProgressing is True while the operator moves the cluster
	// towards its spec, and False with a reason when it cannot.
	ConditionProgressing = "Progressing"
)

// Condition reasons.
const (
	ReasonAllReady             = "AllInstancesReady"
	ReasonInstancesNotReady    = "InstancesNotReady"
	ReasonPrimaryReady         = "PrimaryReady"
	ReasonPrimaryNotReady      = "PrimaryNotReady"
	ReasonBootstrapping        = "Bootstrapping"
	ReasonFailingOver          = "FailingOver"
	ReasonSwitchingOver        = "SwitchingOver"
	ReasonScaling              = "Scaling"
	ReasonUpToDate             = "UpToDate"
	ReasonQuotaExceeded        = "QuotaExceeded"
	ReasonStorageClassNotFound = "StorageClassNotFound"
	ReasonReconcileError       = "ReconcileError"
)

// Phases shown in the Phase printer column.
const (
	PhaseBootstrapping = "Bootstrapping"
	PhaseHealthy       = "Healthy"
	PhaseScaling       = "Scaling"
	PhaseFailingOver   = "FailingOver"
	PhaseSwitchingOver = "SwitchingOver"
	PhaseDegraded      = "Degraded"
	PhaseError         = "Error"
)

// Labels and annotations the operator sets or reads.
const (
	// LabelCluster is set on every object the operator makes to the name of
	// its PostgresCluster.
	LabelCluster = "databases.example.com/cluster"
	// LabelRole is set on instance pods: primary, replica or unhealthy. The
	// -rw Service selects role=primary, the -ro Service role=replica.
	LabelRole = "databases.example.com/role"
	// AnnotationSwitchoverTo on a PostgresCluster asks for a switchover to
	// the named pod; the operator removes it when done.
	AnnotationSwitchoverTo = "databases.example.com/switchover-to"
)

// Values of LabelRole.
const (
	RolePrimary   = "primary"
	RoleReplica   = "replica"
	RoleUnhealthy = "unhealthy"
)
