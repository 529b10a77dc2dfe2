package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// validRunYAML is accepted; every case of the invalid table breaks one thing.
const validRunYAML = `
apiVersion: dbbench.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: valid
spec:
  databases:
    - name: maria
      engine: mariadb
      versions: ["10.11", "11.8"]
      configs:
        - name: default
        - name: small
          inline: "[mysqld]\ninnodb_buffer_pool_size=128M\n"
  workload:
    steps: [point-query, update-index]
    threads: [1, 4]
`

func parseRun(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatalf("parsing YAML: %v", err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// set assigns value at a dotted path; "databases.0" indexes a list.
func set(obj map[string]any, path string, value any) {
	parts := strings.Split(path, ".")
	var cur any = obj
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = value
				return
			}
			if _, ok := c[p]; !ok {
				c[p] = map[string]any{}
			}
			cur = c[p]
		case []any:
			idx := int(p[0] - '0')
			if last {
				c[idx] = value
				return
			}
			cur = c[idx]
		}
	}
}

func TestValidSpecAndSamplesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	run := parseRun(t, validRunYAML)
	run.SetNamespace(ns)
	if err := k8sClient.Create(ctx, run, client.DryRunAll); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	// Fixed-rate steps among the workload's steps (listed, or the step
	// set's), and latency verdicts.
	for name, mutate := range map[string]func(map[string]any){
		"fixed-rate steps listed": func(s map[string]any) {
			set(s, "workload.fixedRate", map[string]any{"fractionsOfPeak": []any{"0.5", "0.9"}, "steps": []any{"update-index"}})
		},
		"fixed-rate .pre step of the extended set": func(s map[string]any) {
			delete(s["workload"].(map[string]any), "steps")
			set(s, "workload.stepSet", "extended")
			set(s, "workload.fixedRate", map[string]any{"rates": []any{100}, "steps": []any{"point-query.pre", "insert"}})
		},
		"profile of a listed step": func(s map[string]any) {
			set(s, "workload.profile", map[string]any{"steps": []any{"update-index"}, "threads": 1, "seconds": 20, "frequencyHz": 49})
		},
		"external target": func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "versions")
			delete(db, "configs")
			db["external"] = externalTarget()
			s["baseline"] = map[string]any{"database": "maria", "version": "external"}
		},
		"latency verdict": func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.metrics", []any{"Throughput", "P99Latency"})
		},
		"estimated magnitude": func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.magnitudeRule", "Estimated")
		},
		"regression bisect": func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"candidates": []any{map[string]any{"version": "11.8.1"}, map[string]any{"image": "reg.example/mariadb@sha256:0123"}},
				"good": map[string]any{"version": "11.8.0"}, "parallelism": 2, "repeats": 3, "maxCells": 40})
		},
		"log volume on a claim beside an emptyDir": func(s map[string]any) {
			set(s, "databases.0.storage.log", map[string]any{"volumeClaim": map[string]any{"size": "5Gi", "storageClassName": "fast"}})
		},
		"empty log volume (an emptyDir)": func(s map[string]any) { set(s, "databases.0.storage.log", map[string]any{}) },
		"template (a CloudNativePG Cluster per cell)": func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "configs")
			db["template"] = templateTarget()
		},
	} {
		r := parseRun(t, validRunYAML)
		r.SetNamespace(ns)
		mutate(r.Object["spec"].(map[string]any))
		if err := k8sClient.Create(ctx, r, client.DryRunAll); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
	// A calibrated slowdown: one variant at 90 % of the CPU limit.
	scaled := parseRun(t, validRunYAML)
	scaled.SetNamespace(ns)
	set(scaled.Object["spec"].(map[string]any), "databases.0.resources", map[string]any{"limits": map[string]any{"cpu": "1500m"}})
	set(scaled.Object["spec"].(map[string]any), "databases.0.configs.1.cpuScalePercent", int64(90))
	if err := k8sClient.Create(ctx, scaled, client.DryRunAll); err != nil {
		t.Fatalf("spec with configs[].cpuScalePercent and a CPU limit refused: %v", err)
	}
	if n := dryRunSamples(t, ns, "benchmarkrun_*.yaml"); n < 3 {
		t.Fatalf("found %d samples", n)
	}
}

// inline sets the engine of the valid spec's database and the text of its
// second config variant.
func inline(engine, text string) func(map[string]any) {
	return func(s map[string]any) {
		set(s, "databases.0.engine", engine)
		set(s, "databases.0.configs.1.inline", text)
	}
}

func TestInvalidSpecsAreRefusedNamingTheField(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name   string
		mutate func(spec map[string]any)
		want   string
	}{
		{"no databases", func(s map[string]any) { s["databases"] = []any{} },
			"spec.databases: Invalid value"},
		{"unknown engine", func(s map[string]any) { set(s, "databases.0.engine", "oracle") },
			`spec.databases[0].engine: Unsupported value: "oracle"`},
		{"no versions", func(s map[string]any) { set(s, "databases.0.versions", []any{}) },
			"spec.databases[0].versions"},
		{"duplicate database names", func(s map[string]any) {
			db := s["databases"].([]any)[0]
			s["databases"] = []any{db, db}
		}, "spec.databases[1]: Duplicate value"},
		{"external with versions", func(s map[string]any) {
			set(s, "databases.0.external", externalTarget())
			delete(s["databases"].([]any)[0].(map[string]any), "configs")
		}, "external: give either external"},
		{"neither external nor versions", func(s map[string]any) {
			delete(s["databases"].([]any)[0].(map[string]any), "versions")
		}, "external: give either external"},
		{"external with config variants", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "versions")
			db["external"] = externalTarget()
		}, "external: image, configs, args, env"},
		{"external with an image", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "versions")
			delete(db, "configs")
			db["external"] = externalTarget()
			db["image"] = "mariadb:{version}"
		}, "external: image, configs, args, env"},
		{"external without a host", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "versions")
			delete(db, "configs")
			db["external"] = map[string]any{"credentialsSecret": map[string]any{"name": "creds"}}
		}, "spec.databases[0].external.host: Required value"},
		{"external without a Secret", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "versions")
			delete(db, "configs")
			db["external"] = map[string]any{"host": "db.example"}
		}, "spec.databases[0].external.credentialsSecret: Required value"},
		{"template without a readiness condition", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "configs")
			tpl := templateTarget()
			delete(tpl, "readyCondition")
			db["template"] = tpl
		}, "spec.databases[0].template.readyCondition: Required value"},
		{"template and external together", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "versions")
			delete(db, "configs")
			db["external"] = externalTarget()
			db["template"] = templateTarget()
		}, "template: give either external"},
		{"template with an image", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "configs")
			db["template"] = templateTarget()
			db["image"] = "mariadb:{version}"
		}, "template: image, configs, args, env"},
		{"template without versions", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "configs")
			delete(db, "versions")
			db["template"] = templateTarget()
		}, "external: give either external"},
		{"template endpoint with host and hostField", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "configs")
			tpl := templateTarget()
			tpl["endpoint"].(map[string]any)["hostField"] = "status.writeService"
			db["template"] = tpl
		}, "endpoint: give exactly one of host and hostField"},
		{"template endpoint without a Secret", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "configs")
			tpl := templateTarget()
			delete(tpl["endpoint"].(map[string]any), "credentialsSecret")
			db["template"] = tpl
		}, "spec.databases[0].template.endpoint.credentialsSecret: Required value"},
		{"template object without a kind", func(s map[string]any) {
			db := s["databases"].([]any)[0].(map[string]any)
			delete(db, "configs")
			tpl := templateTarget()
			delete(tpl["object"].(map[string]any), "kind")
			db["template"] = tpl
		}, "spec.databases[0].template.object.kind: Required value"},
		{"duplicate versions", func(s map[string]any) { set(s, "databases.0.versions", []any{"11.8", "11.8"}) },
			"spec.databases[0].versions[1]: Duplicate value"},
		{"image template without {version}", func(s map[string]any) { set(s, "databases.0.image", "mariadb:latest") },
			"image: must contain {version}"},
		{"config with inline and configMapKeyRef", func(s map[string]any) {
			set(s, "databases.0.configs.1.configMapKeyRef", map[string]any{"name": "x", "key": "my.cnf"})
		}, "configs[]: set at most one of inline and configMapKeyRef"},
		{"bad database name", func(s map[string]any) { set(s, "databases.0.name", "Maria_DB") },
			"spec.databases[0].name"},
		{"unknown step", func(s map[string]any) { set(s, "workload.steps", []any{"point-query", "update-everything"}) },
			"steps: update-everything is neither a catalog step"},
		{"tpcc without settings", func(s map[string]any) { set(s, "workload.steps", []any{"tpcc"}) },
			"tpcc: steps lists tpcc, so workload.tpcc must be set"},
		{"pgbench on MariaDB", func(s map[string]any) { set(s, "workload.steps", []any{"point-query", "pgbench-select"}) },
			"workload.steps: the pgbench steps run against PostgreSQL only"},
		{"pgbench with fixed-rate runs of every step", func(s map[string]any) {
			set(s, "databases.0.engine", "postgres")
			set(s, "workload.steps", []any{"point-query", "pgbench-tpcb"})
			set(s, "workload.fixedRate", map[string]any{"fractionsOfPeak": []any{"0.5"}})
		}, "fixedRate: the pgbench steps have no fixed-rate runs"},
		{"zero threads", func(s map[string]any) { set(s, "workload.threads", []any{0}) },
			"spec.workload.threads[0]"},
		{"too many thread counts", func(s map[string]any) {
			var th []any
			for i := 1; i <= 17; i++ {
				th = append(th, i)
			}
			set(s, "workload.threads", th)
		}, "spec.workload.threads: Too many"},
		{"p-value of 1", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.maxPValue", "1.0")
		}, "spec.regression.maxPValue: Invalid value"},
		{"p-value of zero", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.maxPValue", "0.000")
		}, "spec.regression.maxPValue: Invalid value"},
		{"p-value not a number", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.maxPValue", "5%")
		}, "spec.regression.maxPValue: Invalid value"},
		{"zero tables", func(s map[string]any) { set(s, "workload.tables", 0) },
			"spec.workload.tables"},
		{"warm-up longer than the step", func(s map[string]any) {
			set(s, "workload.readSeconds", 10)
			set(s, "workload.warmupSeconds", 10)
		}, "warmupSeconds: must be shorter than readSeconds and writeSeconds"},
		{"matrix too large", func(s map[string]any) {
			var v []any
			for i := 0; i < 16; i++ {
				v = append(v, "10."+string(rune('a'+i)))
			}
			set(s, "databases.0.versions", v)
			set(s, "databases.0.image", "mariadb:{version}")
			set(s, "workload.repeats", 4)
		}, "at most 100 cells"},
		{"precision with maxRepeats 1", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": 2, "maxRepeats": 1})
		}, "spec.workload.precision.maxRepeats: Invalid value: 1"},
		{"precision target 0", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": 0, "maxRepeats": 5})
		}, "targetPercent: must be a number above 0"},
		{"precision target negative", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": -1, "maxRepeats": 5})
		}, "targetPercent: must be a number above 0"},
		{"precision target a zero decimal", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": "0.0", "maxRepeats": 5})
		}, "targetPercent: must be a number above 0"},
		{"precision target not a number", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": "1%", "maxRepeats": 5})
		}, "targetPercent: must be a number above 0"},
		{"goal with both targets", func(s map[string]any) {
			set(s, "goal", map[string]any{"detectPercent": 10, "halfWidthPercent": 5})
		}, "goal: set detectPercent or halfWidthPercent, one of them"},
		{"goal with neither target", func(s map[string]any) {
			set(s, "goal", map[string]any{"onOutOfReach": "Run"})
		}, "goal: set detectPercent or halfWidthPercent, one of them"},
		{"goal detecting 100 %", func(s map[string]any) {
			set(s, "goal", map[string]any{"detectPercent": 100})
		}, "detectPercent: must be a number above 0 and below 100"},
		{"goal half-width not a number", func(s map[string]any) {
			set(s, "goal", map[string]any{"halfWidthPercent": "tight"})
		}, "halfWidthPercent: must be a number above 0 and at most 100"},
		{"goal power without a slowdown", func(s map[string]any) {
			set(s, "goal", map[string]any{"halfWidthPercent": 5, "powerPercent": 80})
		}, "powerPercent: only with detectPercent"},
		{"goal power of 50 %", func(s map[string]any) {
			set(s, "goal", map[string]any{"detectPercent": 10, "powerPercent": 50})
		}, "spec.goal.powerPercent"},
		{"goal action unknown", func(s map[string]any) {
			set(s, "goal", map[string]any{"detectPercent": 10, "onOutOfReach": "Warn"})
		}, "spec.goal.onOutOfReach"},
		{"adaptive noise from a suite the run lacks", func(s map[string]any) {
			set(s, "workload.adaptive", map[string]any{"betweenRunCVPercent": 5, "betweenRunCVFromSuite": true})
		}, "workload.adaptive.betweenRunCVFromSuite: needs suite"},
		{"adaptive without a criterion", func(s map[string]any) {
			set(s, "workload.adaptive", map[string]any{"minSeconds": 5})
		}, "adaptive: set betweenRunCVPercent, targetHalfWidthPercent or both"},
		{"adaptive CV 0", func(s map[string]any) {
			set(s, "workload.adaptive", map[string]any{"betweenRunCVPercent": 0})
		}, "betweenRunCVPercent: must be a number above 0"},
		{"adaptive target above 100", func(s map[string]any) {
			set(s, "workload.adaptive", map[string]any{"targetHalfWidthPercent": "100.5"})
		}, "targetHalfWidthPercent: must be a number above 0"},
		{"adaptive target not a number", func(s map[string]any) {
			set(s, "workload.adaptive", map[string]any{"targetHalfWidthPercent": "half"})
		}, "targetHalfWidthPercent: must be a number above 0"},
		{"adaptive minSeconds above readSeconds", func(s map[string]any) {
			set(s, "workload.readSeconds", 20)
			set(s, "workload.adaptive", map[string]any{"minSeconds": 21, "betweenRunCVPercent": "1.5"})
		}, "adaptive.minSeconds: must not exceed readSeconds and writeSeconds"},
		{"adaptive default minSeconds above writeSeconds", func(s map[string]any) {
			set(s, "workload.writeSeconds", 20)
			set(s, "workload.adaptive", map[string]any{"targetHalfWidthPercent": 1})
		}, "adaptive.minSeconds: must not exceed readSeconds and writeSeconds"},
		{"precision minRepeats above maxRepeats", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": 2, "minRepeats": 6, "maxRepeats": 5})
		}, "minRepeats: must not exceed maxRepeats"},
		{"precision minRepeats 1", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": 2, "minRepeats": 1, "maxRepeats": 5})
		}, "spec.workload.precision.minRepeats: Invalid value: 1"},
		{"precision together with repeats", func(s map[string]any) {
			set(s, "workload.precision", map[string]any{"targetPercent": 2, "maxRepeats": 5})
			set(s, "workload.repeats", 3)
		}, "repeats: must be 1 (or unset) with precision"},
		{"precision matrix too large", func(s map[string]any) {
			var v []any
			for i := 0; i < 4; i++ {
				v = append(v, "10."+string(rune('a'+i)))
			}
			set(s, "databases.0.versions", v)
			set(s, "databases.0.image", "mariadb:{version}")
			set(s, "workload.precision", map[string]any{"targetPercent": 2, "maxRepeats": 13})
		}, "at most 100 cells (versions × configs × workload.repeats, or workload.precision.maxRepeats)"},
		{"baseline names no database", func(s map[string]any) { set(s, "baseline", map[string]any{"database": "mysql"}) },
			"baseline: must name a database"},
		{"baseline names no version", func(s map[string]any) {
			set(s, "baseline", map[string]any{"database": "maria", "version": "9.9"})
		}, "baseline: must name a database"},
		{"Guaranteed QoS without limits", func(s map[string]any) { set(s, "placement.qosClass", "Guaranteed") },
			"placement.qosClass: Guaranteed needs databases[].resources.limits"},
		{"Guaranteed QoS with a fraction of a CPU", func(s map[string]any) {
			set(s, "placement.qosClass", "Guaranteed")
			set(s, "databases.0.resources", map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "1Gi"}})
		}, "whole number of CPUs"},
		{"unknown client node policy", func(s map[string]any) { set(s, "placement.clientNode", "Elsewhere") },
			`spec.placement.clientNode: Unsupported value: "Elsewhere"`},
		{"no parallel cells", func(s map[string]any) { set(s, "placement.maxParallelCells", 0) },
			"spec.placement.maxParallelCells"},
		{"results go nowhere", func(s map[string]any) { set(s, "output.configMap.enabled", false) },
			"output: enable configMap or configure s3"},
		{"s3 endpoint without scheme", func(s map[string]any) {
			set(s, "output.s3", map[string]any{"endpoint": "minio:9000", "bucket": "results", "credentialsSecret": map[string]any{"name": "s3"}})
		}, "spec.output.s3.endpoint"},
		{"database ready timeout too short", func(s map[string]any) { set(s, "timeouts.databaseReady", "1s") },
			"databaseReady: must be at least 10s"},
		{"custom step shadowing a catalog step", func(s map[string]any) {
			set(s, "workload.customSteps", []any{map[string]any{"name": "scan", "script": map[string]any{"name": "x", "key": "x.lua"}}})
		}, "customSteps[].name: must not shadow"},
		{"both emptyDir and volumeClaim", func(s map[string]any) {
			set(s, "databases.0.storage", map[string]any{"emptyDir": map[string]any{}, "volumeClaim": map[string]any{"size": "10Gi"}})
		}, "storage: set at most one of emptyDir and volumeClaim"},
		{"log volume with both emptyDir and volumeClaim", func(s map[string]any) {
			set(s, "databases.0.storage.log", map[string]any{"emptyDir": map[string]any{}, "volumeClaim": map[string]any{"size": "10Gi"}})
		}, "storage.log: set at most one of emptyDir and volumeClaim"},
		{"retry attempts out of range", func(s map[string]any) { set(s, "retry.maxAttemptsPerCell", 50) },
			"spec.retry.maxAttemptsPerCell"},
		{"fixed-rate step the workload does not run", func(s map[string]any) {
			set(s, "workload.fixedRate", map[string]any{"fractionsOfPeak": []any{"0.5"}, "steps": []any{"point-query", "insert"}})
		}, "spec.workload: Invalid value: fixedRate.steps: insert is not one of workload.steps"},
		{"fixed-rate .pre step with the standard step set", func(s map[string]any) {
			delete(s["workload"].(map[string]any), "steps")
			set(s, "workload.fixedRate", map[string]any{"rates": []any{100}, "steps": []any{"point-query.pre"}})
		}, "fixedRate.steps: point-query.pre is not one of workload.steps (or of the stepSet when steps is empty)"},
		{"fixed-rate step misspelt with the standard step set", func(s map[string]any) {
			delete(s["workload"].(map[string]any), "steps")
			set(s, "workload.fixedRate", map[string]any{"rates": []any{100}, "steps": []any{"point-querry"}})
		}, "fixedRate.steps: point-querry is not one of workload.steps"},
		{"profiled step the workload does not run", func(s map[string]any) {
			set(s, "workload.profile", map[string]any{"steps": []any{"insert"}})
		}, "profile.steps: every step must be one of workload.steps"},
		{"profile frequency too high", func(s map[string]any) {
			set(s, "workload.profile", map[string]any{"steps": []any{"point-query"}, "frequencyHz": 5000})
		}, "spec.workload.profile.frequencyHz: Invalid value: 5000"},
		{"unknown regression metric", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.metrics", []any{"Throughput", "P50Latency"})
		}, `spec.regression.metrics[1]: Unsupported value: "P50Latency"`},
		{"unknown magnitude rule", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.magnitudeRule", "Otava")
		}, `spec.regression.magnitudeRule: Unsupported value: "Otava"`},
		{"no regression metric", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.metrics", []any{})
		}, "spec.regression.metrics: Invalid value"},
		{"regression bisect without candidates", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"candidates": []any{}})
		}, "spec.regression.bisect.candidates: Invalid value"},
		{"regression bisect parallelism 0", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"candidates": []any{map[string]any{"version": "11.8.1"}}, "parallelism": 0})
		}, "spec.regression.bisect.parallelism: Invalid value"},
		{"regression bisect candidate with version and image", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"candidates": []any{map[string]any{"version": "11.8.1", "image": "mariadb:11.8.1"}}})
		}, "spec.regression.bisect.candidates[0]: Invalid value"},
		{"regression bisect with candidates and builds", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"candidates": []any{map[string]any{"version": "11.8.1"}},
				"builds": []any{map[string]any{"version": "11.8.0"}, map[string]any{"version": "11.8.1"}}})
		}, "regression.bisect: set exactly one of candidates and builds"},
		{"regression bisect with neither candidates nor builds", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"parallelism": 1})
		}, "regression.bisect: set exactly one of candidates and builds"},
		{"regression bisect with one build", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"builds": []any{map[string]any{"version": "11.8.0"}}})
		}, "spec.regression.bisect.builds: Invalid value"},
		{"regression bisect good with neither version nor image", func(s map[string]any) {
			s["suite"] = "nightly"
			set(s, "regression.bisect", map[string]any{"candidates": []any{map[string]any{"version": "11.8.1"}}, "good": map[string]any{}})
		}, "spec.regression.bisect.good: Invalid value"},
		// Config variants the server would ignore or reject: refused with the
		// variant's index and the line (issue 12).
		{"mariadb option before any section", inline("mariadb", "innodb_buffer_pool_size=256M\nmax_connections=77"),
			`spec.databases[0]: Invalid value: configs[1].inline: line "innodb_buffer_pool_size=256M" sets an option before any [section] header`},
		{"mysql option before the section, after comments", inline("mysql", "# tuned\n\nmax_connections=77\n[mysqld]\n"),
			`spec.databases[0].configs[1].inline: Invalid value: line "max_connections=77" sets an option before the first [section] header`},
		{"mariadb option with a colon", inline("mariadb", "[mysqld]\ninnodb_buffer_pool_size: 256M"),
			`spec.databases[0].configs[1].inline: Invalid value: line "innodb_buffer_pool_size: 256M" is not a setting`},
		{"mysql option with a space-separated value", inline("mysql", "[mysqld]\nmax_connections 77"),
			`configs[1].inline: line "max_connections 77" is not an option line`},
		{"mariadb unclosed section header", inline("mariadb", "[mysqld\nmax_connections=77"),
			`spec.databases[0].configs[1].inline: Invalid value: line "[mysqld" is not a section header`},
		{"cpuScalePercent without a CPU limit", func(s map[string]any) { set(s, "databases.0.configs.1.cpuScalePercent", int64(90)) },
			"spec.databases[0]: Invalid value: configs[].cpuScalePercent: scales resources.limits.cpu, which is not set"},
		{"cpuScalePercent above 100", func(s map[string]any) {
			set(s, "databases.0.resources", map[string]any{"limits": map[string]any{"cpu": "2"}})
			set(s, "databases.0.configs.1.cpuScalePercent", int64(110))
		}, "spec.databases[0].configs[1].cpuScalePercent: Invalid value: 110: spec.databases[0].configs[1].cpuScalePercent in body should be less than or equal to 100"},
		{"cpuScalePercent below 10", func(s map[string]any) {
			set(s, "databases.0.resources", map[string]any{"limits": map[string]any{"cpu": "2"}})
			set(s, "databases.0.configs.1.cpuScalePercent", int64(5))
		}, "spec.databases[0].configs[1].cpuScalePercent: Invalid value: 5"},
		{"mariadb options only in a client section", inline("mariadb", "[client]\nport=3307"),
			`configs[1].inline: line "[client]" opens the first section, but no section is one the mariadb server reads`},
		{"mysql options in a MariaDB-only section", inline("mysql", "[mariadb]\nmax_connections=77"),
			`configs[1].inline: line "[mariadb]" opens the first section, but no section is one the mysql server reads`},
		{"postgres section header", inline("postgres", "shared_buffers = 256MB\n[postgresql]\nwork_mem = 4MB"),
			`configs[1].inline: line "[postgresql]" is a [section] header, which postgresql.conf does not have`},
		{"postgres colon", inline("postgres", "shared_buffers: 256MB"),
			`spec.databases[0].configs[1].inline: Invalid value: line "shared_buffers: 256MB" is not a setting`},
		{"postgres setting without a value", inline("postgres", "work_mem = 4MB\nfsync ="),
			`configs[1].inline: line "fsync =" sets no value`},
		{"postgres unclosed quote", inline("postgres", "log_line_prefix = '%m [%p] "),
			`configs[1].inline: line "log_line_prefix = '%m [%p] " has a quoted value that is not closed`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := parseRun(t, validRunYAML)
			run.SetNamespace(ns)
			tc.mutate(run.Object["spec"].(map[string]any))
			err := k8sClient.Create(ctx, run, client.DryRunAll)
			if err == nil {
				t.Fatalf("accepted; want refusal mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refused with\n  %v\nwant it to mention %q", err, tc.want)
			}
		})
	}
}

func TestPrecisionTargetsAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name      string
		precision map[string]any
		want      float64
		wantMin   int32
	}{
		{"whole percent, minRepeats defaulted", map[string]any{"targetPercent": 1, "maxRepeats": 10}, 1, 2},
		{"decimal string", map[string]any{"targetPercent": "0.5", "minRepeats": 3, "maxRepeats": 3}, 0.5, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := parseRun(t, validRunYAML)
			obj.SetNamespace(ns)
			set(obj.Object["spec"].(map[string]any), "workload.precision", tc.precision)
			if err := k8sClient.Create(ctx, obj, client.DryRunAll); err != nil {
				t.Fatalf("refused: %v", err)
			}
			var run dbbenchv1alpha1.BenchmarkRun
			if err := runtimeFromUnstructured(obj, &run); err != nil {
				t.Fatal(err)
			}
			p := run.Spec.Workload.Precision
			if p == nil || p.Target() != tc.want || p.MinRepeats != tc.wantMin {
				t.Errorf("precision after defaulting = %+v, want target %v and minRepeats %d", p, tc.want, tc.wantMin)
			}
		})
	}
}

func TestRunNameLongerThanALabelValueIsRefused(t *testing.T) {
	run := parseRun(t, validRunYAML)
	run.SetNamespace(newNamespace(t))
	run.SetName(strings.Repeat("r", 64))
	err := k8sClient.Create(ctx, run, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "metadata.name: must be at most 63 characters") {
		t.Fatalf("got %v", err)
	}
}

func TestSpecIsImmutable(t *testing.T) {
	run := parseRun(t, validRunYAML)
	run.SetNamespace(newNamespace(t))
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating: %v", err)
	}
	set(run.Object["spec"].(map[string]any), "workload.threads", []any{1, 2})
	err := k8sClient.Update(ctx, run)
	if err == nil || !strings.Contains(err.Error(), "spec is immutable") {
		t.Fatalf("update of spec: got %v, want refusal", err)
	}
	// Metadata stays editable: labels and annotations are how GitOps tools
	// and people mark runs.
	run.SetLabels(map[string]string{"team": "perf"})
	set(run.Object["spec"].(map[string]any), "workload.threads", []any{1, 4})
	if err := k8sClient.Update(ctx, run); err != nil {
		t.Fatalf("label update refused: %v", err)
	}
}

func TestDefaultsMakeAMinimalSpecUseful(t *testing.T) {
	ns := newNamespace(t)
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "samples", "benchmarkrun_minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj := parseRun(t, string(text))
	obj.SetNamespace(ns)
	if err := k8sClient.Create(ctx, obj, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	var run dbbenchv1alpha1.BenchmarkRun
	if err := runtimeFromUnstructured(obj, &run); err != nil {
		t.Fatal(err)
	}
	w := run.Spec.Workload
	if w.StepSet != "standard" || w.Tables != 1 || w.TableSize != 1000000 || w.ReadSeconds != 300 || w.WriteSeconds != 600 ||
		w.Warmup() != 10 || len(w.Threads) != 1 || w.Threads[0] != 1 || w.Repeats != 1 || w.PreparedStatements == nil || !*w.PreparedStatements {
		t.Errorf("workload defaults: %+v", w)
	}
	p := run.Spec.Placement
	if p.ClientNode != "SameNode" || p.ExclusiveNodes == nil || !*p.ExclusiveNodes || p.QoSClass != "Burstable" || p.MaxParallelCells != 1 {
		t.Errorf("placement defaults: %+v", p)
	}
	if run.Spec.Retry.AttemptsPerCell() != 3 || run.Spec.Retry.MaxRetriesPerRun == nil || *run.Spec.Retry.MaxRetriesPerRun != 10 {
		t.Errorf("retry defaults: %+v", run.Spec.Retry)
	}
	if run.Spec.Timeouts.DatabaseReady == nil || run.Spec.Timeouts.DatabaseReady.Duration.String() != "10m0s" || !run.Spec.Output.ConfigMap.IsEnabled() {
		t.Errorf("timeouts/output defaults: %+v %+v", run.Spec.Timeouts, run.Spec.Output)
	}
	if run.Spec.Databases[0].ImagePullPolicy != "IfNotPresent" {
		t.Errorf("imagePullPolicy default %q", run.Spec.Databases[0].ImagePullPolicy)
	}
}

// kubectl explain must read well: field comments become its text. The test
// runs the real kubectl against the envtest API server when one is built
// (hack/build-k8s.sh kubectl; make test-envtest does it).
func TestKubectlExplainReadsWell(t *testing.T) {
	kubectl := envtestKubectl(t)
	for field, wants := range map[string][]string{
		"benchmarkrun.spec.placement": {
			"GROUP:      dbbench.io", "placement says where database and client pods run",
			"clientNode", "exclusiveNodes", "keeps every node to at most one cell", "qosClass", "maxParallelCells",
			"database\t<Object>", "client\t<Object>",
		},
		"benchmarkrun.spec.databases.storage.log": {
			"log puts the redo log", "innodb_log_group_home_dir", "initdb --waldir", "log: {} is an emptyDir",
			"emptyDir\t<Object>", "volumeClaim\t<Object>",
		},
		"benchmarkrun.spec.regression.magnitudeRule": {
			"FIELD: magnitudeRule <string>", "ENUM:", "Tested", "Estimated", "Otava",
		},
		"benchmarkrun.spec.preflight": {
			"preflight checks, before the first cell, that every (database", "enabled\t<boolean>",
			"PreflightPassed=False naming every failing", "a run of a single pair skips it",
		},
	} {
		text := kubectl("explain", field)
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("kubectl explain %s lacks %q:\n%s", field, want, text)
			}
		}
		if testing.Verbose() {
			t.Logf("kubectl explain %s:\n%s", field, text)
		}
	}
	out := kubectl("explain", "benchmarkrun.spec.databases.configs.cpuScalePercent")
	for _, want := range []string{"FIELD: cpuScalePercent <integer>", "CPU limit (the CFS quota)", "resources.limits.cpu", "calibrated slowdown", "CPU-bound"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("kubectl explain ...configs.cpuScalePercent lacks %q:\n%s", want, out)
		}
	}
}

func runtimeFromUnstructured(u *unstructured.Unstructured, out *dbbenchv1alpha1.BenchmarkRun) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
}

// The GitOps example's manifests are accepted by the API server as they are.
func TestGitOpsExampleIsAccepted(t *testing.T) {
	ns := newNamespace(t)
	for _, f := range []string{"schedule.yaml"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "gitops", "mariadb-lts-nightly", f))
		if err != nil {
			t.Fatal(err)
		}
		obj := parseRun(t, string(text))
		obj.SetNamespace(ns)
		if err := k8sClient.Create(ctx, obj, client.DryRunAll); err != nil {
			t.Errorf("%s refused: %v", f, err)
		}
	}
}

// The config-variant rules must not refuse what the servers accept.
func TestConfigVariantsTheServersAcceptAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct{ engine, text string }{
		{"mariadb", "# tuned for the 1 M-row tables\n\n[mysqld]\ninnodb_buffer_pool_size = 256M\nskip-name-resolve\nloose-innodb_adaptive_hash_index=0\nlog_bin  # trailing comment\n\n[mariadb]\ninit_connect='SET x=1:2'\n[client]\nport=3306\n"},
		{"mariadb", "!include /etc/mysql/extra.cnf\n[server]\nmax_connections=500\n"},
		{"mariadb", "[mariadbd-11.8]\nmax_connections=500\r\n"},
		{"mysql", "[mysqld]\ninnodb_flush_log_at_trx_commit=2\n; a comment\n[mysqld-8.0]\nsync_binlog=0\n"},
		{"mysql", ""},
		{"postgres", "# comment\nshared_buffers = 256MB\nwork_mem 4MB\nlog_line_prefix = '%m [%p] ''q'' '\ninclude 'extra.conf'\nmyext.setting = 1 # custom\nsearch_path = '\"$user\", public'\n"},
	}
	for _, tc := range cases {
		run := parseRun(t, validRunYAML)
		run.SetNamespace(ns)
		inline(tc.engine, tc.text)(run.Object["spec"].(map[string]any))
		if err := k8sClient.Create(ctx, run, client.DryRunAll); err != nil {
			t.Errorf("%s variant %q refused: %v", tc.engine, tc.text, err)
		}
	}
}

// externalTarget is a valid databases[].external.
// templateTarget is a CloudNativePG-like template: a Cluster per cell, ready
// when its Ready condition is True, reached at its read-write Service with
// its application Secret.
func templateTarget() map[string]any {
	return map[string]any{
		"object": map[string]any{"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
			"spec": map[string]any{"instances": 1, "imageName": "ghcr.io/cloudnative-pg/postgresql:{version}"}},
		"readyCondition": "Ready",
		"endpoint": map[string]any{"host": "{name}-rw", "database": "app",
			"credentialsSecret": map[string]any{"name": "{name}-app"}},
	}
}

func externalTarget() map[string]any {
	return map[string]any{"host": "mariadb.shop", "port": 3306,
		"credentialsSecret": map[string]any{"name": "shop-db", "userKey": "user"}}
}
