package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON()))
	if err != nil {
		t.Fatalf("schema/v1.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("v1.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("v1.json")
	if err != nil {
		t.Fatalf("schema/v1.json does not compile: %v", err)
	}
	return s
}

func validateAgainstSchema(t *testing.T, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// TestSchemaAcceptsGeneratedDocuments validates both forms, as this package
// writes them, against the published JSON Schema.
func TestSchemaAcceptsGeneratedDocuments(t *testing.T) {
	s := compileSchema(t)
	full := testDocument(2, []int{1, 8}, 20)
	full.Steps[1].Extensions = map[string]json.RawMessage{"example.com/note": json.RawMessage(`"x"`)}
	failed := testDocument(1, []int{1}, 5)
	failed.Status = Status{Outcome: OutcomeFailed, FailureClass: FailureBenchmark, Error: "FATAL: ...", FailedStep: "step-00"}
	failed.Load, failed.Provenance.ClientNode = nil, nil
	early := testDocument(0, nil, 0) // failed before any step: steps must encode as []
	early.Status = Status{Outcome: OutcomeFailed, FailureClass: FailureInfrastructure, Error: "pod evicted"}
	empty := testDocument(1, []int{1}, 5)
	empty.Steps[0].Series = testSeries(0, 1) // an empty series: columns must encode as []
	checked := testDocument(1, []int{1}, 5)
	checked.Provenance.ConfigCheck = &ConfigCheck{
		Verified:   []ConfigSetting{{Name: "innodb_buffer_pool_size", Line: 2, Requested: "256M", Normalized: "268435456", Effective: "268435456", Source: "CONFIG"}},
		Unverified: []ConfigSetting{{Name: "!includedir", Line: 3, Requested: "/etc/mysql/conf.d/", Reason: "another file"}},
	}
	notApplied := testDocument(0, nil, 0)
	notApplied.Status = Status{Outcome: OutcomeFailed, FailureClass: FailureBenchmark, Error: "config variant not in effect"}
	notApplied.Provenance.ConfigCheck = &ConfigCheck{NotApplied: []ConfigSetting{{Name: "max_connections", Line: 1, Requested: "77", Effective: "200"}},
		Mistakes: []string{"line 1: ..."}}
	fixed := testDocument(1, []int{4}, 5)
	fr := testStep("step-00"+RateSeparator+"0.5peak", 4, 5)
	fr.Rate = &Rate{Step: "step-00", TargetTPS: 500, FractionOfPeak: "0.5", PeakTPS: 1000.5, MaxQueueLength: 3, PollIntervalMs: 4}
	fr.LatencyP50Ms, fr.LatencyP99Ms, fr.LatencyP999Ms = ptr(0.5), ptr(2.5), ptr(9.1)
	fr.Series.QueueLength = make([]float64, len(fr.Series.QPS))
	fr.Series.Concurrency = make([]float64, len(fr.Series.QPS))
	fixed.Steps = append(fixed.Steps, fr)
	docs := map[string]*Document{"full": full, "failed": failed, "early": early, "empty series": empty,
		"config check": checked, "config not applied": notApplied, "fixed rate": fixed}
	c, _, err := Compact(full, CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs["compact"] = c
	for name, d := range docs {
		b, err := Marshal(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := validateAgainstSchema(t, s, b); err != nil {
			t.Errorf("%s document fails the schema: %v", name, err)
		}
	}
}

// TestSchemaRejects shows the schema is not vacuous: documents Validate
// refuses are refused by the schema too, where JSON Schema can express it.
func TestSchemaRejects(t *testing.T) {
	s := compileSchema(t)
	good, _ := Marshal(testDocument(1, []int{1}, 5))
	tests := []struct{ name, from, to string }{
		{"other version", `"schemaVersion":"dbbench.io/results/v1"`, `"schemaVersion":"dbbench.io/results/v2"`},
		{"missing run name", `"run":{"name":"mariadb-regressions",`, `"run":{`},
		{"zero threads", `"threads":1`, `"threads":0`},
		{"negative qps", `"steadyQps":10000`, `"steadyQps":-1`},
		{"bad engine", `"engine":"mariadb"`, `"engine":"MariaDB"`},
		{"bad outcome", `"outcome":"Succeeded"`, `"outcome":"Done"`},
		{"failed without class", `"outcome":"Succeeded"`, `"outcome":"Failed","error":"x"`},
		{"bad timestamp", `"startedAt":"2026-11-21T06:00:00Z"`, `"startedAt":"yesterday"`},
		{"series in compact", `"form":"full"`, `"form":"compact"`},
		{"bad digest", `"serverSettingsSha256":"sha256:`, `"serverSettingsSha256":"md5:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(tt.from)) {
				t.Fatalf("fixture does not contain %s", tt.from)
			}
			bad := bytes.Replace(good, []byte(tt.from), []byte(tt.to), 1)
			if err := validateAgainstSchema(t, s, bad); err == nil {
				t.Error("schema accepted it")
			}
			if _, err := Unmarshal(bad); err == nil {
				t.Error("Unmarshal accepted it")
			}
		})
	}
}

// TestSchemaMatchesGoTypes keeps schema/v1.json and the Go types in step:
// every JSON field of a Go type is a property of the matching schema
// definition and vice versa, and required properties are fields that are
// never omitted.
func TestSchemaMatchesGoTypes(t *testing.T) {
	var sch struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
		Defs       map[string]struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON(), &sch); err != nil {
		t.Fatal(err)
	}
	pairs := map[string]reflect.Type{
		"run": reflect.TypeFor[Run](), "cell": reflect.TypeFor[Cell](), "status": reflect.TypeFor[Status](),
		"host": reflect.TypeFor[Host](), "provenance": reflect.TypeFor[Provenance](), "load": reflect.TypeFor[Load](),
		"series": reflect.TypeFor[Series](), "summary": reflect.TypeFor[SeriesSummary](),
		"encodedSeries": reflect.TypeFor[EncodedSeries](), "hardware": reflect.TypeFor[Hardware](), "volumeIO": reflect.TypeFor[VolumeIO](), "step": reflect.TypeFor[StepResult](),
		"configCheck": reflect.TypeFor[ConfigCheck](), "configSetting": reflect.TypeFor[ConfigSetting](),
		"rate": reflect.TypeFor[Rate](), "adaptive": reflect.TypeFor[AdaptiveDuration](),
		"counters": reflect.TypeFor[Counters](),
		"quality":  reflect.TypeFor[Quality](), "replacedRun": reflect.TypeFor[ReplacedRun](),
	}
	check := func(name string, typ reflect.Type, props map[string]any, required []string) {
		fields, omittable := jsonFields(typ)
		var schemaProps []string
		for p := range props {
			schemaProps = append(schemaProps, p)
		}
		sort.Strings(schemaProps)
		if diff := cmp.Diff(fields, schemaProps); diff != "" {
			t.Errorf("%s: Go fields (-) vs schema properties (+):\n%s", name, diff)
		}
		for _, r := range required {
			if omittable[r] {
				t.Errorf("%s: %q is required by the schema but omitempty in Go", name, r)
			}
		}
	}
	check("document", reflect.TypeFor[Document](), sch.Properties, sch.Required)
	for def, typ := range pairs {
		d, ok := sch.Defs[def]
		if !ok {
			t.Errorf("schema has no $defs/%s", def)
			continue
		}
		check(def, typ, d.Properties, d.Required)
	}
}

func jsonFields(t reflect.Type) (names []string, omittable map[string]bool) {
	omittable = map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || name == "" {
			continue
		}
		names = append(names, name)
		omittable[name] = strings.Contains(opts, "omitempty")
	}
	sort.Strings(names)
	return names, omittable
}

// TestValidateJSONNamesPaths checks the run-time schema validation on bytes
// as written: each violation is reported at its JSON path, in Validate's
// dotted form, and a valid document passes.
func TestValidateJSONNamesPaths(t *testing.T) {
	good, err := Marshal(testDocument(1, []int{1, 2}, 5))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to string
		want           []string // problems, exactly
	}{
		{"valid", "", "", nil},
		{"zero threads in second step", `"threads":2`, `"threads":0`, []string{"steps[1].threads: minimum: got 0, want 1"}},
		{"negative qps", `"steadyQps":10000`, `"steadyQps":-1`, []string{"steps[0].steadyQps: must not be negative, got -1"}},
		{"bad timestamp", `"startedAt":"2026-11-21T06:00:00Z"`, `"startedAt":"yesterday"`, []string{"startedAt: 'yesterday' is not valid date-time: less than 20 characters long"}},
		{"missing run name", `"run":{"name":"mariadb-regressions",`, `"run":{`, []string{"run.name: must be set"}},
		{"wrong type", `"tables":1`, `"tables":"1"`, []string{"load.tables: got string, want integer"}},
		{"class on success", `"outcome":"Succeeded"`, `"outcome":"Succeeded","failureClass":"Benchmark"`,
			[]string{"status.failureClass: must be absent (not allowed with this form or status.outcome)"}},
		{"series in compact", `"form":"full"`, `"form":"compact"`, []string{
			"steps[0].series: must be absent (not allowed with this form or status.outcome)",
			"steps[1].series: must be absent (not allowed with this form or status.outcome)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(tt.from)) {
				t.Fatalf("fixture does not contain %s", tt.from)
			}
			doc := good
			if tt.from != "" {
				doc = bytes.Replace(good, []byte(tt.from), []byte(tt.to), 1)
			}
			err := ValidateJSON(doc)
			var got []string
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("want *ValidationError, got %T: %v", err, err)
				}
				got = ve.Problems
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
