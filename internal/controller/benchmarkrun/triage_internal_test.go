package benchmarkrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/triage"
)

func TestMergeAcks(t *testing.T) {
	cluster := []triage.Ack{{Name: "a", Namespace: "ns", Reason: "cluster"}}
	stored := []triage.Ack{
		{Name: "a", Namespace: "ns", Reason: "store"},    // the cluster's wins
		{Name: "b", Namespace: "other", Reason: "store"}, // another namespace's: counts
		{Name: "c", Namespace: "ns", Reason: "store"},    // deleted here: gone
	}
	var got []string
	for _, a := range mergeAcks(cluster, stored, "ns") {
		got = append(got, a.Name+"/"+a.Reason)
	}
	if d := cmp.Diff([]string{"a/cluster", "b/store"}, got); d != "" {
		t.Errorf("mergeAcks (-want +got):\n%s", d)
	}
}
