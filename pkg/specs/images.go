package specs

import "strings"

// dockerHub is the registry an image reference without a registry host
// names ("mariadb:10.11" is docker.io/library/mariadb:10.11).
const dockerHub = "docker.io"

// MirrorImage returns the reference a database pod pulls for image when the
// operator runs with a database image registry (--database-image-registry,
// the chart's databaseImages.registry): an image on Docker Hub, named with or
// without docker.io, moves to registry under the same path, the layout a
// docker.io mirror has (what `make push PUSH_DATABASES=1` or any
// `skopeo copy`/`crane copy` that keeps paths produces), so that
//
//	mariadb:10.11                   -> REGISTRY/library/mariadb:10.11
//	docker.io/bitnami/mysql:8.4     -> REGISTRY/bitnami/mysql:8.4
//	quay.io/org/pg:17               -> quay.io/org/pg:17 (not Docker Hub: unchanged)
//
// That is what a containerd or Docker mirror of docker.io does on the node;
// doing it here needs no node configuration. An empty registry changes
// nothing. Cells, reports and results keep the image as the spec names it:
// the mirror is how the image travels, not what was benchmarked.
func MirrorImage(image, registry string) string {
	registry = strings.TrimSuffix(registry, "/")
	if registry == "" || image == "" {
		return image
	}
	domain, rest, found := strings.Cut(image, "/")
	switch {
	case !found:
		// "mariadb:10.11": an official image.
		return registry + "/library/" + image
	case domain == dockerHub || domain == "index.docker.io":
		if !strings.Contains(rest, "/") {
			rest = "library/" + rest
		}
		return registry + "/" + rest
	case strings.ContainsAny(domain, ".:") || domain == "localhost":
		// Another registry's host.
		return image
	default:
		// "bitnami/mysql:8.4": a Docker Hub user's image.
		return registry + "/" + image
	}
}
