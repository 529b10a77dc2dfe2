package benchmarkrun

import (
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// Repeats do not change what a step measures; threads and durations do.
func TestWorkloadDigest(t *testing.T) {
	w := dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query"}, Threads: []int32{4}, ReadSeconds: 60}
	with := func(f func(*dbbenchv1alpha1.WorkloadSpec)) dbbenchv1alpha1.WorkloadSpec { c := w; f(&c); return c }
	base := workloadDigest(w)
	if base == "" || workloadDigest(with(func(c *dbbenchv1alpha1.WorkloadSpec) { c.Repeats = 3 })) != base {
		t.Errorf("repeats changed the digest")
	}
	for name, o := range map[string]dbbenchv1alpha1.WorkloadSpec{
		"threads":  with(func(c *dbbenchv1alpha1.WorkloadSpec) { c.Threads = []int32{4, 16} }),
		"duration": with(func(c *dbbenchv1alpha1.WorkloadSpec) { c.ReadSeconds = 10 }),
	} {
		if workloadDigest(o) == base {
			t.Errorf("%s did not change the digest", name)
		}
	}
}
