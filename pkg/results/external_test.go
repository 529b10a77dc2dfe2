package results

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestExternalCaveatsMatchTheSchema: the JSON Schema's enum of
// provenance.external.notGuaranteed is exactly ExternalCaveats, so a caveat
// added in Go cannot produce documents the schema refuses.
func TestExternalCaveatsMatchTheSchema(t *testing.T) {
	var sch struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON(), &sch); err != nil {
		t.Fatal(err)
	}
	enum := sch.Defs["externalTarget"].Properties["notGuaranteed"].Items.Enum
	if !slices.Equal(enum, ExternalCaveats()) {
		t.Errorf("schema enum %v, ExternalCaveats %v", enum, ExternalCaveats())
	}
}
