// Package v1 contains the v1 API of the databases.example.com group: the
// PostgresCluster resource that the reference operator (cmd/pg-operator)
// reconciles.
//
// The CRD, deepcopy functions and RBAC rules are generated from the markers
// in this package by controller-gen (`make generate`).
//
// +kubebuilder:object:generate=true
// +groupName=databases.example.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "databases.example.com", Version: "v1"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
