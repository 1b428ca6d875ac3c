// Package oplog reads an operator's log, wherever it lives: Source is a
// log the page's stream, `oplab logs`, the debrief and the grader read
// alike. Which source a cluster's operator has — its host process's files,
// its pod's log through the API server — is decided once, by package
// install (install.OperatorLog), which runs the operator.
//
// On a provider that runs the operator as a host process (the embedded one),
// hostpod writes the operator's output in the CRI log format to a file in a
// directory beside the cluster's admin kubeconfig, and moves the previous
// run's file aside at each restart. Location names those files; ParseCRI and
// Joiner read CRI records and join partial ones; ParseEntry turns the
// operator's own line (slog text or JSON, zap JSON or console, klog, or plain
// text), or another operator's (Zalando's and Spotahome's logrus lines), into
// an Entry of time, level, object and message; Follow tails the log across
// restarts and truncation.
//
// A reconcile pass of the reference operator is one line; its Entry carries
// the Pass the course draws (Watch → Diff → Act → status, took, next, idle),
// which the page draws from the Entry's JSON and the terminal from
// Entry.Text, so both show the same thing.
package oplog
