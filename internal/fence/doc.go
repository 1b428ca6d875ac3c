// Package fence keeps a learner inside their cluster through the cluster's
// own API server, on every provider: an identity to act as, the RBAC it
// holds, and the admission policies that narrow what it may do.
//
// A learner is admin of their own cluster in all but what reaches past it.
// They act as the ServiceAccount oplab-learner/learner (User), whose token
// the web console and the YAML editor use (Kubeconfig). Its ClusterRole is
// wide, every verb on every group the labs use, but without escalate,
// bind, impersonate (but for the operator's account), approve or sign, and
// without the API server's proxies, so RBAC escalation prevention keeps
// the learner from granting themselves, or any account they make, more.
//
// ValidatingAdmissionPolicies then apply to every request of an untrusted
// identity (manifests/trusted.cel says who is trusted: the control plane,
// the nodes and the system namespaces' own ServiceAccounts, each with a
// credential of its own). They refuse what would reach the node
// (privileged and host-namespace pods, node volumes, the kubelet's proxy),
// what would forge the grader's evidence (Events, status, the simulated
// servers' annotations, the EndpointSlice controller's slices, objects
// posing as the operator's) and changes to the cluster's own machinery
// (its system namespaces, KWOK's objects, oplab's CRDs, the fence itself).
// Each refusal says in one line what is not allowed and why.
//
// Install puts all of it in a cluster with the admin identity and returns
// once the API server enforces it. The grader, chaos and the installer
// keep the admin identity; so does the offline CLI, on a machine of the
// learner's own.
package fence
