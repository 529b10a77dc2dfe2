package results

import _ "embed"

// schemaV1 is the JSON Schema (draft 2020-12) of the v1 cell document.
//
//go:embed schema/v1.json
var schemaV1 []byte

// SchemaJSON returns the JSON Schema of the v1 cell document, for tools that
// validate documents without this package. The caller may modify the copy.
func SchemaJSON() []byte { return append([]byte(nil), schemaV1...) }
