// Package console runs the web console's kubectl commands: each command
// line a learner types runs bin/kubectl (the cluster line's own) as a child
// process, never through a shell and never inside the server's process.
//
// Reading order:
//   - parse.go: Split, a shell-like splitter (quotes, backslashes) built on
//     mvdan.cc/sh's parser that refuses pipes, redirections, $VAR, $(…) and
//     every other piece of shell syntax with a message naming it;
//   - verbs.go, flags.go, allow.go: the allow-list. Parse accepts kubectl's
//     read commands (get, describe, logs, explain, events, top, api-*,
//     version, cluster-info, auth can-i/whoami, wait, -w), its write
//     commands (apply/create/replace/diff with -f - only, delete, patch,
//     scale, label, annotate, rollout, set, expose, autoscale, run without a
//     terminal, cordon/drain/taint) and their common flags; it refuses
//     anything that reads or writes the server's files (-f <path>, -k,
//     --from-file, -o *-file, cp), opens its ports (proxy, port-forward),
//     reaches other clusters or identities (--kubeconfig, --server, --token,
//     --context …; --as and --as-group only on auth can-i), needs a
//     terminal (edit, attach, -it) or is unknown (plugins, alpha, config).
//     exec and debug are allowed only where the provider runs containers
//     (Policy.Containers); get --raw only on the API server's own paths,
//     never its proxy.
//   - run.go: Runner.Run gives each command a private directory holding the
//     learner's kubeconfig (0600, removed afterwards) as HOME and working
//     directory, a minimal environment, the YAML editor's text as stdin, a
//     time limit (longer for commands that follow), an output cap, and
//     streams stdout and stderr as they come; the process group is killed
//     on cancel.
//   - limits.go: the Runner is shared by every learner, so it counts each
//     owner's commands (Request.Owner, the learner) and refuses one over
//     Options.Limits at once (ErrTooMany): a few commands at a time, fewer
//     of those that follow.
//   - redact.go: Redact masks the secret values a command line carries
//     (--from-literal values, --docker-password, --token, credential
//     environment values, a URL's password, the patch of a Secret) before
//     the line is kept anywhere a person other than the learner reads.
//   - sandbox.go: where bubblewrap works, the command runs in a root of its
//     own that holds kubectl, its directory and a few /etc files only, so
//     even an allowed command cannot read the server's files. What the
//     root holds is decided there; package bwrap, which makes the clusters'
//     cells too, turns it into bwrap's arguments and probes bwrap.
//     Runner.Sandboxed says which; scripts/ensure-bwrap.sh installs bwrap.
//   - complete.go: Completer completes verbs, flags, resource types (from
//     the cluster's discovery, cached per session) and object names.
//
// The package holds no Kubernetes client: every question to the cluster is
// a kubectl command through the same runner, under the same rules — the
// learner's lines, the YAML editor's apply -f - and Tab's questions alike
// go through Runner.run, the same sandbox and the same caps.
package console
