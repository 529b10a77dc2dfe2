package specs

import (
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
)

// The agent's plan has its own profile defaults (for its command line,
// which has no API server); they must be the API's.
func TestProfileDefaultsAgreeWithTheAPI(t *testing.T) {
	if agentapi.DefaultProfileSeconds != dbbenchv1alpha1.DefaultProfileSeconds || agentapi.DefaultProfileFrequencyHz != dbbenchv1alpha1.DefaultProfileFrequencyHz {
		t.Errorf("plan's profile defaults %d s at %d Hz, the API's %d s at %d Hz",
			agentapi.DefaultProfileSeconds, agentapi.DefaultProfileFrequencyHz, dbbenchv1alpha1.DefaultProfileSeconds, dbbenchv1alpha1.DefaultProfileFrequencyHz)
	}
}
