// Command krew renders the kubectl-dbbench krew plugin manifest
// (dbbench.yaml.tmpl) for a release: one platform per archive
// kubectl-dbbench_<os>_<arch>.tar.gz in the dist directory, with its URL
// under the release's base URL and its sha256. The rendered manifest is
// checked against krew's structural rules before it is written.
//
//	go run ./hack/krew -version v0.1.0 -dist dist \
//	    -base-url https://github.com/dbbench/dbbench/releases/download/v0.1.0
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	var o Options
	flag.StringVar(&o.Version, "version", "", "Release version, semver with a leading v (v0.1.0).")
	flag.StringVar(&o.Dist, "dist", "dist", "Directory holding the plugin archives; the manifest is written there as dbbench.yaml.")
	flag.StringVar(&o.BaseURL, "base-url", "", "URL the archives are downloaded from (the release's assets).")
	flag.StringVar(&o.Template, "template", filepath.Join("hack", "krew", "dbbench.yaml.tmpl"), "Manifest template.")
	flag.Parse()
	out, err := Render(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "krew:", err)
		os.Exit(1)
	}
	path := filepath.Join(o.Dist, ManifestName)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "krew:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}
