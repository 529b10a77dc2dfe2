package plugin

import (
	"strings"
	"testing"
)

func TestParseCredentials(t *testing.T) {
	for _, c := range []struct{ name, in, access, secret, err string }{
		{"secret keys", "accessKeyID=AK\nsecretAccessKey = s3cr3t\n", "AK", "s3cr3t", ""},
		{"env style", "export AWS_ACCESS_KEY_ID='AK'\nexport AWS_SECRET_ACCESS_KEY=\"s3cr3t\"\n", "AK", "s3cr3t", ""},
		{"aws profile", "[other]\naws_access_key_id = X\naws_secret_access_key = Y\n[default]\naws_access_key_id = AK\naws_secret_access_key = s3cr3t\n", "AK", "s3cr3t", ""},
		{"yaml", "# comment\naccessKeyID: AK\nsecretAccessKey: s3cr3t\n", "AK", "s3cr3t", ""},
		{"no secret", "accessKeyID=AK\n", "", "", "want an access key"},
		{"garbage", "s3cr3t\n", "", "", "line 1: want NAME=VALUE"},
	} {
		a, s, err := parseCredentials(strings.NewReader(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("%s: error %v, want %q without the secret", c.name, err, c.err)
			}
			continue
		}
		if err != nil || a != c.access || s != c.secret {
			t.Errorf("%s: got %q %q %v", c.name, a, s, err)
		}
	}
}

func TestParseS3URL(t *testing.T) {
	for in, want := range map[string]string{"s3://b": "b|", "s3://b/": "b|", "s3://b/team/bench/": "b|team/bench", "http://b/x": "err", "s3:///x": "err", "s3://u@b/x": "err"} {
		b, p, err := ParseS3URL(in)
		got := b + "|" + p
		if err != nil {
			got = "err"
		}
		if got != want {
			t.Errorf("ParseS3URL(%q) = %q, want %q", in, got, want)
		}
	}
}
