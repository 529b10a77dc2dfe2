package results

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaV1 is the JSON Schema (draft 2020-12) of the v1 cell document.
//
//go:embed schema/v1.json
var schemaV1 []byte

// SchemaJSON returns the JSON Schema of the v1 cell document, for tools that
// validate documents without this package. The caller may modify the copy.
func SchemaJSON() []byte { return append([]byte(nil), schemaV1...) }

// schemaResource is the name the embedded schema is compiled under.
const schemaResource = "v1.json"

// compiledSchema compiles the embedded schema once. It is part of the binary,
// so a schema that does not compile is a build defect (a test compiles it),
// not a run-time condition.
var compiledSchema = sync.OnceValue(func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaV1))
	if err != nil {
		panic(fmt.Sprintf("results: embedded schema/v1.json is not JSON: %v", err))
	}
	c := jsonschema.NewCompiler()
	// Formats are annotations unless asserted; the timestamps must be
	// RFC 3339 for readers in other languages.
	c.AssertFormat()
	if err := c.AddResource(schemaResource, doc); err != nil {
		panic(fmt.Sprintf("results: adding schema/v1.json: %v", err))
	}
	s, err := c.Compile(schemaResource)
	if err != nil {
		panic(fmt.Sprintf("results: compiling schema/v1.json: %v", err))
	}
	return s
})

// ValidateJSON checks an encoded document against the published JSON Schema
// only, naming every bad field by its JSON path. Validate applies the schema
// and the rules across fields; this is for checking bytes as written, before
// they are decoded.
func ValidateJSON(data []byte) error {
	c := &checker{}
	c.schema(data)
	return c.err()
}

var schemaPrinter = message.NewPrinter(language.English)

// schema validates the encoded document against the JSON Schema and adds
// one problem per failed keyword, at the path of the value that failed.
func (c *checker) schema(data []byte) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		c.add("(document)", "not JSON: %v", err)
		return
	}
	err = compiledSchema().Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return
	} else if !errors.As(err, &ve) {
		c.add("(document)", "%v", err)
		return
	}
	c.schemaLeaves(ve, nil)
}

// schemaLeaves adds the leaves of the library's error tree: inner nodes
// (allOf, $ref, if/then) only say that something below them failed. parent
// is the instance location of the node above e.
func (c *checker) schemaLeaves(e *jsonschema.ValidationError, parent []string) {
	// A bad map key (the counters' names) is reported under the map. The
	// library (v6.0.3) gives such an error an instance location it goes on
	// to overwrite, and the key's own causes none: the map's path is the
	// parent's plus the property the propertyNames keyword sits under.
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		loc := parent
		if toks := strings.Split(e.SchemaURL, "/"); len(toks) >= 3 && toks[len(toks)-1] == "propertyNames" && toks[len(toks)-3] == "properties" {
			loc = append(slices.Clone(parent), toks[len(toks)-2])
		}
		why := ""
		if len(e.Causes) > 0 {
			why = ": " + e.Causes[0].ErrorKind.LocalizedString(schemaPrinter)
		}
		c.add(joinPath(jsonPath(loc), k.Property), "is not a valid name%s", why)
		return
	}
	if len(e.Causes) > 0 {
		for _, cause := range e.Causes {
			c.schemaLeaves(cause, e.InstanceLocation)
		}
		return
	}
	path := jsonPath(e.InstanceLocation)
	// The messages for the common failures read as Validate's own always
	// did; the rest are the library's.
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			c.add(joinPath(path, m), "must be set")
		}
	case *kind.Minimum:
		if k.Want.Sign() == 0 {
			got, _ := k.Got.Float64()
			c.add(path, "must not be negative, got %v", got)
			return
		}
		c.add(path, "%s", k.LocalizedString(schemaPrinter))
	case *kind.MinLength:
		if k.Got == 0 {
			c.add(path, "must be set")
			return
		}
		c.add(path, "%s", k.LocalizedString(schemaPrinter))
	case *kind.Pattern:
		if k.Got == "" {
			c.add(path, "must be set")
			return
		}
		c.add(path, "%s", k.LocalizedString(schemaPrinter))
	case *kind.FalseSchema:
		// The schema forbids a field outright only where the document's form
		// or outcome rules it out.
		c.add(path, "must be absent (not allowed with this form or status.outcome)")
	default:
		c.add(path, "%s", e.ErrorKind.LocalizedString(schemaPrinter))
	}
}

// jsonPath writes a JSON Pointer's tokens in the dotted form Validate uses:
// ["steps","3","latencyP95Ms"] is steps[3].latencyP95Ms. "" is the document.
func jsonPath(tokens []string) string {
	path := ""
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			path += "[" + t + "]"
		} else {
			path = joinPath(path, t)
		}
	}
	return path
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// finiteIn reports every NaN or infinite number in d, which JSON cannot
// encode, and returns d, or when there were some, a copy of d with zeros in
// their place. Only the containers on the way to a bad number are copied.
func finiteIn(c *checker, d *Document) *Document {
	v, changed := finiteValue(c, "", reflect.ValueOf(d))
	if !changed {
		return d
	}
	return v.Interface().(*Document)
}

// finiteValue walks v by its JSON field names. When it replaced something it
// returns a copy of v and true; v itself is never modified.
func finiteValue(c *checker, path string, v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			c.add(path, "must be a finite number, got %v", f)
			return reflect.Zero(v.Type()), true
		}
	case reflect.Pointer:
		if v.IsNil() {
			break
		}
		if e, changed := finiteValue(c, path, v.Elem()); changed {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(e)
			return p, true
		}
	case reflect.Struct:
		return finiteStruct(c, path, v)
	case reflect.Slice:
		// Only floats and the structs and slices holding them can be bad;
		// skipping the rest keeps strings and raw JSON out of the walk.
		if mayHoldFloat(v.Type().Elem()) {
			return finiteSlice(c, path, v)
		}
	case reflect.Map:
		// Maps of numbers (the counters per name).
		if v.Type().Elem().Kind() == reflect.Float64 && v.Type().Key().Kind() == reflect.String {
			return finiteMap(c, path, v)
		}
	}
	return v, false
}

// finiteStruct is finiteValue of a struct: its exported JSON fields.
func finiteStruct(c *checker, path string, v reflect.Value) (reflect.Value, bool) {
	var cp reflect.Value
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		if e, changed := finiteValue(c, joinPath(path, name), v.Field(i)); changed {
			if !cp.IsValid() {
				cp = reflect.New(v.Type()).Elem()
				cp.Set(v)
			}
			cp.Field(i).Set(e)
		}
	}
	if cp.IsValid() {
		return cp, true
	}
	return v, false
}

// finiteSlice is finiteValue of a slice.
func finiteSlice(c *checker, path string, v reflect.Value) (reflect.Value, bool) {
	var cp reflect.Value
	for i := 0; i < v.Len(); i++ {
		if e, changed := finiteValue(c, fmt.Sprintf("%s[%d]", path, i), v.Index(i)); changed {
			if !cp.IsValid() {
				cp = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(cp, v)
			}
			cp.Index(i).Set(e)
		}
	}
	if cp.IsValid() {
		return cp, true
	}
	return v, false
}

// finiteMap is finiteValue of a map of numbers by name; the sorted keys
// name the first bad value the same way on every call.
func finiteMap(c *checker, path string, v reflect.Value) (reflect.Value, bool) {
	keys := v.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var cp reflect.Value
	for _, k := range keys {
		if e, changed := finiteValue(c, joinPath(path, k.String()), v.MapIndex(k)); changed {
			if !cp.IsValid() {
				cp = reflect.MakeMapWithSize(v.Type(), v.Len())
				for _, k2 := range keys {
					cp.SetMapIndex(k2, v.MapIndex(k2))
				}
			}
			cp.SetMapIndex(k, e)
		}
	}
	if cp.IsValid() {
		return cp, true
	}
	return v, false
}

// mayHoldFloat reports whether a value of t can contain a float64. Of the
// maps, only those of numbers can (the others hold strings and raw JSON).
func mayHoldFloat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Float64:
		return true
	case reflect.Map:
		return t.Elem().Kind() == reflect.Float64
	case reflect.Pointer, reflect.Slice:
		return mayHoldFloat(t.Elem())
	case reflect.Struct:
		return true
	}
	return false
}
