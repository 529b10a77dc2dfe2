package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DatabaseTemplate is an object of any namespaced kind (typically another
// operator's custom resource, such as a CloudNativePG Cluster or a
// mariadb-operator MariaDB) that dbbench creates for each cell, waits for,
// benchmarks like an external target and deletes when the cell ends. The
// manager needs RBAC rights (get, create, delete) on the kind: the chart's
// rbac.templateKinds grants them (docs/design.md, "Operator-managed
// targets").
type DatabaseTemplate struct {
	// object is the manifest created per cell. Every "{version}" in its
	// string values becomes the cell's version and every "{name}" the
	// object's name. dbbench sets metadata.name (the cell's object name,
	// specs.TemplateObjectName), metadata.namespace (the run's) and an
	// owner reference to the run, so the object goes with the run.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	Object runtime.RawExtension `json:"object"`

	// readyCondition is the type of the object's status condition
	// (status.conditions[].type) whose status "True" means the database
	// accepts clients: Ready for CloudNativePG and mariadb-operator,
	// Available for a Deployment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	ReadyCondition string `json:"readyCondition"`

	// readyTimeout bounds the wait for readyCondition from the object's
	// creation; the cell then fails with reason TemplateNotReady. Default
	// 10 minutes.
	// +optional
	ReadyTimeout *metav1.Duration `json:"readyTimeout,omitempty"`

	// endpoint says where the ready object's database listens and which
	// Secret holds its credentials.
	Endpoint TemplateEndpoint `json:"endpoint"`
}

// TemplateEndpoint is how to reach a templated object's database: the host
// given or read from one of the object's fields, and a credentials Secret.
// +kubebuilder:validation:XValidation:rule="has(self.host) != has(self.hostField)",message="endpoint: give exactly one of host and hostField"
// +kubebuilder:validation:XValidation:rule="!(has(self.port) && has(self.portField))",message="endpoint: give at most one of port and portField"
type TemplateEndpoint struct {
	// host is the server's address as the client pod resolves it; "{name}"
	// becomes the object's name (for example "{name}-rw", the read-write
	// Service of a CloudNativePG Cluster).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Host string `json:"host,omitempty"`

	// hostField is the dotted path of a string field of the ready object
	// that holds the host (for example status.writeService).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`
	// +optional
	HostField string `json:"hostField,omitempty"`

	// port of the server; the engine's standard port when neither port
	// nor portField is set.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// portField is the dotted path of an integer field of the ready object
	// that holds the port.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`
	// +optional
	PortField string `json:"portField,omitempty"`

	// database is an existing database the client connects to first, as
	// in external.database.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Database string `json:"database,omitempty"`

	// credentialsSecret names a Secret in the run's namespace with the
	// account's user and password; "{name}" in its name becomes the
	// object's name (for example "{name}-app", the application Secret of a
	// CloudNativePG Cluster). The account needs the right to create and
	// drop databases, as for an external target.
	CredentialsSecret CredentialsSecretRef `json:"credentialsSecret"`
}

// CellTarget is the object a templated cell created and the endpoint read
// from it once ready.
type CellTarget struct {
	// apiVersion of the object.
	APIVersion string `json:"apiVersion"`
	// kind of the object.
	Kind string `json:"kind"`
	// name of the object in the run's namespace.
	Name string `json:"name"`
	// readyTime is when readyCondition was first seen True.
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`
	// host is the server's address read from the ready object.
	// +optional
	Host string `json:"host,omitempty"`
	// port is the server's port read from the ready object; 0 for the
	// engine's standard port.
	// +optional
	Port int32 `json:"port,omitempty"`
	// credentialsSecret is the Secret's name with {name} replaced.
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
	// deleted is set once the object was deleted at the cell's end.
	// +optional
	Deleted bool `json:"deleted,omitempty"`
}

// DefaultTemplateReadyTimeout bounds the wait for a templated object when
// template.readyTimeout is unset.
const DefaultTemplateReadyTimeout = 10 * time.Minute

// ReadyTimeoutOrDefault is readyTimeout, or DefaultTemplateReadyTimeout.
func (t *DatabaseTemplate) ReadyTimeoutOrDefault() time.Duration {
	if t.ReadyTimeout == nil {
		return DefaultTemplateReadyTimeout
	}
	return t.ReadyTimeout.Duration
}
