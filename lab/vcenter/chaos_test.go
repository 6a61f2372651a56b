package main

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"testing"

	"vcsim/chaos"
)

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
	var report chaos.Report
	tl.call(t, http.MethodDelete, "/lab/chaos", nil, &report)
	if report.Faults["unavailable"] != 1 || report.Requests != 1 {
		t.Fatalf("report after one request: %+v", report)
	}
}
