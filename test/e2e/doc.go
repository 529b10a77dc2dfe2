// Package e2e is the end-to-end suite: real BenchmarkRuns against the operator
// installed with its Helm chart on a real cluster (the local single-node
// cluster of hack/cluster, or any cluster KUBECONFIG names), with real
// database servers and the real agent, plus a placement test on simulated
// kwok nodes beside the real node.
//
// The tests carry the build tag e2e; hack/test-e2e.sh prepares the cluster,
// the images and the chart, then runs
//
//	go test ./test/e2e/ -tags e2e -count=1 -timeout 40m -v
//
// See docs/testing.md ("End-to-end") for what each test proves and how long
// it takes.
package e2e
