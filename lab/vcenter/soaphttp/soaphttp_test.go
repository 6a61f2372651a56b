package soaphttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestScanCall(t *testing.T) {
	body := `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">` +
		`<soapenv:Header><operationID>x</operationID></soapenv:Header><soapenv:Body><ReconfigVM_Task xmlns="urn:vim25">` +
		`<_this type="VirtualMachine">vm-42</_this><spec></spec></ReconfigVM_Task></soapenv:Body></soapenv:Envelope>`
	call := ScanCall([]byte(body))
	if call.Method != "ReconfigVM_Task" || call.This.Type != "VirtualMachine" || call.This.Value != "vm-42" {
		t.Errorf("scanned %+v", call)
	}
	if call := ScanCall([]byte("not xml")); call.Method != "" {
		t.Errorf("garbage scanned as %+v", call)
	}
}

func TestFaultsAsVCenterWritesThem(t *testing.T) {
	w := httptest.NewRecorder()
	WriteObjectNotFound(w, types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-7"})
	body := w.Body.String()
	if w.Code != http.StatusInternalServerError || !strings.Contains(body, "<faultstring>The object &#39;vm-7&#39; has already "+
		"been deleted or has not been completely created</faultstring>") ||
		!strings.Contains(body, `<ManagedObjectNotFoundFault xmlns="urn:vim25" xsi:type="ManagedObjectNotFound">`+
			`<obj type="VirtualMachine">vm-7</obj></ManagedObjectNotFoundFault>`) {
		t.Errorf("ManagedObjectNotFound: %d %s", w.Code, body)
	}
	w = httptest.NewRecorder()
	WriteSystemError(w, "a <reason>")
	if body := w.Body.String(); !strings.Contains(body, "<reason>a &lt;reason&gt;</reason>") {
		t.Errorf("SystemError: %s", body)
	}
}

// A Recorder keeps the first status, and answers 200 when the handler wrote without one.
func TestRecorder(t *testing.T) {
	rec := NewRecorder()
	rec.Header().Set("X-Test", "1")
	_, _ = rec.Write([]byte("body"))
	rec.WriteHeader(http.StatusTeapot)
	w := httptest.NewRecorder()
	rec.Flush(w)
	if w.Code != http.StatusOK || w.Body.String() != "body" || w.Header().Get("X-Test") != "1" {
		t.Errorf("flushed %d %q %v", w.Code, w.Body.String(), w.Header())
	}
}
