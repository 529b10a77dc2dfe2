package sysbench_test

import (
	"fmt"
	"os"

	"github.com/dbbench/dbbench/pkg/sysbench"
)

// Parse a captured run and compare the final report's reference QPS with the
// steady-state figure after a 3 s warm-up.
func Example() {
	f, err := os.Open("testdata/1.0.20/point_select_10s.txt")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	out, err := sysbench.Parse(f)
	if err != nil {
		fmt.Println("parse:", err)
		return
	}
	st, err := out.SteadyState(3)
	if err != nil {
		fmt.Println("steady state:", err)
		return
	}
	fmt.Printf("sysbench %s, %d threads, %d samples\n", out.Version, out.Threads, len(out.Intervals))
	fmt.Printf("final report: %.2f qps over %.4f s\n", out.Final.SQL.QueriesPerSec, out.Final.TotalTimeSeconds)
	fmt.Printf("steady state: %.2f qps over %d samples (%d dropped)\n", st.QPS, st.Samples, st.Dropped)
	// Output:
	// sysbench 1.0.20, 4 threads, 9 samples
	// final report: 40494.52 qps over 10.0030 s
	// steady state: 42700.80 qps over 6 samples (3 dropped)
}
