package dbconfig

import (
	"testing"
)

func TestParseMySQLSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"256M", 268435456, true},
		{"256m", 268435456, true},
		{"1G", 1 << 30, true},
		{"1g", 1 << 30, true},
		{"8K", 8192, true},
		{"2T", 2 << 40, true},
		{"1P", 1 << 50, true},
		{"1E", 1 << 60, true},
		{"134217728", 134217728, true},
		{"-1", -1, true},
		{" 64M ", 64 << 20, true},
		{"16E", 0, false}, // overflows int64
		{"1.5G", 0, false},
		{"256MB", 0, false},
		{"M", 0, false},
		{"", 0, false},
		{"ON", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseMySQLSize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseMySQLSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestParseBool checks the two engines' boolean grammars, which differ:
// PostgreSQL also takes yes/no, t/f, y/n and any unique prefix of on/off.
func TestParseBool(t *testing.T) {
	type boolCase struct {
		in       string
		want, ok bool
	}
	for _, p := range []struct {
		name  string
		parse func(string) (bool, bool)
		cases []boolCase
	}{
		{"ParseMySQLBool", ParseMySQLBool, []boolCase{
			{"ON", true, true}, {"on", true, true}, {"TRUE", true, true}, {"true", true, true}, {"1", true, true},
			{"OFF", false, true}, {"off", false, true}, {"FALSE", false, true}, {"0", false, true},
			{"yes", false, false}, {"2", false, false}, {"", false, false},
		}},
		{"ParsePGBool", ParsePGBool, []boolCase{
			{"on", true, true}, {"ON", true, true}, {"true", true, true}, {"t", true, true}, {"yes", true, true},
			{"y", true, true}, {"1", true, true},
			{"off", false, true}, {"of", false, true}, {"false", false, true}, {"f", false, true}, {"no", false, true},
			{"n", false, true}, {"0", false, true},
			{"o", false, false}, {"onn", false, false}, {"2", false, false}, {"", false, false},
		}},
	} {
		for _, tt := range p.cases {
			got, ok := p.parse(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("%s(%q) = %v, %v; want %v, %v", p.name, tt.in, got, ok, tt.want, tt.ok)
			}
		}
	}
}

func TestMySQLEqual(t *testing.T) {
	tests := []struct {
		rule, requested, effective string
		want                       bool
		norm                       string
	}{
		{"size suffix", "256M", "268435456", true, "268435456"},
		{"size suffix, lower case", "256m", "268435456", true, "268435456"},
		{"size suffix differs", "256M", "134217728", false, "268435456"},
		{"plain integer", "77", "77", true, ""},
		{"plain integer differs", "77", "200", false, "77"},
		{"boolean ON", "ON", "ON", true, ""},
		{"boolean 1 is ON", "1", "ON", true, "ON"},
		{"boolean TRUE is ON", "TRUE", "ON", true, "ON"},
		{"boolean false is OFF", "false", "OFF", true, "OFF"},
		{"boolean differs", "OFF", "ON", false, "OFF"},
		{"integer 1 is not 2", "1", "2", false, "1"},
		{"enum case", "o_direct", "O_DIRECT", true, ""},
		{"enum differs", "fsync", "O_DIRECT", false, ""},
		{"decimal", "0.5", "0.500000", true, ""},
		{"decimal differs", "0.5", "0.250000", false, ""},
		{"set in another order", "NO_ZERO_DATE,STRICT_TRANS_TABLES", "STRICT_TRANS_TABLES,NO_ZERO_DATE", true, ""},
		{"set differs", "STRICT_TRANS_TABLES", "STRICT_TRANS_TABLES,NO_ZERO_DATE", false, ""},
		{"path trailing slash", "/var/lib/mysql", "/var/lib/mysql/", true, ""},
		{"path differs", "/var/lib/mysql", "/data/", false, ""},
		{"string", "utf8mb4", "utf8mb4", true, ""},
		{"string differs", "utf8mb4", "latin1", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, norm := MySQLEqual(tt.requested, tt.effective)
			if got != tt.want || norm != tt.norm {
				t.Errorf("MySQLEqual(%q, %q) = %v, %q; want %v, %q", tt.requested, tt.effective, got, norm, tt.want, tt.norm)
			}
		})
	}
}

func TestPGToSettingUnit(t *testing.T) {
	tests := []struct {
		requested, unit string
		want            float64
		wantErr         bool
	}{
		{"8GB", "8kB", 1048576, false}, // shared_buffers in 8 kB pages
		{"256MB", "8kB", 32768, false},
		{"32768", "8kB", 32768, false}, // no unit: the setting's own
		{"64MB", "kB", 65536, false},   // work_mem
		{"1TB", "MB", 1048576, false},  // max_wal_size
		{"1GB", "MB", 1024, false},
		{"1536kB", "MB", 1.5, false},
		{"16MB", "B", 16 << 20, false}, // wal_segment_size
		{"250ms", "ms", 250, false},
		{"2s", "ms", 2000, false},
		{"5min", "s", 300, false},
		{"1h", "min", 60, false},
		{"1d", "s", 86400, false},
		{"500us", "ms", 0.5, false},
		{"0x10", "", 16, false},
		{"-1", "kB", -1, false},
		{"1.5", "", 1.5, false},
		{"8gb", "8kB", 0, true},  // units are case-sensitive
		{"8GB", "ms", 0, true},   // memory unit for a time setting
		{"10s", "kB", 0, true},   // time unit for a memory setting
		{"10MB", "", 0, true},    // unit on a unitless setting
		{"eight", "kB", 0, true}, // not a number
	}
	for _, tt := range tests {
		got, err := PGToSettingUnit(tt.requested, tt.unit)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("PGToSettingUnit(%q, %q) = %v, %v; want %v, error %v", tt.requested, tt.unit, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPostgresEqual(t *testing.T) {
	tests := []struct {
		rule      string
		requested string
		setting   PGSetting
		want      bool
		norm      string
		wantErr   bool
	}{
		{"shared_buffers 8GB in pages", "8GB", PGSetting{Setting: "1048576", Unit: "8kB", Vartype: "integer"}, true, "1048576×8kB", false},
		{"shared_buffers differs", "128MB", PGSetting{Setting: "32768", Unit: "8kB", Vartype: "integer"}, false, "16384×8kB", false},
		{"no unit: the setting's unit", "32768", PGSetting{Setting: "32768", Unit: "8kB", Vartype: "integer"}, true, "32768×8kB", false},
		{"integer rounds to nearest", "1500B", PGSetting{Setting: "1", Unit: "kB", Vartype: "integer"}, true, "1×kB", false},
		{"time in seconds", "5min", PGSetting{Setting: "300", Unit: "s", Vartype: "integer"}, true, "300×s", false},
		{"time differs", "30s", PGSetting{Setting: "300", Unit: "s", Vartype: "integer"}, false, "30×s", false},
		{"unitless integer", "200", PGSetting{Setting: "200", Vartype: "integer"}, true, "", false},
		{"real", "1.1", PGSetting{Setting: "1.1", Vartype: "real"}, true, "", false},
		{"real differs", "1.1", PGSetting{Setting: "4", Vartype: "real"}, false, "", false},
		{"real with unit", "0.5s", PGSetting{Setting: "500", Unit: "ms", Vartype: "real"}, true, "500×ms", false},
		{"bool", "off", PGSetting{Setting: "off", Vartype: "bool"}, true, "off", false},
		{"bool alias", "false", PGSetting{Setting: "off", Vartype: "bool"}, true, "off", false},
		{"bool differs", "yes", PGSetting{Setting: "off", Vartype: "bool"}, false, "on", false},
		{"bool invalid", "maybe", PGSetting{Setting: "off", Vartype: "bool"}, false, "", true},
		{"enum case", "Replica", PGSetting{Setting: "replica", Vartype: "enum"}, true, "", false},
		{"enum as boolean", "false", PGSetting{Setting: "off", Vartype: "enum"}, true, "off", false},
		{"enum differs", "local", PGSetting{Setting: "off", Vartype: "enum"}, false, "", false},
		{"string exact", "pg_stat_statements", PGSetting{Setting: "pg_stat_statements", Vartype: "string"}, true, "", false},
		{"string canonical case", "utc", PGSetting{Setting: "UTC", Vartype: "string"}, true, "", false},
		{"string differs", "", PGSetting{Setting: "pg_stat_statements", Vartype: "string"}, false, "", false},
		{"bad unit", "8gb", PGSetting{Setting: "1048576", Unit: "8kB", Vartype: "integer"}, false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, norm, err := PostgresEqual(tt.requested, tt.setting)
			if got != tt.want || norm != tt.norm || (err != nil) != tt.wantErr {
				t.Errorf("PostgresEqual(%q, %+v) = %v, %q, %v; want %v, %q, error %v", tt.requested, tt.setting, got, norm, err, tt.want, tt.norm, tt.wantErr)
			}
		})
	}
}
