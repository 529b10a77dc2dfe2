package specs

import "testing"

func TestMirrorImage(t *testing.T) {
	const reg = "registry.example:5000/mirror"
	tests := []struct {
		name, image, registry, want string
	}{
		{"no registry configured", "mariadb:10.11", "", "mariadb:10.11"},
		{"official short name", "mariadb:10.11", reg, reg + "/library/mariadb:10.11"},
		{"official with docker.io", "docker.io/library/postgres:17", reg, reg + "/library/postgres:17"},
		{"docker.io without library", "docker.io/mysql:9.7", reg, reg + "/library/mysql:9.7"},
		{"index.docker.io", "index.docker.io/library/mariadb:11.8", reg, reg + "/library/mariadb:11.8"},
		{"Docker Hub user image", "bitnami/mysql:8.4", reg, reg + "/bitnami/mysql:8.4"},
		{"Docker Hub user image with docker.io", "docker.io/dbbench/agent:dev", reg, reg + "/dbbench/agent:dev"},
		{"digest kept", "mariadb@sha256:0123", reg, reg + "/library/mariadb@sha256:0123"},
		{"another registry by domain", "quay.io/org/pg:17", reg, "quay.io/org/pg:17"},
		{"another registry by port", "10.0.0.5:5000/mariadb:10.11", reg, "10.0.0.5:5000/mariadb:10.11"},
		{"localhost", "localhost/mariadb:10.11", reg, "localhost/mariadb:10.11"},
		{"trailing slash on the registry", "mariadb:10.11", "127.0.0.1:5000/", "127.0.0.1:5000/library/mariadb:10.11"},
		{"no image", "", reg, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MirrorImage(tt.image, tt.registry); got != tt.want {
				t.Errorf("MirrorImage(%q, %q) = %q, want %q", tt.image, tt.registry, got, tt.want)
			}
		})
	}
}
