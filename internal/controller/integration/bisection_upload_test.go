package integration_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/bisectreport"
)

// A finished bisection whose runs upload to a real S3 server uploads its
// summary (bisection.json, the status's points, rounds and culprit) and
// its HTML report under <prefix>/<suite>/_bisections/<name>/, records it in
// status.upload and the ResultsUploaded condition.
// Runs only with DBBENCH_REAL_S3=1 (make test-s3).
func TestBisectionUploadsItsSummaryToRealS3(t *testing.T) {
	requireEnvtest(t)
	srv := startS3(t)
	startManager(t, nil)
	ns := newNamespace(t)
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bis-s3"},
		Data:       map[string][]byte{"accessKeyID": []byte(s3AccessKey), "secretAccessKey": []byte(s3SecretKey)},
	}
	if err := k8sClient.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	b := bisectionOf(ns, "bis-upload", 2)
	b.Spec.Template.Suite = s3Suite
	b.Spec.Template.Output.S3 = &dbbenchv1alpha1.S3Output{
		Endpoint: srv.Endpoint(), Bucket: s3Bucket, Prefix: s3Prefix,
		CredentialsSecret: corev1.LocalObjectReference{Name: sec.Name},
	}
	if err := k8sClient.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	bis := driveBisection(t, ns, b.Name, func(pt int) float64 {
		if pt >= 4 {
			return 0.5
		}
		return 1
	}, nil)
	if bis.Status.FirstBad != "v5" {
		t.Fatalf("firstBad %q, want v5", bis.Status.FirstBad)
	}
	base := s3Prefix + "/" + s3Suite + "/_bisections/bis-upload/"
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: b.Name}, bis); err != nil {
			t.Fatal(err)
		}
		if u := bis.Status.Upload; u != nil && u.Uploaded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not uploaded within 60 s: upload %+v, %s", bis.Status.Upload, condString(meta.FindStatusCondition(bis.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if u := bis.Status.Upload; u.URL != "s3://"+s3Bucket+"/"+base || u.Failures != 0 {
		t.Errorf("upload status %+v, want url s3://%s/%s", u, s3Bucket, base)
	}
	if c := meta.FindStatusCondition(bis.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c == nil || c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonUploaded {
		t.Errorf("%s, want True Uploaded", condString(c))
	}

	s := srv.store(t, s3SecretKey)
	keys, err := s.List(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, " ") != base+"bisection.json "+base+"identity.json "+base+"report.html" {
		t.Fatalf("objects under %s: %v", base, keys)
	}
	raw, err := s.Get(ctx, base+"bisection.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum bisectreport.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatalf("bisection.json: %v\n%s", err, raw)
	}
	if sum.SchemaVersion != bisectreport.SchemaV1 || sum.Name != b.Name || sum.Namespace != ns || sum.UID != string(bis.UID) || sum.Suite != s3Suite ||
		sum.Localized != "True" || sum.Reason != dbbenchv1alpha1.BisectionReasonLocalized || sum.FirstBad != "v5" ||
		len(sum.Points) != 8 || len(sum.Rounds) != int(bis.Status.RoundCount) || sum.CellsUsed != bis.Status.CellsUsed ||
		sum.Endpoints == nil || sum.Endpoints.Ratio != "0.5" || sum.Points[4].Verdict != dbbenchv1alpha1.VerdictBad || sum.CompletionTime == nil {
		t.Errorf("summary %s", raw)
	}
	html, err := s.Get(ctx, base+"report.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "dbbench bisection: bis-upload") || !strings.Contains(string(html), "v5") {
		t.Errorf("report.html does not chart the bisection:\n%.400s", html)
	}
}
