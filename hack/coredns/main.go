// Command coredns is CoreDNS with the plugins the local cluster's Corefile
// uses (hack/cluster/up.sh) and no others. CoreDNS's own main links every
// plugin, the cloud providers' SDKs among them: about twice the packages
// to compile on a cold cache for nothing the cluster runs. This is
// CoreDNS's documented way to choose plugins at build time from outside
// its tree: import them and set the directive order.
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
)

// The directives in the order CoreDNS's plugin.cfg gives them: the order
// a query passes through the plugins of a server block.
func init() {
	dnsserver.Directives = []string{"bind", "errors", "cache", "kubernetes"}
}

func main() { coremain.Run() }
