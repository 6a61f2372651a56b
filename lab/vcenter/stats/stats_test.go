package stats

import "testing"

func TestCountersCountAndReset(t *testing.T) {
	c := New()
	c.SOAP("RetrievePropertiesEx")
	c.SOAP("RetrievePropertiesEx")
	c.REST("GET /api/esx/settings/depots")
	snap := c.Snapshot()
	if snap.SOAPRequests != 2 || snap.ByMethod["RetrievePropertiesEx"] != 2 || snap.RESTRequests != 1 ||
		snap.RESTByRoute["GET /api/esx/settings/depots"] != 1 {
		t.Fatalf("snapshot: %+v", snap)
	}
	c.SOAP("Login")
	if snap.ByMethod["Login"] != 0 {
		t.Error("a snapshot changed after it was taken")
	}
	c.Reset()
	if snap := c.Snapshot(); snap.SOAPRequests != 0 || len(snap.ByMethod) != 0 || snap.RESTRequests != 0 {
		t.Errorf("after reset: %+v", snap)
	}
}
