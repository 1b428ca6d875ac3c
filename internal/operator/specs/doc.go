// Package specs builds the Kubernetes objects a PostgresCluster owns: the
// StatefulSet of instances, the -rw, -ro and headless Services, the
// credentials Secret, the configuration ConfigMap, the backup CronJob and
// the PodDisruptionBudget.
//
// Every builder is a pure function of the PostgresCluster (and, for the
// Secret, of a password): no I/O, so each is unit-tested and the reconciler
// only compares and applies.
package specs
