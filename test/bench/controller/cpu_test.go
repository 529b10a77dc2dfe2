package main

import (
	"reflect"
	"testing"
)

func TestMetricLabels(t *testing.T) {
	got := metricLabels(`code="201",component="apiserver",resource="pods",subresource="binding",verb="POST"`)
	want := map[string]string{"code": "201", "component": "apiserver", "resource": "pods", "subresource": "binding", "verb": "POST"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metricLabels = %v, want %v", got, want)
	}
	if got := metricLabels(`verb=POST`); len(got) != 0 {
		t.Errorf("an unquoted value parsed as %v, want nothing", got)
	}
}

func TestAPIRequestsWindow(t *testing.T) {
	before := apiRequests{"POST pods": 10, "LIST pods": 3}
	after := apiRequests{"POST pods": 2010, "LIST pods": 3, "POST pods/binding": 5}
	got := after.minus(before)
	if want := (apiRequests{"POST pods": 2000, "POST pods/binding": 5}); !reflect.DeepEqual(got, want) {
		t.Fatalf("minus = %v, want %v", got, want)
	}
	if s, want := got.format(10), "2005 in all: POST pods 2000"; s != want {
		t.Errorf("format = %q, want %q", s, want)
	}
}
