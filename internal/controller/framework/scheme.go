package framework

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// Scheme is the scheme the controllers' clients use: Kubernetes' built-in
// kinds and dbbench's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(dbbenchv1alpha1.AddToScheme(s))
	return s
}
