// Package podexec runs a command in a pod's container through the API
// server's exec, as `kubectl exec` does: what checks a data plane from
// outside the cluster (whose pod addresses it cannot reach) asks with.
package podexec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// Run runs cmd in container of pod namespace/name and returns its standard
// output. A command that fails is an error that carries its standard
// error.
func Run(ctx context.Context, cfg *rest.Config, namespace, pod, container string, cmd ...string) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: container,
		Command:   cmd,
		Stdout:    true,
		Stderr:    true,
	}, scheme.ParameterCodec)
	exec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return "", fmt.Errorf("exec in pod %s: %w", pod, err)
	}
	var stdout, stderr bytes.Buffer
	if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		return stdout.String(), fmt.Errorf("exec %q in pod %s: %w: %s", strings.Join(cmd, " "), pod, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Stream runs cmd in container of pod namespace/name with stdin, stdout
// and stderr streamed as they come, as `kubectl exec -i` does, until it
// exits or ctx ends. A non-zero exit is an error with ExitStatus() (see
// k8s.io/client-go/util/exec.CodeExitError).
func Stream(ctx context.Context, cfg *rest.Config, namespace, pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: container,
		Command:   cmd,
		Stdin:     stdin != nil,
		Stdout:    true,
		Stderr:    true,
	}, scheme.ParameterCodec)
	exec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return fmt.Errorf("exec in pod %s: %w", pod, err)
	}
	return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}
