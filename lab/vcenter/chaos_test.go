package main

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"reflect"
	"testing"
)

func draws(seed int64, n int) []string {
	c := newChaos()
	cfg := ChaosConfig{Seed: seed, Rate: 0.3, Seconds: 60}
	if err := cfg.validate(); err != nil {
		panic(err)
	}
	c.start(cfg)
	out := make([]string, n)
	for i := range out {
		out[i] = c.pick("RetrievePropertiesEx")
	}
	return out
}

func TestChaosIsSeededAndKeepsItsShare(t *testing.T) {
	first, again, other := draws(7, 2000), draws(7, 2000), draws(8, 2000)
	if !reflect.DeepEqual(first, again) {
		t.Fatal("the same seed drew other faults")
	}
	if reflect.DeepEqual(first, other) {
		t.Fatal("another seed drew the same faults")
	}
	failed := 0
	for _, kind := range first {
		if kind != "" {
			failed++
		}
	}
	if failed < 500 || failed > 700 {
		t.Fatalf("%d of 2000 requests failed at rate 0.3", failed)
	}
}

func TestChaosEndpointValidatesAndFailsSOAPWith503(t *testing.T) {
	tl := startLab(t)
	if code := tl.call(t, http.MethodPost, "/lab/chaos", map[string]interface{}{"rate": 2, "seconds": 10}, nil); code != 400 {
		t.Fatalf("rate 2 accepted: %d", code)
	}
	if code := tl.call(t, http.MethodPost, "/lab/chaos", map[string]interface{}{"rate": 1, "seconds": 10,
		"kinds": []string{"unavailable"}}, nil); code != 201 {
		t.Fatalf("chaos refused: %d", code)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Post(tl.server.URL+"/sdk", "text/xml", bytes.NewBufferString("<x/>"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("SOAP under chaos answered %d", resp.StatusCode)
	}
	var report ChaosReport
	tl.call(t, http.MethodDelete, "/lab/chaos", nil, &report)
	if report.Faults["unavailable"] != 1 || report.Requests != 1 {
		t.Fatalf("report after one request: %+v", report)
	}
}
