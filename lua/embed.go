// Package lua ships dbbench's own sysbench Lua scripts (lua/dbbench/*.lua)
// inside the Go binaries that run them, so the agent image needs nothing but
// the agent and sysbench.
package lua

import "embed"

// Scripts holds lua/dbbench/*.lua; paths are "dbbench/<name>.lua".
//
//go:embed dbbench/*.lua
var Scripts embed.FS
