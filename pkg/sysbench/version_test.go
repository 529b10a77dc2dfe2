package sysbench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr string
	}{
		{readFixture(t, "1.0.20/version.txt"), Version{Major: 1, Minor: 0, Patch: 20, Raw: "sysbench 1.0.20"}, ""},
		{readFixture(t, "1.1/version.txt"), Version{Major: 1, Minor: 1, Build: "df89d34", Raw: "sysbench 1.1.0-df89d34"}, ""},
		{"\n  sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n", Version{Major: 1, Minor: 0, Patch: 20, LuaJIT: "using system LuaJIT 2.1.0-beta3", Raw: "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"}, ""},
		{"sysbench 1.0:  multi-threaded system evaluation benchmark", Version{Major: 1, Raw: "sysbench 1.0:  multi-threaded system evaluation benchmark"}, ""},
		{"", Version{}, "empty input"},
		{"mysql  Ver 15.1", Version{}, "line 1"},
		{"sysbench 1", Version{}, "MAJOR.MINOR"},
		{"sysbench 1.x.2", Version{}, "not a number"},
		{"sysbench 1.-1.2", Version{}, "not a number"},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseVersion(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseVersion(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseVersion(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestVersionFeatures(t *testing.T) {
	tests := []struct {
		v               Version
		warmup, zipfian bool
		ssl             string
		str             string
	}{
		{Version{Major: 1, Minor: 0, Patch: 20}, false, false, "--mysql-ssl=off", "1.0.20"},
		{Version{Major: 1, Minor: 1, Build: "df89d34"}, true, true, "--mysql-ssl=disabled", "1.1.0-df89d34"},
		{Version{Major: 2}, true, true, "--mysql-ssl=disabled", "2.0.0"},
		{Version{Major: 0, Minor: 5}, false, false, "--mysql-ssl=off", "0.5.0"},
	}
	for _, tt := range tests {
		if got := tt.v.HasWarmupTime(); got != tt.warmup {
			t.Errorf("%v HasWarmupTime = %v", tt.v, got)
		}
		if got := tt.v.HasZipfian(); got != tt.zipfian {
			t.Errorf("%v HasZipfian = %v", tt.v, got)
		}
		if got := tt.v.MySQLSSLOff(); got != tt.ssl {
			t.Errorf("%v MySQLSSLOff = %q", tt.v, got)
		}
		if got := tt.v.String(); got != tt.str {
			t.Errorf("String = %q, want %q", got, tt.str)
		}
	}
}
