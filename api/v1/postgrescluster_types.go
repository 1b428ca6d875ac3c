package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PostgresClusterSpec is the desired state of a PostgreSQL cluster: one
// primary and replicas-1 streaming replicas.
type PostgresClusterSpec struct {
	// Replicas is the number of PostgreSQL instances, the primary included.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +required
	Replicas int32 `json:"replicas"`

	// Version is the PostgreSQL major version, for example "15". It picks the
	// container image postgres:<version>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +required
	Version string `json:"version"`

	// Resources are the compute resources of each instance's container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Storage describes each instance's data volume.
	// +optional
	Storage StorageSpec `json:"storage,omitempty"`

	// Backup schedules base backups with a CronJob. Without it, no backups
	// are taken and an existing backup CronJob is removed.
	// +optional
	Backup *BackupSpec `json:"backup,omitempty"`

	// FailoverDelay is how many seconds the primary may be missing or not
	// ready before the operator fails over to a replica.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=0
	// +optional
	FailoverDelay int32 `json:"failoverDelay,omitempty"`
}

// StorageSpec describes the PersistentVolumeClaim made for each instance.
type StorageSpec struct {
	// Size of each instance's volume; 1Gi when empty.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the volumes; the cluster's default class when empty.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// BackupSpec schedules base backups.
type BackupSpec struct {
	// Schedule in the five-field cron format: minute hour day-of-month month
	// day-of-week, for example "0 2 * * *".
	// +kubebuilder:validation:Pattern=`^\s*([0-9*/,-]+)\s+([0-9*/,-]+)\s+([0-9*/,?LW-]+)\s+([0-9A-Za-z*/,-]+)\s+([0-9A-Za-z*/,?L#-]+)\s*$`
	// +required
	Schedule string `json:"schedule"`

	// Retention is how long backups are kept: a number and a unit, d (days)
	// or w (weeks), for example 7d or 4w.
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,3}[dw]$`
	// +kubebuilder:default="7d"
	// +optional
	Retention string `json:"retention,omitempty"`
}

// PostgresClusterStatus is the observed state of a PostgreSQL cluster.
type PostgresClusterStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of instance pods that exist.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of instance pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Selector is the label selector of the instance pods, for the scale
	// subresource (kubectl scale, HorizontalPodAutoscaler).
	// +optional
	Selector string `json:"selector,omitempty"`

	// CurrentPrimary is the pod running the primary.
	// +optional
	CurrentPrimary string `json:"currentPrimary,omitempty"`

	// CurrentPrimaryTimestamp is when CurrentPrimary took over.
	// +optional
	CurrentPrimaryTimestamp *metav1.Time `json:"currentPrimaryTimestamp,omitempty"`

	// TargetPrimary is the pod chosen to be primary. It differs from
	// CurrentPrimary while a failover or switchover is in progress.
	// +optional
	TargetPrimary string `json:"targetPrimary,omitempty"`

	// TargetPrimaryTimestamp is when TargetPrimary was chosen.
	// +optional
	TargetPrimaryTimestamp *metav1.Time `json:"targetPrimaryTimestamp,omitempty"`

	// Phase is a one-word summary for display; read Conditions for decisions.
	// +optional
	Phase string `json:"phase,omitempty"`

	// InstanceControl says how the operator talks to PostgreSQL: "sql" or
	// "simulated" (no database runs; state is kept in pod annotations).
	// +optional
	InstanceControl string `json:"instanceControl,omitempty"`

	// Conditions: Ready, PrimaryAvailable and Progressing.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PostgresCluster is a PostgreSQL cluster with streaming replication and
// automated failover.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pgc,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.currentPrimary`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PostgresCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PostgresClusterSpec `json:"spec"`
	// +optional
	Status PostgresClusterStatus `json:"status,omitempty"`
}

// PostgresClusterList is a list of PostgresClusters.
//
// +kubebuilder:object:root=true
type PostgresClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PostgresCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PostgresCluster{}, &PostgresClusterList{})
}
