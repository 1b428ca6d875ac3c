package engine

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
)

// copyStorageClass makes a class that provisions as the default one does,
// is not itself the default, and is deleted by its undo.
func TestCopyStorageClass(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	ctx := testContext(t, 2*time.Minute)
	def, err := e.sourceClass(ctx, "")
	if err != nil {
		t.Fatalf("default class: %v", err)
	}
	p := &lab.CopyStorageClass{Name: "fast-ssd"}
	do, undo := actionFor(p)
	if err := do(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	got, err := e.cs.StorageV1().StorageClasses().Get(ctx, "fast-ssd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Provisioner != def.Provisioner || *got.VolumeBindingMode != *def.VolumeBindingMode {
		t.Errorf("copy: got provisioner %s, binding %s; want %s, %s", got.Provisioner, *got.VolumeBindingMode, def.Provisioner, *def.VolumeBindingMode)
	}
	if got.Annotations[defaultClassAnnotation] == "true" {
		t.Errorf("copy: got a second default class, want none")
	}
	tests := []struct {
		name string
		p    *lab.CopyStorageClass
		want string
	}{
		{"exists", &lab.CopyStorageClass{Name: "fast-ssd"}, "already exists"},
		{"no source", &lab.CopyStorageClass{Name: "slow", From: "missing"}, `read StorageClass missing`},
	}
	for _, tt := range tests {
		do, _ := actionFor(tt.p)
		if err := do(ctx, e, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	for range 2 { // idempotent
		if err := undo(ctx, e, nil); err != nil {
			t.Fatalf("undo: %v", err)
		}
	}
	if _, err := e.cs.StorageV1().StorageClasses().Get(ctx, "fast-ssd", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after undo: got %v, want not found", err)
	}
}
