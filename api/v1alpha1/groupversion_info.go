// Package v1alpha1 contains the dbbench.io/v1alpha1 API: BenchmarkRun, a
// database benchmark matrix (engines × versions × config variants × workload
// steps × client concurrency) that the dbbench controller runs on pinned nodes.
//
// +kubebuilder:object:generate=true
// +groupName=dbbench.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "dbbench.io", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types with a scheme. It is
	// apimachinery's, not controller-runtime's scheme.Builder (deprecated:
	// an API package should not import controller-runtime).
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme

	// knownTypes are the kinds each type's file registers in its init.
	knownTypes []runtime.Object
)

// register adds kinds to the API (called from the types' init functions).
func register(objs ...runtime.Object) { knownTypes = append(knownTypes, objs...) }

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, knownTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
