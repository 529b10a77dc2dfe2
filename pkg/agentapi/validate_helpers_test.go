package agentapi

import (
	"strings"
	"testing"
)

// onePointQueryWorkload is the smallest valid workload: point-query at one
// thread on one small table; tests add the option they check.
func onePointQueryWorkload() Workload {
	return Workload{Steps: []string{"point-query"}, Tables: 1, TableSize: 10, ReadSeconds: 1, WriteSeconds: 1, Threads: []int{1}}
}

// checkValidate validates a MariaDB plan with workload w: no error when want
// is empty, else an error containing every string of want.
func checkValidate(t *testing.T, w Workload, want []string) {
	t.Helper()
	p := Task{APIVersion: APIVersion, Server: Server{Engine: MariaDB, Port: 3306, Database: "sbtest"}, Workload: w, Results: Results{Dir: "/tmp"}}
	err := p.Validate()
	if len(want) == 0 {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil {
		t.Fatalf("valid; want %q", want)
	}
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}
