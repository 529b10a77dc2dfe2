package results

import (
	"math"
	"os"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

// Derive divides each volume's per-second figures by q, as for the node's.
func TestDeriveVolumes(t *testing.T) {
	h := &Hardware{OpsPerSecond: 200, Volumes: []VolumeIO{
		{Name: "data", Device: "vda", ReadsPerSecond: f64(100), ReadKBPerSecond: f64(1600), WriteKBPerSecond: f64(0), IOsPerSecond: f64(120)},
		{Name: "log", Device: "loop0", ReadsPerSecond: f64(0), ReadKBPerSecond: f64(0), WriteKBPerSecond: f64(800), IOsPerSecond: f64(50)},
		{Name: "other", Unresolved: "tmpfs"},
	}}
	h.Derive()
	tests := []struct {
		vol       int
		what      string
		got       *float64
		want      float64
		wantUnset bool
	}{
		{0, "reads/op", h.Volumes[0].ReadsPerOp, 0.5, false},
		{0, "rKB/op", h.Volumes[0].ReadKBPerOp, 8, false},
		{0, "ios/op", h.Volumes[0].IOsPerOp, 0.6, false},
		{1, "wKB/op", h.Volumes[1].WriteKBPerOp, 4, false},
		{1, "ios/op", h.Volumes[1].IOsPerOp, 0.25, false},
		{2, "wKB/op", h.Volumes[2].WriteKBPerOp, 0, true},
	}
	for _, tt := range tests {
		switch {
		case tt.wantUnset && tt.got != nil:
			t.Errorf("%s %s = %v, want absent", h.Volumes[tt.vol].Name, tt.what, *tt.got)
		case !tt.wantUnset && (tt.got == nil || math.Abs(*tt.got-tt.want) > 1e-12):
			t.Errorf("%s %s = %v, want %v", h.Volumes[tt.vol].Name, tt.what, tt.got, tt.want)
		}
	}
}

// Documents written before the per-volume split read as they are; a
// document with volumes round-trips and validates; bad volumes are refused
// naming the field.
func TestVolumesInTheDocument(t *testing.T) {
	b, err := os.ReadFile("testdata/v1-before-counters.json")
	if err != nil {
		t.Fatal(err)
	}
	old, err := Unmarshal(b)
	if err != nil {
		t.Fatalf("older v1 document: %v", err)
	}
	if h := old.Steps[0].Hardware; h == nil || h.Volumes != nil || h.Volume("data") != nil {
		t.Fatalf("older document's hardware: %+v", h)
	}
	tests := []struct {
		name    string
		vols    []VolumeIO
		wantErr string
	}{
		{"data and log apart", []VolumeIO{{Name: "data", Device: "vda", ReadsPerSecond: f64(3)}, {Name: "log", Device: "loop0", WriteKBPerSecond: f64(9)}}, ""},
		{"shared device", []VolumeIO{{Name: "data", Device: "vda", SharedDevice: true, WriteKBPerSecond: f64(9)}, {Name: "log", Device: "vda", SharedDevice: true, WriteKBPerSecond: f64(9)}}, ""},
		{"unresolved without figures", []VolumeIO{{Name: "data", Unresolved: "tmpfs"}}, ""},
		{"name twice", []VolumeIO{{Name: "data", Device: "vda"}, {Name: "data", Device: "vdb"}}, "steps[1].hardware.volumes[1].name"},
		{"figures without a device", []VolumeIO{{Name: "log", Unresolved: "tmpfs", WriteKBPerSecond: f64(1)}}, "steps[1].hardware.volumes[0]"},
		{"bad name", []VolumeIO{{Name: "Data Dir", Device: "vda"}}, "volumes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := Unmarshal(b)
			d.Steps[1].Hardware.Volumes = tt.vols
			d.Steps[1].Hardware.Derive()
			out, err := Marshal(d)
			if tt.wantErr != "" {
				if err == nil {
					err = d.Validate()
				}
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			back, err := Unmarshal(out)
			if err != nil {
				t.Fatal(err)
			}
			h := back.Steps[1].Hardware
			if len(h.Volumes) != len(tt.vols) || h.SharedDevice() != tt.vols[0].SharedDevice {
				t.Fatalf("volumes after a round trip: %+v", h.Volumes)
			}
			if w := tt.vols[0].ReadsPerSecond; w != nil && (h.Volumes[0].ReadsPerOp == nil || math.Abs(*h.Volumes[0].ReadsPerOp-*w/h.OpsPerSecond) > 1e-9) {
				t.Errorf("reads/op after a round trip: %v", h.Volumes[0].ReadsPerOp)
			}
		})
	}
}
