// Package v1alpha1 contains the dbbench.io/v1alpha1 API: BenchmarkRun, a
// database benchmark matrix (engines × versions × config variants × workload
// steps × client concurrency) that the dbbench controller runs on pinned nodes.
//
// +kubebuilder:object:generate=true
// +groupName=dbbench.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "dbbench.io", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
