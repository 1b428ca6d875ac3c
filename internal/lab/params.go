package lab

import (
	"fmt"
	"regexp"
	"slices"
)

// targeted is implemented by parameters that act on a PostgresCluster; an
// empty cluster or namespace is filled from the lab's target.
type targeted interface{ target() *Target }

func (t *Target) target() *Target { return t }

// clusterOptional is a targeted params that can do without a cluster (it
// names another workload instead).
type clusterOptional interface{ clusterOptional() bool }

// clusterOptional implements clusterOptional: a quota bounded by a
// StatefulSet's need names no PostgresCluster.
func (q *QuotaEnforced) clusterOptional() bool { return q.StatefulSet != "" }

var (
	nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

	conditionTypes = []string{"Ready", "PrimaryAvailable", "Progressing"}
	statuses       = []string{"True", "False", "Unknown"}
	rbacVerbs      = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate"}
	roleKinds      = []string{"ClusterRole", "Role"}
)

func required(field, v string) []FieldError {
	if v == "" {
		return []FieldError{{field, "is required"}}
	}
	return nil
}

func dnsName(field, v string) []FieldError {
	if v == "" {
		return []FieldError{{field, "is required"}}
	}
	if !nameRE.MatchString(v) {
		return []FieldError{{field, fmt.Sprintf("%q is not a valid Kubernetes name", v)}}
	}
	return nil
}

func oneOf(field, v string, allowed []string, optional bool) []FieldError {
	if v == "" && optional {
		return nil
	}
	if !slices.Contains(allowed, v) {
		return []FieldError{{field, fmt.Sprintf("%q is not one of %v", v, allowed)}}
	}
	return nil
}

func verbs(field string, vs []string, allowWildcard bool) []FieldError {
	if len(vs) == 0 {
		return []FieldError{{field, "needs at least one verb"}}
	}
	var errs []FieldError
	for i, v := range vs {
		if v == "*" && allowWildcard {
			continue
		}
		if !slices.Contains(rbacVerbs, v) {
			errs = append(errs, FieldError{fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("unknown verb %q", v)})
		}
	}
	return errs
}

func compiles(field, pattern string) []FieldError {
	if _, err := regexp.Compile(pattern); err != nil {
		return []FieldError{{field, fmt.Sprintf("invalid regular expression: %v", err)}}
	}
	return nil
}
