// Package argocd tests the Argo CD health check shipped in config/argocd. It
// runs the script in gopher-lua, the Lua implementation Argo CD itself uses,
// with the object converted the way Argo CD converts it (JSON → Lua tables).
package argocd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func health(t *testing.T, object string) (status, message string) {
	t.Helper()
	script, err := os.ReadFile("../../config/argocd/benchmarkrun-health.lua")
	if err != nil {
		t.Fatal(err)
	}
	var obj any
	if err := json.Unmarshal([]byte(object), &obj); err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(string(script)); err != nil {
		t.Fatalf("health script: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health script returned %v", L.Get(-1))
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case bool:
		return lua.LBool(x)
	}
	return lua.LNil
}

func TestBenchmarkRunHealth(t *testing.T) {
	tests := []struct {
		name, object, status, message string
	}{
		{"new", `{"spec":{}}`, "Progressing", "Waiting"},
		{"running", `{"spec":{},"status":{"progress":"1/3","currentStep":"point-query","conditions":[{"type":"Progressing","status":"True"}]}}`,
			"Progressing", "Cells finished: 1/3, running point-query"},
		{"succeeded", `{"spec":{},"status":{"conditions":[{"type":"Succeeded","status":"True","message":"All 3 cells succeeded"}]}}`,
			"Healthy", "All 3 cells succeeded"},
		{"failed", `{"spec":{},"status":{"conditions":[{"type":"Failed","status":"True","message":"1 of 3 cells failed: a"}]}}`,
			"Degraded", "1 of 3 cells failed"},
		{"regressed", `{"spec":{"regression":{}},"status":{"conditions":[{"type":"Succeeded","status":"True","message":"ok"},{"type":"Regressed","status":"True","message":"2 step × thread pairs slower"}]}}`,
			"Degraded", "slower"},
		{"no regression", `{"spec":{"regression":{}},"status":{"conditions":[{"type":"Succeeded","status":"True","message":"All 3 cells succeeded"},{"type":"Regressed","status":"False","message":"none"}]}}`,
			"Healthy", "All 3 cells succeeded"},
		{"verdict pending", `{"spec":{"regression":{}},"status":{"conditions":[{"type":"Succeeded","status":"True","message":"ok"}]}}`,
			"Progressing", "regression verdict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, message := health(t, tt.object)
			if status != tt.status || !strings.Contains(message, tt.message) {
				t.Errorf("health = %s %q, want %s containing %q", status, message, tt.status, tt.message)
			}
		})
	}
}
