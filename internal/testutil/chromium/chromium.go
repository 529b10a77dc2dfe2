// Package chromium runs headless Chromium on a page for tests that assert
// what a browser shows: the DOM it serialises (--dump-dom) and a
// screenshot. Tests skip when /usr/bin/chromium is not installed (Debian:
// apt-get install -y chromium; hack/test-deps.sh installs it).
package chromium

import (
	"bytes"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// Path is the Chromium binary.
const Path = "/usr/bin/chromium"

// Require skips t when Chromium is not installed.
func Require(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		t.Skip("skipped: /usr/bin/chromium not installed (apt-get install -y chromium)")
	}
}

// Run opens file (a local page) in headless Chromium with a window of
// size ("W,H") and the extra flags, and returns its stdout. Nothing is
// fetched from the network: the page must work from the file alone.
func Run(t testing.TB, file, size string, extra ...string) []byte {
	t.Helper()
	Require(t)
	profile := t.TempDir()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--window-size=" + size}, extra...)
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Path, append(args, "file://"+abs)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
		}
	case <-time.After(120 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("chromium %v timed out", extra)
	}
	return stdout.Bytes()
}

// DOM is the page's DOM as Chromium serialises it after loading.
func DOM(t testing.TB, file, size string) string {
	t.Helper()
	return string(Run(t, file, size, "--dump-dom"))
}

// Screenshot takes a screenshot of the page into png (a path) and returns
// the decoded image.
func Screenshot(t testing.TB, file, size, out string) image.Image {
	t.Helper()
	Run(t, file, size, "--screenshot="+out, "--hide-scrollbars")
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

var hrefRE = regexp.MustCompile(`href="([^"#]*)(#[^"]*)?"`)

// BrokenLinks returns the relative links of dom (a page in dir) whose
// target is not a file under dir; absolute links (http:, https:) are
// not followed.
func BrokenLinks(dom, dir string) []string {
	var broken []string
	for _, m := range hrefRE.FindAllStringSubmatch(dom, -1) {
		h := m[1]
		if h == "" || regexp.MustCompile(`^[a-z]+:`).MatchString(h) {
			continue
		}
		p, err := urlPath(h)
		if err != nil {
			broken = append(broken, h)
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.IsDir() {
			broken = append(broken, h)
		}
	}
	return broken
}

// Painted reports the share of non-white pixels and the number of
// distinct colours of img.
func Painted(img image.Image) (share float64, colours int) {
	b := img.Bounds()
	seen := map[[3]uint32]bool{}
	var n, ink int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			n++
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
			seen[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(ink) / float64(n), len(seen)
}

// urlPath unescapes a relative link to a file path.
func urlPath(h string) (string, error) {
	u, err := url.Parse(h)
	if err != nil {
		return "", err
	}
	return filepath.FromSlash(u.Path), nil
}
