//go:build ignore

// This file is added to k8s.io/apiserver/pkg/admission/plugin/cel in the
// copy of that module kube-controlplane is built against
// (hack/build-controlplane.sh, which removes the build constraint above: it
// keeps the file out of builds of this module, where it cannot compile).
// Upstream's newActivation is renamed newActivationAtOnce and left unused;
// evaluationActivation gains the field lazy, and its ResolveName asks
// resolveLazy first.
//
// Upstream converts the object, the old object, the namespace and the
// params of a request to unstructured maps each time it evaluates a
// policy's expressions, before the first of them runs: for every write that
// a policy's rules match, once for its match conditions and again for its
// validations. The fence's policies (internal/fence) begin with a match
// condition on the caller alone, which lets every trusted caller through:
// the controllers', the server's and the operator's writes paid for
// conversions nothing read. Here each of those four variables is converted
// when an expression first reads it, and kept for the rest of the
// evaluation. The request (small, and read by every fence condition) and
// the authorizers are made as upstream makes them.

package cel

import (
	"fmt"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/google/cel-go/common/types"
)

// lazyVariables converts an activation's object variables when they are
// first read.
type lazyVariables struct {
	mu     sync.Mutex
	source map[string]runtime.Object
	values map[string]interface{}
}

// resolveLazy resolves name if it is one of the variables converted when
// first read. A conversion that fails resolves to a CEL error, which fails
// the expression that read it, as a failed conversion failed upstream's
// evaluation.
func (a *evaluationActivation) resolveLazy(name string) (interface{}, bool) {
	l := a.lazy
	if l == nil {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.values[name]; ok {
		return v, true
	}
	obj, ok := l.source[name]
	if !ok {
		return nil, false
	}
	v, err := objectToResolveVal(obj)
	if err != nil {
		return types.NewErr("failed to prepare %s variable for evaluation: %v", name, err), true
	}
	l.values[name] = v
	return v, true
}

func newActivation(compositionCtx CompositionContext, versionedAttr *admission.VersionedAttributes, request *admissionv1.AdmissionRequest, inputs OptionalVariableBindings, namespace *v1.Namespace) (*evaluationActivation, error) {
	var authorizerVal, requestResourceAuthorizerVal any
	if inputs.Authorizer != nil {
		authorizerVal = library.NewAuthorizerVal(versionedAttr.GetUserInfo(), inputs.Authorizer)
		requestResourceAuthorizerVal = library.NewResourceAuthorizerVal(versionedAttr.GetUserInfo(), inputs.Authorizer, versionedAttr)
	}
	requestVal, err := convertObjectToUnstructured(request)
	if err != nil {
		return nil, fmt.Errorf("failed to prepare request variable for evaluation: %w", err)
	}
	source := map[string]runtime.Object{
		ObjectVarName:    versionedAttr.VersionedObject,
		OldObjectVarName: versionedAttr.VersionedOldObject,
		NamespaceVarName: namespace, // objectToResolveVal resolves a nil *v1.Namespace to null
		ParamsVarName:    inputs.VersionedParams,
	}
	va := &evaluationActivation{
		request:                   requestVal.Object,
		authorizer:                authorizerVal,
		requestResourceAuthorizer: requestResourceAuthorizerVal,
		lazy:                      &lazyVariables{source: source, values: make(map[string]interface{}, len(source))},
	}
	// composition is an optional feature that only applies for ValidatingAdmissionPolicy and MutatingAdmissionPolicy.
	if compositionCtx != nil {
		va.variables = compositionCtx.Variables(va)
	}
	return va, nil
}
